/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Events drained from all rings, held until they can be emitted in
 * timestamp order. A drain round that found no record in flight makes every
 * event older than the newest timestamp of the round before final: the stub
 * reads the TSC after reserving, so nothing still unseen can be older.
 */
#ifndef VMM_TRACE_BUF_H
#define VMM_TRACE_BUF_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/trace/ring.h"

struct trace_buf {
	pthread_mutex_t lock;
	struct ring_event *ev;
	size_t count, cap;
	struct ring_event *tmp;		/* scratch for sorting, tmp_cap events */
	size_t tmp_cap;
	uint64_t max_tsc;		/* newest timestamp added so far */
	uint64_t safe_tsc;		/* events at or below it may be emitted */
	uint64_t emitted;
};

void trace_buf_init(struct trace_buf *b);
void trace_buf_destroy(struct trace_buf *b);
/* ring_sink_fn: opaque is the trace_buf. */
int trace_buf_add(void *opaque, const struct ring_event *ev);
/* After a drain round of every ring; in_flight: any ring stopped at an open record. */
void trace_buf_round(struct trace_buf *b, uint64_t round_max_before, int in_flight);

typedef int trace_emit_fn(void *opaque, const struct ring_event *ev);
/*
 * Emits, in timestamp order, the events that are safe (all with `all`);
 * returns how many, or -errno from emit.
 */
long trace_buf_flush(struct trace_buf *b, int all, trace_emit_fn *emit, void *opaque);

#endif
