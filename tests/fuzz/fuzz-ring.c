// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the host's ring consumer (vmm/trace/ring.c) over
 * ring memory a hostile guest controls, drained into the trace_buf
 * (vmm/trace/trace-buf.c) the way the tracer does. The input lays out one
 * or two rings (geometry byte, then per ring its header and records, the
 * rest zero), then a script of rounds, each one guest write to a header
 * field or a record's commit marker followed by a drain of every ring.
 * Checked against what ring.h promises: events come in ring order, each
 * one a committed record of the window the header allows, with its flags
 * masked and its ring's index; nothing is consumed twice; the host's
 * account (consumed + lost + unfinished) is exactly how far it moved; a
 * broken ring yields nothing more; the trace_buf emits every event once,
 * in timestamp order.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/trace/ring.h"
#include "vmm/trace/trace-buf.h"

#define MAX_RINGS 2

struct fring {
	struct vt_ring_hdr *hdr;
	struct vt_record *recs;
	struct ring_view view;
	uint64_t n;
	uint64_t last_seq;
	int have_last;
	uint64_t total;		/* events handed on */
};

struct sink_ctx {
	struct fring *ring;
	struct trace_buf *buf;
};

static int sink(void *opaque, const struct ring_event *ev)
{
	struct sink_ctx *c = opaque;
	struct fring *f = c->ring;
	const struct vt_record *rec = &f->recs[ev->seq & (f->n - 1)];

	const uint16_t task_bits = VT_REC_FLAG_TASK | VT_REC_FLAG_NEED_RESCHED | VT_REC_MIGR_MASK;
	uint16_t want = rec->flags & VT_REC_FLAGS_VALID & ~task_bits;

	/* An exit is only an exit: no arguments, not an entry. */
	if (want & VT_REC_FLAG_EXIT)
		want &= (uint16_t)~(VT_REC_FLAG_ARGS | VT_REC_FLAG_HOOKED);

	if (ev->ring != f->view.index || (ev->flags & ~VT_REC_FLAGS_VALID))
		abort();
	/* A task only with a pointer and a kernel's pid; its comm printable and NUL-terminated. */
	if (ev->flags & VT_REC_FLAG_TASK) {
		if (!(rec->flags & VT_REC_FLAG_TASK) || !ev->task || ev->task != rec->task ||
		    ev->pid != rec->pid || ev->pid < 0 || ev->pid > RING_PID_MAX || ev->comm[15])
			abort();
		for (unsigned i = 0; i < 16; i++)
			if (ev->comm[i] && (ev->comm[i] < 0x20 || ev->comm[i] > 0x7e))
				abort();
	} else if (ev->task || ev->pid || ev->comm[0] || (ev->flags & task_bits)) {
		abort();
	}
	if ((ev->flags & VT_REC_FLAG_CTX) ? ev->preempt != rec->preempt : ev->preempt != 0)
		abort();
	if (f->have_last && ev->seq <= f->last_seq)
		abort();	/* a duplicate or a reorder */
	if (ev->seq >= f->view.head_seen || f->view.head_seen - ev->seq > f->n)
		abort();	/* outside the window the header allowed */
	/* Nothing writes the ring during the drain: the event is the record. */
	if (rec->commit != (uint32_t)(ev->seq + 1) || rec->tsc != ev->tsc || rec->func != ev->func ||
	    rec->parent != ev->parent || ev->cpu != f->view.index ||	/* a forged CPU becomes the ring's */
	    want != (ev->flags & ~task_bits))
		abort();
	/* --graph's fields: from the record where the flags claim them, bounded, else zero. */
	if (ev->flags & VT_REC_FLAG_EXIT) {
		if (ev->retval != rec->args[0] || ev->calltime > ev->tsc ||
		    ev->calltime != (rec->args[1] > rec->tsc ? rec->tsc : rec->args[1]))
			abort();
	} else if (ev->retval || ev->calltime) {
		abort();
	}
	if ((ev->flags & (VT_REC_FLAG_EXIT | VT_REC_FLAG_HOOKED)) ? ev->depth >= VT_SHADOW_FRAMES : ev->depth != 0)
		abort();
	for (unsigned i = 0; i < VT_REC_NARGS; i++)
		if (ev->args[i] != ((ev->flags & VT_REC_FLAG_ARGS) ? rec->args[i] : 0))
			abort();
	f->last_seq = ev->seq;
	f->have_last = 1;
	f->total++;
	return trace_buf_add(c->buf, ev);
}

struct emit_ctx {
	uint64_t count;
	uint64_t last_tsc;
	uint64_t limit;		/* every emitted event at or below it (unless all) */
};

static int emit(void *opaque, const struct ring_event *ev)
{
	struct emit_ctx *e = opaque;

	if (ev->tsc < e->last_tsc || ev->tsc > e->limit)
		abort();
	e->last_tsc = ev->tsc;
	e->count++;
	return 0;
}

static void drain_all(struct fring *rings, unsigned nrings, struct trace_buf *buf, int final,
		      uint64_t *emitted)
{
	uint64_t before = buf->max_tsc;
	int any_in_flight = 0;

	for (unsigned i = 0; i < nrings; i++) {
		struct fring *f = &rings[i];
		struct sink_ctx c = { f, buf };
		uint64_t consumed = f->view.consumed;
		int broken = f->view.broken, in_flight = 0;
		long n;

		pthread_mutex_lock(&f->view.lock);
		n = ring_drain(&f->view, sink, &c, final, &in_flight);
		pthread_mutex_unlock(&f->view.lock);
		if (n < 0 || (uint64_t)n > 4 * f->n || f->view.consumed - consumed != (uint64_t)n)
			abort();
		if (broken && n)
			abort();	/* a broken ring stays silent */
		if (f->view.pos != f->view.consumed + f->view.lost + f->view.unfinished)
			abort();	/* every index passed is accounted for once */
		if (f->view.pos > f->view.head_seen && !f->view.broken)	/* never past what the header allowed */
			abort();
		if (f->view.lossless && !f->view.broken && f->hdr->tail != f->view.pos)
			abort();
		if (f->view.consumed != f->total)
			abort();
		any_in_flight |= in_flight;
	}
	trace_buf_round(buf, before, any_in_flight);
	{
		struct emit_ctx e = { 0, 0, buf->safe_tsc };
		long n = trace_buf_flush(buf, 0, emit, &e);

		if (n < 0 || (uint64_t)n != e.count)
			abort();
		*emitted += e.count;
	}
}

static size_t take(void *dst, size_t len, const uint8_t **p, size_t *left)
{
	size_t n = len < *left ? len : *left;

	memset(dst, 0, len);
	memcpy(dst, *p, n);
	*p += n;
	*left -= n;
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fring rings[MAX_RINGS];
	struct trace_buf buf;
	const uint8_t *p = data;
	size_t left = size;
	unsigned nrings, rounds = 0;
	uint64_t n, emitted = 0, added = 0;
	int lossless;
	uint8_t g;

	if (!take(&g, 1, &p, &left))
		return 0;
	n = 1ull << (g & 7);
	lossless = !!(g & 8);
	nrings = g & 16 ? 2 : 1;
	memset(rings, 0, sizeof(rings));
	trace_buf_init(&buf);
	for (unsigned i = 0; i < nrings; i++) {
		/* Exactly sized, so that ASan catches any index not masked. */
		rings[i].hdr = malloc(sizeof(*rings[i].hdr));
		rings[i].recs = malloc(n * sizeof(*rings[i].recs));
		rings[i].n = n;
		take(rings[i].hdr, sizeof(*rings[i].hdr), &p, &left);
		take(rings[i].recs, n * sizeof(*rings[i].recs), &p, &left);
		ring_view_init(&rings[i].view, i, rings[i].hdr, rings[i].recs, n, lossless);
	}
	drain_all(rings, nrings, &buf, 0, &emitted);
	while (left && rounds++ < 64) {
		uint8_t op[2];
		uint64_t v;
		struct fring *f;

		take(op, 2, &p, &left);
		take(&v, 8, &p, &left);
		f = &rings[op[1] % nrings];
		switch (op[0] & 3) {
		case 0: f->hdr->head = v; break;
		case 1: f->hdr->dropped = v; break;
		case 2: f->hdr->tail = v; break;
		case 3: {
			/* A record rewritten: its commit marker and its fields. */
			struct vt_record *r = &f->recs[(v >> 32) & (n - 1)];

			r->commit = (uint32_t)v;
			r->tsc = v * 7;
			r->func = ~v;
			r->flags = (uint16_t)(v >> 8);
			break;
		}
		}
		drain_all(rings, nrings, &buf, op[0] >> 7, &emitted);
	}
	drain_all(rings, nrings, &buf, 1, &emitted);
	{
		struct emit_ctx e = { 0, 0, UINT64_MAX };

		if (trace_buf_flush(&buf, 1, emit, &e) != (long)e.count)
			abort();
		emitted += e.count;
	}
	for (unsigned i = 0; i < nrings; i++) {
		added += rings[i].total;
		ring_view_destroy(&rings[i].view);
		free(rings[i].hdr);
		free(rings[i].recs);
	}
	if (emitted != added || buf.emitted != added || buf.count)
		abort();	/* every event emitted exactly once */
	trace_buf_destroy(&buf);
	return 0;
}
