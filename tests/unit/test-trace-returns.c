// SPDX-License-Identifier: GPL-2.0
/*
 * --graph's returns in every format (tests/unit/graph-fixture.h's boot):
 * raw gives back every hooked entry and exit exactly, depth, return value
 * and call time included, and the trace's --graph, --retval and
 * --graph-depth; the graph text of a raw recording converted is the
 * writer's own text byte for byte; trace.dat holds each hooked entry as
 * ftrace's funcgraph_entry and each exit as funcgraph_exit (calltime and
 * rettime in ns), --graph-depth leaving deeper calls out; Perfetto has one
 * slice per call, ended at its return, the calls the stub dropped ended as
 * not returned; the call tracker's total and self times; raw files of
 * version 3 still read, and a depth no shadow stack holds is damage.
 */
#include <errno.h>
#include <sys/stat.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/check.h"
#include "tests/unit/graph-fixture.h"
#include "tests/interop/dat/dat-walk.h"
#include "tests/interop/perfetto/decode.h"
#include "vmm/output/calls.h"
#include "vmm/output/dat.h"
#include "vmm/output/perfetto.h"
#include "vmm/output/raw-read.h"
#include "vmm/output/raw.h"

static struct symtab syms;
static struct gf_trace gf;
static struct fnargs *fnargs;
static char dir[] = "/tmp/test-trace-returns.XXXXXX";

static const char *path_of(const char *name)
{
	static char buf[4][256];
	static unsigned k;

	snprintf(buf[k % 4], sizeof(buf[0]), "%s/%s", dir, name);
	return buf[k++ % 4];
}

struct collect {
	struct ring_event ev[GF_MAX];
	size_t n;
};

static int collect_ev(void *opaque, const struct ring_event *ev)
{
	struct collect *c = opaque;

	if (c->n < GF_MAX)
		c->ev[c->n] = *ev;
	c->n++;
	return 0;
}

static int same_event(const struct ring_event *a, const struct ring_event *b)
{
	return a->tsc == b->tsc && a->func == b->func && a->parent == b->parent && a->cpu == b->cpu &&
	       a->flags == b->flags && a->pid == b->pid && a->task == b->task && !memcmp(a->comm, b->comm, 16) &&
	       a->depth == b->depth && a->retval == b->retval && a->calltime == b->calltime &&
	       !memcmp(a->args, b->args, sizeof(a->args)) && a->arg == b->arg;
}

static void test_raw(void)
{
	struct trace_meta m = gf_meta(&syms);
	struct collect c = { .n = 0 };
	struct raw_reader *r;
	struct errbuf err;
	size_t same = 0;

	m.fnargs = fnargs;	/* --args: do_one_initcall's argument is kept */
	m.graph_depth = 5;
	CHECK(!gf_write(path_of("g.raw"), &trace_writer_raw, &m, gf.ev, gf.n), "raw: written");
	CHECK(!raw_read_open(&r, path_of("g.raw"), &err), "raw: opens [%s]", err.msg);
	CHECK(!raw_read_replay(r, collect_ev, &c) && c.n == gf.n, "raw: %zu events back of %zu", c.n, gf.n);
	for (size_t i = 0; i < gf.n && i < c.n; i++)
		same += same_event(&gf.ev[i], &c.ev[i]);
	CHECK(same == gf.n, "raw: every hooked entry and exit exact: depth, return value, call time (%zu of %zu)",
	      same, gf.n);
	CHECK(raw_read_meta(r)->graph && raw_read_meta(r)->graph_retval && raw_read_meta(r)->graph_depth == 5,
	      "raw: the header says --graph, --retval and --graph-depth 5");
	raw_read_close(r);
}

/* What a writer makes of the fixture, directly and through a raw recording read back. */
static char *write_mem(const struct trace_writer_ops *ops, const struct trace_meta *m, int via_raw, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	struct raw_reader *r;
	struct errbuf err;

	if (!f)
		return NULL;
	if (!via_raw) {
		struct trace_writer *w;

		if (!ops->open(&w, f, m, &err)) {
			for (size_t i = 0; i < gf.n; i++)
				ops->event(w, &gf.ev[i]);
			ops->close(w, NULL, &err);
		}
	} else if (!gf_write(path_of("t.raw"), &trace_writer_raw, m, gf.ev, gf.n) &&
		   !raw_read_open(&r, path_of("t.raw"), &err)) {
		raw_read_convert(r, ops, f, &err);
		raw_read_close(r);
	}
	fclose(f);
	return buf;
}

static void test_text(void)
{
	struct trace_meta m = gf_meta(&syms);
	size_t a, b;
	char *direct = write_mem(&trace_writer_graph, &m, 0, &a), *conv = write_mem(&trace_writer_graph, &m, 1, &b);

	CHECK(direct && conv && a == b && !memcmp(direct, conv, a) && a > 500,
	      "text: the graph of the raw recording is the writer's own, byte for byte (%zu bytes)", a);
	CHECK(direct && strstr(direct, "foo_init(); /* = ") && strstr(direct, "} /* kernel_init_freeable = ") &&
	      strstr(direct, "/* start_kernel: still running when the trace ended (swapper/0-0) */") &&
	      strstr(direct, "/* leaf: return not recorded (sched-2) */") && strstr(direct, "leaf(); /* return not recorded */"),
	      "text: leaves, blocks with return values, calls still running and calls never returned");
	free(direct);
	free(conv);
}

/* The fixture's function events, less --graph-depth's deeper calls when depth is set. */
static size_t function_events(struct ring_event *out, unsigned depth)
{
	size_t n = 0;

	for (size_t i = 0; i < gf.n; i++)
		if (!vmev_is(&gf.ev[i]) && !(depth && (gf.ev[i].flags & (VT_REC_FLAG_HOOKED | VT_REC_FLAG_EXIT)) &&
					     gf.ev[i].depth >= depth))
			out[n++] = gf.ev[i];
	return n;
}

static void test_dat_depth(unsigned depth)
{
	struct trace_meta m = gf_meta(&syms);
	struct ring_event all[GF_MAX], want[GF_MAX];
	size_t nall = function_events(all, 0), n = function_events(want, depth);
	struct dat_decoded d = { 0 };
	struct dat_walk w = { 0 };
	struct errbuf err;

	int ok;

	m.graph_depth = depth;
	err.msg[0] = 0;
	ok = !gf_write(path_of("g.dat"), &trace_writer_dat, &m, all, nall) && !dat_walk_file(path_of("g.dat"), &w, &err);
	CHECK(ok, "dat (--graph-depth %u): written and walked [%s]", depth, err.msg);
	if (!ok)
		return;
	(void)check_walk;	/* test-trace-dat's: its kallsyms checks are of its own fixture */
	CHECK(w.nftrace == 3 && w.fgraph_fmt[0] && w.fgraph_fmt[1] &&
	      memmem(w.fgraph_fmt[1], w.fgraph_fmt_len[1], "\tfield:unsigned long long calltime;\toffset:24;\tsize:8;", 54),
	      "dat: the ftrace formats: function, funcgraph_entry, funcgraph_exit (calltime at 24)");
	for (unsigned cpu = 0; cpu < w.ncpus; cpu++)
		dat_decode_cpu(&w, cpu, &m, want, n, &d);
	CHECK(d.events == n && !d.mismatches, "dat%s %zu events: hooked entries as funcgraph_entry (id 11: func, "
	      "depth), exits as funcgraph_exit (id 10: calltime, rettime), the rest as function (%zu mismatches)",
	      depth ? " --graph-depth 3, deeper calls left out:" : ":", d.events, d.mismatches);
	dat_walk_free(&w);
}

static void test_perfetto(void)
{
	struct trace_meta m = gf_meta(&syms);
	struct dec_trace *t = calloc(1, sizeof(*t));
	size_t len, begins = 0, ends = 0, unreturned = 0, retvals = 0, hooked = 0, exits = 0;
	char *data = write_mem(&trace_writer_perfetto, &m, 1, &len);
	int ok;

	for (size_t i = 0; i < gf.n; i++) {
		hooked += !vmev_is(&gf.ev[i]) && (gf.ev[i].flags & VT_REC_FLAG_HOOKED);
		exits += !vmev_is(&gf.ev[i]) && (gf.ev[i].flags & VT_REC_FLAG_EXIT);
	}
	ok = t && data && dec_trace_parse(t, (uint8_t *)data, len) == 0;
	CHECK(ok, "perfetto: the file parses [%s]", t ? t->why : "?");
	if (!ok)
		goto out;
	for (size_t i = 0; i < t->nev; i++) {
		begins += t->ev[i].type == 1;
		ends += t->ev[i].type == 2 && !t->ev[i].unreturned;
		unreturned += t->ev[i].type == 2 && t->ev[i].unreturned;
		retvals += t->ev[i].type == 2 && t->ev[i].has_retval;
	}
	/* The exit whose call began before the trace has no slice; sched-2's schedule and leaf were dropped. */
	CHECK(begins == hooked && ends == exits - 1 && retvals == ends,
	      "perfetto: one slice per call: %zu begins (%zu hooked entries), %zu ends at returns (%zu exits, one of "
	      "a call begun before the trace), each with its return value", begins, hooked, ends, exits);
	CHECK(unreturned == 2, "perfetto: the two calls the stub dropped end, marked return_not_recorded (%zu)",
	      unreturned);
out:
	if (t)
		dec_trace_free(t);
	free(t);
	free(data);
}

struct tally {
	uint64_t total[GF_NFUNCS], self[GF_NFUNCS];
	unsigned returned, unreturned, running, unentered;
};

static int tally_call(void *opaque, const struct call *c)
{
	struct tally *t = opaque;
	unsigned f = (unsigned)((c->func - GF_KT) / 0x1000);

	t->returned += c->how == CALL_RETURNED;
	t->unreturned += c->how == CALL_UNRETURNED;
	t->running += c->how == CALL_RUNNING;
	t->unentered += !c->entered;
	if (c->how == CALL_RETURNED && c->entered && f < GF_NFUNCS) {
		t->total[f] += call_ticks(c);
		t->self[f] += call_ticks(c) - c->child;
	}
	return 0;
}

static void test_calls(void)
{
	struct call_tracker *ct;
	struct tally t;

	memset(&t, 0, sizeof(t));
	if (call_tracker_new(&ct, tally_call, &t)) {
		CHECK(0, "calls: a tracker");
		return;
	}
	for (size_t i = 0; i < gf.n; i++)
		call_tracker_event(ct, &gf.ev[i]);
	call_tracker_finish(ct, 13000);
	CHECK(t.total[GF_KIF] == 1900 && t.self[GF_KIF] == 600 && t.total[GF_DO_ONE_INITCALL] == 1000 &&
	      t.self[GF_DO_ONE_INITCALL] == 700 && t.total[GF_KERNEL_INIT] == 3000 && t.self[GF_KERNEL_INIT] == 700,
	      "calls: total and self time (kernel_init_freeable 1900 ns, 600 of its own; do_one_initcall 1000, 700)");
	CHECK(t.returned == 13 && t.unreturned == 2 && t.running == 3 && t.unentered == 1,
	      "calls: 13 returned (one begun before the trace), 2 dropped, 3 still running (got %u %u %u %u)",
	      t.returned, t.unreturned, t.running, t.unentered);
	call_tracker_free(ct);
}

/* A file of one event chunk, written as format version `version`: one hooked entry, then depth if given. */
static void write_versioned(const char *path, uint16_t version, int with_depth, uint64_t depth)
{
	struct raw_header h = { .tsc_khz = 1000000, .ncpus = 1 };
	uint8_t ev[64] = { 0 }, *p = ev + sizeof(struct raw_events);
	struct raw_chunk c;
	FILE *f = fopen(path, "w");

	((struct raw_events *)ev)->count = 1;
	*p++ = RAW_REC_ENTRY | RAW_REC_FLAGS;
	p = raw_put_varint(p, 0);			/* cpu */
	p = raw_put_varint(p, VT_REC_FLAG_HOOKED);	/* flags */
	if (with_depth)
		p = raw_put_varint(p, depth);
	p = raw_put_varint(p, raw_zigzag(5));		/* tsc, func, parent, seq */
	p = raw_put_varint(p, raw_zigzag(0x10));
	p = raw_put_varint(p, raw_zigzag(8));
	p = raw_put_varint(p, raw_zigzag(0));
	for (int k = 0; k < 2 && f; k++) {
		const void *payload = k ? (const void *)ev : (const void *)&h;
		uint32_t len = k ? (uint32_t)(p - ev) : (uint32_t)sizeof(h);

		raw_chunk_seal(&c, k ? RAW_CHUNK_EVENTS : RAW_CHUNK_HEADER, (uint64_t)k, payload, len);
		c.version = version;
		c.hdr_crc = raw_chunk_hdr_crc(&c);
		fwrite(&c, sizeof(c), 1, f);
		fwrite(payload, 1, len, f);
	}
	if (f)
		fclose(f);
}

static void test_versions(void)
{
	struct collect c = { .n = 0 };
	struct raw_reader *r;
	struct errbuf err;

	write_versioned(path_of("v3.raw"), 3, 0, 0);
	CHECK(!raw_read_open(&r, path_of("v3.raw"), &err) && !raw_read_replay(r, collect_ev, &c) && c.n == 1 &&
	      c.ev[0].tsc == 5 && c.ev[0].func == 0x10 && c.ev[0].flags == VT_REC_FLAG_HOOKED && !c.ev[0].depth &&
	      !raw_read_meta(r)->graph, "version 3 files still read: their records carry no depth");
	raw_read_close(r);
	c.n = 0;
	write_versioned(path_of("v4.raw"), 4, 1, 7);
	CHECK(!raw_read_open(&r, path_of("v4.raw"), &err) && !raw_read_replay(r, collect_ev, &c) && c.n == 1 &&
	      c.ev[0].depth == 7 && c.ev[0].tsc == 5, "version 4: a hooked entry's depth");
	raw_read_close(r);
	c.n = 0;
	write_versioned(path_of("deep.raw"), 4, 1, VT_SHADOW_FRAMES);
	CHECK(!raw_read_open(&r, path_of("deep.raw"), &err) && !raw_read_replay(r, collect_ev, &c) && c.n == 0 &&
	      raw_read_report(r)->damaged == 1, "a depth no shadow stack holds (%d) is damage, not an event",
	      VT_SHADOW_FRAMES);
	raw_read_close(r);
}

/*
 * graph.raw, the boot; same.raw, the same boot again; blacklist.raw, the
 * boot without foo_init's call (as initcall_blacklist=foo_init leaves
 * it); other.raw, the boot of a kernel with one more symbol; cut.raw,
 * graph.raw cut inside its last chunk.
 */
static int write_fixture(const char *d)
{
	struct trace_meta m = gf_meta(&syms);
	struct ring_event bl[GF_MAX];
	struct symtab other;
	struct stat st;
	char p[512];
	size_t n = 0;
	int rc = 0;

	m.fnargs = fnargs;
	for (size_t i = 0; i < gf.n; i++)
		if (gf.ev[i].func != gf_addr(GF_FOO_INIT) || vmev_is(&gf.ev[i]))
			bl[n++] = gf.ev[i];
	snprintf(p, sizeof(p), "%s/graph.raw", d);
	rc |= gf_write(p, &trace_writer_raw, &m, gf.ev, gf.n);
	snprintf(p, sizeof(p), "%s/cut.raw", d);
	rc |= gf_write(p, &trace_writer_raw, &m, gf.ev, gf.n) || stat(p, &st) || truncate(p, st.st_size - 10);
	snprintf(p, sizeof(p), "%s/same.raw", d);
	rc |= gf_write(p, &trace_writer_raw, &m, gf.ev, gf.n);
	snprintf(p, sizeof(p), "%s/blacklist.raw", d);
	rc |= gf_write(p, &trace_writer_raw, &m, bl, n);
	if (gf_symtab_with(&other, "another"))
		return 1;
	m.syms = &other;
	snprintf(p, sizeof(p), "%s/other.raw", d);
	rc |= gf_write(p, &trace_writer_raw, &m, gf.ev, gf.n);
	symtab_destroy(&other);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	char cmd[128];

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (gf_symtab(&syms)) {
		printf("FAIL: the fixture's symbols\n");
		return 1;
	}
	gf_boot(&gf);
	fnargs = fnargs_new(NULL);
	/* --fixture DIR: the recordings tests/unit/answers.sh reads. */
	if (argc == 3 && !strcmp(argv[1], "--fixture"))
		return write_fixture(argv[2]);
	if (!mkdtemp(dir))
		return 1;
	test_raw();
	test_text();
	test_dat_depth(0);
	test_dat_depth(3);
	test_perfetto();
	test_calls();
	test_versions();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		printf("INFO: could not remove %s\n", dir);
	symtab_destroy(&syms);
	fnargs_free(fnargs);
	return check_exit();
}
