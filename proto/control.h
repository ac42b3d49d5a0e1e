/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The control-socket protocol between `vmmtrace boot --control PATH` and
 * the attach/detach/status/stop commands. Every message is a header and
 * `length` payload bytes; every request gets one VT_CTL_REPLY (status 0 or
 * -errno, payload: text). After a successful ATTACH the server also sends
 * VT_CTL_EVENTS messages (payload: trace text) until the client's own
 * DETACH is answered with VT_CTL_END. A header with another magic or
 * version, or a request longer than VT_CTL_MAX_PAYLOAD, gets an error reply
 * and the connection closes: a byte stream cannot be resynchronized.
 * Fields are in host byte order, as both ends run on the one host.
 */
#ifndef PROTO_CONTROL_H
#define PROTO_CONTROL_H

#include <stdint.h>

#define VT_CTL_MAGIC        0x4c544356u	/* "VCTL" */
#define VT_CTL_VERSION      1
#define VT_CTL_MAX_PAYLOAD  65536

enum vt_ctl_type {
	VT_CTL_ATTACH = 1,	/* payload: patterns, NUL-separated; "!" prefix excludes;
				 * "=format=NAME" (text, dat, perfetto, raw) picks the
				 * format of the VT_CTL_EVENTS bytes (default text);
				 * "=event=GLOB" adds VM events; "=args=1" each
				 * call's arguments (--args); "=graph=1" returns
				 * too (--graph, text only), "=retval=1" their
				 * values, "=graph-depth=N" (1..127) */
	VT_CTL_DETACH = 2,	/* payload: patterns (empty: every held slot) */
	VT_CTL_STATUS = 3,
	VT_CTL_STOP = 4,
	VT_CTL_DETACH_SELF = 5,	/* an attached client ends its own window */
	VT_CTL_NMI = 6,		/* an NMI into every vCPU (payload: empty) */
	VT_CTL_REPLY = 0x80,
	VT_CTL_EVENTS = 0x81,
	VT_CTL_END = 0x82,
};

struct vt_ctl_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t length;	/* payload bytes that follow */
	int32_t status;		/* replies: 0 or -errno */
};

_Static_assert(sizeof(struct vt_ctl_hdr) == 16, "control header is 16 bytes");
_Static_assert(__builtin_offsetof(struct vt_ctl_hdr, length) == 8, "length at 8");

#endif
