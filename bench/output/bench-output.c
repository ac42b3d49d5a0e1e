// SPDX-License-Identifier: GPL-2.0
/*
 * bench/output: how fast each output format writes, and whether the
 * tracer's own per-event path (ring consumer, ordering buffer, raw writer)
 * keeps up with a guest, measured side by side in one run because the
 * machines this runs on are shared and noisy: only ratios taken within
 * one run mean anything. Built and run by bench/output/run.sh.
 *
 *   bench-output [-n EVENTS] [-r ROUNDS] [-c CPUS] [-o CASE] [RAW]
 *
 * RAW is a recorded raw trace (vmmtrace boot ... -o boot.raw); without
 * one, a synthetic trace shaped like a boot is written first. Its events
 * are replayed lap after lap, each lap shifted in time and ring index, up
 * to EVENTS, so every measurement writes the same stream whatever the
 * source's size. -o runs one case alone (text, dat, perfetto, raw,
 * consumer+raw, consumer), for a profiler.
 *
 * Each round times every case once, in an order that rotates per round,
 * with the thread's CPU clock (blind to other jobs holding the CPU) and
 * the wall clock. Targets (the output-formats issue): dat and raw at
 * least 10x the text writer, and consumer + raw writer at least
 * 20 M events/s on one core.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vmm/output/raw-read.h"
#include "vmm/trace/ring.h"
#include "vmm/trace/trace-buf.h"
#include "vmm/output/raw.h"
#include "vmm/output/writer.h"

/*
 * Events between two consumer rounds: the tracer's consumer wakes every
 * 20 ms, which at the 20 M events/s target is 400,000 events. Writers
 * are flushed as often in every case, as the tracer flushes them.
 */
#define ROUND_EVENTS	400000
/* Records per ring: the default --buffer-size (512K) over 128-byte records. */
#define RING_RECORDS	4096
#define MAX_RINGS	64
#define MAX_ROUNDS	64

static void die(const char *fmt, const char *arg, int err)
{
	fprintf(stderr, "bench-output: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "%s%s\n", err ? ": " : "", err ? strerror(err) : "");
	exit(1);
}

/* ---- the source events ------------------------------------------------ */

struct source {
	struct raw_reader *rd;
	const struct trace_meta *meta;
	struct ring_event *ev;
	size_t n, cap;
	uint64_t lap_tsc;		/* a lap's shift in time: the source's span and a gap */
	uint64_t per_ring[MAX_RINGS];	/* events per ring: a lap's shift in seq */
};

static int source_add(void *opaque, const struct ring_event *ev)
{
	struct source *s = opaque;

	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1 << 16;
		s->ev = realloc(s->ev, s->cap * sizeof(*s->ev));
		if (!s->ev)
			return -ENOMEM;
	}
	s->ev[s->n++] = *ev;
	if (ev->ring < MAX_RINGS)
		s->per_ring[ev->ring]++;
	return 0;
}

static void source_load(struct source *s, const char *path)
{
	struct errbuf err;
	int rc = raw_read_open(&s->rd, path, &err);

	if (rc)
		die("%s", err.msg, 0);
	s->meta = raw_read_meta(s->rd);
	rc = raw_read_replay(s->rd, source_add, s);
	if (rc)
		die("replaying %s", path, -rc);
	if (!s->n)
		die("%s holds no events", path, 0);
	for (size_t i = 0; i < s->n; i++)
		if (s->ev[i].ring >= s->meta->ncpus && s->ev[i].cpu >= s->meta->ncpus)
			die("%s: an event's ring and CPU are both past the trace's CPU count", path, 0);
	/* The mean gap between events separates one lap from the next. */
	s->lap_tsc = s->ev[s->n - 1].tsc - s->ev[0].tsc;
	s->lap_tsc += s->lap_tsc / s->n + 1;
}

/* A replay of the source, lap after lap, each lap later in time. */
struct stream {
	const struct source *s;
	size_t i;
	uint64_t lap;
};

static inline void stream_next(struct stream *st, struct ring_event *ev)
{
	const struct source *s = st->s;

	*ev = s->ev[st->i];
	ev->tsc += st->lap * s->lap_tsc;
	if (ev->ring < MAX_RINGS)
		ev->seq += st->lap * s->per_ring[ev->ring];
	if (++st->i == s->n) {
		st->i = 0;
		st->lap++;
	}
}

/* ---- a synthetic boot ------------------------------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/*
 * Names of kernel-like shape and length (2-4 words, sometimes "__"), so
 * the text writer's symbol lookups and copies cost what they do on a real
 * kernel's table.
 */
static void synth_name(char *buf, size_t len)
{
	static const char *const words[] = {
		"do", "sys", "vfs", "page", "mm", "sched", "irq", "init", "alloc", "free", "get",
		"put", "lock", "unlock", "update", "cpu", "rcu", "kmem", "cache", "node", "zone",
		"pci", "acpi", "x86", "setup", "early", "tick", "timer", "task", "write", "read",
		"map", "unmap", "list", "add", "del", "find", "set", "clear", "check", "handle",
		"fault", "file", "inode", "dentry", "mount", "sock", "dev", "bus", "driver",
		"probe", "register", "kobject", "sysfs", "percpu", "memblock", "apic", "hrtimer",
		"workqueue", "kthread", "wake", "enqueue", "entity", "fair", "slab", "folio",
	};
	size_t nw = sizeof(words) / sizeof(words[0]), pos = 0;
	unsigned parts = 2 + (unsigned)(rnd() % 3);

	if (rnd() % 8 == 0)
		pos += (size_t)snprintf(buf, len, "__");
	for (unsigned i = 0; i < parts && pos < len; i++)
		pos += (size_t)snprintf(buf + pos, len - pos, "%s%s", i ? "_" : "",
					words[rnd() % nw]);
}

/*
 * A boot-shaped trace into path: nfuncs functions among data symbols (a
 * kallsyms-sized table), a skewed few thousand of them called, each from
 * a few call sites; both CPUs busy in bursts; interrupts off for
 * stretches; time moving on by small steps with an occasional long gap.
 */
#define SYNTH_FUNCS	12000
#define SYNTH_SYMS	24000	/* every other one data: about the lean kernel's table */
#define SYNTH_HOT	3000

/* Functions and data symbols alternating; each function's address and size. */
static void synth_symtab(struct symtab *tab, uint64_t *addr, uint64_t *size)
{
	uint64_t a = 0xffffffff81000000ull;
	unsigned f = 0;
	char name[96];

	symtab_init(tab);
	for (unsigned i = 0; i < SYNTH_SYMS; i++) {
		int func = i % 2 == 0 && f < SYNTH_FUNCS;

		synth_name(name, sizeof(name));
		if (symtab_add(tab, a, func ? (rnd() % 3 ? 't' : 'T') : 'd', name, strlen(name)))
			die("%s", "symtab_add", 0);
		if (func) {
			addr[f] = a;
			size[f] = 16 + rnd() % 1500;
			a += (size[f++] + 15) & ~15ull;
		} else {
			a += 16 * (1 + rnd() % 8);
		}
	}
	if (symtab_add(tab, a, 'T', "_etext", 6) || symtab_finish(tab))
		die("%s", "symtab", 0);
}

static void synth_write(const char *path, unsigned ncpus, size_t nevents)
{
	const unsigned nfuncs = SYNTH_FUNCS, hot = SYNTH_HOT;
	struct symtab tab;
	uint64_t *addr = malloc(nfuncs * sizeof(*addr)), *size = malloc(nfuncs * sizeof(*size));
	uint64_t tsc = 1000000, seq[MAX_RINGS] = { 0 };
	struct trace_meta meta = { .syms = &tab, .tsc_khz = 2000000, .tsc_base = 0,
				   .ncpus = ncpus, .kernel = "synthetic" };
	struct trace_writer *w;
	struct trace_stats st = { .events = nevents };
	struct errbuf err;
	unsigned cpu = 0, burst = 0, irqs_off = 0;
	FILE *out;

	if (!addr || !size)
		die("%s", "out of memory", 0);
	synth_symtab(&tab, addr, size);
	out = fopen(path, "w");
	if (!out)
		die("cannot create %s", path, errno);
	if (trace_writer_raw.open(&w, out, &meta, &err))
		die("%s", err.msg, 0);
	for (size_t i = 0; i < nevents; i++) {
		struct ring_event ev;
		/* Skewed: low indices far more often, like a boot's hot helpers. */
		unsigned fi = (unsigned)(rnd() % (1 + rnd() % hot)) * 4 % nfuncs;
		/* A few callers per function, each calling from one site. */
		unsigned pi = (unsigned)((fi * 2654435761ull + rnd() % 4 * 7919) % nfuncs);
		uint64_t site = 5 + (fi * 40503ull + pi) % size[pi];

		if (!burst--) {
			burst = (unsigned)(1 + rnd() % 200);
			cpu = (unsigned)(rnd() % ncpus);
		}
		if (rnd() % 64 == 0)
			irqs_off = !irqs_off;
		tsc += rnd() % 256 == 0 ? rnd() % 2000000 : 40 + rnd() % 600;
		ev = (struct ring_event){
			.tsc = tsc, .func = addr[fi], .parent = addr[pi] + site,
			.seq = seq[cpu]++, .cpu = (uint16_t)cpu, .flags = irqs_off ? VT_REC_FLAG_IRQS_OFF : 0,
			.ring = cpu,
		};
		if (trace_writer_raw.event(w, &ev))
			die("writing %s", path, EIO);
	}
	if (trace_writer_raw.close(w, &st, &err) || fclose(out))
		die("writing %s", path, EIO);
	symtab_destroy(&tab);
	free(addr);
	free(size);
}

/* ---- timing ----------------------------------------------------------- */

struct clocks {
	double cpu, wall;
};

static double clock_s(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static void clocks_start(struct clocks *c)
{
	c->cpu -= clock_s(CLOCK_THREAD_CPUTIME_ID);
	c->wall -= clock_s(CLOCK_MONOTONIC);
}

static void clocks_stop(struct clocks *c)
{
	c->cpu += clock_s(CLOCK_THREAD_CPUTIME_ID);
	c->wall += clock_s(CLOCK_MONOTONIC);
}

static uint64_t file_size(const char *path)
{
	struct stat sb;

	return stat(path, &sb) ? 0 : (uint64_t)sb.st_size;
}

/* ---- case 1: a writer alone ------------------------------------------- */

/* Writes n events through ops into path: open to fclose, as the tracer does. */
static struct clocks run_writer(const struct trace_writer_ops *ops, const struct source *s,
				uint64_t n, const char *path)
{
	struct clocks c = { 0, 0 };
	struct stream st = { .s = s };
	struct trace_stats stats = { .events = n };
	struct trace_writer *w;
	struct ring_event ev;
	struct errbuf err;
	FILE *out = fopen(path, "w");

	if (!out)
		die("cannot create %s", path, errno);
	clocks_start(&c);
	if (ops->open(&w, out, s->meta, &err))
		die("%s", err.msg, 0);
	for (uint64_t i = 0, k = 0; i < n; i++) {
		stream_next(&st, &ev);
		if (ops->event(w, &ev))
			die("%s writer failed", ops->name, 0);
		if (++k == ROUND_EVENTS) {
			k = 0;
			if (ops->flush(w))
				die("%s writer's flush failed", ops->name, 0);
		}
	}
	if (ops->close(w, &stats, &err))
		die("%s", err.msg, 0);
	if (fclose(out))
		die("writing %s", path, errno);
	clocks_stop(&c);
	return c;
}

/* ---- case 2: the consumer, into the raw writer or into nothing -------- */

/*
 * One vCPU's ring in host memory, and the host's view of it. The stub's
 * part (reserve, write, commit) is the guest's cost and is not timed.
 */
struct bench_ring {
	struct vt_ring_hdr hdr;
	struct vt_record *recs;
	struct ring_view view;
};

/* Writes ev as the stub does; 0 when the ring is full (lossless: the doorbell). */
static int ring_produce(struct bench_ring *r, const struct ring_event *ev)
{
	uint64_t head = r->hdr.head;
	struct vt_record *rec;

	if (head - __atomic_load_n(&r->hdr.tail, __ATOMIC_ACQUIRE) >= RING_RECORDS)
		return 0;
	rec = &r->recs[head & (RING_RECORDS - 1)];
	__atomic_store_n(&rec->commit, 0, __ATOMIC_RELEASE);
	rec->tsc = ev->tsc;
	rec->func = ev->func;
	rec->parent = ev->parent;
	rec->cpu = ev->cpu;
	rec->flags = ev->flags;
	__atomic_store_n(&rec->commit, (uint32_t)(head + 1), __ATOMIC_RELEASE);
	__atomic_store_n(&r->hdr.head, head + 1, __ATOMIC_RELEASE);
	return 1;
}

struct consumer {
	struct bench_ring *rings;
	unsigned nrings;
	struct trace_buf buf;
	const struct trace_writer_ops *ops;	/* NULL: events go nowhere */
	struct trace_writer *w;
	uint64_t round_max;
	uint64_t written;
};

static int consumer_emit(void *opaque, const struct ring_event *ev)
{
	struct consumer *c = opaque;

	c->written++;
	return c->ops ? c->ops->event(c->w, ev) : 0;
}

static int consumer_drain_all(struct consumer *c, int final)
{
	int any = 0, in_flight;

	for (unsigned i = 0; i < c->nrings; i++) {
		if (ring_drain_batch(&c->rings[i].view, trace_buf_add_batch, &c->buf, final, &in_flight) < 0)
			die("%s", "ring_drain failed", 0);
		any |= in_flight;
	}
	return any;
}

/* One wake-up of the tracer's consumer thread (tracer-run.c). */
static void consumer_round(struct consumer *c)
{
	uint64_t before = c->round_max;
	int in_flight;

	c->round_max = c->buf.max_tsc;
	in_flight = consumer_drain_all(c, 0);
	trace_buf_round(&c->buf, before, in_flight);
	if (trace_buf_flush(&c->buf, 0, consumer_emit, c) < 0 || (c->ops && c->ops->flush(c->w)))
		die("%s", "writing failed", 0);
}

static void consumer_init(struct consumer *c)
{
	c->rings = calloc(c->nrings, sizeof(*c->rings));
	if (!c->rings)
		die("%s", "out of memory", 0);
	for (unsigned i = 0; i < c->nrings; i++) {
		struct bench_ring *r = &c->rings[i];

		r->recs = aligned_alloc(4096, RING_RECORDS * sizeof(*r->recs));
		if (!r->recs)
			die("%s", "out of memory", 0);
		memset(r->recs, 0, RING_RECORDS * sizeof(*r->recs));
		ring_view_init(&r->view, i, &r->hdr, r->recs, RING_RECORDS, 1);
	}
	trace_buf_init(&c->buf);
}

static void consumer_destroy(struct consumer *c)
{
	trace_buf_destroy(&c->buf);
	for (unsigned i = 0; i < c->nrings; i++) {
		ring_view_destroy(&c->rings[i].view);
		free(c->rings[i].recs);
	}
	free(c->rings);
}

static struct clocks run_consumer(const struct trace_writer_ops *ops, const struct source *s,
				  uint64_t n, const char *path)
{
	struct clocks c = { 0, 0 };
	struct consumer cs = { .nrings = s->meta->ncpus, .ops = ops };
	struct stream st = { .s = s };
	struct trace_stats stats = { .events = n };
	struct ring_event ev;
	struct errbuf err;
	FILE *out = ops ? fopen(path, "w") : NULL;

	if (ops && !out)
		die("cannot create %s", path, errno);
	consumer_init(&cs);

	clocks_start(&c);
	if (ops && ops->open(&cs.w, out, s->meta, &err))
		die("%s", err.msg, 0);
	clocks_stop(&c);
	for (uint64_t i = 0, k = 0; i < n; i++) {
		unsigned ring;

		stream_next(&st, &ev);
		ring = ev.ring < cs.nrings ? ev.ring : ev.cpu;
		if (!ring_produce(&cs.rings[ring], &ev)) {
			int in_flight;

			/* The doorbell: the vCPU waits while its ring is drained. */
			clocks_start(&c);
			ring_drain_batch(&cs.rings[ring].view, trace_buf_add_batch, &cs.buf, 0, &in_flight);
			clocks_stop(&c);
			ring_produce(&cs.rings[ring], &ev);
		}
		if (++k == ROUND_EVENTS) {
			k = 0;
			clocks_start(&c);
			consumer_round(&cs);
			clocks_stop(&c);
		}
	}
	clocks_start(&c);
	consumer_round(&cs);
	consumer_drain_all(&cs, 1);
	if (trace_buf_flush(&cs.buf, 1, consumer_emit, &cs) < 0)
		die("%s", "writing failed", 0);
	if (ops && (ops->close(cs.w, &stats, &err) || fclose(out)))
		die("closing %s", path, 0);
	clocks_stop(&c);
	if (cs.written != n)
		die("%s", "the consumer lost events", 0);
	consumer_destroy(&cs);
	return c;
}

/* ---- the table -------------------------------------------------------- */

enum { C_TEXT, C_DAT, C_PERFETTO, C_RAW, C_CONS_RAW, C_CONS, NCASES };

static const char *const case_name[NCASES] = {
	"text", "dat", "perfetto", "raw", "consumer + raw", "consumer alone",
};

/* The case called name (its table name without spaces), or exits. */
static int case_find(const char *name)
{
	for (int k = 0; k < NCASES; k++) {
		char plain[32];
		size_t j = 0;

		for (const char *p = case_name[k]; *p && j < sizeof(plain) - 1; p++)
			if (*p != ' ')
				plain[j++] = *p;
		plain[j] = 0;
		if (!strcmp(plain, name) || (k == C_CONS && !strcmp(name, "consumer")))
			return k;
	}
	die("no case %s (text, dat, perfetto, raw, consumer+raw, consumer)", name, 0);
	return -1;
}

struct result {
	struct clocks t[MAX_ROUNDS];
	uint64_t bytes;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median, min and max of v[0..n) (sorts v). */
static void stats3(double *v, unsigned n, double *med, double *lo, double *hi)
{
	qsort(v, n, sizeof(*v), cmp_double);
	*med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	*lo = v[0];
	*hi = v[n - 1];
}

static uint64_t parse_count(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (*end == 'M' || *end == 'm')
		v *= 1e6, end++;
	else if (*end == 'k' || *end == 'K')
		v *= 1e3, end++;
	if (*end || v < 1)
		die("not a count: %s", s, 0);
	return (uint64_t)v;
}

static void print_table(struct result *res, unsigned rounds, uint64_t n, int only)
{
	double rate[NCASES], ratio[NCASES];

	printf("%-16s %-30s %-14s %-24s %s\n", "format", "events/s CPU: median (range)",
	       "wall: median", "x text (CPU, per round)", "bytes/event");
	for (unsigned k = 0; k < NCASES; k++) {
		double v[MAX_ROUNDS], wv[MAX_ROUNDS], rv[MAX_ROUNDS];

		if (only >= 0 && (int)k != only)
			continue;
		double med, lo, hi, wmed, wlo, whi, rmed, rlo, rhi;

		for (unsigned r = 0; r < rounds; r++) {
			v[r] = n / res[k].t[r].cpu;
			wv[r] = n / res[k].t[r].wall;
			rv[r] = only < 0 ? res[C_TEXT].t[r].cpu / res[k].t[r].cpu : 0;
		}
		stats3(v, rounds, &med, &lo, &hi);
		stats3(wv, rounds, &wmed, &wlo, &whi);
		stats3(rv, rounds, &rmed, &rlo, &rhi);
		rate[k] = med;
		ratio[k] = rmed;
		printf("%-16s %6.2f M (%6.2f-%6.2f M)     %6.2f M       ", case_name[k], med / 1e6,
		       lo / 1e6, hi / 1e6, wmed / 1e6);
		if (only < 0)
			printf("%6.1f (%5.1f-%5.1f)         ", rmed, rlo, rhi);
		else
			printf("%-25s", "     -");
		if (res[k].bytes)
			printf("%.1f\n", (double)res[k].bytes / n);
		else
			printf("-\n");
	}
	if (only >= 0)
		return;	/* the targets compare cases */
	printf("%s: dat >= 10x text (%.1fx)\n", ratio[C_DAT] >= 10 ? "PASS" : "MISS", ratio[C_DAT]);
	printf("%s: raw >= 10x text (%.1fx)\n", ratio[C_RAW] >= 10 ? "PASS" : "MISS", ratio[C_RAW]);
	printf("%s: consumer + raw >= 20 M events/s on one core (%.2f M/s CPU)\n",
	       rate[C_CONS_RAW] >= 20e6 ? "PASS" : "MISS", rate[C_CONS_RAW] / 1e6);
}

/* Every case once per round, each round starting one case later. */
static void run_rounds(struct result *res, const struct trace_writer_ops *const *ops,
		       const struct source *src, uint64_t n, unsigned rounds, int only,
		       const char *dir)
{
	char path[64];

	for (unsigned r = 0; r < rounds; r++) {
		for (unsigned j = 0; j < NCASES; j++) {
			unsigned k = (r + j) % NCASES;

			if (only >= 0 && (int)k != only)
				continue;
			snprintf(path, sizeof(path), "%s/out.%u", dir, k);
			if (k >= C_CONS_RAW)
				res[k].t[r] = run_consumer(ops[k], src, n, path);
			else
				res[k].t[r] = run_writer(ops[k], src, n, path);
			if (ops[k])
				res[k].bytes = file_size(path);
			unlink(path);
		}
		fprintf(stderr, "round %u of %u done\n", r + 1, rounds);
	}
}

int main(int argc, char **argv)
{
	uint64_t n = 4000000;
	unsigned rounds = 5, ncpus = 2;
	char dir[] = "/tmp/bench-output.XXXXXX", src_path[64];
	struct source src = { 0 };
	static struct result res[NCASES];
	const struct trace_writer_ops *ops[NCASES] = {
		trace_writer_find("text"), trace_writer_find("dat"), trace_writer_find("perfetto"),
		trace_writer_find("raw"), trace_writer_find("raw"), NULL,
	};
	const char *raw = NULL;
	int opt, only = -1;

	while ((opt = getopt(argc, argv, "n:r:c:o:")) != -1) {
		if (opt == 'n')
			n = parse_count(optarg);
		else if (opt == 'r')
			rounds = (unsigned)parse_count(optarg);
		else if (opt == 'c')
			ncpus = (unsigned)parse_count(optarg);
		else if (opt == 'o')
			only = case_find(optarg);
		else
			die("%s", "usage: bench-output [-n EVENTS] [-r ROUNDS] [-c CPUS] [-o CASE] [RAW]", 0);
	}
	if (optind < argc)
		raw = argv[optind];
	if (rounds > MAX_ROUNDS || ncpus > MAX_RINGS)
		die("%s", "at most 64 rounds and 64 CPUs", 0);
	for (unsigned k = 0; k < NCASES; k++)
		if (k != C_CONS && !ops[k])
			die("the %s writer is not built in", case_name[k], 0);
	if (!mkdtemp(dir))
		die("cannot create %s", dir, errno);
	if (!raw) {
		snprintf(src_path, sizeof(src_path), "%s/source.raw", dir);
		synth_write(src_path, ncpus, 1000000);
		raw = src_path;
	}
	source_load(&src, raw);
	printf("source: %s: %zu events, %u CPUs, %zu symbols; %" PRIu64 " events per case, %u rounds\n",
	       raw == src_path ? "synthetic boot" : raw, src.n, src.meta->ncpus,
	       src.meta->syms ? src.meta->syms->count : 0, n, rounds);
	fflush(stdout);

	run_rounds(res, ops, &src, n, rounds, only, dir);
	print_table(res, rounds, n, only);

	raw_read_close(src.rd);
	free(src.ev);
	if (raw == src_path)
		unlink(src_path);
	rmdir(dir);
	return 0;
}
