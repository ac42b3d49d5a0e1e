/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A test bench for the host's ring consumer: rings laid out as the VMM lays
 * them out for one CPU, each part against PROT_NONE guard pages (so an
 * out-of-bounds read faults), a host-side model of the guest stub that
 * writes records whose every field is derived from their index, and a sink
 * that checks what the consumer hands on. Shared by test-ring.c and
 * test-trace-buf.c.
 */
#ifndef TESTS_UNIT_RING_MODEL_H
#define TESTS_UNIT_RING_MODEL_H

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/unit/check.h"
#include "vmm/trace/ring.h"

/* ---- guarded shared memory ------------------------------------------- */

struct guarded {
	uint8_t *map;
	size_t map_len;
};

/*
 * len bytes that end exactly where a PROT_NONE page begins, with another
 * PROT_NONE page before the first page: reading one byte past either end
 * faults.
 */
static inline void *guarded_alloc(struct guarded *g, size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), body = (len + pg - 1) / pg * pg;

	g->map_len = body + 2 * pg;
	g->map = mmap(NULL, g->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g->map == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	if (mprotect(g->map, pg, PROT_NONE) || mprotect(g->map + pg + body, pg, PROT_NONE)) {
		perror("mprotect");
		exit(2);
	}
	return g->map + pg + body - len;
}

static inline void guarded_free(struct guarded *g)
{
	munmap(g->map, g->map_len);
}

/* A ring as the VMM lays it out for one CPU, each part against a guard page. */
struct test_ring {
	struct guarded gh, gr;
	struct vt_ring_hdr *hdr;
	struct vt_record *recs;
	uint64_t n;
	struct ring_view view;
};

static uint16_t model_cpu;

static inline void tring_init(struct test_ring *t, uint64_t n, int lossless, uint32_t index)
{
	t->n = n;
	t->hdr = guarded_alloc(&t->gh, sizeof(*t->hdr));
	t->recs = guarded_alloc(&t->gr, n * sizeof(*t->recs));
	memset(t->hdr, 0, sizeof(*t->hdr));
	memset(t->recs, 0, n * sizeof(*t->recs));
	ring_view_init(&t->view, index, t->hdr, t->recs, n, lossless);
	model_cpu = (uint16_t)index;
}

static inline void tring_destroy(struct test_ring *t)
{
	ring_view_destroy(&t->view);
	guarded_free(&t->gh);
	guarded_free(&t->gr);
}

/* ---- a host-side model of the stub ----------------------------------- */

/* The record the model writes for index i: every field derived from i. */
static inline uint64_t pat_tsc(uint64_t i) { return 1000 + 10 * i; }
static inline uint64_t pat_func(uint64_t i) { return 0xffffffff81000000ull + (i * 0x9e3779b97f4a7c15ull >> 40); }
static inline uint64_t pat_parent(uint64_t i) { return ~i; }
/* The stub writes its ring's number (the host rejects any other): that of the ring under test. */
static inline uint16_t pat_cpu(uint64_t i) { (void)i; return model_cpu; }
static inline uint16_t pat_flags(uint64_t i) { return (uint16_t)(i & 1); }

static inline int pat_ok(const struct ring_event *ev)
{
	uint64_t i = ev->seq;

	return ev->tsc == pat_tsc(i) && ev->func == pat_func(i) && ev->parent == pat_parent(i) &&
	       ev->cpu == pat_cpu(i) && ev->flags == pat_flags(i);
}

/* Reserves the next index like the stub; returns it, or UINT64_MAX when full. */
static inline uint64_t stub_reserve(struct vt_ring_hdr *h, uint64_t limit)
{
	uint64_t head = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE);

	do {
		if (head - __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE) >= limit)
			return UINT64_MAX;
	} while (!__atomic_compare_exchange_n(&h->head, &head, head + 1, 0, __ATOMIC_SEQ_CST,
					      __ATOMIC_ACQUIRE));
	return head;
}

/* Writes record i the way the stub does: commit 0, the fields, then the marker. */
static inline void stub_write(struct vt_record *recs, uint64_t n, uint64_t i, int commit)
{
	struct vt_record *r = &recs[i & (n - 1)];

	__atomic_store_n(&r->commit, 0, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&r->tsc, pat_tsc(i), __ATOMIC_RELAXED);
	__atomic_store_n(&r->func, pat_func(i), __ATOMIC_RELAXED);
	__atomic_store_n(&r->parent, pat_parent(i), __ATOMIC_RELAXED);
	__atomic_store_n(&r->cpu, pat_cpu(i), __ATOMIC_RELAXED);
	__atomic_store_n(&r->flags, pat_flags(i), __ATOMIC_RELAXED);
	if (commit)
		__atomic_store_n(&r->commit, (uint32_t)(i + 1), __ATOMIC_RELEASE);
}

/* Produces count committed events (overwrite mode: no limit). */
static inline void produce(struct test_ring *t, uint64_t count)
{
	while (count--)
		stub_write(t->recs, t->n, stub_reserve(t->hdr, UINT64_MAX), 1);
}

/* ---- a sink that checks what it gets --------------------------------- */

struct sink {
	uint64_t count;
	uint64_t last_seq;
	int have_last;
	uint64_t bad_pattern;	/* events whose fields are not their index's */
	uint64_t out_of_order;	/* seq not strictly increasing: a duplicate or a reorder */
	uint64_t bad_flags;
	uint64_t fail_at;	/* return -EIO for the event with this count (0: never) */
	int check_pattern;
};

static inline int sink_fn(void *opaque, const struct ring_event *ev)
{
	struct sink *s = opaque;

	if (s->fail_at && s->count + 1 == s->fail_at) {
		s->fail_at = 0;
		return -EIO;
	}
	if (s->have_last && ev->seq <= s->last_seq)
		s->out_of_order++;
	if (s->check_pattern && !pat_ok(ev))
		s->bad_pattern++;
	/* Only known flags, a task only with a pointer, a pid and a printable comm. */
	if (ev->flags & ~VT_REC_FLAGS_VALID)
		s->bad_flags++;
	if ((ev->flags & VT_REC_FLAG_TASK) && (!ev->task || ev->pid < 0 || ev->pid > RING_PID_MAX))
		s->bad_flags++;
	for (unsigned i = 0; i < sizeof(ev->comm); i++)
		if ((ev->comm[i] && (ev->comm[i] < 0x20 || ev->comm[i] > 0x7e)) || (i == sizeof(ev->comm) - 1 && ev->comm[i]))
			s->bad_flags++;
	s->last_seq = ev->seq;
	s->have_last = 1;
	s->count++;
	return 0;
}

static inline long drain(struct test_ring *t, struct sink *s, int final, int *in_flight)
{
	int dummy;

	return ring_drain(&t->view, sink_fn, s, final, in_flight ? in_flight : &dummy);
}

#endif
