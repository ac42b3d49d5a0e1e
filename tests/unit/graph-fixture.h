/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small synthetic boot recorded with --graph, for the tests of returns in
 * every format, the boot's stages, the chart and diff: a kernel's symbols
 * (functions, and the initcall table's level and entry symbols as
 * System.map has them), and the events of a boot on two vCPUs whose every
 * time is chosen, so that a test knows each stage's marking events. The
 * TSC runs at 1 GHz from 0: a tick is a nanosecond.
 *
 *   swapper/0  start_kernel { setup_arch() sched_init() rest_init {  (never return)
 *   init-1     kernel_init { kernel_init_freeable { do_one_initcall { foo_init() }
 *              smp_init() do_one_initcall { bar_init() } do_one_initcall(baz_init) }
 *              run_init_process() }
 *   sched-2    schedule { leaf { ... schedule() again (both dropped) }, leaf (not hooked),
 *              schedule { still running at the end
 *   late-3     an exit whose entry came before the trace began
 *   VM events  on both vCPUs
 */
#ifndef TESTS_UNIT_GRAPH_FIXTURE_H
#define TESTS_UNIT_GRAPH_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/output/vmevent.h"
#include "vmm/output/writer.h"

#define GF_KT		0xffffffff81000000ull
#define GF_DATA		0xffffffff82000000ull
#define GF_MAX		128

enum gf_func {
	GF_START_KERNEL, GF_SETUP_ARCH, GF_SCHED_INIT, GF_REST_INIT, GF_KERNEL_INIT, GF_KIF, GF_SMP_INIT,
	GF_DO_ONE_INITCALL, GF_FOO_INIT, GF_BAR_INIT, GF_BAZ_INIT, GF_RUN_INIT, GF_SCHEDULE, GF_LEAF, GF_NFUNCS,
};

static const char *const gf_names[GF_NFUNCS] = {
	"start_kernel", "setup_arch", "sched_init", "rest_init", "kernel_init", "kernel_init_freeable", "smp_init",
	"do_one_initcall", "foo_init", "bar_init", "baz_init", "run_init_process", "schedule", "leaf",
};

static inline uint64_t gf_addr(enum gf_func f)
{
	return GF_KT + 0x1000ull * f;
}

/* A return address inside f. */
static inline uint64_t gf_in(enum gf_func f)
{
	return gf_addr(f) + 0x40;
}

/*
 * The symbols: the functions, then the initcall table: foo_init pure (0),
 * bar_init core (1), baz_init device (6); and extra, when not NULL, as
 * another kernel would have it.
 */
static inline int gf_symtab_with(struct symtab *t, const char *extra)
{
	static const struct { uint64_t off; const char *name; } data[] = {
		{ 0x000, "__initcall_start" }, { 0x010, "__initcall0_start" },
		{ 0x010, "__initcall__kmod_foo__12_34_foo_init0" }, { 0x020, "__initcall1_start" },
		{ 0x020, "__initcall__kmod_bar_baz__5_6_bar_init1s" }, { 0x030, "__initcall2_start" },
		{ 0x040, "__initcall3_start" }, { 0x050, "__initcall4_start" }, { 0x060, "__initcall5_start" },
		{ 0x070, "__initcallrootfs_start" }, { 0x080, "__initcall6_start" },
		{ 0x080, "__initcall__kmod_baz__7_8_baz_init6" }, { 0x090, "__initcall7_start" },
		{ 0x0a0, "__initcall_end" },
	};

	symtab_init(t);
	for (unsigned f = 0; f < GF_NFUNCS; f++)
		if (symtab_add(t, gf_addr(f), 'T', gf_names[f], strlen(gf_names[f])))
			return -1;
	for (size_t i = 0; i < sizeof(data) / sizeof(data[0]); i++)
		if (symtab_add(t, GF_DATA + data[i].off, 'd', data[i].name, strlen(data[i].name)))
			return -1;
	if (extra && symtab_add(t, GF_KT + 0x80000, 'T', extra, strlen(extra)))
		return -1;
	return symtab_add(t, GF_KT + 0x100000, 'T', "_etext", 6) || symtab_finish(t) ? -1 : 0;
}

static inline int gf_symtab(struct symtab *t)
{
	return gf_symtab_with(t, NULL);
}

static inline struct trace_meta gf_meta(const struct symtab *t)
{
	return (struct trace_meta){ .syms = t, .tsc_khz = 1000000, .tsc_base = 0, .ncpus = 2, .kernel = "gf-bzImage",
				    .graph = 1, .graph_retval = 1 };
}

struct gf_trace {
	struct ring_event ev[GF_MAX];
	size_t n;
	uint64_t seq[2];
};

static inline struct ring_event *gf_push(struct gf_trace *g, uint64_t tsc, uint16_t cpu, int pid, const char *comm)
{
	struct ring_event *e = &g->ev[g->n++];

	memset(e, 0, sizeof(*e));
	e->tsc = tsc;
	e->cpu = cpu;
	e->ring = cpu;
	e->seq = g->seq[cpu]++;
	if (pid >= 0) {
		e->flags = VT_REC_FLAG_TASK;
		e->task = 0xffff888000100000ull + 0x4000ull * (unsigned)pid;
		e->pid = pid;
		snprintf(e->comm, sizeof(e->comm), "%s", comm);
	}
	return e;
}

static inline void gf_enter(struct gf_trace *g, uint64_t tsc, uint16_t cpu, int pid, const char *comm,
			    enum gf_func f, enum gf_func caller, uint32_t depth)
{
	struct ring_event *e = gf_push(g, tsc, cpu, pid, comm);

	e->func = gf_addr(f);
	e->parent = gf_in(caller);
	e->flags |= VT_REC_FLAG_HOOKED;
	e->depth = depth;
}

static inline void gf_leave(struct gf_trace *g, uint64_t tsc, uint64_t calltime, uint16_t cpu, int pid,
			    const char *comm, enum gf_func f, enum gf_func caller, uint32_t depth)
{
	struct ring_event *e = gf_push(g, tsc, cpu, pid, comm);

	e->func = gf_addr(f);
	e->parent = gf_in(caller);
	e->flags |= VT_REC_FLAG_EXIT;
	e->depth = depth;
	e->calltime = calltime;
	e->retval = tsc % 7 ? tsc : (uint64_t)-22;
}

static inline void gf_vm(struct gf_trace *g, uint64_t tsc, uint16_t cpu, unsigned kind)
{
	struct ring_event *e = gf_push(g, tsc, cpu, -1, "");

	e->flags = vmev_flags(kind, VMEV_FLAG_WRITE);
	e->func = gf_in(GF_SETUP_ARCH);
	e->parent = 0x3f8 | 1ull << 16 | 1ull << 32;
	e->arg = 0x41;
}

/* The boot, in time order (the tracer's order across CPUs). */
static inline void gf_boot(struct gf_trace *g)
{
	memset(g, 0, sizeof(*g));
	gf_enter(g, 1000, 0, 0, "swapper/0", GF_START_KERNEL, GF_LEAF, 0);
	gf_leave(g, 1500, 500, 1, 3, "late", GF_SCHEDULE, GF_LEAF, 0);	/* began before the trace */
	gf_enter(g, 2000, 0, 0, "swapper/0", GF_SETUP_ARCH, GF_START_KERNEL, 1);
	gf_vm(g, 3000, 0, VMEV_PIO);
	gf_vm(g, 4000, 0, VMEV_PIO);
	gf_leave(g, 5000, 2000, 0, 0, "swapper/0", GF_SETUP_ARCH, GF_START_KERNEL, 1);
	gf_enter(g, 6000, 0, 0, "swapper/0", GF_SCHED_INIT, GF_START_KERNEL, 1);
	gf_vm(g, 6500, 0, VMEV_MSR);
	gf_leave(g, 7000, 6000, 0, 0, "swapper/0", GF_SCHED_INIT, GF_START_KERNEL, 1);
	gf_enter(g, 8000, 0, 0, "swapper/0", GF_REST_INIT, GF_START_KERNEL, 1);
	gf_enter(g, 9000, 0, 1, "swapper/0", GF_KERNEL_INIT, GF_LEAF, 0);
	gf_enter(g, 9050, 1, 2, "sched", GF_SCHEDULE, GF_LEAF, 0);
	gf_enter(g, 9100, 0, 1, "swapper/0", GF_KIF, GF_KERNEL_INIT, 1);
	gf_enter(g, 9150, 1, 2, "sched", GF_LEAF, GF_SCHEDULE, 1);
	gf_enter(g, 9200, 0, 1, "swapper/0", GF_DO_ONE_INITCALL, GF_KIF, 2);
	gf_enter(g, 9300, 0, 1, "swapper/0", GF_FOO_INIT, GF_DO_ONE_INITCALL, 3);
	gf_enter(g, 9350, 1, 2, "sched", GF_SCHEDULE, GF_LEAF, 0);	/* schedule and leaf never return */
	gf_leave(g, 9400, 9300, 0, 1, "swapper/0", GF_FOO_INIT, GF_DO_ONE_INITCALL, 3);
	gf_leave(g, 9450, 9350, 1, 2, "sched", GF_SCHEDULE, GF_LEAF, 0);
	gf_leave(g, 9500, 9200, 0, 1, "swapper/0", GF_DO_ONE_INITCALL, GF_KIF, 2);
	{
		struct ring_event *e = gf_push(g, 9550, 1, 2, "sched");	/* not hooked: no room on its stack */

		e->func = gf_addr(GF_LEAF);
		e->parent = gf_in(GF_SCHEDULE);
	}
	gf_enter(g, 9600, 0, 1, "swapper/0", GF_SMP_INIT, GF_KIF, 2);
	gf_vm(g, 9700, 1, VMEV_MMIO);
	gf_leave(g, 9900, 9600, 0, 1, "swapper/0", GF_SMP_INIT, GF_KIF, 2);
	gf_enter(g, 10000, 0, 1, "swapper/0", GF_DO_ONE_INITCALL, GF_KIF, 2);
	gf_enter(g, 10100, 0, 1, "swapper/0", GF_BAR_INIT, GF_DO_ONE_INITCALL, 3);
	gf_leave(g, 10300, 10100, 0, 1, "swapper/0", GF_BAR_INIT, GF_DO_ONE_INITCALL, 3);
	gf_leave(g, 10400, 10000, 0, 1, "swapper/0", GF_DO_ONE_INITCALL, GF_KIF, 2);
	gf_enter(g, 10500, 0, 1, "swapper/0", GF_DO_ONE_INITCALL, GF_KIF, 2);	/* --args: do_one_initcall(baz_init) */
	g->ev[g->n - 1].flags |= VT_REC_FLAG_ARGS;
	g->ev[g->n - 1].args[0] = gf_addr(GF_BAZ_INIT);
	gf_vm(g, 10600, 0, VMEV_EXIT);
	gf_leave(g, 10800, 10500, 0, 1, "swapper/0", GF_DO_ONE_INITCALL, GF_KIF, 2);
	gf_leave(g, 11000, 9100, 0, 1, "swapper/0", GF_KIF, GF_KERNEL_INIT, 1);
	gf_enter(g, 11100, 0, 1, "swapper/0", GF_RUN_INIT, GF_KERNEL_INIT, 1);
	gf_leave(g, 11500, 11100, 0, 1, "init", GF_RUN_INIT, GF_KERNEL_INIT, 1);
	gf_leave(g, 12000, 9000, 0, 1, "init", GF_KERNEL_INIT, GF_LEAF, 0);
	gf_enter(g, 12500, 1, 2, "sched", GF_SCHEDULE, GF_LEAF, 0);		/* still running at the end */
	gf_vm(g, 13000, 1, VMEV_PIO);
}

/* Writes the trace through ops into path; 0 or -1. */
static inline int gf_write(const char *path, const struct trace_writer_ops *ops, const struct trace_meta *m,
			   const struct ring_event *ev, size_t n)
{
	struct trace_stats st = { .events = n };
	struct trace_writer *w;
	struct errbuf err;
	FILE *f = fopen(path, "w");
	int rc, opened;

	if (!f)
		return -1;
	opened = !ops->open(&w, f, m, &err);
	rc = opened ? 0 : -1;
	for (size_t i = 0; !rc && i < n; i++)
		rc = ops->event(w, &ev[i]);
	if (opened && ops->close(w, &st, &err))
		rc = -1;
	if (fclose(f))
		rc = -1;
	return rc ? -1 : 0;
}

#endif
