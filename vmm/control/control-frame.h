/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The framing of proto/control.h, apart from any socket, so that what the
 * server does with untrusted bytes can be tested on its own: the one
 * encoder of a message, an incremental parser (bytes fed in any split come
 * out as whole messages or as a precise error) and the pattern list that
 * ATTACH and DETACH carry.
 */
#ifndef VMM_CONTROL_FRAME_H
#define VMM_CONTROL_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "proto/control.h"

#define CTL_FRAME_HDR_LEN sizeof(struct vt_ctl_hdr)

/* A message into out (CTL_FRAME_HDR_LEN + len bytes); returns its length. */
size_t ctl_frame_encode(void *out, uint16_t type, int32_t status, const void *payload, uint32_t len);

/*
 * Checks a received header, in this order: -EBADMSG (not our magic),
 * -EPROTONOSUPPORT (another version), -EMSGSIZE (length over
 * VT_CTL_MAX_PAYLOAD), else 0. The type is left to the dispatcher: which
 * types are valid depends on the direction.
 */
int ctl_frame_check_hdr(const struct vt_ctl_hdr *h);

struct ctl_frame {
	struct vt_ctl_hdr hdr;	/* whole once hdr_got is CTL_FRAME_HDR_LEN */
	size_t hdr_got;
	char *payload;		/* hdr.length bytes and a NUL once complete */
	size_t pay_got;
	int done;		/* a message is complete: the next feed starts another */
	int error;		/* sticky: a broken stream cannot be resynchronized */
};

void ctl_frame_init(struct ctl_frame *f);
void ctl_frame_destroy(struct ctl_frame *f);
/*
 * Takes bytes from buf up to the end of one message at most; *used says
 * how many. Returns 1 when a message is complete (f->hdr and f->payload,
 * valid until the next call), 0 when all of buf was taken and the message
 * needs more, or -errno: a header error of ctl_frame_check_hdr (f->hdr then
 * holds the header) or -ENOMEM. An error repeats on every later call.
 */
int ctl_frame_feed(struct ctl_frame *f, const void *buf, size_t len, size_t *used);
/*
 * The bytes the message being read still lacks (0 after an error): a
 * reader that asks for no more never takes a byte of the next message.
 */
size_t ctl_frame_want(const struct ctl_frame *f);
/* Has part of a message arrived, but not all of it? */
int ctl_frame_partial(const struct ctl_frame *f);

/*
 * Packs patterns NUL-separated; excludes get a leading '!'. Returns the
 * length or -E2BIG when they need more than max bytes.
 */
int ctl_frame_pack_patterns(char *buf, size_t max, const char **inc, unsigned ninc,
			    const char **exc, unsigned nexc);
/*
 * The next pattern of an untrusted payload of len bytes, from *off (start at
 * 0): 1 with it in *pat, 0 at the end, -EBADMSG if the payload does not end
 * in NUL (checked before any pattern is returned), -EILSEQ for a pattern
 * with a control, space or non-ASCII byte. Empty patterns are skipped.
 */
int ctl_frame_next_pattern(const char *buf, size_t len, size_t *off, const char **pat);
/*
 * Options travel among the patterns as "=NAME=VALUE" (no kernel symbol
 * starts with '='). Appends one to a payload of len bytes: the new length,
 * or -E2BIG past max bytes. Old servers refuse it as a bad pattern.
 */
int ctl_frame_pack_option(char *buf, size_t max, int len, const char *name, const char *value);
/* VALUE if pat is the option "=name=VALUE", else NULL. */
const char *ctl_frame_option(const char *pat, const char *name);

#endif
