/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One event as the trace's readers and writers see it: a guest record
 * the engine checked and copied out of its ring (vmm/trace/ring.h), a VM
 * event the host made (vmevent.h), or one read back from a raw file
 * (raw-read.h). The output library and the tracing engine share this
 * header; the formats need nothing else of the engine.
 */
#ifndef VMM_OUTPUT_EVENT_H
#define VMM_OUTPUT_EVENT_H

#include <stdint.h>

#include "proto/trace.h"

struct ring_event {
	uint64_t tsc;
	uint64_t func;
	uint64_t parent;
	uint64_t seq;		/* index in its ring */
	uint16_t cpu;
	uint16_t flags;		/* VT_REC_FLAG_*, or RING_EV_VM | ... (vmevent.h) */
	uint32_t ring;
	uint64_t arg;		/* VM events' second payload word; 0 for function entries */
	/* The task and context at the call (function entries; VT_REC_FLAG_TASK, _CTX say which). */
	uint64_t task;		/* guest address of the current task_struct, 0: unknown */
	uint32_t preempt;	/* preempt count, without the arch's resched bit */
	int32_t pid;
	char comm[16];		/* NUL-terminated, printable ASCII (ring_fix) */
	uint64_t args[VT_REC_NARGS];	/* the argument registers at the call (VT_REC_FLAG_ARGS) */
	/* --graph: hooked entries and exits (VT_REC_FLAG_HOOKED, _EXIT). */
	uint32_t depth;		/* the call's depth on its task's shadow stack */
	uint64_t retval;	/* exits: the return value */
	uint64_t calltime;	/* exits: the TSC at the entry, never after tsc */
};

/*
 * A VM event the host made (vmevent.h), never a guest record: the ring
 * reader keeps only the VT_REC_FLAGS_VALID bits of a record's flags, so
 * the guest cannot forge one.
 */
#define RING_EV_VM 0x8000

/* The largest pid a kernel gives (PID_MAX_LIMIT, include/linux/threads.h). */
#define RING_PID_MAX (4 * 1024 * 1024)

/* ftrace's trace_entry flags (include/linux/trace_events.h, TRACE_FLAG_*). */
#define FTRACE_FLAG_IRQS_OFF		0x01
#define FTRACE_FLAG_NEED_RESCHED	0x04
#define FTRACE_FLAG_HARDIRQ		0x08
#define FTRACE_FLAG_SOFTIRQ		0x10
#define FTRACE_FLAG_PREEMPT_RESCHED	0x20
#define FTRACE_FLAG_NMI			0x40
#define FTRACE_FLAG_BH_OFF		0x80

/*
 * A function event's context as ftrace records it (kernel/trace/trace.c,
 * tracing_gen_ctx_irq_test): its trace_entry flags, and its preempt_count
 * byte (preempt depth in bits 0-3, migrate-disable in 4-7, each at most 15).
 */
unsigned ring_event_ftrace_flags(const struct ring_event *ev);
unsigned ring_event_ftrace_pc(const struct ring_event *ev);
/* The five latency columns as ftrace prints them (trace_print_lat_fmt), NUL-terminated. */
void ring_event_lat(const struct ring_event *ev, char out[6]);
/*
 * The TASK column's name: the comm, "swapper/CPU" for pid 0 (the idle and
 * boot tasks), "<...>" when the task is unknown.
 */
const char *ring_event_comm(const struct ring_event *ev, char buf[24]);

#endif
