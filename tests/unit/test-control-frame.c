// SPDX-License-Identifier: GPL-2.0
/*
 * The control socket's framing (vmm/control/control-frame.c) without a socket: what
 * the server makes of untrusted bytes however a read splits them, checked
 * against a plain reading of proto/control.h; and the pattern list that
 * ATTACH and DETACH carry, as the server reads it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check.h"
#include "vmm/control/control-frame.h"

#define HDR CTL_FRAME_HDR_LEN
#define MAXMSG 64

/* What a stream came to: its messages, then an error or a partial one. */
struct outcome {
	unsigned n;
	uint16_t type[MAXMSG];
	uint32_t len[MAXMSG];
	size_t end[MAXMSG];	/* stream offset just past each message */
	int err;		/* 0 or the error */
	size_t err_at;		/* stream offset just past the refused header */
	int partial;		/* the stream ends inside a message */
	unsigned bad;		/* parser misbehaviour seen (run only) */
};

static size_t put_raw(uint8_t *out, uint32_t magic, uint16_t version, uint16_t type, uint32_t len)
{
	struct vt_ctl_hdr h = { .magic = magic, .version = version, .type = type, .length = len };

	memcpy(out, &h, sizeof(h));
	return sizeof(h);
}

/* proto/control.h read plainly, the whole stream at once. */
static void reference(const uint8_t *buf, size_t len, struct outcome *o)
{
	size_t off = 0;

	memset(o, 0, sizeof(*o));
	while (len - off >= HDR) {
		struct vt_ctl_hdr h;

		memcpy(&h, buf + off, HDR);
		o->err = h.magic != VT_CTL_MAGIC ? -EBADMSG : h.version != VT_CTL_VERSION ? -EPROTONOSUPPORT :
			 h.length > VT_CTL_MAX_PAYLOAD ? -EMSGSIZE : 0;
		if (o->err) {
			o->err_at = off + HDR;
			return;
		}
		if (len - off - HDR < h.length)
			break;
		off += HDR + h.length;
		if (o->n < MAXMSG) {
			o->type[o->n] = h.type;
			o->len[o->n] = h.length;
			o->end[o->n] = off;
		}
		o->n++;
	}
	o->partial = off < len;
}

/* One message out of the parser: within the limit, its bytes the stream's. */
static void note_message(const struct ctl_frame *f, const uint8_t *buf, size_t end, struct outcome *o)
{
	uint32_t n = f->hdr.length;

	if (!CHECK_QUIET(n <= VT_CTL_MAX_PAYLOAD && n <= end && f->payload && !f->payload[n] &&
			 !memcmp(f->payload, buf + end - n, n),
			 "message %u (length %u, ending at %zu) is not the stream's", o->n, n, end))
		o->bad++;
	if (o->n < MAXMSG) {
		o->type[o->n] = f->hdr.type;
		o->len[o->n] = n;
		o->end[o->n] = end;
	}
	o->n++;
}

/* The stream fed to a fresh parser in pieces cut at cuts[] (ascending). */
static void run(const uint8_t *buf, size_t len, const size_t *cuts, unsigned ncuts, struct outcome *o)
{
	struct ctl_frame f;
	size_t off = 0;

	memset(o, 0, sizeof(*o));
	ctl_frame_init(&f);
	for (unsigned k = 0; k <= ncuts && !o->err; k++) {
		size_t stop = k < ncuts ? cuts[k] : len, used;

		while (!o->err) {
			int rc = ctl_frame_feed(&f, buf + off, stop - off, &used);

			if (!CHECK_QUIET(used <= stop - off && (rc != 0 || used == stop - off),
					 "feed of %zu bytes at %zu: %d, used %zu", stop - off, off, rc, used))
				o->bad++;
			off += used;
			if (rc < 0) {
				o->err = rc;
				o->err_at = off;
			} else if (rc > 0) {
				note_message(&f, buf, off, o);
			} else {
				break;
			}
		}
	}
	o->partial = !o->err && ctl_frame_partial(&f);
	ctl_frame_destroy(&f);
}

static int same_outcome(const struct outcome *a, const struct outcome *b)
{
	if (a->n != b->n || a->err != b->err || a->err_at != b->err_at || a->partial != b->partial || a->bad)
		return 0;
	for (unsigned i = 0; i < a->n && i < MAXMSG; i++)
		if (a->type[i] != b->type[i] || a->len[i] != b->len[i] || a->end[i] != b->end[i])
			return 0;
	return 1;
}

static void check_encode(void)
{
	static const uint8_t want[] = {
		'V', 'C', 'T', 'L', 1, 0, 0x80, 0, 5, 0, 0, 0, 0xb9, 0xff, 0xff, 0xff, 'h', 'e', 'l', 'l', 'o',
	};
	uint8_t out[64];
	size_t n = ctl_frame_encode(out, VT_CTL_REPLY, -EPROTO, "hello", 5);

	/* Host order, as both ends share the host; every host arch is little-endian. */
	CHECK(n == sizeof(want) && !memcmp(out, want, n), "encode: a reply of 5 bytes is %zu exact bytes", n);
	n = ctl_frame_encode(out, VT_CTL_STATUS, 0, NULL, 0);
	CHECK(n == HDR && !memcmp(out, "VCTL\1\0\3\0\0\0\0\0\0\0\0\0", HDR),
	      "encode: an empty request is the header alone");
}

/* One ATTACH, whole, byte by byte and cut at every offset. */
static void check_one_message(void)
{
	static const char pats[] = "vfs_*\0ksys_read\0!vfs_write";
	uint8_t buf[HDR + sizeof(pats)];
	size_t len = ctl_frame_encode(buf, VT_CTL_ATTACH, 0, pats, sizeof(pats)), cuts[HDR + sizeof(pats)];
	struct outcome o, ref;
	unsigned ok = 0;

	reference(buf, len, &ref);
	CHECK(ref.n == 1 && ref.type[0] == VT_CTL_ATTACH && ref.len[0] == sizeof(pats) && !ref.err && !ref.partial,
	      "reference: one ATTACH of %zu bytes", sizeof(pats));
	run(buf, len, NULL, 0, &o);
	CHECK(same_outcome(&o, &ref), "one message fed whole: %u message, error %d", o.n, o.err);
	for (size_t i = 0; i < len; i++)
		cuts[i] = i + 1;
	run(buf, len, cuts, len - 1, &o);
	CHECK(same_outcome(&o, &ref), "one message fed byte by byte: %u message, error %d", o.n, o.err);
	for (size_t k = 0; k <= len; k++) {
		run(buf, len, &k, 1, &o);
		ok += CHECK_QUIET(same_outcome(&o, &ref), "cut at %zu: %u messages, error %d", k, o.n, o.err);
	}
	CHECK(ok == len + 1, "one message cut at each of its %zu offsets: %u right", len + 1, ok);
}

/* An ATTACH and an empty STATUS back to back, as one read may bring them. */
static void check_two_messages(void)
{
	uint8_t buf[64];
	size_t len = ctl_frame_encode(buf, VT_CTL_ATTACH, 0, "a*\0", 3), cuts[64];
	struct outcome o;
	unsigned ok = 0;

	len += ctl_frame_encode(buf + len, VT_CTL_STATUS, 0, NULL, 0);
	run(buf, len, NULL, 0, &o);
	CHECK(o.n == 2 && !o.err && !o.partial && !o.bad && o.type[0] == VT_CTL_ATTACH && o.len[0] == 3 &&
	      o.end[0] == HDR + 3 && o.type[1] == VT_CTL_STATUS && o.len[1] == 0 && o.end[1] == 2 * HDR + 3,
	      "two messages in one buffer: both, in order, each ending where it should");
	for (size_t i = 0; i < len; i++)
		cuts[i] = i + 1;
	run(buf, len, cuts, len - 1, &o);
	CHECK(o.n == 2 && o.end[0] == HDR + 3 && o.end[1] == len && !o.bad, "two messages byte by byte");
	for (size_t k = 0; k <= len; k++) {
		run(buf, len, &k, 1, &o);
		ok += CHECK_QUIET(o.n == 2 && o.end[0] == HDR + 3 && o.end[1] == len && !o.bad && !o.partial,
				  "two messages cut at %zu: %u", k, o.n);
	}
	CHECK(ok == len + 1, "two messages cut at each of their %zu offsets: %u right", len + 1, ok);
}

/* The server reads no more than ctl_frame_want: it never takes the next message's bytes. */
static void check_want(void)
{
	uint8_t buf[64];
	size_t len = ctl_frame_encode(buf, VT_CTL_DETACH, 0, "x\0", 2), off = 0, used;
	struct ctl_frame f;
	int rc, msgs = 0;

	len += put_raw(buf + len, 0xdeadbeef, 1, VT_CTL_STATUS, 0);
	ctl_frame_init(&f);
	CHECK(ctl_frame_want(&f) == HDR && !ctl_frame_partial(&f), "a fresh parser wants a header, holds nothing");
	while ((rc = ctl_frame_feed(&f, buf + off, ctl_frame_want(&f), &used)) >= 0) {
		off += used;
		msgs += rc;
		if (rc && !CHECK_QUIET(off == HDR + 2 && ctl_frame_want(&f) == HDR && !ctl_frame_partial(&f),
				       "after the message: offset %zu, want %zu", off, ctl_frame_want(&f)))
			break;
	}
	off += used;
	CHECK(msgs == 1 && rc == -EBADMSG && off == len && ctl_frame_want(&f) == 0,
	      "reading what it wants: the message, then the bad header at its end (%zu of %zu)", off, len);
	ctl_frame_destroy(&f);
}

/* Feeds buf whole to a fresh parser; returns the first result. */
static int feed_once(struct ctl_frame *f, const void *buf, size_t len, size_t *used)
{
	ctl_frame_init(f);
	return ctl_frame_feed(f, buf, len, used);
}

static void check_truncated(void)
{
	uint8_t buf[64];
	size_t len = ctl_frame_encode(buf, VT_CTL_ATTACH, 0, "vfs_read\0", 9), used;
	struct ctl_frame f;
	int rc;

	rc = feed_once(&f, buf, 10, &used);
	CHECK(rc == 0 && used == 10 && ctl_frame_partial(&f) && ctl_frame_want(&f) == HDR - 10,
	      "10 bytes of a header: taken, partial, 6 more wanted (rc %d, want %zu)", rc, ctl_frame_want(&f));
	ctl_frame_destroy(&f);
	rc = feed_once(&f, buf, len - 4, &used);
	CHECK(rc == 0 && used == len - 4 && ctl_frame_partial(&f) && ctl_frame_want(&f) == 4,
	      "a payload 4 bytes short: partial, 4 more wanted (rc %d, want %zu)", rc, ctl_frame_want(&f));
	rc = ctl_frame_feed(&f, buf + len - 4, 4, &used);
	CHECK(rc == 1 && used == 4 && !ctl_frame_partial(&f) && !strcmp(f.payload, "vfs_read"),
	      "the last 4 bytes complete it (rc %d)", rc);
	rc = ctl_frame_feed(&f, "", 0, &used);
	CHECK(rc == 0 && used == 0 && !ctl_frame_partial(&f) && ctl_frame_want(&f) == HDR,
	      "nothing more: no message, nothing partial");
	ctl_frame_destroy(&f);
}

static void check_bad_header(const char *what, uint32_t magic, uint16_t version, uint32_t length, int want)
{
	uint8_t buf[HDR + 8] = { 0 };
	struct ctl_frame f;
	size_t used;
	int rc;

	put_raw(buf, magic, version, VT_CTL_ATTACH, length);
	rc = feed_once(&f, buf, HDR - 1, &used);
	CHECK(rc == 0 && used == HDR - 1, "%s: nothing refused before the header is whole (rc %d)", what, rc);
	rc = ctl_frame_feed(&f, buf + HDR - 1, sizeof(buf) - HDR + 1, &used);
	CHECK(rc == want && used == 1 && f.hdr.length == length && ctl_frame_want(&f) == 0,
	      "%s: %s after the header's last byte, the header kept (rc %d, used %zu)", what, strerror(-want), rc,
	      used);
	rc = ctl_frame_feed(&f, buf + HDR, 8, &used);
	CHECK(rc == want && used == 0, "%s: the error stays, nothing more taken (rc %d)", what, rc);
	ctl_frame_destroy(&f);
}

static void check_headers(void)
{
	static const char http[] = "GET / HTTP/1.0\r\n\r\n";
	struct ctl_frame f;
	size_t used;
	int rc;

	check_bad_header("wrong magic", VT_CTL_MAGIC ^ 1, VT_CTL_VERSION, 4, -EBADMSG);
	check_bad_header("wrong version", VT_CTL_MAGIC, VT_CTL_VERSION + 1, 4, -EPROTONOSUPPORT);
	check_bad_header("version 0", VT_CTL_MAGIC, 0, 4, -EPROTONOSUPPORT);
	check_bad_header("wrong magic and version: magic first", 0, 0, 4, -EBADMSG);
	check_bad_header("wrong version and too long: version first", VT_CTL_MAGIC, 2, 1u << 20, -EPROTONOSUPPORT);
	check_bad_header("length one over the maximum", VT_CTL_MAGIC, VT_CTL_VERSION, VT_CTL_MAX_PAYLOAD + 1,
			 -EMSGSIZE);
	check_bad_header("length 1 MiB", VT_CTL_MAGIC, VT_CTL_VERSION, 1u << 20, -EMSGSIZE);
	check_bad_header("length 4 GiB - 1", VT_CTL_MAGIC, VT_CTL_VERSION, UINT32_MAX, -EMSGSIZE);
	rc = feed_once(&f, http, sizeof(http) - 1, &used);
	CHECK(rc == -EBADMSG && used == HDR, "an HTTP request: wrong magic at byte 16 (rc %d)", rc);
	ctl_frame_destroy(&f);
}

static void check_lengths(void)
{
	static uint8_t buf[HDR + VT_CTL_MAX_PAYLOAD];
	struct ctl_frame f;
	size_t used;
	int rc;

	for (size_t i = 0; i < VT_CTL_MAX_PAYLOAD; i++)
		buf[HDR + i] = 'a' + i % 26;
	put_raw(buf, VT_CTL_MAGIC, VT_CTL_VERSION, VT_CTL_DETACH, VT_CTL_MAX_PAYLOAD);
	rc = feed_once(&f, buf, HDR, &used);
	CHECK(rc == 0 && ctl_frame_want(&f) == VT_CTL_MAX_PAYLOAD,
	      "length exactly the maximum: accepted, all of it wanted");
	rc = ctl_frame_feed(&f, buf + HDR, VT_CTL_MAX_PAYLOAD, &used);
	CHECK(rc == 1 && used == VT_CTL_MAX_PAYLOAD && f.hdr.length == VT_CTL_MAX_PAYLOAD &&
	      !memcmp(f.payload, buf + HDR, VT_CTL_MAX_PAYLOAD) && f.payload[VT_CTL_MAX_PAYLOAD] == 0,
	      "length exactly the maximum: the whole payload, NUL after it");
	ctl_frame_destroy(&f);
	put_raw(buf, VT_CTL_MAGIC, VT_CTL_VERSION, VT_CTL_NMI, 0);
	rc = feed_once(&f, buf, HDR + 5, &used);
	CHECK(rc == 1 && used == HDR && f.hdr.type == VT_CTL_NMI && f.payload && f.payload[0] == 0 &&
	      !ctl_frame_partial(&f),
	      "zero-length payload: complete with the header, empty payload, nothing more taken");
	ctl_frame_destroy(&f);
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)(rnd_state >> 32) % n;
}

/* A stream of a few pieces: messages, broken headers, noise, a cut message. */
static size_t random_stream(uint8_t *buf, size_t max)
{
	size_t len = 0;

	for (unsigned pieces = 1 + rnd(4); pieces && len + HDR + 200 <= max; pieces--) {
		uint32_t n = rnd(120);
		unsigned kind = rnd(8);

		if (kind <= 3) {	/* a good header and its payload, or part of it */
			len += put_raw(buf + len, VT_CTL_MAGIC, VT_CTL_VERSION, rnd(0x100), n);
			n = kind == 3 ? rnd(n + 1) : n;
		} else if (kind == 4) {	/* a header with any field wrong */
			len += put_raw(buf + len, rnd(2) ? VT_CTL_MAGIC : (uint32_t)rnd_state, rnd(3),
				       rnd(0x100), rnd(2) ? n : (uint32_t)(rnd_state >> 3));
		}
		for (uint32_t i = 0; i < n; i++)
			buf[len++] = rnd(0x100);
	}
	return len;
}

static void check_random(void)
{
	static uint8_t buf[1024];
	unsigned agree = 0, total = 4000, msgs = 0, errs = 0;

	for (unsigned i = 0; i < total; i++) {
		size_t len = random_stream(buf, sizeof(buf)), cuts[6];
		unsigned ncuts = rnd(7);
		struct outcome o, ref;

		for (unsigned k = 0; k < ncuts; k++)
			cuts[k] = rnd(len + 1);
		for (unsigned k = 1; k < ncuts; k++)	/* ascending, by insertion */
			for (unsigned j = k; j && cuts[j - 1] > cuts[j]; j--) {
				size_t t = cuts[j];

				cuts[j] = cuts[j - 1];
				cuts[j - 1] = t;
			}
		reference(buf, len, &ref);
		run(buf, len, cuts, ncuts, &o);
		agree += CHECK_QUIET(same_outcome(&o, &ref), "random stream %u (%zu bytes): %u messages, error %d; "
				     "reference %u, error %d", i, len, o.n, o.err, ref.n, ref.err);
		msgs += o.n;
		errs += !!o.err;
	}
	printf("INFO: %u random streams: %u messages, %u refused\n", total, msgs, errs);
	CHECK(agree == total && msgs > 1000 && errs > 1000,
	      "random streams cut at random: %u of %u as the reference reads them", agree, total);
}

/* The patterns the server takes from a payload, space-separated, or the error. */
static const char *patterns_of(const char *buf, size_t len)
{
	static char out[256];
	const char *p;
	size_t off = 0;
	int rc;

	out[0] = 0;
	while ((rc = ctl_frame_next_pattern(buf, len, &off, &p)) > 0)
		snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s[%.40s]", out[0] ? " " : "", p);
	if (rc)
		snprintf(out + strlen(out), sizeof(out) - strlen(out), "%serror %s", out[0] ? " " : "",
			 rc == -EBADMSG ? "EBADMSG" : rc == -EILSEQ ? "EILSEQ" : "other");
	return out;
}

#define EXPECT_PATTERNS(lit, want)                                                        \
	CHECK(!strcmp(patterns_of(lit, sizeof(lit) - 1), want), "payload %s -> %s", #lit, \
	      patterns_of(lit, sizeof(lit) - 1))

static void check_pack(void)
{
	const char *inc[] = { "vfs_*", "ksys_read" }, *exc[] = { "vfs_write" }, *empty[] = { "" };
	static const char want[] = "vfs_*\0ksys_read\0!vfs_write";
	char buf[64];
	int n;

	n = ctl_frame_pack_patterns(buf, sizeof(buf), inc, 2, exc, 1);
	CHECK(n == sizeof(want) && !memcmp(buf, want, n), "pack: two includes and an exclude are %d exact bytes", n);
	CHECK(!strcmp(patterns_of(buf, n), "[vfs_*] [ksys_read] [!vfs_write]"), "round trip: %s",
	      patterns_of(buf, n));
	CHECK(ctl_frame_pack_patterns(buf, sizeof(want), inc, 2, exc, 1) == sizeof(want),
	      "pack: exactly the room they need is enough");
	CHECK(ctl_frame_pack_patterns(buf, sizeof(want) - 1, inc, 2, exc, 1) == -E2BIG,
	      "pack: one byte less is -E2BIG");
	n = ctl_frame_pack_patterns(buf, sizeof(buf), NULL, 0, NULL, 0);
	CHECK(n == 0 && !strcmp(patterns_of(buf, 0), ""), "empty lists: 0 bytes, no pattern (DETACH: every slot)");
	n = ctl_frame_pack_patterns(buf, sizeof(buf), empty, 1, empty, 1);
	CHECK(n == 3 && !memcmp(buf, "\0!", 3) && !strcmp(patterns_of(buf, n), "[!]"),
	      "an empty include is skipped by the server; an empty exclude is the pattern '!', "
	      "which filter_add refuses");
}

/* Patterns that fill a request's payload exactly, and one byte more. */
static void check_pack_limit(void)
{
	static char big[VT_CTL_MAX_PAYLOAD + 1], buf[VT_CTL_MAX_PAYLOAD], pats[VT_CTL_MAX_PAYLOAD][2];
	static const char *many[VT_CTL_MAX_PAYLOAD / 2 + 1];
	const char *one[] = { big };
	const char *p;
	size_t off = 0;
	int n, rc;

	memset(big, 'a', VT_CTL_MAX_PAYLOAD - 1);
	n = ctl_frame_pack_patterns(buf, sizeof(buf), one, 1, NULL, 0);
	rc = ctl_frame_next_pattern(buf, n, &off, &p);
	CHECK(n == VT_CTL_MAX_PAYLOAD && rc == 1 && strlen(p) == VT_CTL_MAX_PAYLOAD - 1 && off == (size_t)n &&
	      ctl_frame_next_pattern(buf, n, &off, &p) == 0,
	      "one include of 65535 bytes fills the payload and reads back");
	CHECK(ctl_frame_pack_patterns(buf, sizeof(buf), NULL, 0, one, 1) == -E2BIG,
	      "as an exclude ('!') it is one byte too many");
	big[VT_CTL_MAX_PAYLOAD - 2] = 0;
	CHECK(ctl_frame_pack_patterns(buf, sizeof(buf), NULL, 0, one, 1) == VT_CTL_MAX_PAYLOAD,
	      "an exclude of 65534 bytes fills it");
	big[VT_CTL_MAX_PAYLOAD - 2] = 'a';
	big[VT_CTL_MAX_PAYLOAD - 1] = 'a';
	CHECK(ctl_frame_pack_patterns(buf, sizeof(buf), one, 1, NULL, 0) == -E2BIG,
	      "an include of 65536 bytes is -E2BIG");
	for (unsigned i = 0; i < VT_CTL_MAX_PAYLOAD / 2 + 1; i++) {
		pats[i][0] = 'a' + i % 26;
		many[i] = pats[i];
	}
	n = ctl_frame_pack_patterns(buf, sizeof(buf), many, VT_CTL_MAX_PAYLOAD / 2, NULL, 0);
	for (off = 0, rc = 0; ctl_frame_next_pattern(buf, n, &off, &p) == 1; rc++)
		;
	CHECK(n == VT_CTL_MAX_PAYLOAD && rc == VT_CTL_MAX_PAYLOAD / 2,
	      "32768 one-letter patterns fill it: %d read back", rc);
	CHECK(ctl_frame_pack_patterns(buf, sizeof(buf), many, VT_CTL_MAX_PAYLOAD / 2 + 1, NULL, 0) == -E2BIG,
	      "one pattern more is -E2BIG");
}

/* Payloads no client of ours sends, as the server reads them. */
static void check_parse(void)
{
	EXPECT_PATTERNS("vfs_read", "error EBADMSG");
	EXPECT_PATTERNS("vfs_read\0ksys", "error EBADMSG");	/* refused before any pattern is used */
	EXPECT_PATTERNS("", "");
	EXPECT_PATTERNS("\0", "");
	EXPECT_PATTERNS("\0\0\0", "");
	EXPECT_PATTERNS("\0\0vfs_read\0\0\0!ksys_read\0", "[vfs_read] [!ksys_read]");
	EXPECT_PATTERNS("vfs_\001read\0", "error EILSEQ");
	EXPECT_PATTERNS("vfs read\0", "error EILSEQ");
	EXPECT_PATTERNS("vfs_read\0ksys\tread\0", "[vfs_read] error EILSEQ");
	EXPECT_PATTERNS("\177\0", "error EILSEQ");
	EXPECT_PATTERNS("caf\303\251\0", "error EILSEQ");
	EXPECT_PATTERNS("!\0", "[!]");
	EXPECT_PATTERNS("!\"#$%&'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~\0", "[!\"#$%&'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~]");
}

/* "=NAME=VALUE" options among the patterns (attach's --format). */
static void check_options(void)
{
	const char *inc[] = { "vfs_read" };
	char buf[64];
	int len;

	len = ctl_frame_pack_patterns(buf, sizeof(buf), inc, 1, NULL, 0);
	len = ctl_frame_pack_option(buf, sizeof(buf), len, "format", "dat");
	CHECK(len == 9 + 12 && !memcmp(buf, "vfs_read\0=format=dat\0", 21),
	      "pack_option: appended as one NUL-terminated element (len %d)", len);
	EXPECT_PATTERNS("vfs_read\0=format=dat\0", "[vfs_read] [=format=dat]");
	CHECK(ctl_frame_pack_option(buf, 21, 9, "format", "perfetto") == -E2BIG,
	      "pack_option: -E2BIG when it does not fit");
	CHECK(ctl_frame_pack_option(buf, 21, 9, "format", "dat") == 21,
	      "pack_option: exactly fitting, NUL included");
	CHECK(ctl_frame_pack_option(buf, 8, 9, "format", "dat") == -E2BIG,
	      "pack_option: a length past max is refused");
	CHECK(ctl_frame_pack_option(buf, sizeof(buf), -E2BIG, "format", "dat") == -E2BIG,
	      "pack_option: an error from the packer passes through");
	CHECK(!strcmp(ctl_frame_option("=format=dat", "format"), "dat"), "option: its value");
	CHECK(!strcmp(ctl_frame_option("=format=", "format"), ""), "option: an empty value");
	CHECK(!ctl_frame_option("format=dat", "format"), "option: no leading '=' is a pattern");
	CHECK(!ctl_frame_option("=formatx=dat", "format"), "option: another name");
	CHECK(!ctl_frame_option("=form=dat", "format"), "option: a prefix of the name");
	CHECK(!ctl_frame_option("=format", "format"), "option: a name without '='");
}

int main(void)
{
	check_encode();
	check_one_message();
	check_two_messages();
	check_want();
	check_truncated();
	check_headers();
	check_lengths();
	check_random();
	check_pack();
	check_pack_limit();
	check_parse();
	check_options();
	return check_exit();
}
