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
	free(b->ev);
	free(b->tmp);
	pthread_mutex_destroy(&b->lock);
	memset(b, 0, sizeof(*b));
}

int trace_buf_add(void *opaque, const struct ring_event *ev)
{
	struct trace_buf *b = opaque;
	int rc = 0;

	pthread_mutex_lock(&b->lock);
	if (b->count == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 65536;
		struct ring_event *p = realloc(b->ev, cap * sizeof(*p));

		if (!p) {
			rc = -ENOMEM;
			goto out;
		}
		b->ev = p;
		b->cap = cap;
	}
	b->ev[b->count++] = *ev;
	if (ev->tsc > b->max_tsc)
		b->max_tsc = ev->tsc;
out:
	pthread_mutex_unlock(&b->lock);
	return rc;
}

void trace_buf_round(struct trace_buf *b, uint64_t round_max_before, int in_flight)
{
	pthread_mutex_lock(&b->lock);
	if (!in_flight && round_max_before > b->safe_tsc)
		b->safe_tsc = round_max_before;
	pthread_mutex_unlock(&b->lock);
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

/* The end of the ascending run that starts at i. */
static size_t run_end(const struct ring_event *ev, size_t i, size_t n)
{
	while (++i < n && !event_before(&ev[i], &ev[i - 1]))
		;
	return i;
}

static void merge_runs(const struct ring_event *a, size_t na, const struct ring_event *b, size_t nb,
		       struct ring_event *out)
{
	while (na && nb) {
		if (event_before(b, a)) {
			*out++ = *b++;
			nb--;
		} else {
			*out++ = *a++;
			na--;
		}
	}
	memcpy(out, a, na * sizeof(*a));
	memcpy(out + na, b, nb * sizeof(*b));
}

/*
 * Sorts the buffer by merging its ascending runs: the events kept from
 * the last flush are one (sorted then), and each ring's drain adds one
 * (a ring's records are in TSC order: the stub reads the TSC after it
 * reserves). A few runs take a pass or two, where a qsort of the whole
 * buffer every round cost most of the consumer's time. Returns -ENOMEM
 * when no scratch buffer can be had.
 */
static int trace_buf_sort(struct trace_buf *b)
{
	struct ring_event *src = b->ev, *dst;
	size_t n = b->count, runs, cap;

	if (run_end(src, 0, n) == n)
		return 0;
	if (b->tmp_cap < b->cap) {
		struct ring_event *p = realloc(b->tmp, b->cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		b->tmp = p;
		b->tmp_cap = b->cap;
	}
	dst = b->tmp;
	do {
		size_t i = 0;

		for (runs = 0; i < n; runs++) {
			size_t mid = run_end(src, i, n), end = mid < n ? run_end(src, mid, n) : n;

			merge_runs(src + i, mid - i, src + mid, end - mid, dst + i);
			i = end;
		}
		/* The merged copy is the buffer now; the other is the scratch. */
		b->tmp = src;
		b->ev = dst;
		cap = b->cap;
		b->cap = b->tmp_cap;
		b->tmp_cap = cap;
		src = dst;
		dst = b->tmp;
	} while (runs > 1);
	return 0;
}

long trace_buf_flush(struct trace_buf *b, int all, trace_emit_fn *emit, void *opaque)
{
	size_t n = 0;
	long rc = 0;

	pthread_mutex_lock(&b->lock);
	if (!b->count) {	/* b->ev may still be NULL: nothing was ever added */
		pthread_mutex_unlock(&b->lock);
		return 0;
	}
	if (trace_buf_sort(b)) {
		pthread_mutex_unlock(&b->lock);
		return -ENOMEM;
	}
	while (n < b->count && (all || b->ev[n].tsc <= b->safe_tsc)) {
		rc = emit(opaque, &b->ev[n]);
		if (rc)
			break;
		n++;
	}
	memmove(b->ev, b->ev + n, (b->count - n) * sizeof(*b->ev));
	b->count -= n;
	b->emitted += n;
	pthread_mutex_unlock(&b->lock);
	return rc ? rc : (long)n;
}
