// SPDX-License-Identifier: GPL-2.0
/*
 * The raw format (vmm/output/raw.c, raw-read.c): every field of a few
 * hundred thousand events on 4 CPUs back exactly; a small trace cut at every
 * byte offset reads exactly the chunks complete before the cut; a flipped
 * byte in each chunk costs that chunk alone, named by its offset; foreign,
 * empty and future-version files are refused; unknown chunk types and
 * record kinds are skipped; the writer registry. With `--fixture DIR` it
 * writes the files tests/unit/report.sh checks `vmmtrace report` against.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/check.h"
#include "vmm/output/raw-read.h"
#include "vmm/output/raw.h"

#define KT 0xffffffff81000000ull
#define NFUNCS 300

static struct symtab syms;
static char tmpdir[] = "/tmp/test-trace-raw.XXXXXX";
static uint64_t rng = 0x243f6a8885a308d3ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void die(const char *what)
{
	printf("FAIL: %s\n", what);
	exit(1);
}

/* Functions f_0.. 0x100 apart, a few with real names, an alias, data, an end. */
static void build_symtab(void)
{
	static const char *const named[] = { "start_kernel", "setup_arch", "vfs_read", "vfs_write",
					     "do_syscall_64", "schedule", "kernel_init" };
	char name[64];

	symtab_init(&syms);
	for (unsigned i = 0; i < NFUNCS; i++) {
		if (i < sizeof(named) / sizeof(named[0]))
			snprintf(name, sizeof(name), "%s", named[i]);
		else
			snprintf(name, sizeof(name), "f_%u", i);
		if (symtab_add(&syms, KT + 0x100 * i, i % 3 ? 't' : 'T', name, strlen(name)))
			die("symtab_add");
	}
	if (symtab_add(&syms, KT + 0x100, 't', "setup_arch_alias", 16) ||
	    symtab_add(&syms, KT + 0x100 * NFUNCS, 'd', "some_data", 9) ||
	    symtab_add(&syms, KT + 0x100 * NFUNCS + 0x1000, 'T', "_etext", 6) || symtab_finish(&syms))
		die("symtab");
}

/* Mostly well-formed events; now and then the hostile values a guest may write. */
static void make_events(struct ring_event *ev, size_t n, unsigned ncpus, uint64_t step)
{
	uint64_t tsc = 1000000, seq[8] = { 0 };

	for (size_t i = 0; i < n; i++) {
		uint64_t r = rnd();
		struct ring_event *e = &ev[i];

		memset(e, 0, sizeof(*e));
		tsc += r % step;
		e->tsc = tsc;
		e->cpu = (uint16_t)(r >> 8) % ncpus;
		e->ring = e->cpu;
		e->func = KT + 0x100 * ((r >> 16) % NFUNCS);
		e->parent = KT + 0x100 * ((r >> 28) % NFUNCS) + 5 + (r >> 40) % 0xf0;
		e->flags = (r >> 50) & 1;
		e->seq = seq[e->ring]++;
		switch ((r >> 56) % 64) {
		case 0: e->func += 4; break;				/* not a function start */
		case 1: e->parent = UINT64_MAX; e->func = 0; break;	/* nothing known */
		case 2: e->flags = VT_REC_FLAGS_VALID & ~(VT_REC_FLAG_TASK | VT_REC_FLAG_ARGS); e->preempt = (uint32_t)r; break;	/* every flag but a task (and arguments: test_args) */
		case 7: case 8: case 9: case 10: case 11: case 12: case 13: case 14:
		case 15: case 16: case 17: case 18: case 19: case 20: case 21: case 22:
		case 23: case 24: case 25: case 26: case 27: case 28: case 29: case 30: {
			/*
			 * A task, as a CPU runs them: the same for a while, now
			 * and then another, or the same execing (a new comm).
			 */
			static const char *const comms[] = { "swapper/0", "init", "sysloop", "x123456789abcde" };
			static unsigned cur[65536], gen[65536];
			unsigned k;

			if ((r >> 2) % 32 == 0)
				cur[e->cpu] = (unsigned)(r >> 20) % 4;
			if ((r >> 7) % 64 == 0)
				gen[e->cpu]++;
			k = cur[e->cpu];
			e->flags |= VT_REC_FLAG_TASK | VT_REC_FLAG_CTX;
			e->task = 0xffff888001000000ull + 0x4000ull * k;
			e->pid = k == 0 ? 0 : k == 3 ? 4194304 : (int32_t)k * 1000;
			e->preempt = (r >> 12) % 8 ? 0 : (uint32_t)(r >> 24) & 0x1fffff;
			snprintf(e->comm, sizeof(e->comm), "%s", gen[e->cpu] % 2 ? "execd" : comms[k]);
			break;
		}
		case 3: e->ring = 1000 + e->cpu; e->seq = r; break;	/* a ring beyond the seq state */
		case 4: e->cpu = 65535; break;
		case 5: seq[e->ring] += r % 1000; break;		/* a gap in the ring */
		case 6: e->tsc = tsc - r % 5000; break;			/* out of order */
		case 31: e->flags |= VT_REC_FLAG_HOOKED; break;		/* --graph: a hooked entry */
		case 32: e->flags |= VT_REC_FLAG_EXIT; break;		/* and a return */
		}
		/* --graph's fields: any depth a shadow stack holds, any return value, any call length. */
		if (e->flags & (VT_REC_FLAG_HOOKED | VT_REC_FLAG_EXIT))
			e->depth = (uint32_t)(r >> 3) % VT_SHADOW_FRAMES;
		if (e->flags & VT_REC_FLAG_EXIT) {
			e->retval = rnd() >> (r % 64);
			e->calltime = r % 97 ? e->tsc - r % 100000 : rnd();	/* now and then a hostile one */
		}
	}
}

static void meta_of(struct trace_meta *m, unsigned ncpus)
{
	memset(m, 0, sizeof(*m));
	m->syms = &syms;
	m->tsc_khz = 2500000;
	m->tsc_base = 1000000;
	m->ncpus = ncpus;
	m->kernel = "/boot/vmlinuz-test";
}

/* Writes events through ops, flushing every flush_every events. */
static void write_trace(const char *path, const struct trace_writer_ops *ops, const struct trace_meta *m,
			const struct ring_event *ev, size_t n, size_t flush_every, int close)
{
	struct trace_stats st = { .events = n, .dropped_stub = 7, .lost = 3 };
	struct trace_writer *w;
	struct errbuf err;
	FILE *f = fopen(path, "w");

	if (!f || ops->open(&w, f, m, &err))
		die("open the writer");
	for (size_t i = 0; i < n; i++) {
		if (ops->event(w, &ev[i]))
			die("writer event");
		if (flush_every && (i + 1) % flush_every == 0 && ops->flush(w))
			die("writer flush");
	}
	/* Without close: a killed tracer, whose file ends with the last flush. */
	if (!close && ops->flush(w))
		die("writer flush");
	long flushed = ftell(f);
	if (ops->close(w, &st, &err) || fclose(f) || (!close && truncate(path, flushed)))
		die("writer close");
}

struct collect {
	struct ring_event *ev;
	size_t n, cap;
};

static int collect_event(void *opaque, const struct ring_event *ev)
{
	struct collect *c = opaque;

	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 1024;
		c->ev = realloc(c->ev, c->cap * sizeof(*c->ev));
		if (!c->ev)
			die("realloc");
	}
	c->ev[c->n++] = *ev;
	return 0;
}

/* Opens path and replays it into c; the open's return value. */
static int read_all(const char *path, struct raw_reader **r, struct collect *c, struct errbuf *err)
{
	int rc = raw_read_open(r, path, err);

	c->n = 0;
	if (!rc && raw_read_replay(*r, collect_event, c))
		die("replay");
	return rc;
}

static int same_events(const struct ring_event *a, const struct ring_event *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i].tsc != b[i].tsc || a[i].func != b[i].func || a[i].parent != b[i].parent ||
		    a[i].seq != b[i].seq || a[i].cpu != b[i].cpu || a[i].flags != b[i].flags ||
		    a[i].ring != b[i].ring || a[i].task != b[i].task || a[i].pid != b[i].pid ||
		    a[i].preempt != b[i].preempt || memcmp(a[i].comm, b[i].comm, sizeof(a[i].comm)) ||
		    memcmp(a[i].args, b[i].args, sizeof(a[i].args)) || a[i].depth != b[i].depth ||
		    a[i].retval != b[i].retval || a[i].calltime != b[i].calltime)
			return 0;
	return 1;
}

static int same_symtab(const struct symtab *a, const struct symtab *b)
{
	if (!a || !b || a->count != b->count)
		return 0;
	for (size_t i = 0; i < a->count; i++)
		if (a->syms[i].addr != b->syms[i].addr || a->syms[i].type != b->syms[i].type ||
		    strcmp(symtab_name(a, &a->syms[i]), symtab_name(b, &b->syms[i])))
			return 0;
	return 1;
}

static void test_round_trip(void)
{
	size_t n = 300000;
	struct ring_event *ev = malloc(n * sizeof(*ev));
	struct collect c = { 0 };
	struct raw_reader *r;
	struct trace_meta m;
	struct errbuf err;
	char path[128];
	const struct raw_read_report *rep;
	const struct trace_meta *got;

	snprintf(path, sizeof(path), "%s/round.raw", tmpdir);
	make_events(ev, n, 4, 3000);
	meta_of(&m, 4);
	write_trace(path, &trace_writer_raw, &m, ev, n, 10000, 1);
	CHECK(!read_all(path, &r, &c, &err), "round trip: the file opens");
	rep = raw_read_report(r);
	got = raw_read_meta(r);
	CHECK(c.n == n && same_events(ev, c.ev, n), "round trip: %zu of %zu events back, every field exact",
	      c.n, n);
	CHECK(got->tsc_khz == m.tsc_khz && got->tsc_base == m.tsc_base && got->ncpus == 4 &&
	      got->kernel && !strcmp(got->kernel, m.kernel), "round trip: the meta back");
	CHECK(rep->have_symbols && same_symtab(&syms, got->syms),
	      "round trip: all %zu symbols back, in order, aliases and types included", syms.count);
	CHECK(rep->have_trailer && rep->stats.events == n && rep->stats.dropped_stub == 7 &&
	      rep->stats.lost == 3 && !rep->have_phase, "round trip: the trailer's account back");
	CHECK(!rep->cut && !rep->damaged && !rep->missing_chunks && rep->events == n &&
	      rep->chunks == rep->event_chunks + 3, "round trip: %" PRIu64 " chunks, nothing cut or damaged",
	      rep->chunks);
	CHECK(rep->file_size < n * 20, "round trip: compact: %.1f bytes per event",
	      (double)rep->file_size / (double)n);
	raw_read_close(r);
	free(c.ev);
	free(ev);
}

/*
 * --args: the argument registers of events that have them, and the
 * prototypes of their functions (one chunk per function, before its first
 * event), come back; a writer not asked for arguments drops them.
 */
static void test_args(void)
{
	size_t n = 50000, with = 0;
	struct ring_event *ev = malloc(n * sizeof(*ev)), *plain = malloc(n * sizeof(*ev));
	struct fnargs *fa = fnargs_new(NULL);
	struct collect c = { 0 };
	struct raw_reader *r;
	struct trace_meta m;
	struct errbuf err;
	char path[128];
	int protos_ok = 1;

	if (!ev || !plain || !fa)
		die("malloc");
	/* Prototypes for the first 20 functions only; fnargs_add ignores address 0. */
	for (unsigned f = 0; f < 20; f++) {
		struct kbtf_proto p = { .nparams = 1 + f % 6, .kept = 1 + f % 6 };

		for (unsigned i = 0; i < p.kept; i++) {
			snprintf(p.p[i].name, sizeof(p.p[i].name), "f%u_arg%u", f, i);
			p.p[i].kind = (uint8_t)(1 + (f + i) % 4);
			p.p[i].size = (uint8_t)(1u << ((f + i) % 4));
		}
		if (fnargs_add(fa, KT + 0x100 * f, &p))
			die("fnargs_add");
	}
	make_events(ev, n, 4, 3000);
	for (size_t i = 0; i < n; i++) {
		plain[i] = ev[i];
		if (rnd() % 4) {
			ev[i].flags |= VT_REC_FLAG_ARGS;
			for (unsigned k = 0; k < VT_REC_NARGS; k++)
				ev[i].args[k] = rnd() >> (rnd() % 64);
			with++;
		}
	}
	snprintf(path, sizeof(path), "%s/args.raw", tmpdir);
	meta_of(&m, 4);
	m.fnargs = fa;
	write_trace(path, &trace_writer_raw, &m, ev, n, 5000, 1);
	CHECK(!read_all(path, &r, &c, &err), "args: the file opens");
	CHECK(c.n == n && same_events(ev, c.ev, n), "args: %zu events back, %zu with their six argument "
	      "registers, every field exact", c.n, with);
	for (unsigned f = 0; f < 25; f++) {
		struct kbtf_proto want, got;
		int has = fnargs_lookup(fa, KT + 0x100 * f, NULL, &want);
		int back = fnargs_lookup(raw_read_meta(r)->fnargs, KT + 0x100 * f, NULL, &got);
		char a[512] = "", b[512] = "";

		if (has)
			fnargs_format(&want, ev[0].args, a, sizeof(a));
		if (back)
			fnargs_format(&got, ev[0].args, b, sizeof(b));
		protos_ok &= has == back && !strcmp(a, b);
	}
	CHECK(protos_ok, "args: the 20 prototypes back, and none for functions without one");
	raw_read_close(r);
	m.fnargs = NULL;
	write_trace(path, &trace_writer_raw, &m, ev, n, 5000, 1);
	CHECK(!read_all(path, &r, &c, &err) && c.n == n && same_events(plain, c.ev, n),
	      "args: a writer not asked for arguments (no --args) writes none and no flag for them");
	raw_read_close(r);
	fnargs_free(fa);
	free(c.ev);
	free(plain);
	free(ev);
}

/* A small trace's chunks, from their headers: where each ends, its events. */
struct layout {
	uint64_t end[64], events[64];
	unsigned n;
	uint8_t *data;
	size_t size;
};

static void load_layout(const char *path, struct layout *l)
{
	FILE *f = fopen(path, "r");
	struct raw_chunk c;
	uint64_t off = 0;

	memset(l, 0, sizeof(*l));
	l->data = malloc(1 << 20);
	if (!f || !l->data)
		die("load");
	l->size = fread(l->data, 1, 1 << 20, f);
	fclose(f);
	while (off < l->size && l->n < 64) {
		memcpy(&c, l->data + off, sizeof(c));
		l->events[l->n] = 0;
		if (c.type == RAW_CHUNK_EVENTS)
			memcpy(&l->events[l->n], l->data + off + sizeof(c), sizeof(uint32_t));
		off += sizeof(c) + c.length;
		l->end[l->n++] = off;
	}
}

static void write_bytes(const char *path, const uint8_t *data, size_t n)
{
	FILE *f = fopen(path, "w");

	if (!f || fwrite(data, 1, n, f) != n || fclose(f))
		die("write_bytes");
}

static void test_cuts(const struct layout *l, const struct ring_event *ev, const char *path)
{
	struct collect c = { 0 };
	int ok = 1;

	for (size_t cut = 0; cut <= l->size; cut++) {
		struct raw_reader *r = NULL;
		struct errbuf err;
		unsigned k = 0;
		uint64_t events = 0;
		int rc;

		write_bytes(path, l->data, cut);
		rc = read_all(path, &r, &c, &err);
		while (k < l->n && l->end[k] <= cut)
			events += l->events[k++];
		if (k == 0) {
			ok &= CHECK_QUIET(rc < 0, "cut at %zu: inside the header chunk, refused", cut);
			continue;
		}
		const struct raw_read_report *rep = r ? raw_read_report(r) : NULL;
		ok &= CHECK_QUIET(!rc && rep->chunks == k && c.n == events && same_events(ev, c.ev, c.n) &&
				  rep->cut == (cut != l->end[k - 1]) && (!rep->cut || (rep->cut_offset == l->end[k - 1] &&
				  rep->cut_bytes == cut - l->end[k - 1])) && !rep->damaged &&
				  rep->have_trailer == (cut == l->size),
				  "cut at %zu: %u chunks and %" PRIu64 " events expected (rc %d, %zu events)",
				  cut, k, events, rc, c.n);
		raw_read_close(r);
	}
	CHECK(ok, "a file cut at each of its %zu+1 byte offsets reads exactly the complete chunks before the cut",
	      l->size);
	free(c.ev);
}

static void test_flips(const struct layout *l, const char *path)
{
	uint8_t *copy = malloc(l->size);
	struct collect c = { 0 };
	int ok = 1;

	for (unsigned k = 0; k < l->n; k++) {
		uint64_t start = k ? l->end[k - 1] : 0;
		/* The magic, the length, the header checksum, the payload's first and last bytes. */
		uint64_t at[] = { start, start + 8, start + 29, start + 32, l->end[k] - 1 };

		for (unsigned j = 0; j < sizeof(at) / sizeof(at[0]); j++) {
			struct raw_reader *r = NULL;
			struct errbuf err;
			uint64_t total = 0;
			int rc;

			memcpy(copy, l->data, l->size);
			copy[at[j]] ^= 0x5a;
			write_bytes(path, copy, l->size);
			rc = read_all(path, &r, &c, &err);
			if (k == 0) {
				ok &= CHECK_QUIET(rc < 0, "flip at %" PRIu64 " in the header chunk: refused", at[j]);
				continue;
			}
			for (unsigned i = 0; i < l->n; i++)
				total += i == k ? 0 : l->events[i];
			const struct raw_read_report *rep = r ? raw_read_report(r) : NULL;
			ok &= CHECK_QUIET(!rc && rep->damaged == 1 && rep->damage[0].offset == start &&
					  rep->damage[0].bytes == l->end[k] - start && rep->chunks == l->n - 1 &&
					  c.n == total && !rep->cut && rep->have_trailer == (k != l->n - 1) &&
					  rep->have_symbols == (k != 1),
					  "flip at %" PRIu64 " in chunk %u (offset %" PRIu64 "): that chunk alone lost",
					  at[j], k, start);
			raw_read_close(r);
		}
	}
	CHECK(ok, "a flipped byte in each of the %u chunks is found at the chunk's offset, the others read", l->n);
	free(copy);
	free(c.ev);
}

static void test_small(void)
{
	struct ring_event ev[240];
	struct trace_meta m;
	struct layout l;
	char path[128], cut[128];

	snprintf(path, sizeof(path), "%s/small.raw", tmpdir);
	snprintf(cut, sizeof(cut), "%s/cut.raw", tmpdir);
	make_events(ev, 240, 4, 3000);
	meta_of(&m, 4);
	write_trace(path, &trace_writer_raw, &m, ev, 240, 30, 1);
	load_layout(path, &l);
	CHECK(l.n == 11 && l.end[l.n - 1] == l.size, "small trace: header, symbols, 8 event chunks, trailer (%u chunks)",
	      l.n);
	test_cuts(&l, ev, cut);
	test_flips(&l, cut);
	free(l.data);
}

static void expect_refused(const char *what, const uint8_t *data, size_t n, const char *msg)
{
	char path[128];
	struct raw_reader *r = NULL;
	struct errbuf err = { "" };
	int rc;

	snprintf(path, sizeof(path), "%s/bad", tmpdir);
	write_bytes(path, data, n);
	rc = raw_read_open(&r, path, &err);
	CHECK(rc < 0 && !r && strstr(err.msg, msg), "%s: refused (%s)", what, err.msg);
}

static void test_refused(void)
{
	static const uint8_t elf[] = "\177ELF\2\1\1\0\0\0\0\0\0\0\0\0\2\0>\0\1\0\0\0\0\0\0\0\0\0\0\0\0\0\0";
	uint8_t buf[256];
	struct raw_chunk c;
	struct raw_header h = { .ncpus = 1 };
	struct raw_reader *r;
	struct errbuf err;

	expect_refused("an empty file", buf, 0, "empty file");
	expect_refused("an ELF file", elf, sizeof(elf), "not a vmmtrace raw trace");
	raw_chunk_seal(&c, RAW_CHUNK_HEADER, 0, &h, sizeof(h));
	c.version = RAW_VERSION + 1;
	c.hdr_crc = raw_chunk_hdr_crc(&c);
	memcpy(buf, &c, sizeof(c));
	memcpy(buf + sizeof(c), &h, sizeof(h));
	expect_refused("a future version", buf, sizeof(c) + sizeof(h), "newer than this vmmtrace reads");
	raw_chunk_seal(&c, RAW_CHUNK_HEADER, 0, &h, sizeof(h));
	memcpy(buf, &c, sizeof(c));
	expect_refused("a cut magic", buf, 3, "cut before the end of its header chunk");
	expect_refused("a cut header chunk", buf, sizeof(c) + 10, "cut before the end of its header chunk");
	CHECK(raw_read_open(&r, "/nonexistent/trace.raw", &err) == -ENOENT, "a missing file: -ENOENT");
	raw_chunk_seal(&c, RAW_CHUNK_EVENTS, 0, &h, sizeof(h));
	memcpy(buf, &c, sizeof(c));
	expect_refused("no header chunk first", buf, sizeof(c) + sizeof(h), "not the header");
}

/* Appends a sealed chunk to f. */
static void put_chunk(FILE *f, uint16_t type, uint64_t seq, const void *p, uint32_t len)
{
	struct raw_chunk c;

	raw_chunk_seal(&c, type, seq, p, len);
	fwrite(&c, sizeof(c), 1, f);
	fwrite(p, 1, len, f);
}

/* What a later writer may add: an unknown chunk type and a sized record kind. */
static void test_unknown(void)
{
	struct raw_header h = { .tsc_khz = 1000000, .ncpus = 1 };
	uint8_t ev[64] = { 0 }, *p = ev + sizeof(struct raw_events);
	struct collect c = { 0 };
	struct raw_reader *r;
	struct errbuf err;
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/unknown.raw", tmpdir);
	((struct raw_events *)ev)->count = 2;
	*p++ = RAW_REC_SIZED | 0x7;		/* a kind of tomorrow, 3 bytes of body */
	p = raw_put_varint(p, 3);
	*p++ = 1, *p++ = 2, *p++ = 3;
	*p++ = RAW_REC_ENTRY | RAW_REC_IRQS_OFF;	/* cpu 0, tsc 5, func 0x10, parent 0x18, seq 0 */
	p = raw_put_varint(p, 0);
	p = raw_put_varint(p, raw_zigzag(5));
	p = raw_put_varint(p, raw_zigzag(0x10));
	p = raw_put_varint(p, raw_zigzag(8));
	p = raw_put_varint(p, raw_zigzag(0));
	f = fopen(path, "w");
	if (!f)
		die("fopen");
	put_chunk(f, RAW_CHUNK_HEADER, 0, &h, sizeof(h));
	put_chunk(f, 99, 1, "future", 6);
	put_chunk(f, RAW_CHUNK_EVENTS, 2, ev, (uint32_t)(p - ev));
	fclose(f);
	CHECK(!read_all(path, &r, &c, &err), "unknown kinds: the file opens");
	CHECK(raw_read_report(r)->unknown_chunks == 1 && raw_read_report(r)->skipped_records == 1 &&
	      c.n == 1 && c.ev[0].tsc == 5 && c.ev[0].func == 0x10 && c.ev[0].parent == 0x18 &&
	      c.ev[0].flags == VT_REC_FLAG_IRQS_OFF && !raw_read_report(r)->damaged,
	      "unknown kinds: the chunk and the record skipped, the entry read");
	CHECK(!raw_read_meta(r)->syms && !raw_read_meta(r)->kernel, "no symbols chunk: no table");
	raw_read_close(r);
	free(c.ev);
}

/* A power cut can leave zero-filled blocks after the last chunk written. */
static void test_zero_tail(void)
{
	struct ring_event ev[100];
	struct collect c = { 0 };
	struct trace_meta m;
	struct raw_reader *r;
	struct errbuf err;
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/zero.raw", tmpdir);
	make_events(ev, 100, 2, 100);
	meta_of(&m, 2);
	write_trace(path, &trace_writer_raw, &m, ev, 100, 50, 0);
	f = fopen(path, "a");
	for (int i = 0; f && i < 4096; i++)
		fputc(0, f);
	if (!f || fclose(f))
		die("append");
	CHECK(!read_all(path, &r, &c, &err), "zero tail: opens");
	CHECK(c.n == 100 && raw_read_report(r)->cut && raw_read_report(r)->cut_bytes == 4096 &&
	      !raw_read_report(r)->damaged && !raw_read_report(r)->have_trailer,
	      "zero tail: all events, the zeros reported as the cut, no trailer");
	raw_read_close(r);
	free(c.ev);
}

static void test_registry(void)
{
	CHECK(trace_writer_find("text") == &trace_writer_text && trace_writer_find("raw") == &trace_writer_raw &&
	      !trace_writer_find("nope"), "registry: text and raw by name");
	CHECK(trace_writer_for_path("a/b.txt") == &trace_writer_text &&
	      trace_writer_for_path("x.trace") == &trace_writer_text &&
	      trace_writer_for_path("x.raw") == &trace_writer_raw &&
	      trace_writer_for_path("x.vtr") == &trace_writer_raw &&
	      trace_writer_for_path("dir.txt/x") == &trace_writer_raw &&
	      trace_writer_for_path("x") == &trace_writer_raw, "registry: file names");
	CHECK(trace_writer_for_path("x.dat") == trace_writer_find("dat") &&
	      trace_writer_for_path("x.pftrace") == trace_writer_find("perfetto"),
	      "registry: .dat and .pftrace name their formats (NULL until those writers land)");
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int count_event(void *opaque, const struct ring_event *ev)
{
	*(uint64_t *)opaque += ev->cpu;
	return 0;
}

/* Not a benchmark (bench/ has those): a note of the rates on this machine, in CPU time. */
static void measure(void)
{
	size_t n = 4000000;
	struct ring_event *ev = malloc(n * sizeof(*ev));
	struct trace_meta m;
	struct raw_reader *r;
	struct errbuf err;
	uint64_t sum = 0;
	char path[128];
	double t0, t1, t2;

	snprintf(path, sizeof(path), "%s/speed.raw", tmpdir);
	make_events(ev, n, 4, 3000);
	meta_of(&m, 4);
	t0 = now();
	write_trace(path, &trace_writer_raw, &m, ev, n, 500000, 1);
	t1 = now();
	if (raw_read_open(&r, path, &err) || raw_read_replay(r, count_event, &sum))
		die("speed read");
	t2 = now();
	printf("INFO: raw writer %.1f M events/s, reader %.1f M events/s (%.1f bytes/event)\n",
	       n / (t1 - t0) / 1e6, n / (t2 - t1) / 1e6, (double)raw_read_report(r)->file_size / (double)n);
	raw_read_close(r);
	free(ev);
}

/* The files tests/unit/report.sh reads: trace.raw, full.txt (the text writer, same events), cut.raw. */
static int write_fixture(const char *dir)
{
	size_t n = 4000;
	struct ring_event *ev = malloc(n * sizeof(*ev));
	struct trace_meta m;
	char path[512];
	struct layout l;

	make_events(ev, n, 4, 2000000);	/* about 4 s at 2.5 GHz */
	meta_of(&m, 4);
	snprintf(path, sizeof(path), "%s/trace.raw", dir);
	write_trace(path, &trace_writer_raw, &m, ev, n, 500, 1);
	load_layout(path, &l);
	snprintf(path, sizeof(path), "%s/cut.raw", dir);
	write_bytes(path, l.data, l.end[4] + 100);	/* header, symbols, 3 event chunks, 100 bytes */
	snprintf(path, sizeof(path), "%s/cut.events", dir);
	FILE *f = fopen(path, "w");
	fprintf(f, "%" PRIu64 " %" PRIu64 " %" PRIu64 "\n", l.events[2] + l.events[3] + l.events[4], l.end[4],
		(uint64_t)100);
	fclose(f);
	/* A flipped byte in the second event chunk's payload: its events alone are lost. */
	l.data[l.end[2] + 40] ^= 0x5a;
	snprintf(path, sizeof(path), "%s/damaged.raw", dir);
	write_bytes(path, l.data, l.size);
	snprintf(path, sizeof(path), "%s/damaged.events", dir);
	f = fopen(path, "w");
	fprintf(f, "%" PRIu64 " %" PRIu64 " %" PRIu64 "\n", l.end[2], l.events[2], l.events[3]);
	fclose(f);
	snprintf(path, sizeof(path), "%s/full.txt", dir);
	write_trace(path, &trace_writer_text, &m, ev, n, 0, 1);
	free(l.data);
	free(ev);
	return 0;
}

int main(int argc, char **argv)
{
	char cmd[256];

	setvbuf(stdout, NULL, _IOLBF, 0);
	build_symtab();
	if (argc == 3 && !strcmp(argv[1], "--fixture"))
		return write_fixture(argv[2]);
	if (!mkdtemp(tmpdir))
		die("mkdtemp");
	test_round_trip();
	test_args();
	test_small();
	test_refused();
	test_unknown();
	test_zero_tail();
	test_registry();
	measure();
	symtab_destroy(&syms);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd))
		printf("INFO: could not remove %s\n", tmpdir);
	return check_exit();
}
