// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/trace/trace-buf.h"

void trace_buf_init(struct trace_buf *b)
{
	memset(b, 0, sizeof(*b));
	pthread_mutex_init(&b->lock, NULL);
}

void trace_buf_destroy(struct trace_buf *b)
{
	for (unsigned i = 0; i < b->nq; i++)
		free(b->q[i].ev);
	free(b->q);
	pthread_mutex_destroy(&b->lock);
	memset(b, 0, sizeof(*b));
}

/* Timestamp order; ties (two rings, one TSC value) by ring, then ring order. */
static inline int event_before(const struct ring_event *x, const struct ring_event *y)
{
	if (x->tsc != y->tsc)
		return x->tsc < y->tsc;
	if (x->ring != y->ring)
		return x->ring < y->ring;
	return x->seq < y->seq;
}

static inline struct ring_event *queue_at(const struct trace_buf_queue *q, size_t i)
{
	return &q->ev[(q->head + i) & (q->cap - 1)];
}

/*
 * The queue an event waits in: its ring's, or for the VM events the host
 * makes on a vCPU's exits, a queue of their own beside that ring's (they
 * are in order among themselves, not with the ring's records).
 */
static inline uint32_t buf_key(const struct ring_event *ev)
{
	return ev->ring | ((ev->flags & RING_EV_VM) ? 0x80000000u : 0);
}

/* The queue of key (buf_key), made on first use; NULL without memory. */
static struct trace_buf_queue *buf_queue(struct trace_buf *b, uint32_t key)
{
	struct trace_buf_queue *q;
	unsigned i;

	if (b->last_q < b->nq && b->q[b->last_q].key == key)
		return &b->q[b->last_q];
	for (i = 0; i < b->nq && b->q[i].key != key; i++)
		;
	if (i == b->nq) {
		if (b->nq == b->q_cap) {
			unsigned cap = b->q_cap ? 2 * b->q_cap : 4;

			q = realloc(b->q, cap * sizeof(*q));
			if (!q)
				return NULL;
			b->q = q;
			b->q_cap = cap;
		}
		memset(&b->q[i], 0, sizeof(b->q[i]));
		b->q[i].key = key;
		b->nq++;
	}
	b->last_q = i;
	return &b->q[i];
}

/*
 * Room for n more events in q. The array grows by realloc (large blocks
 * move by remapping, without a copy or fresh page faults); a wrapped tail
 * then moves up behind the old end, as in any circular buffer.
 */
static int queue_reserve(struct trace_buf_queue *q, size_t n)
{
	size_t cap = q->cap ? q->cap : 4096, wrapped;
	struct ring_event *p;

	if (q->count + n <= q->cap)
		return 0;
	while (cap < q->count + n)
		cap *= 2;
	p = realloc(q->ev, cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	wrapped = q->head + q->count > q->cap ? q->head + q->count - q->cap : 0;
	memcpy(p + q->cap, p, wrapped * sizeof(*p));	/* cap >= 2 * q->cap: no overlap */
	q->ev = p;
	q->cap = cap;
	return 0;
}

/* Appends ev[0..n), all of q's ring, noting whether they keep q in order. */
static void queue_append(struct trace_buf_queue *q, const struct ring_event *ev, size_t n)
{
	size_t tail = (q->head + q->count) & (q->cap - 1);
	size_t first = n < q->cap - tail ? n : q->cap - tail;
	const struct ring_event *prev = q->count ? queue_at(q, q->count - 1) : NULL;

	for (size_t i = 0; i < n && !q->unsorted; prev = &ev[i++])
		q->unsorted = prev && !event_before(prev, &ev[i]);
	memcpy(q->ev + tail, ev, first * sizeof(*ev));
	memcpy(q->ev, ev + first, (n - first) * sizeof(*ev));
	q->count += n;
}

int trace_buf_add_batch(void *opaque, const struct ring_event *ev, size_t n, size_t *taken)
{
	struct trace_buf *b = opaque;
	size_t i = 0;
	int rc = 0;

	pthread_mutex_lock(&b->lock);
	while (i < n) {
		uint32_t key = buf_key(&ev[i]);
		struct trace_buf_queue *q = buf_queue(b, key);
		size_t end = i + 1;
		uint64_t max = ev[i].tsc;

		for (; end < n && buf_key(&ev[end]) == key; end++)
			if (ev[end].tsc > max)
				max = ev[end].tsc;
		if (!q || queue_reserve(q, end - i)) {
			rc = -ENOMEM;
			break;
		}
		queue_append(q, ev + i, end - i);
		b->count += end - i;
		if (max > b->max_tsc)
			b->max_tsc = max;
		i = end;
	}
	pthread_mutex_unlock(&b->lock);
	*taken = i;
	return rc;
}

int trace_buf_add(void *opaque, const struct ring_event *ev)
{
	size_t taken;

	return trace_buf_add_batch(opaque, ev, 1, &taken);
}

void trace_buf_round(struct trace_buf *b, uint64_t round_max_before, int in_flight)
{
	pthread_mutex_lock(&b->lock);
	if (!in_flight && round_max_before > b->safe_tsc)
		b->safe_tsc = round_max_before;
	pthread_mutex_unlock(&b->lock);
}

static int event_cmp(const void *a, const void *b)
{
	const struct ring_event *x = a, *y = b;

	return event_before(x, y) ? -1 : event_before(y, x);
}

/*
 * Only a guest writing its own timestamps gets here: its queue is
 * unwrapped (into an array of the same size) and sorted whole.
 */
static int queue_sort(struct trace_buf_queue *q)
{
	if (q->head + q->count > q->cap) {
		struct ring_event *p = malloc(q->cap * sizeof(*p));
		size_t first = q->cap - q->head;

		if (!p)
			return -ENOMEM;
		memcpy(p, q->ev + q->head, first * sizeof(*p));
		memcpy(p + first, q->ev, (q->count - first) * sizeof(*p));
		free(q->ev);
		q->ev = p;
		q->head = 0;
	}
	qsort(q->ev + q->head, q->count, sizeof(*q->ev), event_cmp);
	q->unsorted = 0;
	return 0;
}

/*
 * The queue whose head comes first, and the head that comes after it
 * among the other queues (*next, NULL if none): events of the first
 * queue before *next can go out without looking at the others again.
 */
static struct trace_buf_queue *buf_first(struct trace_buf *b, const struct ring_event **next)
{
	struct trace_buf_queue *best = NULL;
	const struct ring_event *bh = NULL;

	*next = NULL;
	for (unsigned i = 0; i < b->nq; i++) {
		struct trace_buf_queue *q = &b->q[i];
		const struct ring_event *h;

		if (!q->count)
			continue;
		h = queue_at(q, 0);
		if (!bh || event_before(h, bh)) {
			*next = bh;
			best = q;
			bh = h;
		} else if (!*next || event_before(h, *next)) {
			*next = h;
		}
	}
	return best;
}

/*
 * Emits q's events in order while they are at or below limit and before
 * next; returns how many (*rc: emit's error, which keeps that event).
 */
static size_t queue_emit(struct trace_buf_queue *q, const struct ring_event *next, uint64_t limit,
			 trace_emit_fn *emit, void *opaque, int *rc)
{
	size_t n = 0;

	while (n < q->count) {
		const struct ring_event *ev = &q->ev[(q->head + n) & (q->cap - 1)];

		if (ev->tsc > limit || (next && !event_before(ev, next)))
			break;
		*rc = emit(opaque, ev);
		if (*rc)
			break;
		n++;
	}
	q->head = (q->head + n) & (q->cap - 1);
	q->count -= n;
	return n;
}

long trace_buf_flush(struct trace_buf *b, int all, trace_emit_fn *emit, void *opaque)
{
	uint64_t limit;
	size_t n = 0, k;
	int rc = 0;

	pthread_mutex_lock(&b->lock);
	limit = all ? UINT64_MAX : b->safe_tsc;
	for (unsigned i = 0; i < b->nq; i++) {
		if (b->q[i].unsorted && queue_sort(&b->q[i])) {
			pthread_mutex_unlock(&b->lock);
			return -ENOMEM;
		}
	}
	do {
		const struct ring_event *next;
		struct trace_buf_queue *q = buf_first(b, &next);

		if (!q)
			break;
		k = queue_emit(q, next, limit, emit, opaque, &rc);
		n += k;
	} while (k && !rc);
	b->count -= n;
	b->emitted += n;
	pthread_mutex_unlock(&b->lock);
	return rc ? rc : (long)n;
}
