// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/control/control-frame.h"

size_t ctl_frame_encode(void *out, uint16_t type, int32_t status, const void *payload, uint32_t len)
{
	struct vt_ctl_hdr h = {
		.magic = VT_CTL_MAGIC, .version = VT_CTL_VERSION, .type = type,
		.length = len, .status = status,
	};

	memcpy(out, &h, sizeof(h));
	if (len)
		memcpy((char *)out + sizeof(h), payload, len);
	return sizeof(h) + len;
}

int ctl_frame_check_hdr(const struct vt_ctl_hdr *h)
{
	if (h->magic != VT_CTL_MAGIC)
		return -EBADMSG;
	if (h->version != VT_CTL_VERSION)
		return -EPROTONOSUPPORT;
	if (h->length > VT_CTL_MAX_PAYLOAD)
		return -EMSGSIZE;
	return 0;
}

void ctl_frame_init(struct ctl_frame *f)
{
	memset(f, 0, sizeof(*f));
}

void ctl_frame_destroy(struct ctl_frame *f)
{
	free(f->payload);
	ctl_frame_init(f);
}

static size_t ctl_frame_take(void *dst, const char *src, size_t avail, size_t lack)
{
	size_t n = avail < lack ? avail : lack;

	if (n)
		memcpy(dst, src, n);
	return n;
}

int ctl_frame_feed(struct ctl_frame *f, const void *buf, size_t len, size_t *used)
{
	const char *p = buf;
	size_t n = 0;

	*used = 0;
	if (f->error)
		return f->error;
	if (f->done)		/* the last message is read: its payload goes */
		ctl_frame_destroy(f);
	if (f->hdr_got < CTL_FRAME_HDR_LEN) {
		n = ctl_frame_take((char *)&f->hdr + f->hdr_got, p, len, CTL_FRAME_HDR_LEN - f->hdr_got);
		f->hdr_got += n;
		*used = n;
		if (f->hdr_got < CTL_FRAME_HDR_LEN)
			return 0;
		if ((f->error = ctl_frame_check_hdr(&f->hdr)))
			return f->error;
		/* Allocated only once the length is known to be within the limit. */
		f->payload = malloc(f->hdr.length + 1);
		if (!f->payload)
			return f->error = -ENOMEM;
	}
	n = ctl_frame_take(f->payload + f->pay_got, p + n, len - n, f->hdr.length - f->pay_got);
	f->pay_got += n;
	*used += n;
	if (f->pay_got < f->hdr.length)
		return 0;
	f->payload[f->hdr.length] = 0;
	f->done = 1;
	return 1;
}

size_t ctl_frame_want(const struct ctl_frame *f)
{
	if (f->error)
		return 0;
	if (f->done)
		return CTL_FRAME_HDR_LEN;
	if (f->hdr_got < CTL_FRAME_HDR_LEN)
		return CTL_FRAME_HDR_LEN - f->hdr_got;
	return f->hdr.length - f->pay_got;
}

int ctl_frame_partial(const struct ctl_frame *f)
{
	return !f->done && f->hdr_got;
}

int ctl_frame_pack_patterns(char *buf, size_t max, const char **inc, unsigned ninc,
			    const char **exc, unsigned nexc)
{
	size_t off = 0;

	for (unsigned i = 0; i < ninc + nexc; i++) {
		const char *p = i < ninc ? inc[i] : exc[i - ninc];
		size_t n = strlen(p) + 1;

		if (off + (i >= ninc) + n > max)
			return -E2BIG;
		if (i >= ninc)
			buf[off++] = '!';
		memcpy(buf + off, p, n);
		off += n;
	}
	return (int)off;
}

int ctl_frame_next_pattern(const char *buf, size_t len, size_t *off, const char **pat)
{
	/* The final NUL first: it is what makes strlen below safe. */
	if (len && buf[len - 1])
		return -EBADMSG;
	while (*off < len) {
		const char *p = buf + *off;
		size_t n = strlen(p);

		*off += n + 1;
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)p[i] < 0x21 || (unsigned char)p[i] > 0x7e)
				return -EILSEQ;
		if (n) {
			*pat = p;
			return 1;
		}
	}
	return 0;
}

int ctl_frame_pack_option(char *buf, size_t max, int len, const char *name, const char *value)
{
	int n;

	if (len < 0 || (size_t)len > max)
		return -E2BIG;
	n = snprintf(buf + len, max - (size_t)len, "=%s=%s", name, value);
	if (n < 0 || (size_t)n + 1 > max - (size_t)len)
		return -E2BIG;
	return len + n + 1;	/* with its NUL */
}

const char *ctl_frame_option(const char *pat, const char *name)
{
	size_t n = strlen(name);

	if (pat[0] != '=' || strncmp(pat + 1, name, n) || pat[n + 1] != '=')
		return NULL;
	return pat + n + 2;
}
