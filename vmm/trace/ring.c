// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include <time.h>

#include "vmm/trace/ring.h"

#define READ_ONCE(x) __atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define WRITE_ONCE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELEASE)

void ring_view_init(struct ring_view *r, uint32_t index, struct vt_ring_hdr *hdr,
		    struct vt_record *recs, uint64_t nrecords, int lossless)
{
	memset(r, 0, sizeof(*r));
	r->hdr = hdr;
	r->recs = recs;
	r->nrecords = nrecords;
	r->index = index;
	r->lossless = lossless;
	pthread_mutex_init(&r->lock, NULL);
}

void ring_view_destroy(struct ring_view *r)
{
	pthread_mutex_destroy(&r->lock);
}

/* Reads the header; returns the head to consume up to, or marks the ring broken. */
static uint64_t ring_read_head(struct ring_view *r)
{
	uint64_t head = READ_ONCE(r->hdr->head);
	uint64_t dropped = READ_ONCE(r->hdr->dropped);

	if (head < r->head_seen) {
		r->rejected++;
		r->broken = 1;	/* only the stub moves head, and only forward */
		return r->pos;
	}
	r->head_seen = head;
	/*
	 * The stub drops an event only after ringing this ring's doorbell for
	 * it: a count beyond the doorbells (a guest writing ~0) is a lie, and
	 * taking it would put that lie in every total.
	 */
	if (dropped >= r->stub_dropped && dropped <= r->doorbells)
		r->stub_dropped = dropped;
	else if (dropped != r->stub_dropped)
		r->rejected++;
	if (head - r->pos > r->nrecords) {
		/* Lapped: in lossless mode only a guest that rewrote tail does this. */
		if (r->lossless)
			r->rejected++;
		r->lost += head - r->nrecords - r->pos;
		r->pos = head - r->nrecords;
	}
	return head;
}

/* Copies record `idx` if it is committed for this lap; 0 on success. */
static int ring_copy(struct ring_view *r, uint64_t idx, struct ring_event *ev)
{
	struct vt_record *rec = &r->recs[idx & (r->nrecords - 1)];
	uint32_t want = (uint32_t)(idx + 1), c1, c2;

	c1 = READ_ONCE(rec->commit);
	if (c1 != want)
		return -1;
	ev->tsc = __atomic_load_n(&rec->tsc, __ATOMIC_RELAXED);
	ev->func = __atomic_load_n(&rec->func, __ATOMIC_RELAXED);
	ev->parent = __atomic_load_n(&rec->parent, __ATOMIC_RELAXED);
	ev->cpu = __atomic_load_n(&rec->cpu, __ATOMIC_RELAXED);
	ev->flags = __atomic_load_n(&rec->flags, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	c2 = READ_ONCE(rec->commit);
	if (c2 != c1)
		return -1;	/* overwritten while we copied */
	ev->seq = idx;
	ev->ring = r->index;
	return 0;
}

static uint64_t ring_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * An open record holds back every ring's events (their order is not known
 * until it commits), but a guest can reserve a record and never commit it:
 * the host would then keep every event of every CPU in memory, unwritten,
 * for as long as the guest runs. After RING_STALL_NS at the same record the
 * ring stops holding the others back; it still stops at that record.
 */
static int ring_open_record(struct ring_view *r)
{
	uint64_t now = ring_now_ns();

	if (r->stall_at != r->pos + 1) {
		r->stall_at = r->pos + 1;
		r->stall_since_ns = now;
	}
	return now - r->stall_since_ns < RING_STALL_NS;
}

long ring_drain(struct ring_view *r, ring_sink_fn *sink, void *opaque, int final, int *in_flight)
{
	struct ring_event ev;
	uint64_t head, budget = 4 * r->nrecords;	/* a guest lapping us forever cannot keep us here */
	long n = 0;
	int rc;

	*in_flight = 0;
	if (r->broken)
		return 0;
	head = ring_read_head(r);
	while (r->pos < head && budget--) {
		if (ring_copy(r, r->pos, &ev)) {
			if (!r->lossless && READ_ONCE(r->hdr->head) - r->pos > r->nrecords) {
				head = ring_read_head(r);	/* lapped while we read */
				continue;
			}
			if (!final) {
				*in_flight = ring_open_record(r);
				break;
			}
			r->unfinished++;	/* reserved, but the guest stopped before committing */
			r->pos++;
			continue;
		}
		if (ev.flags & ~VT_REC_FLAG_IRQS_OFF) {
			r->rejected++;
			ev.flags &= VT_REC_FLAG_IRQS_OFF;
		}
		/*
		 * The stub writes its ring's number: a record claiming another CPU
		 * is forged, and a number past the last CPU would make the writers
		 * fail (trace.dat) or index past their per-CPU tables.
		 */
		if (ev.cpu != r->index) {
			r->rejected++;
			ev.cpu = (uint16_t)r->index;
		}
		rc = sink(opaque, &ev);
		if (rc)
			return rc;
		r->pos++;
		r->consumed++;
		n++;
	}
	if (r->lossless)
		WRITE_ONCE(r->hdr->tail, r->pos);
	return n;
}
