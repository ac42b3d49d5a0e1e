// SPDX-License-Identifier: GPL-2.0
/*
 * The protobuf encoder (vmm/output/protobuf.c) against hand-computed bytes,
 * and the Perfetto writer (vmm/output/perfetto.c) read back by a
 * decoder of this test's own: it walks the wire format generically, then
 * interprets the Perfetto fields it knows, and must recover every event
 * with its vCPU (through the track descriptors), its name and caller
 * (through the interning tables) and its timestamp.
 *
 * `test-trace-perfetto --write FILE NCPUS NEVENTS` writes the synthetic
 * trace to FILE and exits; tests/interop/perfetto-protoc.sh reads it with protoc.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check.h"
#include "tests/interop/perfetto/decode.h"
#include "vmm/output/protobuf.h"
#include "vmm/output/perfetto.h"
#include "vmm/output/vmevent.h"

#define KT 0xffffffff81000000ull
#define NSYMS 300		/* fn_000 .. fn_299, 0x100 bytes each, then _etext */

static struct symtab syms;

static void build_symtab(void)
{
	char name[32];

	symtab_init(&syms);
	for (int i = NSYMS - 1; i >= 0; i--) {	/* out of order: symtab_finish sorts */
		snprintf(name, sizeof(name), "fn_%03d", i);
		if (symtab_add(&syms, KT + 0x100ull * i, 'T', name, strlen(name)))
			exit(1);
	}
	if (symtab_add(&syms, KT + 0x100ull * NSYMS, 'T', "_etext", 6) || symtab_finish(&syms))
		exit(1);
}

/* ---- the encoder */

struct want {
	const char *what;
	size_t len;
	const uint8_t *bytes;
};
#define W(what, ...) { what, sizeof((const uint8_t[]){ __VA_ARGS__ }), (const uint8_t[]){ __VA_ARGS__ } }

static int same(const struct protobuf_buf *b, const uint8_t *bytes, size_t len)
{
	return !b->error && b->len == len && !memcmp(b->data, bytes, len);
}

static void test_varints(void)
{
	/* Every length boundary: 2^(7k) - 1 is the largest value of k bytes. */
	const struct { uint64_t v; struct want w; } t[] = {
		{ 0, W("0", 0x00) }, { 1, W("1", 0x01) }, { 127, W("2^7-1", 0x7f) },
		{ 128, W("2^7", 0x80, 0x01) }, { 300, W("300", 0xac, 0x02) },
		{ 16383, W("2^14-1", 0xff, 0x7f) }, { 16384, W("2^14", 0x80, 0x80, 0x01) },
		{ (1ull << 21) - 1, W("2^21-1", 0xff, 0xff, 0x7f) },
		{ 1ull << 21, W("2^21", 0x80, 0x80, 0x80, 0x01) },
		{ (1ull << 28) - 1, W("2^28-1", 0xff, 0xff, 0xff, 0x7f) },
		{ 1ull << 28, W("2^28", 0x80, 0x80, 0x80, 0x80, 0x01) },
		{ (1ull << 35) - 1, W("2^35-1", 0xff, 0xff, 0xff, 0xff, 0x7f) },
		{ 1ull << 35, W("2^35", 0x80, 0x80, 0x80, 0x80, 0x80, 0x01) },
		{ (1ull << 42) - 1, W("2^42-1", 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f) },
		{ 1ull << 42, W("2^42", 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01) },
		{ (1ull << 49) - 1, W("2^49-1", 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f) },
		{ 1ull << 49, W("2^49", 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01) },
		{ (1ull << 56) - 1, W("2^56-1", 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f) },
		{ 1ull << 56, W("2^56", 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01) },
		{ (1ull << 63) - 1, W("2^63-1", 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f) },
		{ 1ull << 63, W("2^63", 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01) },
		{ UINT64_MAX, W("2^64-1", 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01) },
	};
	struct protobuf_buf b;

	protobuf_buf_init(&b);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		protobuf_buf_reset(&b);
		protobuf_put_varint(&b, t[i].v);
		CHECK(same(&b, t[i].w.bytes, t[i].w.len) && protobuf_varint_size(t[i].v) == t[i].w.len,
		      "varint %s: %zu bytes as computed by hand", t[i].w.what, t[i].w.len);
	}
	protobuf_buf_free(&b);
}

typedef void field_fn(struct protobuf_buf *b);
static void f_int0(struct protobuf_buf *b) { protobuf_put_int(b, 1, 0); }
static void f_int_neg1(struct protobuf_buf *b) { protobuf_put_int(b, 1, -1); }
static void f_int32_min(struct protobuf_buf *b) { protobuf_put_int(b, 2, INT32_MIN); }
static void f_sint_neg1(struct protobuf_buf *b) { protobuf_put_sint(b, 1, -1); }
static void f_sint_1(struct protobuf_buf *b) { protobuf_put_sint(b, 1, 1); }
static void f_sint_neg2(struct protobuf_buf *b) { protobuf_put_sint(b, 1, -2); }
static void f_sint_min(struct protobuf_buf *b) { protobuf_put_sint(b, 1, INT64_MIN); }
static void f_sint_max(struct protobuf_buf *b) { protobuf_put_sint(b, 1, INT64_MAX); }
static void f_uint0(struct protobuf_buf *b) { protobuf_put_uint(b, 15, 0); }
static void f_key16(struct protobuf_buf *b) { protobuf_put_uint(b, 16, 1); }
static void f_key60(struct protobuf_buf *b) { protobuf_put_key(b, 60, PROTOBUF_WIRE_LEN); }
static void f_keymax(struct protobuf_buf *b) { protobuf_put_key(b, (1u << 29) - 1, PROTOBUF_WIRE_VARINT); }
static void f_bool(struct protobuf_buf *b) { protobuf_put_bool(b, 3, 42); protobuf_put_bool(b, 3, 0); }
static void f_fixed(struct protobuf_buf *b) { protobuf_put_fixed64(b, 1, 0x0102030405060708ull); }
static void f_string(struct protobuf_buf *b) { protobuf_put_string(b, 2, "testing"); }
static void f_empty(struct protobuf_buf *b) { protobuf_put_string(b, 1, ""); }
static void f_nested(struct protobuf_buf *b)
{
	size_t m = protobuf_begin_message(b, 3);

	protobuf_put_uint(b, 1, 150);
	protobuf_end_message(b, m);
}
static void f_nested_empty(struct protobuf_buf *b)
{
	protobuf_end_message(b, protobuf_begin_message(b, 4));
}
static void f_nested3(struct protobuf_buf *b)
{
	size_t a = protobuf_begin_message(b, 1), c = protobuf_begin_message(b, 2);

	protobuf_end_message(b, protobuf_begin_message(b, 3));
	protobuf_put_uint(b, 4, 1);
	protobuf_end_message(b, c);
	protobuf_put_uint(b, 5, 2);
	protobuf_end_message(b, a);
}

static void test_fields(void)
{
	const struct { field_fn *fn; struct want w; } t[] = {
		{ f_int0, W("int64 0", 0x08, 0x00) },
		{ f_int_neg1, W("int64 -1: ten bytes", 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				0xff, 0x01) },
		{ f_int32_min, W("int32 min: sign-extended", 0x10, 0x80, 0x80, 0x80, 0x80, 0xf8, 0xff, 0xff,
				 0xff, 0xff, 0x01) },
		{ f_sint_neg1, W("sint64 -1", 0x08, 0x01) },
		{ f_sint_1, W("sint64 1", 0x08, 0x02) },
		{ f_sint_neg2, W("sint64 -2", 0x08, 0x03) },
		{ f_sint_min, W("sint64 min", 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01) },
		{ f_sint_max, W("sint64 max", 0x08, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01) },
		{ f_uint0, W("uint 0 in field 15: one-byte key", 0x78, 0x00) },
		{ f_key16, W("field 16: two-byte key", 0x80, 0x01, 0x01) },
		{ f_key60, W("field 60, length-delimited", 0xe2, 0x03) },
		{ f_keymax, W("field 2^29-1", 0xf8, 0xff, 0xff, 0xff, 0x0f) },
		{ f_bool, W("bool true (from 42), false", 0x18, 0x01, 0x18, 0x00) },
		{ f_fixed, W("fixed64: little-endian", 0x09, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01) },
		{ f_string, W("string", 0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g') },
		{ f_empty, W("empty string", 0x0a, 0x00) },
		{ f_nested, W("nested message", 0x1a, 0x03, 0x08, 0x96, 0x01) },
		{ f_nested_empty, W("empty nested message", 0x22, 0x00) },
		{ f_nested3, W("three levels", 0x0a, 0x08, 0x12, 0x04, 0x1a, 0x00, 0x20, 0x01, 0x28, 0x02) },
	};
	struct protobuf_buf b;

	protobuf_buf_init(&b);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		protobuf_buf_reset(&b);
		t[i].fn(&b);
		CHECK(same(&b, t[i].w.bytes, t[i].w.len), "field: %s", t[i].w.what);
	}
	protobuf_buf_free(&b);
}

/* Nested lengths across the 1-, 2- and 3-byte boundaries, and inside each other. */
static void test_nested_lengths(void)
{
	/* A message (field 5) whose body is one bytes field 1 of plen bytes. */
	const struct { size_t body, plen; struct want outer, inner; } t[] = {
		{ 127, 125, W("127", 0x2a, 0x7f), W("", 0x0a, 0x7d) },
		{ 128, 126, W("128", 0x2a, 0x80, 0x01), W("", 0x0a, 0x7e) },
		{ 16383, 16380, W("16383", 0x2a, 0xff, 0x7f), W("", 0x0a, 0xfc, 0x7f) },
		{ 16384, 16381, W("16384", 0x2a, 0x80, 0x80, 0x01), W("", 0x0a, 0xfd, 0x7f) },
		{ 300000, 299996, W("300000", 0x2a, 0xe0, 0xa7, 0x12), W("", 0x0a, 0xdc, 0xa7, 0x12) },
	};
	static uint8_t payload[300000];
	struct protobuf_buf b;
	size_t o, in;

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 3);
	protobuf_buf_init(&b);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		size_t hl = t[i].outer.len, il = t[i].inner.len;

		protobuf_buf_reset(&b);
		o = protobuf_begin_message(&b, 5);
		protobuf_put_bytes(&b, 1, payload, t[i].plen);
		protobuf_end_message(&b, o);
		CHECK(!b.error && b.len == hl + t[i].body && il + t[i].plen == t[i].body &&
		      !memcmp(b.data, t[i].outer.bytes, hl) && !memcmp(b.data + hl, t[i].inner.bytes, il) &&
		      !memcmp(b.data + hl + il, payload, t[i].plen),
		      "nested body of %s bytes: %zu-byte length, body moved intact", t[i].outer.what, hl - 1);
	}

	/* outer(1) { inner(2) { bytes(1) 200 } }: both lengths grow to 2 bytes. */
	protobuf_buf_reset(&b);
	o = protobuf_begin_message(&b, 1);
	in = protobuf_begin_message(&b, 2);
	protobuf_put_bytes(&b, 1, payload, 200);
	protobuf_end_message(&b, in);
	protobuf_end_message(&b, o);
	CHECK(!b.error && b.len == 3 + 3 + 3 + 200 &&
	      !memcmp(b.data, "\x0a\xce\x01\x12\xcb\x01\x0a\xc8\x01", 9) && !memcmp(b.data + 9, payload, 200),
	      "nested in nested: 206 = 0xce 0x01, 203 = 0xcb 0x01");

	/* After a failure nothing more is written. */
	protobuf_buf_reset(&b);
	protobuf_put_uint(&b, 1, 1);
	b.error = ENOMEM;
	protobuf_put_string(&b, 2, "x");
	protobuf_end_message(&b, protobuf_begin_message(&b, 3));
	CHECK(b.len == 2, "errors are sticky: a buffer in error is left alone");
	protobuf_buf_free(&b);
}

/* ---- a synthetic trace, and the reader's view of it */

#define TSC_KHZ 2500000		/* 2.5 GHz: 0.4 ns per tick, so times get rounded down */
#define TSC_BASE 1000000

struct synth_ev {
	struct ring_event ev;
	char name[32], parent[32];	/* what the reader must find, computed here */
};

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void synth_func(struct synth_ev *s)
{
	unsigned i = (unsigned)(rnd() % NSYMS), r = (unsigned)(rnd() % 100);

	if (r < 90) {		/* a slot: the symbol's first byte */
		s->ev.func = KT + 0x100ull * i;
		snprintf(s->name, sizeof(s->name), "fn_%03u", i);
		return;
	}
	if (r < 95)		/* inside a function: not a slot */
		s->ev.func = KT + 0x100ull * i + 1 + rnd() % 0xff;
	else if (r < 97)	/* the last symbol has no extent */
		s->ev.func = KT + 0x100ull * NSYMS;
	else			/* past every symbol */
		s->ev.func = 0xffffffffa0000000ull + rnd() % 0x1000;
	snprintf(s->name, sizeof(s->name), "0x%" PRIx64, s->ev.func);
}

static void synth_parent(struct synth_ev *s)
{
	unsigned j = (unsigned)(rnd() % NSYMS);

	if (rnd() % 100 < 95) {	/* a return address anywhere inside its caller */
		s->ev.parent = KT + 0x100ull * j + rnd() % 0x100;
		snprintf(s->parent, sizeof(s->parent), "fn_%03u", j);
	} else {		/* below the first symbol */
		s->ev.parent = KT - 1 - rnd() % 100;
		snprintf(s->parent, sizeof(s->parent), "0x%" PRIx64, s->ev.parent);
	}
}

/* n events in timestamp order on ncpus vCPUs, the first ones before time zero. */
static struct synth_ev *synth_make(size_t n, unsigned ncpus)
{
	struct synth_ev *s = calloc(n, sizeof(*s));
	uint64_t tsc = TSC_BASE - 5000;

	for (size_t i = 0; s && i < n; i++) {
		tsc += rnd() % 3000;
		s[i].ev.tsc = tsc;
		s[i].ev.cpu = (uint16_t)(rnd() % ncpus);
		/* Only irqs-off (bit 0) is shown; bit 15 would make it a VM event. */
		s[i].ev.flags = (uint16_t)rnd() & 0x7fff;
		s[i].ev.seq = i;
		synth_func(&s[i]);
		synth_parent(&s[i]);
	}
	return s;
}

static uint64_t synth_ns(uint64_t tsc)
{
	return tsc <= TSC_BASE ? 0 : (uint64_t)((unsigned __int128)(tsc - TSC_BASE) * 1000000 / TSC_KHZ);
}

static struct trace_meta synth_meta(unsigned ncpus, const struct symtab *tab)
{
	return (struct trace_meta){ .syms = tab, .tsc_khz = TSC_KHZ, .tsc_base = TSC_BASE,
				    .ncpus = ncpus, .kernel = "bzImage" };
}

/* Writes n synthetic events through the writer's ops; 0 or -errno. */
static int synth_write(FILE *f, const struct synth_ev *s, size_t n, unsigned ncpus, struct errbuf *err)
{
	const struct trace_writer_ops *ops = &trace_writer_perfetto;
	struct trace_meta meta = synth_meta(ncpus, &syms);
	struct trace_stats st = { .events = n };
	struct trace_writer *w = NULL;
	int rc = ops->open(&w, f, &meta, err);

	for (size_t i = 0; !rc && i < n; i++) {
		rc = ops->event(w, &s[i].ev);
		if (!rc && i % 1000 == 999)
			rc = ops->flush(w);
	}
	if (rc && w)
		err_set(err, -rc, "event: %s", strerror(-rc));
	if (w) {
		int rc2 = ops->close(w, &st, err);

		rc = rc ? rc : rc2;
	}
	return rc;
}

static int synth_write_file(const char *path, unsigned ncpus, unsigned n)
{
	struct synth_ev *s = synth_make(n, ncpus ? ncpus : 1);
	struct errbuf err = { "" };
	FILE *f = fopen(path, "w");
	int rc = f && s ? synth_write(f, s, n, ncpus ? ncpus : 1, &err) : -errno;

	if (f && fclose(f) && !rc)
		rc = -errno;
	if (rc)
		fprintf(stderr, "test-trace-perfetto: %s: %s\n", path, err.msg[0] ? err.msg : strerror(-rc));
	free(s);
	return rc;
}

static uint8_t *slurp(FILE *f, size_t *len)
{
	long size;
	uint8_t *data;

	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		return NULL;
	data = malloc((size_t)size + 1);
	if (data && fread(data, 1, (size_t)size, f) != (size_t)size) {
		free(data);
		return NULL;
	}
	*len = (size_t)size;
	return data;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Distinct values of s[].ev.func (which 0) or s[].ev.parent (which 1). */
static size_t distinct(const struct synth_ev *s, size_t n, int which)
{
	uint64_t *v = malloc(n * sizeof(*v));
	size_t d = 0;

	if (!v)
		return 0;
	for (size_t i = 0; i < n; i++)
		v[i] = which ? s[i].ev.parent : s[i].ev.func;
	qsort(v, n, sizeof(*v), cmp_u64);
	for (size_t i = 0; i < n; i++)
		d += !i || v[i] != v[i - 1];
	free(v);
	return d;
}

static void check_tracks(const struct dec_trace *t, unsigned ncpus)
{
	const struct dec_track *guest = NULL;
	unsigned seen = 0, good = 0;

	for (size_t i = 0; i < t->ntracks; i++)
		if (!strcmp(t->tracks[i].name, "guest kernel") && !t->tracks[i].has_parent)
			guest = &t->tracks[i];
	CHECK(guest && guest->ordering == 3, "track: \"guest kernel\", no parent, explicit child order");
	for (size_t i = 0; guest && i < t->ntracks; i++) {
		const struct dec_track *k = &t->tracks[i];

		if (k->cpu < 0 || (unsigned)k->cpu >= ncpus || (seen & 1u << k->cpu))
			continue;
		seen |= 1u << k->cpu;
		good += k->has_parent && k->parent == guest->uuid && k->rank == k->cpu;
	}
	CHECK(t->ntracks == 1 + ncpus && good == ncpus && seen == (1u << ncpus) - 1,
	      "tracks: \"vCPU 0\"..\"vCPU %u\" once each, children of the guest's, ranked by number (%zu tracks)",
	      ncpus - 1, t->ntracks);
}

static int event_matches(const struct dec_event *d, const struct synth_ev *s)
{
	return d->type == 3 && d->ts == synth_ns(s->ev.tsc) && d->cpu == s->ev.cpu && d->name &&
	       !strcmp(d->name, s->name) && d->has_parent && !strcmp(d->parent, s->parent) &&
	       d->has_irqs && d->irqs_off == (s->ev.flags & 1) && d->category &&
	       !strcmp(d->category, "function");
}

static void test_trace_roundtrip(void)
{
	const unsigned ncpus = 4;
	const size_t n = 5000;
	struct synth_ev *s = synth_make(n, ncpus);
	struct errbuf err = { "" };
	struct dec_trace *t = calloc(1, sizeof(*t));
	FILE *f = tmpfile();
	uint8_t *data = NULL;
	size_t len = 0, bad = 0;

	if (!s || !t || !f) {
		CHECK(0, "set-up: memory and a temporary file");
		return;
	}
	CHECK(!strcmp(trace_writer_perfetto.name, "perfetto"), "ops are named \"perfetto\"");
	CHECK(synth_write(f, s, n, ncpus, &err) == 0, "wrote %zu events on %u vCPUs [%s]", n, ncpus, err.msg);
	data = slurp(f, &len);
	CHECK(data && dec_trace_parse(t, data, len) == 0, "the file parses as a Trace (%zu bytes) [%s]",
	      len, t->why);
	CHECK(t->npackets == 1 + ncpus + n && t->ndescriptor_packets == 1 + ncpus,
	      "packets: 1 + %u track descriptors + one per event (%zu)", ncpus, t->npackets);
	CHECK(t->first_flags == 1, "the first packet clears the incremental state (flags %llu)",
	      (unsigned long long)t->first_flags);
	CHECK(!t->bad_sequence && !t->events_without_needs_state,
	      "every packet on sequence 1, every event needs the incremental state");
	check_tracks(t, ncpus);
	CHECK(t->nev == n, "events: %zu read back of %zu", t->nev, n);
	for (size_t i = 0; i < n && i < t->nev; i++) {
		const struct dec_event *d = &t->ev[i];

		if (!event_matches(d, &s[i]) && bad++ < 5)
			(void)CHECK_QUIET(0, "event %zu: got type %d ts %llu cpu %d %s <-%s irqs %d, want ts %llu cpu %u %s <-%s irqs %d",
				    i, d->type, (unsigned long long)d->ts, d->cpu, d->name ? d->name : "?",
				    d->parent ? d->parent : "?", d->irqs_off,
				    (unsigned long long)synth_ns(s[i].ev.tsc), s[i].ev.cpu, s[i].name,
				    s[i].parent, s[i].ev.flags & 1);
	}
	CHECK(t->nev == n && !bad, "every event: instant, time, vCPU, name, caller, irqs-off, category as written");
	CHECK(t->ev[0].ts == 0 && t->ev[n - 1].ts == synth_ns(s[n - 1].ev.tsc) && t->ev[n - 1].ts > 1000000,
	      "times: 0 before the guest's start, ns after it (last %llu)", (unsigned long long)t->ev[n - 1].ts);
	CHECK(t->names.entries == distinct(s, n, 0) && t->strings.entries == distinct(s, n, 1),
	      "interning: each function and each return address named once (%zu names, %zu callers)",
	      t->names.entries, t->strings.entries);
	CHECK(t->cats.entries == 2 && t->annots.entries == 7,
	      "interned: 2 categories, 7 annotation names (parent, irqs_off, args, cpu, comm, retval, "
	      "return_not_recorded)");
	printf("INFO: %zu events in %zu bytes, %.1f bytes per event\n", n, len, (double)len / n);
	dec_trace_free(t);
	free(t);
	free(data);
	free(s);
	fclose(f);
}

/* Slices and VM events through trace_perfetto_emit; tracks made on first use. */
static void test_kinds(void)
{
	static const char kvm_exit[] = "kvm:kvm_exit";
	struct trace_meta meta = synth_meta(1, &syms);
	struct ring_event ev = { .tsc = TSC_BASE + 2500, .func = KT + 0x100, .parent = KT + 0x205, .flags = 1 };
	struct dec_trace *t = calloc(1, sizeof(*t));
	struct errbuf err = { "" };
	struct trace_writer *w = NULL;
	char *text = NULL;
	size_t size = 0, nbefore;
	FILE *f = open_memstream(&text, &size);
	int rc;

	if (!t || !f || trace_writer_perfetto.open(&w, f, &meta, &err)) {
		CHECK(0, "set-up: open on a memory stream [%s]", err.msg);
		return;
	}
	rc = trace_perfetto_emit(w, TRACE_PERFETTO_FUNC_BEGIN, &ev, NULL);
	ev.cpu = 5;	/* beyond ncpus: its track is described before its first event */
	ev.tsc += 2500;
	rc |= trace_perfetto_emit(w, TRACE_PERFETTO_VM_EVENT, &ev, kvm_exit);
	ev.cpu = 0;
	ev.tsc += 2500;
	rc |= trace_perfetto_emit(w, TRACE_PERFETTO_FUNC_END, &ev, NULL);
	ev.cpu = 5;
	rc |= trace_perfetto_emit(w, TRACE_PERFETTO_VM_EVENT, &ev, kvm_exit);
	CHECK(rc == 0, "emit: slice begin, VM event, slice end, VM event");
	fflush(f);
	nbefore = size;
	CHECK(trace_perfetto_emit(w, TRACE_PERFETTO_NKINDS, &ev, NULL) == -EINVAL &&
	      trace_perfetto_emit(w, TRACE_PERFETTO_VM_EVENT, &ev, NULL) == -EINVAL,
	      "emit: an unknown kind or a VM event without a name is -EINVAL");
	CHECK(trace_writer_perfetto.close(w, NULL, &err) == 0 && size == nbefore,
	      "close: nothing written for the refused events");
	fclose(f);
	CHECK(dec_trace_parse(t, (uint8_t *)text, size) == 0 && t->nev == 4, "parses: 4 events [%s]", t->why);
	if (t->nev == 4) {
		const struct dec_event *e = t->ev;

		CHECK(e[0].type == 1 && e[0].cpu == 0 && !strcmp(e[0].name, "fn_001") && e[0].has_parent &&
		      !strcmp(e[0].parent, "fn_002") && e[0].irqs_off && e[0].ts == 1000,
		      "slice begin: fn_001 <-fn_002 on vCPU 0 at 1000 ns, irqs off");
		CHECK(e[1].type == 3 && e[1].cpu == 5 && !strcmp(e[1].name, kvm_exit) &&
		      !strcmp(e[1].category, "kvm") && !e[1].has_parent && !e[1].has_irqs,
		      "VM event: an instant named kvm:kvm_exit on vCPU 5, category kvm, no annotations");
		CHECK(e[2].type == 2 && e[2].cpu == 0 && !e[2].name && !e[2].category && !e[2].has_parent,
		      "slice end: on vCPU 0, nothing but its type and track");
		CHECK(e[3].type == 3 && e[3].name == e[1].name && t->names.entries == 2,
		      "VM event names are interned once (2 event names in all)");
	}
	CHECK(t->ntracks == 3, "tracks: the guest, vCPU 0 (from ncpus), vCPU 5 (on first use)");
	dec_trace_free(t);
	free(t);
	free(text);
}

/*
 * Tasks: an event whose task the stub read (pid above 0) goes on that
 * task's track, "comm-pid" under "guest tasks", described once before its
 * first event, with its CPU in a "cpu" annotation; pid 0 (idle, boot) and
 * unknown tasks stay on their vCPU's track; a task whose comm changed
 * (exec) keeps its track and says its new comm in a "comm" annotation.
 * With --args (meta.fnargs) an entry carries its arguments.
 */
static void test_tasks(void)
{
	struct trace_meta meta = synth_meta(2, &syms);
	static const struct { uint16_t cpu; int task; int32_t pid; const char *comm; } in[] = {
		{ 0, 1, 0, "swapper/0" }, { 1, 1, 1, "swapper/0" }, { 0, 1, 32, "taskset" },
		{ 1, 0, 0, "" }, { 0, 1, 32, "sysloop" }, { 1, 1, 32, "sysloop" }, { 1, 1, 1, "init" },
		{ 0, 1, 4194304, "kworker/0:1" },
	};
	enum { N = sizeof(in) / sizeof(in[0]) };
	struct fnargs *fa = fnargs_new(NULL);
	struct kbtf_proto proto = { .nparams = 1, .kept = 1 };
	struct dec_trace *t = calloc(1, sizeof(*t));
	struct errbuf err = { "" };
	struct trace_writer *w = NULL;
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	int rc = 0;

	snprintf(proto.p[0].name, sizeof(proto.p[0].name), "fd");
	proto.p[0].kind = KBTF_ARG_UINT;
	proto.p[0].size = 4;
	if (!fa || fnargs_add(fa, KT + 0x100, &proto))
		rc = -1;
	meta.fnargs = fa;
	if (rc || !t || !f || trace_writer_perfetto.open(&w, f, &meta, &err)) {
		CHECK(0, "set-up: open on a memory stream [%s]", err.msg);
		return;
	}
	for (unsigned i = 0; i < N; i++) {
		struct ring_event ev = { .tsc = TSC_BASE + 2500 * (i + 1), .func = KT + 0x100, .parent = KT + 0x205,
					 .cpu = in[i].cpu, .pid = in[i].pid };

		ev.flags = (in[i].task ? VT_REC_FLAG_TASK : 0) | (i == 2 ? VT_REC_FLAG_ARGS : 0);
		ev.task = in[i].task ? 0xffff888000100000ull + (uint64_t)in[i].pid : 0;
		ev.args[0] = 0x4d;
		snprintf(ev.comm, sizeof(ev.comm), "%s", in[i].comm);
		rc |= trace_writer_perfetto.event(w, &ev);
	}
	CHECK(rc == 0 && trace_writer_perfetto.close(w, NULL, &err) == 0, "tasks: %d events written", N);
	fclose(f);
	CHECK(dec_trace_parse(t, (uint8_t *)text, size) == 0 && t->nev == N, "tasks: parses, %zu events [%s]",
	      t->nev, t->why);
	if (t->nev == N) {
		static const char *const track[N] = {
			"vCPU 0", "swapper/0-1", "taskset-32", "vCPU 1", "taskset-32", "taskset-32", "swapper/0-1",
			"kworker/0:1-4194304",
		};
		static const char *const comm[N] = { NULL, NULL, NULL, NULL, "sysloop", "sysloop", "init", NULL };
		int ok = 1;

		for (unsigned i = 0; i < N; i++) {
			const struct dec_event *e = &t->ev[i];
			int on_task = strncmp(track[i], "vCPU", 4) != 0;

			ok &= CHECK_QUIET(e->track && !strcmp(e->track, track[i]) && e->cpu == in[i].cpu &&
					  (e->cpu_ann >= 0) == on_task &&
					  ((!e->comm && !comm[i]) || (e->comm && comm[i] && !strcmp(e->comm, comm[i]))),
					  "event %u: track %s cpu %d (annotated %d) comm %s; want %s cpu %u comm %s", i,
					  e->track ? e->track : "?", e->cpu, e->cpu_ann, e->comm ? e->comm : "-",
					  track[i], in[i].cpu, comm[i] ? comm[i] : "-");
		}
		CHECK(ok, "tasks: each event on its task's track (\"comm-pid\" of its first event) with its CPU, "
		      "pid 0 and unknown tasks on their vCPU's, a new comm said in the event");
		CHECK(t->ev[2].args && !strcmp(t->ev[2].args, "(fd=0x4d)") && !t->ev[0].args,
		      "tasks: --args: the entry that has them carries \"(fd=0x4d)\" (%s)",
		      t->ev[2].args ? t->ev[2].args : "none");
	}
	{
		unsigned tasks = 0, under = 0;
		const struct dec_track *parent = NULL;

		for (size_t i = 0; i < t->ntracks; i++)
			if (!strcmp(t->tracks[i].name, "guest tasks") && !t->tracks[i].has_parent)
				parent = &t->tracks[i];
		for (size_t i = 0; parent && i < t->ntracks; i++) {
			tasks += t->tracks[i].cpu < 0 && t->tracks[i].has_parent;
			under += t->tracks[i].has_parent && t->tracks[i].parent == parent->uuid;
		}
		CHECK(parent && tasks == 3 && under == 3, "tasks: 3 task tracks, each described once, under "
		      "\"guest tasks\" (%u, %u)", tasks, under);
	}
	dec_trace_free(t);
	free(t);
	free(text);
	fnargs_free(fa);
}

/*
 * VM events through the writer's event(), as the tracer and report hand
 * them over: instants named after their kind, category kvm, their fields
 * and guest RIP in an "args" annotation.
 */
static void test_vm_events(void)
{
	struct trace_meta meta = synth_meta(1, &syms);
	struct ring_event pio = {
		.tsc = TSC_BASE + 2500, .func = KT + 0x116, .cpu = 0,
		.flags = vmev_flags(VMEV_PIO, VMEV_FLAG_WRITE),
		.parent = 0x3f8 | 1u << 16 | 1ull << 32, .arg = 'A',
	};
	struct ring_event msr = {
		.tsc = TSC_BASE + 5000, .func = 0x1234, .cpu = 0,
		.flags = vmev_flags(VMEV_MSR, VMEV_FLAG_WRITE), .parent = 0x4b564d01, .arg = 0x19a2001,
	};
	struct ring_event fn = { .tsc = TSC_BASE + 7500, .func = KT + 0x100, .parent = KT + 0x205 };
	struct ring_event odd = { .tsc = TSC_BASE + 9000, .flags = vmev_flags(0x7f, 0) };
	struct dec_trace *t = calloc(1, sizeof(*t));
	struct errbuf err = { "" };
	struct trace_writer *w = NULL;
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	if (!t || !f || trace_writer_perfetto.open(&w, f, &meta, &err)) {
		CHECK(0, "vm events: set-up [%s]", err.msg);
		return;
	}
	CHECK(trace_writer_perfetto.event(w, &pio) == 0 && trace_writer_perfetto.event(w, &msr) == 0 &&
	      trace_writer_perfetto.event(w, &fn) == 0 && trace_writer_perfetto.event(w, &odd) == 0,
	      "vm events: a port write, an MSR write, a function entry, an unknown kind");
	CHECK(trace_writer_perfetto.close(w, NULL, &err) == 0, "vm events: close [%s]", err.msg);
	fclose(f);
	CHECK(dec_trace_parse(t, (uint8_t *)text, size) == 0 && t->nev == 4, "vm events: parses, 4 events [%s]",
	      t->why);
	if (t->nev == 4) {
		const struct dec_event *e = t->ev;

		CHECK(e[0].type == 3 && !strcmp(e[0].name, "kvm:pio") && !strcmp(e[0].category, "kvm") &&
		      e[0].ts == 1000 && e[0].cpu == 0 && !e[0].has_parent && e[0].args &&
		      !strcmp(e[0].args, "pio_write at 0x3f8 size 1 count 1 val 0x41 [fn_001+0x16]"),
		      "kvm:pio: an instant at 1000 ns with its fields and symbolised RIP (%s)",
		      e[0].args ? e[0].args : "no args");
		CHECK(!strcmp(e[1].name, "kvm:msr") && e[1].args &&
		      !strcmp(e[1].args, "msr_write 4b564d01 = 0x19a2001 [0x1234]"),
		      "kvm:msr: the host tracepoint's fields, an unknown RIP in hex (%s)",
		      e[1].args ? e[1].args : "no args");
		CHECK(!strcmp(e[2].name, "fn_001") && !strcmp(e[2].category, "function") && !e[2].args,
		      "the function entry between them stays a function instant");
		CHECK(!strcmp(e[3].name, "kvm:unknown") && !strcmp(e[3].category, "kvm"),
		      "a kind out of range (a damaged raw file) is kvm:unknown, not dropped");
	}
	dec_trace_free(t);
	free(t);
	free(text);
}

/* A full disk: the first failed write is returned, then again, then by close. */
static void test_errors(void)
{
	struct trace_meta meta = synth_meta(2, NULL);
	struct ring_event ev = { .tsc = TSC_BASE, .func = KT + 0x100 };
	struct errbuf err = { "" };
	struct trace_writer *w = NULL;
	FILE *full = fopen("/dev/full", "w");
	int rc = 0, n = 0;

	if (!full) {
		printf("SKIP: no /dev/full\n");
		return;
	}
	setvbuf(full, NULL, _IONBF, 0);
	rc = trace_writer_perfetto.open(&w, full, &meta, &err);
	CHECK(rc == -ENOSPC && strstr(err.msg, "perfetto"), "open on a full disk: -ENOSPC [%s]", err.msg);
	fclose(full);

	full = fopen("/dev/full", "w");
	setvbuf(full, NULL, _IOFBF, 4096);
	err.msg[0] = 0;
	rc = trace_writer_perfetto.open(&w, full, &meta, &err);
	CHECK(rc == 0, "open into a stdio buffer succeeds [%s]", err.msg);
	if (rc)
		return;
	for (n = 0; n < 10000 && !rc; n++) {
		ev.func = KT + 0x100ull * (n % NSYMS) + (n / NSYMS);	/* new names: longer packets */
		rc = trace_writer_perfetto.event(w, &ev);
	}
	CHECK(rc == -ENOSPC && n < 10000, "event: -ENOSPC once the buffer is written (event %d)", n);
	CHECK(trace_writer_perfetto.event(w, &ev) == -ENOSPC && trace_writer_perfetto.flush(w) == -ENOSPC,
	      "the error is kept: event and flush return it again");
	CHECK(trace_writer_perfetto.close(w, NULL, &err) == -ENOSPC && strstr(err.msg, "perfetto"),
	      "close: -ENOSPC [%s]", err.msg);
	fclose(full);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	build_symtab();
	if (argc == 5 && !strcmp(argv[1], "--write")) {
		int rc = synth_write_file(argv[2], (unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]));

		symtab_destroy(&syms);
		return rc ? 1 : 0;
	}
	test_varints();
	test_fields();
	test_nested_lengths();
	test_trace_roundtrip();
	test_kinds();
	test_tasks();
	test_vm_events();
	test_errors();
	symtab_destroy(&syms);
	return check_exit();
}
