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

static int event_cmp(const void *a, const void *b)
{
	const struct ring_event *x = a, *y = b;

	if (x->tsc != y->tsc)
		return x->tsc < y->tsc ? -1 : 1;
	if (x->ring != y->ring)
		return x->ring < y->ring ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
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
	qsort(b->ev, b->count, sizeof(*b->ev), event_cmp);
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
