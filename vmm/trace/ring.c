// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
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

void ring_view_move(struct ring_view *r, struct vt_ring_hdr *hdr, struct vt_record *recs, uint64_t nrecords)
{
	r->hdr = hdr;
	r->recs = recs;
	r->nrecords = nrecords;
	r->pos = r->head_seen = r->stall_at = r->stall_since_ns = 0;
	/* The stub's counts are totals: the new header goes on from the old ones. */
	WRITE_ONCE(hdr->dropped, r->stub_dropped);
	WRITE_ONCE(hdr->unhooked, r->unhooked);
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
	/* An unhooked return belongs to an entry that reserved a record: at most head of them. */
	uint64_t unhooked = READ_ONCE(r->hdr->unhooked);

	if (unhooked >= r->unhooked && unhooked <= head)
		r->unhooked = unhooked;
	else if (unhooked != r->unhooked)
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
	ev->task = __atomic_load_n(&rec->task, __ATOMIC_RELAXED);
	ev->preempt = __atomic_load_n(&rec->preempt, __ATOMIC_RELAXED);
	ev->pid = __atomic_load_n(&rec->pid, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < sizeof(ev->comm); i++)
		ev->comm[i] = __atomic_load_n(&rec->comm[i], __ATOMIC_RELAXED);
	for (unsigned i = 0; i < VT_REC_NARGS; i++)
		ev->args[i] = __atomic_load_n(&rec->args[i], __ATOMIC_RELAXED);
	ev->depth = __atomic_load_n(&rec->depth, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	c2 = READ_ONCE(rec->commit);
	if (c2 != c1)
		return -1;	/* overwritten while we copied */
	ev->seq = idx;
	ev->ring = r->index;
	ev->arg = 0;
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

/* Corrects what a forged record claims; returns how many of its values it rejected. */
static unsigned ring_fix(const struct ring_view *r, struct ring_event *ev)
{
	unsigned bad = 0;

	if (ev->flags & ~VT_REC_FLAGS_VALID) {
		bad++;
		ev->flags &= VT_REC_FLAGS_VALID;
	}
	if (!(ev->flags & VT_REC_FLAG_CTX))
		ev->preempt = 0;
	/* An exit carries its return value and entry time where an entry has arguments. */
	if ((ev->flags & VT_REC_FLAG_EXIT) && (ev->flags & (VT_REC_FLAG_ARGS | VT_REC_FLAG_HOOKED))) {
		bad += !bad;	/* the flags are one value: rejected once */
		ev->flags &= (uint16_t)~(VT_REC_FLAG_ARGS | VT_REC_FLAG_HOOKED);
	}
	ev->retval = ev->calltime = 0;
	if (ev->flags & VT_REC_FLAG_EXIT) {
		ev->retval = ev->args[0];
		ev->calltime = ev->args[1];
		if (ev->calltime > ev->tsc) {	/* a call cannot end before it began */
			bad++;
			ev->calltime = ev->tsc;
		}
	}
	if (ev->flags & (VT_REC_FLAG_EXIT | VT_REC_FLAG_HOOKED)) {
		if (ev->depth >= VT_SHADOW_FRAMES) {
			bad++;
			ev->depth = VT_SHADOW_FRAMES - 1;
		}
	} else {
		ev->depth = 0;
	}
	if (!(ev->flags & VT_REC_FLAG_ARGS))
		memset(ev->args, 0, sizeof(ev->args));	/* any value is an argument; none means none */
	/* A task needs a pointer and a pid the kernel could give (PID_MAX_LIMIT is 4M). */
	if ((ev->flags & VT_REC_FLAG_TASK) && (!ev->task || ev->pid < 0 || ev->pid > RING_PID_MAX)) {
		bad++;
		ev->flags &= (uint16_t)~VT_REC_FLAG_TASK;
	}
	if (ev->flags & VT_REC_FLAG_TASK) {
		/* The kernel keeps comm NUL-terminated; whatever else is shown as '?'. */
		size_t n = strnlen(ev->comm, sizeof(ev->comm) - 1);

		for (size_t i = 0; i < n; i++)
			if (ev->comm[i] < 0x20 || ev->comm[i] > 0x7e)
				ev->comm[i] = '?';
		memset(ev->comm + n, 0, sizeof(ev->comm) - n);
	} else {
		ev->task = 0;
		ev->pid = 0;
		memset(ev->comm, 0, sizeof(ev->comm));
		ev->flags &= (uint16_t)~(VT_REC_FLAG_NEED_RESCHED | VT_REC_MIGR_MASK);
	}
	/*
	 * The stub writes its ring's number: a record claiming another CPU
	 * is forged, and a number past the last CPU would make the writers
	 * fail (trace.dat) or index past their per-CPU tables.
	 */
	if (ev->cpu != r->index) {
		bad++;
		ev->cpu = (uint16_t)r->index;
	}
	return bad;
}

/*
 * Events copied and checked but not yet handed on: consecutive indices
 * ending just before r->pos. A record's rejections count once the sink
 * takes it, so that a record read again after a sink error counts once.
 */
struct ring_batch {
	ring_batch_fn *sink;
	void *opaque;
	long total;			/* taken by the sink, this drain */
	size_t n;
	unsigned nrej;
	struct { uint16_t i, bad; } rej[RING_BATCH];
	struct ring_event ev[RING_BATCH];
};

/* Hands the batch on; what the sink leaves goes back to the ring (pos rewinds to it). */
static int ring_batch_send(struct ring_view *r, struct ring_batch *b)
{
	size_t taken = 0;
	int rc;

	if (!b->n)
		return 0;
	rc = b->sink(b->opaque, b->ev, b->n, &taken);
	if (!rc || taken > b->n)
		taken = b->n;
	if (taken < b->n)
		r->pos = b->ev[taken].seq;
	for (unsigned j = 0; j < b->nrej; j++)
		if (b->rej[j].i < taken)
			r->rejected += b->rej[j].bad;
	r->consumed += taken;
	b->total += (long)taken;
	b->n = 0;
	b->nrej = 0;
	return rc;
}

/*
 * Any move of pos other than past a copied event (a lap, an unfinished
 * record) sends the batch first, so that a rewind after a sink error
 * lands on an index the account has not passed.
 */
long ring_drain_batch(struct ring_view *r, ring_batch_fn *sink, void *opaque, int final,
		      int *in_flight)
{
	struct ring_batch b;
	uint64_t head, budget = 4 * r->nrecords;	/* a guest lapping us forever cannot keep us here */
	int rc = 0;

	*in_flight = 0;
	if (r->broken)
		return 0;
	b.sink = sink;
	b.opaque = opaque;
	b.total = 0;
	b.n = 0;
	b.nrej = 0;
	head = ring_read_head(r);
	while (r->pos < head && budget--) {
		struct ring_event *ev = &b.ev[b.n];
		unsigned bad;

		if (ring_copy(r, r->pos, ev)) {
			if ((rc = ring_batch_send(r, &b)))
				break;
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
		bad = ring_fix(r, ev);
		if (bad) {
			b.rej[b.nrej].i = (uint16_t)b.n;
			b.rej[b.nrej++].bad = (uint16_t)bad;
		}
		r->pos++;
		if (++b.n == RING_BATCH && (rc = ring_batch_send(r, &b)))
			break;
	}
	if (!rc)
		rc = ring_batch_send(r, &b);
	if (r->lossless)
		WRITE_ONCE(r->hdr->tail, r->pos);
	return rc ? rc : b.total;
}

/* ring_batch_fn over a ring_sink_fn: one call per event. */
struct ring_each {
	ring_sink_fn *sink;
	void *opaque;
};

static int ring_each_event(void *opaque, struct ring_event *ev, size_t n, size_t *taken)
{
	struct ring_each *e = opaque;

	for (*taken = 0; *taken < n; ++*taken) {
		int rc = e->sink(e->opaque, &ev[*taken]);

		if (rc)
			return rc;
	}
	return 0;
}

long ring_drain(struct ring_view *r, ring_sink_fn *sink, void *opaque, int final, int *in_flight)
{
	struct ring_each e = { sink, opaque };

	return ring_drain_batch(r, ring_each_event, &e, final, in_flight);
}

