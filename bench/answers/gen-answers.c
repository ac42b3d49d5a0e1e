// SPDX-License-Identifier: GPL-2.0
/*
 * bench/answers: writes a synthetic --graph boot of N events as a raw
 * recording, for timing `vmmtrace diff` and `vmmtrace report --chart` on
 * recordings of a real boot's size: 2,000 functions, the boot's marker
 * functions and an initcall table, 64 tasks on 2 vCPUs making nested
 * calls (each an entry and an exit), a VM event every 64 events.
 * Variant 1 is the same boot that parts once (a task calls one function
 * more, halfway) and takes a little longer in a few calls.
 *
 *   gen-answers OUT.raw EVENTS VARIANT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/output/raw.h"
#include "vmm/output/vmevent.h"

#define KT	0xffffffff81000000ull
#define NFUNCS	2000
#define NTASKS	64

/* Two streams: the calls' shape, and their times, so that variant 1's extra call changes no other call. */
static uint64_t rng = 0x9e3779b97f4a7c15ull, rng_time = 0x243f6a8885a308d3ull;

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint64_t rnd(void)
{
	return xorshift(&rng);
}

struct gen {
	struct trace_writer *w;
	struct ring_event ev;
	uint64_t tsc, n, max, seq[2];
	int variant, parted;
};

static void emit(struct gen *g, struct ring_event *e)
{
	g->tsc += 50 + xorshift(&rng_time) % 100;
	e->tsc = g->tsc;
	e->ring = e->cpu;
	e->seq = g->seq[e->cpu & 1]++;
	if (trace_writer_raw.event(g->w, e)) {
		fprintf(stderr, "gen-answers: writing failed\n");
		exit(1);
	}
	g->n++;
	if (g->n % 64 == 0) {
		struct ring_event v = { .cpu = e->cpu, .tsc = g->tsc, .func = KT + 0x40,
					.flags = vmev_flags(1 + (unsigned)(g->n / 64 % 3), VMEV_FLAG_WRITE),
					.parent = 0x3f8 | 1ull << 16 | 1ull << 32, .arg = 0x41 };

		v.ring = v.cpu;
		v.seq = g->n;
		trace_writer_raw.event(g->w, &v);
		g->n++;
	}
}

/* One call of task (pid) at depth: its entry, up to 3 callees, its exit. */
static void call(struct gen *g, int pid, unsigned cpu, uint64_t func, uint64_t parent, unsigned depth, int leaf)
{
	struct ring_event e = { .cpu = (uint16_t)cpu, .func = func, .parent = parent, .depth = depth,
				.flags = VT_REC_FLAG_TASK | VT_REC_FLAG_HOOKED, .pid = pid,
				.task = 0xffff888000100000ull + 0x4000ull * (unsigned)pid };
	unsigned kids = leaf ? 0 : depth < 6 ? (unsigned)(rnd() % 4) : 0;
	uint64_t start;

	snprintf(e.comm, sizeof(e.comm), pid ? "task%d" : "swapper/%u", pid ? pid : (int)cpu);
	emit(g, &e);
	start = e.tsc;
	for (unsigned k = 0; k < kids && g->n + 4 < g->max; k++)
		call(g, pid, cpu, KT + 0x100 * (16 + rnd() % (NFUNCS - 16)), func + 0x20, depth + 1, 0);
	/* Variant 1 parts once: task 7, halfway, calls one function more. */
	if (g->variant && !g->parted && pid == 7 && g->n > g->max / 2) {
		g->parted = 1;
		call(g, pid, cpu, KT + 0x100 * 15, func + 0x20, depth + 1, 1);
	}
	e.flags = VT_REC_FLAG_TASK | VT_REC_FLAG_EXIT;
	e.calltime = start;
	e.retval = 0;
	if (g->variant && func % 7 == 0)
		g->tsc += 1000;		/* and a little slower */
	emit(g, &e);
}

static int symbols(struct symtab *t)
{
	static const char *const named[] = { "start_kernel", "setup_arch", "sched_init", "rest_init", "kernel_init",
					     "kernel_init_freeable", "smp_init", "do_one_initcall", "run_init_process" };
	char name[32];

	symtab_init(t);
	for (unsigned i = 0; i < NFUNCS; i++) {
		if (i < sizeof(named) / sizeof(named[0]))
			snprintf(name, sizeof(name), "%s", named[i]);
		else
			snprintf(name, sizeof(name), "f_%u", i);
		if (symtab_add(t, KT + 0x100 * i, 'T', name, strlen(name)))
			return -1;
	}
	return symtab_add(t, KT + 0x100 * NFUNCS, 'T', "_etext", 6) || symtab_finish(t) ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct trace_meta m = { .tsc_khz = 1000000, .ncpus = 2, .kernel = "bench-bzImage", .graph = 1 };
	struct trace_stats st = { 0 };
	struct gen g = { 0 };
	struct symtab t;
	struct errbuf err;
	FILE *f;

	if (argc != 4 || symbols(&t) || !(f = fopen(argv[1], "w"))) {
		fprintf(stderr, "usage: gen-answers OUT.raw EVENTS VARIANT\n");
		return 2;
	}
	m.syms = &t;
	g.max = strtoull(argv[2], NULL, 10);
	g.variant = atoi(argv[3]);
	if (trace_writer_raw.open(&g.w, f, &m, &err))
		return 1;
	/* The boot's stages first, on swapper/0 and init-1; then the tasks' calls, round robin. */
	call(&g, 0, 0, KT + 0x100 * 1, KT + 0x20, 1, 0);
	call(&g, 0, 0, KT + 0x100 * 2, KT + 0x20, 1, 0);
	call(&g, 1, 0, KT + 0x100 * 6, KT + 0x100 * 5 + 0x20, 2, 0);
	for (unsigned i = 0; g.n + 4 < g.max; i++)
		call(&g, 2 + (int)(i % NTASKS), i % 2, KT + 0x100 * (16 + rnd() % (NFUNCS - 16)), KT + 0x100 * 7 + 0x20, 0, 0);
	st.events = g.n;
	if (trace_writer_raw.close(g.w, &st, &err) || fclose(f))
		return 1;
	printf("%s: %llu events\n", argv[1], (unsigned long long)g.n);
	symtab_destroy(&t);
	return 0;
}
