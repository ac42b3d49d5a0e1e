// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for what the control server does with a client's bytes
 * before anything touches the tracer (vmm/control/control-frame.c and the
 * pattern parsing of control.c's ctl_parse_patterns): the input is the
 * byte stream of one connection. It is fed twice, once whole and once in
 * splits the input's first bytes choose, and both must yield the same
 * messages and the same error: a client must not be able to change what
 * the server reads by how it cuts its writes. Each ATTACH/DETACH payload
 * then goes through the pattern list, the option syntax and the filter.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/control/control-frame.h"
#include "vmm/trace/filter.h"
#include "vmm/output/writer.h"

#define MAX_MSGS 64

struct msg_sum {
	uint16_t type;
	uint32_t length;
	uint64_t hash;
};

struct stream {
	struct msg_sum msgs[MAX_MSGS];
	unsigned n;
	int error;
};

static uint64_t hash(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	while (n--)
		h = (h ^ (uint8_t)*p++) * 1099511628211ull;
	return h;
}

/* The pattern list as control.c walks it, with the promises checked. */
static void walk_patterns(const char *pay, size_t len)
{
	size_t off = 0, prev = 0, packed_len = 0;
	const char *p, *pats[256];
	unsigned n = 0;
	struct filter f;
	struct errbuf err;
	int rc;

	filter_init(&f);
	while ((rc = ctl_frame_next_pattern(pay, len, &off, &p)) > 0) {
		size_t plen = strlen(p);
		const char *fmt = ctl_frame_option(p, "format");

		if (off <= prev || off > len || p < pay || p + plen >= pay + len || !plen)
			abort();
		for (size_t i = 0; i < plen; i++)
			if ((unsigned char)p[i] < 0x21 || (unsigned char)p[i] > 0x7e)
				abort();
		prev = off;
		if (n < 256)
			pats[n++] = p;
		packed_len += plen + 1;
		if (fmt && (fmt < p || fmt > p + plen))
			abort();
		if (fmt) {
			trace_writer_find(fmt);
			continue;
		}
		if (p[0] != '=' && !filter_add(&f, p, &err))
			filter_match(&f, p);
	}
	if (len && pay[len - 1] && rc != -EBADMSG)
		abort();	/* an unterminated payload is refused before any pattern */
	filter_match(&f, "start_kernel");
	filter_destroy(&f);

	/* Packing what was read and reading it back gives the same list. */
	if (!rc && n < 256) {
		char *buf = malloc(packed_len + 1);
		int plen = ctl_frame_pack_patterns(buf, packed_len, pats, n, NULL, 0);
		size_t o = 0;

		if (plen != (int)packed_len)
			abort();
		for (unsigned i = 0; i < n; i++)
			if (ctl_frame_next_pattern(buf, (size_t)plen, &o, &p) != 1 || strcmp(p, pats[i]))
				abort();
		if (ctl_frame_next_pattern(buf, (size_t)plen, &o, &p) != 0)
			abort();
		free(buf);
	}
}

static void take_msg(struct stream *s, const struct ctl_frame *f, int patterns)
{
	if (ctl_frame_check_hdr(&f->hdr) || f->pay_got != f->hdr.length || f->payload[f->hdr.length])
		abort();
	if (s->n < MAX_MSGS) {
		s->msgs[s->n].type = f->hdr.type;
		s->msgs[s->n].length = f->hdr.length;
		s->msgs[s->n].hash = hash(f->payload, f->hdr.length);
	}
	s->n++;
	if (patterns && (f->hdr.type == VT_CTL_ATTACH || f->hdr.type == VT_CTL_DETACH))
		walk_patterns(f->payload, f->hdr.length);
}

/* Feeds data in pieces of the sizes cuts gives (cycled; none: all at once). */
static void feed(struct stream *s, const uint8_t *data, size_t size, const uint8_t *cuts,
		 size_t ncuts, int patterns)
{
	struct ctl_frame f;
	size_t off = 0, k = 0;

	memset(s, 0, sizeof(*s));
	ctl_frame_init(&f);
	while (off < size) {
		size_t piece = ncuts ? cuts[k++ % ncuts] + 1u : size - off, want, used;
		int rc;

		if (piece > size - off)
			piece = size - off;
		/* Like ctl_read, ask for no more than the message lacks... */
		want = ctl_frame_want(&f);
		if (ncuts && want && piece > want)
			piece = want;
		/* ...or hand over everything and let feed stop at the message's end. */
		rc = ctl_frame_feed(&f, data + off, piece, &used);
		if (used > piece || (rc == 0 && used != piece))
			abort();	/* 0 means it took every byte */
		off += used;
		if (rc < 0) {
			s->error = rc;
			if (ctl_frame_feed(&f, data, size, &used) != rc || used || ctl_frame_want(&f))
				abort();	/* errors are sticky */
			break;
		}
		if (rc == 1)
			take_msg(s, &f, patterns);
		if (!used && rc != 1)
			abort();	/* no progress would spin the server */
	}
	if (!s->error && ctl_frame_partial(&f) != (f.hdr_got && !f.done))
		abort();
	ctl_frame_destroy(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stream *whole, *split;
	size_t ncuts;

	if (size < 1)
		return 0;
	ncuts = data[0] % 8;
	if (size < 1 + ncuts)
		return 0;
	whole = malloc(sizeof(*whole));
	split = malloc(sizeof(*split));
	feed(whole, data + 1 + ncuts, size - 1 - ncuts, NULL, 0, 1);
	feed(split, data + 1 + ncuts, size - 1 - ncuts, data + 1, ncuts, 0);
	if (whole->n != split->n || whole->error != split->error)
		abort();
	for (unsigned i = 0; i < whole->n && i < MAX_MSGS; i++)
		if (whole->msgs[i].type != split->msgs[i].type ||
		    whole->msgs[i].length != split->msgs[i].length ||
		    whole->msgs[i].hash != split->msgs[i].hash)
			abort();
	free(whole);
	free(split);
	return 0;
}
