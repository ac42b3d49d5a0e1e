/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The control socket of a running guest (proto/control.h): a Unix socket
 * with mode 0600 that accepts peers of our own uid only. One thread serves
 * every connection; a malformed, truncated or oversized request gets an
 * error reply and never touches the guest. It reaches the guest through
 * the tracer and the host boundary (vmm/host/host.h): any host serves it.
 */
#ifndef VMM_CONTROL_H
#define VMM_CONTROL_H

#include <stddef.h>

#include "vmm/util/error.h"

/* Queued bytes an attach client may fall behind before its window is ended. */
#define CONTROL_DEFAULT_BACKLOG ((size_t)64 << 20)

struct control;
struct host;
struct tracer;

/* backlog: bytes an attach client may fall behind (0: CONTROL_DEFAULT_BACKLOG). */
int control_start(struct control **out, struct host *host, struct tracer *t, const char *path,
		  size_t backlog, struct errbuf *err);
/* Ends every attached client (their output flushed), closes and removes the socket. */
void control_stop(struct control *c);

#endif
