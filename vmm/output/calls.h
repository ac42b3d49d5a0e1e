/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The calls of a --graph trace, rebuilt from its hooked entries and exits
 * (calls.c): each task's open calls are kept, and each call is handed on
 * once its end is known, with the time its recorded callees took, so
 * that total and self time, the longest calls and the boot's stages can
 * be read off a trace in one pass. The summaries of `vmmtrace report`
 * (--stat, --chart) and `vmmtrace diff` share it.
 */
#ifndef VMM_OUTPUT_CALLS_H
#define VMM_OUTPUT_CALLS_H

#include <stdint.h>

#include "vmm/output/event.h"

enum call_end {
	CALL_RETURNED,		/* its exit was recorded */
	CALL_UNRETURNED,	/* its task went on below it: no return will come (do_exit, dropped frames) */
	CALL_RUNNING,		/* still open when the trace ended */
};

struct call {
	uint64_t func, parent;		/* parent: the entry's return address (0: no entry seen) */
	uint64_t start, end;		/* TSC of the entry (or the exit's calltime) and of the end */
	uint64_t child;			/* TSC ticks of its returned callees, for self time */
	uint64_t task;			/* the task's key (calls_task_key) */
	uint64_t retval;		/* CALL_RETURNED */
	int32_t pid;			/* of the entry (0: boot, idle or unknown task) */
	uint32_t depth;
	uint16_t cpu;			/* of the entry */
	uint8_t how;			/* enum call_end */
	uint8_t entered;		/* its entry was in the trace (else the exit began it) */
	char comm[16];			/* of the entry */
};

/* Receives each call once its end is known, innermost first; 0 or -errno to stop. */
typedef int call_fn(void *opaque, const struct call *c);

struct call_tracker;

int call_tracker_new(struct call_tracker **t, call_fn *fn, void *opaque);
void call_tracker_free(struct call_tracker *t);
/*
 * One event of the trace, in order. Hooked entries open a call (first
 * ending, as unreturned, the task's calls as deep or deeper: the stub
 * dropped them), exits end one; other events are ignored. 0 or -errno
 * (-ENOMEM, or what fn returned).
 */
int call_tracker_event(struct call_tracker *t, const struct ring_event *ev);
/* Hands on the calls still open as CALL_RUNNING, ending at end_tsc. */
int call_tracker_finish(struct call_tracker *t, uint64_t end_tsc);

/* The key calls of one task share: its task_struct, else its CPU (boot and idle tasks, unknown ones). */
static inline uint64_t calls_task_key(const struct ring_event *ev)
{
	if ((ev->flags & VT_REC_FLAG_TASK) && ev->task)
		return ev->task;
	return 1ull << 63 | ev->cpu;
}

/* A call's length in TSC ticks (0 for a damaged file's call that ends before it began). */
static inline uint64_t call_ticks(const struct call *c)
{
	return c->end > c->start ? c->end - c->start : 0;
}

#endif
