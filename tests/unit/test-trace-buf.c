// SPDX-License-Identifier: GPL-2.0
/*
 * The event buffer between the rings and the output (vmm/trace/trace-buf.c):
 * events of several rings merged by timestamp up to a watermark, hostile
 * timestamps, growth past the first allocation, and rings drained into it
 * as the tracer wires them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check.h"
#include "tests/unit/ring-model.h"
#include "vmm/trace/ring.h"
#include "vmm/trace/trace-buf.h"

struct emitted {
	struct ring_event ev[64];	/* the first 64 */
	unsigned n;
	unsigned fail_at;		/* 1-based; 0: never */
	struct ring_event last;
	unsigned unsorted;		/* pairs out of (tsc, ring, seq) order */
};

static int event_before(const struct ring_event *a, const struct ring_event *b)
{
	if (a->tsc != b->tsc)
		return a->tsc < b->tsc;
	if (a->ring != b->ring)
		return a->ring < b->ring;
	return a->seq < b->seq;
}

static int emit_fn(void *opaque, const struct ring_event *ev)
{
	struct emitted *e = opaque;

	if (e->fail_at && e->n + 1 == e->fail_at) {
		e->fail_at = 0;
		return -EPIPE;
	}
	if (e->n && !event_before(&e->last, ev))
		e->unsorted++;
	if (e->n < 64)
		e->ev[e->n] = *ev;
	e->last = *ev;
	e->n++;
	return 0;
}

static struct ring_event mkev(uint64_t tsc, uint32_t ring, uint64_t seq)
{
	return (struct ring_event){ .tsc = tsc, .ring = ring, .seq = seq, .func = tsc * 3 };
}

static int emitted_sorted(const struct emitted *e)
{
	return !e->unsorted;
}

/* A buffer nothing was ever added to (an attach-only boot that ends idle). */
static void test_trace_buf_empty(void)
{
	struct trace_buf b;
	struct emitted e = { 0 };
	long rc;

	trace_buf_init(&b);
	trace_buf_round(&b, 100, 0);
	rc = trace_buf_flush(&b, 1, emit_fn, &e);
	CHECK(rc == 0 && e.n == 0, "trace_buf: flushing a buffer that never held an event emits nothing (rc %ld)", rc);
	trace_buf_destroy(&b);
}

static void test_trace_buf(void)
{
	struct trace_buf b;
	struct emitted e = { 0 };
	long rc;

	trace_buf_init(&b);
	/* Two rings, interleaved timestamps, one tie broken by ring then seq. */
	trace_buf_add(&b, &(struct ring_event){ .tsc = 50, .ring = 1, .seq = 0 });
	trace_buf_add(&b, &(struct ring_event){ .tsc = 10, .ring = 0, .seq = 0 });
	trace_buf_add(&b, &(struct ring_event){ .tsc = 30, .ring = 0, .seq = 1 });
	trace_buf_add(&b, &(struct ring_event){ .tsc = 30, .ring = 1, .seq = 1 });
	trace_buf_add(&b, &(struct ring_event){ .tsc = 20, .ring = 1, .seq = 2 });
	CHECK(b.max_tsc == 50 && b.count == 5, "trace_buf: holds 5 events, newest tsc 50");
	rc = trace_buf_flush(&b, 0, emit_fn, &e);
	CHECK(rc == 0 && e.n == 0, "trace_buf: nothing is emitted before a round made it safe");
	trace_buf_round(&b, 30, 1);
	rc = trace_buf_flush(&b, 0, emit_fn, &e);
	CHECK(rc == 0 && e.n == 0, "trace_buf: a round with a record in flight makes nothing safe");
	trace_buf_round(&b, 30, 0);
	rc = trace_buf_flush(&b, 0, emit_fn, &e);
	CHECK(rc == 4 && e.n == 4 && emitted_sorted(&e) && e.ev[0].tsc == 10 && e.ev[1].tsc == 20 &&
	      e.ev[2].ring == 0 && e.ev[3].ring == 1,
	      "trace_buf: the events up to the safe time, by tsc then ring (rc %ld)", rc);
	trace_buf_round(&b, 20, 0);
	CHECK(b.safe_tsc == 30, "trace_buf: the safe time never goes back");
	trace_buf_add(&b, &(struct ring_event){ .tsc = 40, .ring = 0, .seq = 2 });
	rc = trace_buf_flush(&b, 1, emit_fn, &e);
	CHECK(rc == 2 && e.n == 6 && emitted_sorted(&e) && b.count == 0 && b.emitted == 6,
	      "trace_buf: the final flush emits the rest in order, emitted == 6");
	trace_buf_destroy(&b);
}

static void test_trace_buf_hostile(void)
{
	struct trace_buf b;
	struct emitted e = { .fail_at = 2 };
	long rc;

	/* An emit error keeps the failing event and those after it. */
	trace_buf_init(&b);
	for (uint64_t i = 0; i < 5; i++)
		trace_buf_add(&b, &(struct ring_event){ .tsc = 100 + i, .seq = i });
	rc = trace_buf_flush(&b, 1, emit_fn, &e);
	CHECK(rc == -EPIPE && e.n == 1 && b.count == 4 && b.emitted == 1,
	      "trace_buf: an emit error stops the flush and keeps the rest (rc %ld)", rc);
	rc = trace_buf_flush(&b, 1, emit_fn, &e);
	CHECK(rc == 4 && e.n == 5 && emitted_sorted(&e) && b.emitted == 5,
	      "trace_buf: the next flush emits them, none twice");

	/* Hostile timestamps: order is all that can suffer. */
	e = (struct emitted){ 0 };
	trace_buf_add(&b, &(struct ring_event){ .tsc = UINT64_MAX, .ring = 7 });
	trace_buf_add(&b, &(struct ring_event){ .tsc = 0, .ring = UINT32_MAX, .seq = UINT64_MAX });
	trace_buf_add(&b, &(struct ring_event){ .tsc = 0, .ring = 0, .seq = UINT64_MAX });
	trace_buf_round(&b, UINT64_MAX, 0);
	rc = trace_buf_flush(&b, 0, emit_fn, &e);
	CHECK(rc == 3 && emitted_sorted(&e) && e.ev[0].ring == 0 && e.ev[2].tsc == UINT64_MAX,
	      "trace_buf: timestamps 0 and ~0 sort and flush without trouble");
	trace_buf_destroy(&b);

}

/* Growth past the first allocation, then a sorted flush. */
static void test_trace_buf_growth(void)
{
	struct trace_buf b;
	struct emitted e = { 0 };
	struct ring_event ev;
	unsigned seed = 3;
	int ok = 1;
	long rc;

	trace_buf_init(&b);
	for (uint64_t i = 0; i < 200000; i++) {
		ev = mkev((uint64_t)rand_r(&seed) % 100000, (uint32_t)(i & 3), i);
		ok &= trace_buf_add(&b, &ev) == 0;
	}
	rc = trace_buf_flush(&b, 1, emit_fn, &e);
	CHECK(ok && rc == 200000 && b.count == 0 && b.emitted == 200000 && emitted_sorted(&e),
	      "trace_buf: 200000 events grow the buffer and flush whole (rc %ld)", rc);
	trace_buf_destroy(&b);
}

/* Rings through trace_buf, as the tracer wires them: the order across rings. */
static void test_rings_into_buf(void)
{
	struct test_ring r0, r1;
	struct trace_buf b;
	struct emitted e = { 0 };
	int in0, in1;
	long rc;

	tring_init(&r0, 64, 1, 0);
	tring_init(&r1, 64, 1, 1);
	trace_buf_init(&b);
	produce(&r0, 20);	/* tsc 1000 + 10 i */
	produce(&r1, 20);
	for (uint64_t i = 0; i < 20; i++)
		r1.recs[i].tsc = 1005 + 10 * i;	/* interleaves with ring 0 */
	ring_drain(&r0.view, trace_buf_add, &b, 0, &in0);
	ring_drain(&r1.view, trace_buf_add, &b, 0, &in1);
	trace_buf_round(&b, b.max_tsc, in0 | in1);
	rc = trace_buf_flush(&b, 0, emit_fn, &e);
	CHECK(rc == 40 && e.n == 40 && emitted_sorted(&e) && e.ev[0].ring == 0 && e.ev[1].ring == 1,
	      "two rings through trace_buf come out merged by timestamp (rc %ld)", rc);
	trace_buf_destroy(&b);
	tring_destroy(&r0);
	tring_destroy(&r1);
}

/*
 * Rounds of drains from 4 rings in random batch sizes, interleaved with
 * partial flushes (safe_tsc advancing): everything comes out exactly once,
 * in (tsc, ring, seq) order, through the run merge with kept events.
 */
static void test_trace_buf_rounds(void)
{
	struct trace_buf b;
	struct emitted e = { 0 };
	uint64_t next_tsc[4] = { 0 }, seq[4] = { 0 }, added = 0;
	unsigned rnd = 12345;
	long rc, total = 0;

	trace_buf_init(&b);
	for (int round = 0; round < 300; round++) {
		uint64_t round_max = 0;

		for (uint32_t r = 0; r < 4; r++) {
			unsigned batch = (rnd = rnd * 1103515245 + 12345) >> 16 & 255;

			for (unsigned k = 0; k < batch; k++) {
				struct ring_event ev;

				next_tsc[r] += 1 + ((rnd = rnd * 1103515245 + 12345) >> 16 & 7);
				ev = mkev(next_tsc[r], r, seq[r]++);
				trace_buf_add(&b, &ev);
				added++;
				if (ev.tsc > round_max)
					round_max = ev.tsc;
			}
		}
		trace_buf_round(&b, round_max / 2, 0);
		rc = trace_buf_flush(&b, 0, emit_fn, &e);
		if (rc < 0)
			break;
		total += rc;
	}
	rc = trace_buf_flush(&b, 1, emit_fn, &e);
	total += rc > 0 ? rc : 0;
	CHECK(total == (long)added && e.n == added, "rounds: every one of %llu events emitted once (%ld)",
	      (unsigned long long)added, total);
	CHECK(emitted_sorted(&e), "rounds: in (tsc, ring, seq) order across partial flushes (%u out of order)",
	      e.unsorted);
	CHECK(b.count == 0, "rounds: nothing left behind");
	trace_buf_destroy(&b);
}

static uint64_t lcg(unsigned *r)
{
	*r = *r * 1103515245 + 12345;
	return *r >> 16;
}

/*
 * The tracer's path: batches (trace_buf_add_batch) from 3 rings, one of
 * them a guest writing its own timestamps, out of order within a round;
 * stretches of rounds with a record in flight hold everything back, so the
 * queues grow while they wrap. Every event comes out once, in order.
 */
static void test_trace_buf_batches(void)
{
	struct trace_buf b;
	struct emitted e = { 0 };
	struct ring_event *batch = malloc(2048 * sizeof(*batch));
	uint64_t seq[3] = { 0 }, added = 0, base = 1000, prev_max = 0;
	unsigned rnd = 777;
	long rc, total = 0;
	int ok = 1;

	trace_buf_init(&b);
	for (int round = 0; batch && round < 200; round++) {
		uint64_t round_max = 0;

		for (uint32_t r = 0; r < 3; r++) {
			size_t n = lcg(&rnd) & 2047, taken;
			uint64_t tsc = base;

			for (size_t k = 0; k < n; k++) {
				tsc += 1 + (lcg(&rnd) & 3);
				batch[k] = mkev(tsc, r, seq[r]++);
			}
			round_max = tsc > round_max ? tsc : round_max;
			for (size_t k = n; r == 2 && k > 1; k--) {
				size_t j = lcg(&rnd) % k;
				struct ring_event x = batch[k - 1];

				batch[k - 1] = batch[j];
				batch[j] = x;
			}
			ok &= trace_buf_add_batch(&b, batch, n, &taken) == 0 && taken == n;
			added += n;
		}
		base = round_max + 1;	/* the next round's events all come later */
		trace_buf_round(&b, prev_max, round % 7 < 3);
		prev_max = round_max;
		rc = trace_buf_flush(&b, 0, emit_fn, &e);
		ok &= rc >= 0;
		total += rc > 0 ? rc : 0;
	}
	rc = trace_buf_flush(&b, 1, emit_fn, &e);
	total += rc > 0 ? rc : 0;
	CHECK(ok && total == (long)added && e.n == added && emitted_sorted(&e) && b.count == 0,
	      "batches: %llu events from 3 rings (one out of order) come out once, in order (%ld, %u out of order)",
	      (unsigned long long)added, total, e.unsorted);
	trace_buf_destroy(&b);
	free(batch);
}

/* One batch holding several rings' events: each goes to its ring's queue. */
static void test_trace_buf_mixed_batch(void)
{
	struct ring_event ev[6] = {
		mkev(40, 1, 0), mkev(10, 0, 0), mkev(50, 1, 1), mkev(20, 0, 1), mkev(20, 2, 0), mkev(60, 0, 2),
	};
	struct trace_buf b;
	struct emitted e = { 0 };
	size_t taken;
	long rc;

	trace_buf_init(&b);
	rc = trace_buf_add_batch(&b, ev, 6, &taken);
	CHECK(rc == 0 && taken == 6 && b.count == 6 && b.max_tsc == 60,
	      "mixed batch: six events of three rings taken, newest tsc 60");
	rc = trace_buf_flush(&b, 1, emit_fn, &e);
	CHECK(rc == 6 && emitted_sorted(&e) && e.ev[0].tsc == 10 && e.ev[1].ring == 0 && e.ev[2].ring == 2 &&
	      e.ev[5].tsc == 60, "mixed batch: merged by (tsc, ring, seq) (rc %ld)", rc);
	trace_buf_destroy(&b);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_trace_buf_empty();
	test_trace_buf();
	test_trace_buf_hostile();
	test_trace_buf_growth();
	test_rings_into_buf();
	test_trace_buf_rounds();
	test_trace_buf_batches();
	test_trace_buf_mixed_batch();
	return check_exit();
}
