/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A boot's stages (stages.c), found in a trace from the functions that
 * mark them: start_kernel, setup_arch, mm_core_init or mm_init,
 * sched_init, ftrace_init, rest_init, kernel_init, smp_init, each initcall
 * level of do_initcalls, and the start of the init process; whichever the
 * trace holds. A stage starts at its marking call's entry and ends at that
 * call's return when the trace has it (--graph), otherwise where the next
 * stage of its row starts, or at the trace's last event. Shared by
 * `vmmtrace report --chart` and `vmmtrace diff`.
 */
#ifndef VMM_OUTPUT_STAGES_H
#define VMM_OUTPUT_STAGES_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/output/vmevent.h"
#include "vmm/output/writer.h"

#define STAGES_MAX		24
#define STAGES_INITCALL_LEVELS	9	/* early, then do_initcalls' 0 (pure) to 7 (late) */

enum stage_end {
	STAGE_END_RETURN,	/* its marking call returned */
	STAGE_END_NEXT,		/* the next stage of its row (or a row above) began */
	STAGE_END_TRACE,	/* the trace's last event */
};

struct stage {
	const char *label;		/* "setup_arch", "initcalls: core" */
	const char *marker;		/* the function whose entry starts it */
	const char *end_marker;		/* STAGE_END_RETURN: marker's; STAGE_END_NEXT: the next stage's */
	unsigned level;			/* 0: a phase of the boot (start_kernel, rest_init, kernel_init); 1: a part */
	enum stage_end end_kind;
	uint64_t start, end;		/* TSC of the marking events */
	uint16_t cpu;			/* of the marking entry */
	int32_t pid;			/* of the marking entry, 0: boot, idle or unknown task */
	char comm[16];
	uint64_t vm[VMEV_NKINDS];	/* VM events in [start, end) by kind (stages_count_vm) */
};

struct stage_finder;

/* A finder for a trace of meta (its symbols name the markers); -ENOMEM. */
int stage_finder_new(struct stage_finder **f, const struct trace_meta *meta);
void stage_finder_free(struct stage_finder *f);
/* Each event of the trace, in order. */
void stage_finder_event(struct stage_finder *f, const struct ring_event *ev);
/*
 * The stages found, by start, their ends settled, into out (at most max);
 * returns how many. The names point into meta's symbols or are static.
 */
size_t stage_finder_result(const struct stage_finder *f, struct stage *out, size_t max);
/* TSC of the trace's first and last events the finder saw (0, 0 when none). */
void stage_finder_span(const struct stage_finder *f, uint64_t *first, uint64_t *last);
/* Counts a VM event into each stage whose span holds it. */
void stages_count_vm(struct stage *s, size_t n, const struct ring_event *ev);

/*
 * The function an initcall's entry symbol names ("__initcall__kmod_core__
 * 300_2229_init_hw_perf_eventsearly", "__initcall_foo6"), less its level's
 * suffix ("early", "rootfs", "6", "6s"): its start in *fn and its length,
 * or 0 when sym is not an initcall entry with that suffix.
 */
size_t stages_initcall_fn(const char *sym, const char *suffix, const char **fn);

#endif
