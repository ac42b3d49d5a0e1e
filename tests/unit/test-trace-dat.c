// SPDX-License-Identifier: GPL-2.0
/*
 * The trace.dat writer (vmm/output/dat.c). A few thousand synthetic
 * events on three CPUs (small deltas, deltas that need a time extend, long
 * idle gaps, a gap no extend holds, equal timestamps within and across CPUs,
 * addresses outside every symbol) are written as trace.dat and as text.
 * Checked here: the file's sections walked by their sizes, the flyrecord
 * offsets, every ring-buffer page decoded back to the events; then the real
 * oracle, Debian's `trace-cmd report`, whose every line must agree with the
 * text writer's: order, CPU, irqs-off, microseconds, function and parent.
 * An empty and a one-CPU trace must open cleanly too.
 *
 * `test-trace-dat --emit DIR` only writes the traces and what they hold
 * (DIR/NAME.dat, DIR/NAME.expect) for dat-libtracecmd.sh's reader.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/check.h"
#include "tests/interop/dat/dat-walk.h"
#include "vmm/output/dat.h"
#include "vmm/output/dat-pages.h"

#define KT 0xffffffff81000000ull
#define NFUNCS 48
#define NEVENTS 6000

static struct symtab syms;
static uint64_t func_addr[NFUNCS];

/* Functions of varied sizes, a data symbol among them, an alias, _etext last. */
static void build_symtab(void)
{
	uint64_t a = KT + 0x1000;
	char name[32];
	int rc = 0;

	symtab_init(&syms);
	for (int i = 0; i < NFUNCS; i++) {
		func_addr[i] = a;
		snprintf(name, sizeof(name), "fn_%02d", i);
		rc |= symtab_add(&syms, a, i % 3 ? 't' : 'T', name, strlen(name));
		if (i == 5)
			rc |= symtab_add(&syms, a, 'T', "fn_05_alias", 11);
		a += 0x40 + 0x30 * (uint64_t)(i % 7);
		if (i == 20) {
			rc |= symtab_add(&syms, a, 'd', "some_data", 9);
			a += 0x200;
		}
	}
	rc |= symtab_add(&syms, a, 'T', "_etext", 6);
	if (rc || symtab_finish(&syms)) {
		printf("FAIL: building the symbol table\n");
		exit(1);
	}
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(uint64_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return n ? rng_state % n : 0;
}

static int event_cmp(const void *a, const void *b)
{
	const struct ring_event *x = a, *y = b;

	if (x->tsc != y->tsc)
		return x->tsc < y->tsc ? -1 : 1;
	return x->cpu != y->cpu ? (x->cpu < y->cpu ? -1 : 1) : (x->seq < y->seq ? -1 : x->seq > y->seq);
}

static uint64_t gen_parent(void)
{
	switch (rnd(20)) {
	case 0: return KT + 0x10;				/* below every symbol */
	case 1: return KT + 0x7fffff;				/* past _etext */
	case 2: return symtab_find_name(&syms, "some_data")->addr + 8;
	default: return func_addr[rnd(NFUNCS)] + 5 + rnd(0x30);
	}
}

/*
 * Events as the tracer hands them over: sorted by TSC, ties by ring (CPU).
 * TSC ticks at 2494.123 MHz, so ticks map to ns unevenly and different
 * ticks can share one ns. The trace starts at tsc_base.
 */
/*
 * Three events in four get a task (a few pids, one comm each, as a pid keeps
 * its name in the cmdlines) and a preempt count of some context; one in
 * eight a need-resched or migrate-disable flag.
 */
static void gen_task(struct ring_event *e)
{
	static const struct { int32_t pid; const char *comm; } tasks[] = {
		{ 0, "swapper" }, { 1, "init" }, { 57, "kworker/0:1" }, { 300, "sysloop" },
		{ 4194304, "x123456789abcde" },
	};
	static const uint32_t pcs[] = { 0, 1, 0x100, 0x200, 0x10001, 0x100000, 0x110000, 0x12 };
	unsigned k = (unsigned)rnd(4);

	if (k == 0)
		return;
	k = (unsigned)rnd(sizeof(tasks) / sizeof(tasks[0]));
	e->flags |= VT_REC_FLAG_TASK | VT_REC_FLAG_CTX;
	e->task = 0xffff888001000000ull + 0x4000ull * k;
	e->pid = tasks[k].pid;
	snprintf(e->comm, sizeof(e->comm), "%s", tasks[k].comm);
	e->preempt = pcs[rnd(sizeof(pcs) / sizeof(pcs[0]))];
	if (rnd(8) == 0)
		e->flags |= VT_REC_FLAG_NEED_RESCHED;
	if (rnd(8) == 0)
		e->flags |= VT_REC_FLAG_PREEMPT_RESCHED;
	if (rnd(8) == 0)
		e->flags |= (uint16_t)(rnd(16) << VT_REC_MIGR_SHIFT);
}

static size_t gen_events(struct ring_event *ev, size_t n, unsigned ncpus, uint64_t base, uint64_t khz)
{
	uint64_t tsc = base + 12345;

	for (size_t i = 0; i < n; i++) {
		unsigned k = (unsigned)rnd(100);

		if (k < 8)
			;					/* the same TSC again */
		else if (k < 12)
			tsc += 1;				/* a tick later: the same ns, mostly */
		else if (k < 14)
			tsc += (140 + rnd(2860)) * khz;		/* 0.14-3 s: needs an extend */
		else if (k < 15)
			tsc += (60 + rnd(600)) * khz * 1000;	/* a long idle gap */
		else
			tsc += 1 + rnd(4000);
		ev[i] = (struct ring_event){
			.tsc = tsc, .func = func_addr[rnd(NFUNCS)], .parent = gen_parent(),
			.cpu = (uint16_t)rnd(ncpus), .flags = (uint16_t)(rnd(3) == 0 ? VT_REC_FLAG_IRQS_OFF : 0),
			.seq = i,
		};
		gen_task(&ev[i]);
		if (rnd(200) == 0)
			ev[i].func = rnd(2) ? KT + 0x20 : KT + 0x800000;	/* no symbol */
	}
	/* A gap that no time extend holds (2^59 ns): a new page must carry it. */
	if (n > 10)
		ev[n - 1].tsc = ev[n - 2].tsc + (1ull << 60) / 1000000 * khz;
	qsort(ev, n, sizeof(*ev), event_cmp);
	return n;
}

static int write_trace(const char *path, const struct trace_meta *m, const struct ring_event *ev,
		       size_t n, const struct trace_writer_ops *ops, struct errbuf *err)
{
	FILE *f = fopen(path, "w");
	struct trace_writer *w = NULL;
	struct trace_stats st = { .events = n, .dropped_stub = 3, .lost = 4 };
	int rc;

	if (!f)
		return err_set(err, errno, "%s: %s", path, strerror(errno));
	rc = ops->open(&w, f, m, err);
	for (size_t i = 0; !rc && i < n; i++)
		rc = ops->event(w, &ev[i]);
	if (!rc)
		rc = ops->flush(w);
	if (w && ops->close(w, &st, err) && !rc)
		rc = -EIO;
	if (fclose(f) && !rc)
		rc = -errno;
	return rc;
}

/* What report's merge does: by ns, ties by CPU, each CPU's own order kept. */
static const struct trace_meta *order_meta;

static int expect_cmp(const void *a, const void *b)
{
	const struct ring_event *x = a, *y = b;
	uint64_t nx = trace_meta_ns(order_meta, x->tsc), ny = trace_meta_ns(order_meta, y->tsc);

	if (nx != ny)
		return nx < ny ? -1 : 1;
	return x->cpu != y->cpu ? (x->cpu < y->cpu ? -1 : 1) : (x->seq < y->seq ? -1 : x->seq > y->seq);
}

static struct ring_event *expect_order(const struct trace_meta *m, const struct ring_event *ev, size_t n)
{
	struct ring_event *e = malloc((n ? n : 1) * sizeof(*e));

	if (!e)
		exit(1);
	memcpy(e, ev, n * sizeof(*e));
	for (size_t i = 0; i < n; i++)
		e[i].seq = i;
	order_meta = m;
	qsort(e, n, sizeof(*e), expect_cmp);
	return e;
}

/* NAME.expect: "events N", then "cpu ns ip parent flags pc pid comm" in report's order. */
static int emit_expect(const char *path, const struct trace_meta *m, const struct ring_event *e, size_t n)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fprintf(f, "events %zu\n", n);
	for (size_t i = 0; i < n; i++) {
		int task = (e[i].flags & VT_REC_FLAG_TASK) != 0;

		fprintf(f, "%u %" PRIu64 " %" PRIu64 " %" PRIu64 " %u %u %d %s\n", e[i].cpu,
			trace_meta_ns(m, e[i].tsc), e[i].func, e[i].parent, ring_event_ftrace_flags(&e[i]),
			ring_event_ftrace_pc(&e[i]), task ? e[i].pid : 0, task && e[i].comm[0] ? e[i].comm : "-");
	}
	return fclose(f);
}

#include "tests/interop/dat/dat-report.h"

struct trace_case {
	const char *name;
	unsigned ncpus;
	size_t nevents;
};

static const struct trace_case cases[] = {
	{ "main", 3, NEVENTS },
	{ "one-cpu", 1, 500 },
	{ "empty", 2, 0 },
};

static void run_case(const struct trace_case *c, const char *dir, int emit, int have_report)
{
	struct trace_meta m = { .syms = &syms, .tsc_khz = 2494123, .tsc_base = 987654321, .ncpus = c->ncpus };
	struct ring_event *ev = calloc(c->nevents + 1, sizeof(*ev)), *exp;
	char path[512], epath[512];
	struct errbuf err = { "" };
	struct dat_walk wk;
	int rc;

	if (!ev)
		exit(1);
	gen_events(ev, c->nevents, c->ncpus, m.tsc_base, m.tsc_khz);
	exp = expect_order(&m, ev, c->nevents);
	snprintf(path, sizeof(path), "%s/%s.dat", dir, c->name);
	snprintf(epath, sizeof(epath), "%s/%s.expect", dir, c->name);
	rc = write_trace(path, &m, ev, c->nevents, &trace_writer_dat, &err);
	CHECK(rc == 0, "%s: the dat writer writes %zu events on %u CPUs (%s)", c->name, c->nevents,
	      c->ncpus, rc ? err.msg : "ok");
	if (emit) {
		CHECK(emit_expect(epath, &m, exp, c->nevents) == 0, "%s: wrote %s", c->name, epath);
	} else if (!rc) {
		rc = dat_walk_file(path, &wk, &err);
		CHECK(rc == 0, "%s: the file's sections walk by their sizes (%s)", c->name, rc ? err.msg : "ok");
		if (!rc)
			check_walk(c->name, &wk, &m, exp, c->nevents);
		dat_walk_free(&wk);
		if (have_report)
			check_report(c->name, path, &m, ev, exp, c->nevents);
	}
	free(exp);
	free(ev);
}

/* The whole file, into *buf (malloc'd); its size, or -1. */
static long slurp(const char *path, uint8_t **buf)
{
	FILE *f = fopen(path, "r");
	long n = -1;

	*buf = NULL;
	if (f && !fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET)) {
		*buf = malloc((size_t)n + 1);
		if (!*buf || fread(*buf, 1, (size_t)n, f) != (size_t)n)
			n = -1;
	}
	if (f)
		fclose(f);
	return n;
}

/*
 * The page store past its memory budget: the same trace written with a
 * budget of a few pages (the older pages of every CPU go through the
 * temporary files, many times over) must be the same file, byte for byte.
 */
static void test_spill(const char *dir)
{
	struct trace_meta m = { .syms = &syms, .tsc_khz = 2494123, .tsc_base = 987654321, .ncpus = 3 };
	size_t n = 4 * NEVENTS;
	struct ring_event *ev = calloc(n, sizeof(*ev));
	char path[2][512];
	uint8_t *buf[2];
	long len[2];
	struct errbuf err = { "" };
	int rc = 0;

	if (!ev)
		exit(1);
	n = gen_events(ev, n, m.ncpus, m.tsc_base, m.tsc_khz);
	for (int k = 0; k < 2; k++) {
		snprintf(path[k], sizeof(path[k]), "%s/spill%d.dat", dir, k);
		trace_dat_pages_mem = k ? 8 * TRACE_DAT_PAGE_SIZE : TRACE_DAT_PAGES_MEM;
		rc |= write_trace(path[k], &m, ev, n, &trace_writer_dat, &err);
		len[k] = slurp(path[k], &buf[k]);
	}
	trace_dat_pages_mem = TRACE_DAT_PAGES_MEM;
	CHECK(!rc && len[0] > 40 * (long)TRACE_DAT_PAGE_SIZE && len[0] == len[1] &&
	      !memcmp(buf[0], buf[1], (size_t)len[0]),
	      "spill: %zu events written through an 8-page memory budget give the same %ld bytes (%ld)",
	      n, len[0], len[1]);
	free(buf[0]);
	free(buf[1]);
	free(ev);
}

/* A stream that takes `left` bytes, then fails as a full queue does. */
static ssize_t limited_write(void *cookie, const char *buf, size_t len)
{
	size_t *left = cookie;

	(void)buf;
	if (len > *left) {
		*left = 0;
		errno = ENOBUFS;
		return 0;	/* fopencookie(3): never negative */
	}
	*left -= len;
	return (ssize_t)len;
}

/*
 * Output that fails part-way, at every stage of the file (its header, its
 * symbols, the CPU data kept in memory, the data spilled to the temporary
 * files): the writer reports the failure (open, an event or close) and
 * frees everything it had (the sanitizer tier checks the freeing).
 */
static void test_write_fails(void)
{
	static const cookie_io_functions_t io = { .write = limited_write };
	struct trace_meta m = { .syms = &syms, .tsc_khz = 2494123, .tsc_base = 987654321, .ncpus = 3 };
	static const size_t limits[] = { 0, 100, 4096, 20000, 100000, 300000, 500000, 700000 };
	size_t n = 4 * NEVENTS, reported = 0, tried = 0;
	struct ring_event *ev = calloc(n, sizeof(*ev));

	if (!ev)
		exit(1);
	n = gen_events(ev, n, m.ncpus, m.tsc_base, m.tsc_khz);
	for (int spill = 0; spill < 2; spill++) {
		trace_dat_pages_mem = spill ? 8 * TRACE_DAT_PAGE_SIZE : TRACE_DAT_PAGES_MEM;
		for (size_t k = 0; k < sizeof(limits) / sizeof(limits[0]); k++) {
			struct trace_stats st = { .events = n };
			struct trace_writer *w = NULL;
			struct errbuf err = { "" };
			size_t left = limits[k];
			FILE *f = fopencookie(&left, "w", io);
			int rc;

			if (!f)
				exit(1);
			rc = trace_writer_dat.open(&w, f, &m, &err);
			for (size_t i = 0; !rc && i < n; i++)
				rc = trace_writer_dat.event(w, &ev[i]);
			if (w) {
				int crc = trace_writer_dat.close(w, &st, &err);

				rc = rc ? rc : crc;
			}
			if (fclose(f) && !rc)
				rc = -errno;
			tried++;
			reported += rc < 0;
		}
	}
	trace_dat_pages_mem = TRACE_DAT_PAGES_MEM;
	/* Every limit is below the file's size (test_spill's file: about 0.7 MB). */
	CHECK(reported == tried, "a write failing part-way is reported: %zu of %zu cases", reported, tried);
	free(ev);
}

/* The reciprocal ns conversion against trace_meta_ns's division, to the ns. */
static void test_ns(void)
{
	static const uint64_t khz[] = { 0, 1, 2, 3, 7, 1000, 999983, 1000000, 2494123, 3000000,
					4194304, 2999999999ull, 1ull << 40, UINT64_MAX / 3, UINT64_MAX };
	unsigned bad = 0, tried = 0;

	for (size_t i = 0; i < sizeof(khz) / sizeof(khz[0]); i++) {
		struct trace_meta m = { .tsc_khz = khz[i], .tsc_base = 1000, .ncpus = 1 };
		struct trace_dat_ns c;

		trace_dat_ns_init(&c, &m);
		for (unsigned j = 0; j < 20000; j++) {
			/* Small, random, near the 64-bit edge of ticks * 10^6, and past it. */
			uint64_t r = rnd(UINT64_MAX) | 1, t = j < 64 ? j : j % 4 == 0 ? r : j % 4 == 1 ? r >> (j % 64) :
				     UINT64_MAX / 1000000u - 5000 + j % 10000;

			bad += trace_dat_ns(&c, t + m.tsc_base) != trace_meta_ns(&m, t + m.tsc_base);
			tried++;
		}
		bad += trace_dat_ns(&c, 0) != 0;
	}
	CHECK(!bad, "trace_dat_ns: %u of %u conversions differ from trace_meta_ns", bad, tried);
}

/* Refusals: a CPU the trace does not have, a trace of no CPU. */
static void test_errors(const char *dir)
{
	struct trace_meta m = { .syms = &syms, .tsc_khz = 1000000, .ncpus = 2 };
	struct ring_event bad = { .tsc = 5, .func = func_addr[0], .cpu = 2 };
	struct errbuf err = { "" };
	char path[512];
	int rc;

	snprintf(path, sizeof(path), "%s/bad.dat", dir);
	rc = write_trace(path, &m, &bad, 1, &trace_writer_dat, &err);
	CHECK(rc == -EINVAL && strstr(err.msg, "CPU 2 of a 2-CPU"), "an event on CPU 2 of 2 is refused: %s",
	      err.msg);
	m.ncpus = 0;
	err.msg[0] = 0;
	rc = write_trace(path, &m, NULL, 0, &trace_writer_dat, &err);
	CHECK(rc == -EINVAL && strstr(err.msg, "0 CPUs"), "a trace of 0 CPUs is refused: %s", err.msg);
}

int main(int argc, char **argv)
{
	char tmpl[] = "/tmp/test-trace-dat.XXXXXX";
	const char *dir = NULL;
	int emit = argc == 3 && !strcmp(argv[1], "--emit");
	int have_report = !system("command -v trace-cmd >/dev/null 2>&1");

	build_symtab();
	dir = emit ? argv[2] : mkdtemp(tmpl);
	if (!dir) {
		printf("FAIL: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	if (!emit && !have_report)
		printf("##########################################################\n"
		       "SKIP: trace-cmd is absent (apt-get install trace-cmd): the\n"
		       "      trace-cmd report oracle was NOT RUN\n"
		       "##########################################################\n");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i], dir, emit, have_report);
	if (!emit) {
		test_errors(dir);
		test_spill(dir);
		test_write_fails();
		test_ns();
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (getenv("VMMTRACE_KEEP_TMP"))
			printf("INFO: keeping %s\n", dir);
		else if (system(cmd) != 0)
			printf("INFO: could not remove %s\n", dir);
	}
	symtab_destroy(&syms);
	return check_exit();
}
