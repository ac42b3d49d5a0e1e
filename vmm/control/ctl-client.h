/* SPDX-License-Identifier: GPL-2.0 */
/* The client side of the control socket (proto/control.h). */
#ifndef VMM_CTL_CLIENT_H
#define VMM_CTL_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "proto/control.h"
#include "vmm/util/error.h"

int ctl_connect(const char *path, struct errbuf *err);
int ctl_send(int fd, uint16_t type, int32_t status, const void *payload, uint32_t len);
/*
 * Reads one message; the payload (at most max bytes, NUL-terminated) goes
 * to buf. Returns 0, -EPIPE when the server closed, -EPROTO on garbage (a
 * header that ctl_frame_check_hdr refuses).
 */
int ctl_recv(int fd, struct vt_ctl_hdr *hdr, char *buf, size_t max);
/* One request, one reply (text in reply, its status in *status); 0 or -errno. */
int ctl_request(const char *path, uint16_t type, const void *payload, uint32_t len,
		char *reply, size_t max, int *status, struct errbuf *err);

#endif
