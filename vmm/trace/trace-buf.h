/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Events drained from all rings, held until they can be emitted in
 * timestamp order. A drain round that found no record in flight makes every
 * event older than the newest timestamp of the round before final: the stub
 * reads the TSC after reserving, so nothing still unseen can be older.
 *
 * Each ring's events wait in a queue of their own, in the order the ring
 * gave them, which is already timestamp order for an honest guest; a flush
 * merges the queues' heads. A queue that received an event out of order
 * (a guest writing its own timestamps) is sorted before the merge.
 */
#ifndef VMM_TRACE_BUF_H
#define VMM_TRACE_BUF_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/trace/ring.h"

/* One ring's events, oldest first: a circular array of cap (a power of two) events. */
struct trace_buf_queue {
	uint32_t key;			/* the ring, bit 31 set for its VM events (trace-buf.c) */
	int unsorted;			/* an event came out of (tsc, seq) order */
	struct ring_event *ev;
	size_t head, count, cap;
};

struct trace_buf {
	pthread_mutex_t lock;
	struct trace_buf_queue *q;	/* nq queues, one per ring seen */
	unsigned nq, q_cap;
	unsigned last_q;		/* the queue the last event went to: most batches are one ring's */
	size_t count;			/* events held, all queues */
	uint64_t max_tsc;		/* newest timestamp added so far */
	uint64_t safe_tsc;		/* events at or below it may be emitted */
	uint64_t emitted;
};

void trace_buf_init(struct trace_buf *b);
void trace_buf_destroy(struct trace_buf *b);
/* ring_sink_fn: opaque is the trace_buf. */
int trace_buf_add(void *opaque, const struct ring_event *ev);
/*
 * ring_batch_fn: adds ev[0..n) under one lock; opaque is the trace_buf.
 * On -ENOMEM *taken says how many it holds (those of the first rings).
 */
int trace_buf_add_batch(void *opaque, const struct ring_event *ev, size_t n, size_t *taken);
/* After a drain round of every ring; in_flight: any ring stopped at an open record. */
void trace_buf_round(struct trace_buf *b, uint64_t round_max_before, int in_flight);

typedef int trace_emit_fn(void *opaque, const struct ring_event *ev);
/*
 * Emits, in timestamp order, the events that are safe (all with `all`);
 * returns how many, or -errno from emit (the event it refused and those
 * after it stay) or -ENOMEM (nothing emitted).
 */
long trace_buf_flush(struct trace_buf *b, int all, trace_emit_fn *emit, void *opaque);

#endif
