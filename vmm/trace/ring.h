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
#include "vmm/output/event.h"

/* Receives each event in ring order; returns 0 (or -errno to stop the drain). */
typedef int ring_sink_fn(void *opaque, const struct ring_event *ev);
/*
 * Receives events ev[0..n) in ring order, a batch at a time; returns 0
 * having taken them all, or -errno having taken the first *taken of them
 * (the drain stops; the rest stay in the ring for the next one). The
 * events are the drain's copies: the sink may rewrite them (the tracer
 * turns each slot address into its function's).
 */
typedef int ring_batch_fn(void *opaque, struct ring_event *ev, size_t n, size_t *taken);

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
