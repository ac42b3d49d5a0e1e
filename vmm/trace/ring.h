/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The host's reader of one guest ring (proto/trace.h). The guest is
 * untrusted: the geometry is the host's own copy, every index is masked,
 * every record is checked against its commit marker before and after it is
 * copied, and a header that goes backwards marks the ring broken.
 */
#ifndef VMM_RING_H
#define VMM_RING_H

#include <pthread.h>
#include <stddef.h>
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

/* Receives each event in ring order; returns 0 (or -errno to stop the drain). */
typedef int ring_sink_fn(void *opaque, const struct ring_event *ev);
/*
 * Receives events ev[0..n) in ring order, a batch at a time; returns 0
 * having taken them all, or -errno having taken the first *taken of them
 * (the drain stops; the rest stay in the ring for the next one).
 */
typedef int ring_batch_fn(void *opaque, const struct ring_event *ev, size_t n, size_t *taken);

/* Events per batch: one sink call (one lock) per this many, on the stack. */
#define RING_BATCH 256

struct ring_view {
	struct vt_ring_hdr *hdr;	/* in guest-shared memory */
	struct vt_record *recs;		/* nrecords records, in guest-shared memory */
	uint64_t nrecords;		/* power of two */
	uint32_t index;
	int lossless;
	pthread_mutex_t lock;		/* consumer thread vs doorbell */

	/* Host-owned state. */
	uint64_t pos;			/* next index to consume */
	uint64_t head_seen;
	uint64_t consumed;
	uint64_t lost;			/* overwritten before they were read */
	uint64_t unfinished;		/* reserved, never committed: the guest stopped mid-record */
	uint64_t stub_dropped;		/* the stub's own count (validated) */
	uint64_t unhooked;		/* --graph: returns the stub could not hook (at most the entries) */
	uint64_t rejected;		/* header or record values rejected */
	uint64_t doorbells;		/* rung for this ring: bounds the stub's dropped count */
	uint64_t stall_at;		/* pos + 1 of the open record last seen, 0: none */
	uint64_t stall_since_ns;
	int broken;
};

/* An open record older than this stops holding back the other rings' events. */
#define RING_STALL_NS (1000ULL * 1000 * 1000)

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

void ring_view_init(struct ring_view *r, uint32_t index, struct vt_ring_hdr *hdr,
		    struct vt_record *recs, uint64_t nrecords, int lossless);
void ring_view_destroy(struct ring_view *r);
/*
 * A drained ring (nothing reserved or in flight) moves to new memory of
 * nrecords records (zeroed; the caller points the stub there): its counts
 * stay, its positions start again at 0. With r->lock held.
 */
void ring_view_move(struct ring_view *r, struct vt_ring_hdr *hdr, struct vt_record *recs, uint64_t nrecords);
/*
 * Consumes the committed records, oldest first, up to the first one still
 * being written (*in_flight is then set). With `final` (the guest no longer
 * runs), records never committed count as lost. Returns how many events
 * reached the sink, or -errno from the sink. Call with r->lock held.
 */
long ring_drain(struct ring_view *r, ring_sink_fn *sink, void *opaque, int final, int *in_flight);
/* ring_drain, handing the events on in batches of up to RING_BATCH. */
long ring_drain_batch(struct ring_view *r, ring_batch_fn *sink, void *opaque, int final,
		      int *in_flight);

#endif
