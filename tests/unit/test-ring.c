// SPDX-License-Identifier: GPL-2.0
/*
 * The host's ring consumer (vmm/ring.c) and event buffer (vmm/trace-buf.c)
 * against what a guest can put in the shared memory: garbage, torn records,
 * headers that go backwards or far ahead, commit markers of other laps,
 * unknown flag bits, a lossless ring whose tail the guest rewrote, and a
 * producer that laps the reader. The guest is untrusted, so the reader must
 * reject all of it without crashing or reading outside the ring: every ring
 * and header here sits against PROT_NONE guard pages, so an out-of-bounds
 * access faults. With patterns whose history is known the accounting must be
 * exact: consumed + lost == head (overwrite mode), and no event twice.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/check.h"
#include "vmm/ring.h"
#include "vmm/trace-buf.h"

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
static void *guarded_alloc(struct guarded *g, size_t len)
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

static void guarded_free(struct guarded *g)
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

static void tring_init(struct test_ring *t, uint64_t n, int lossless, uint32_t index)
{
	t->n = n;
	t->hdr = guarded_alloc(&t->gh, sizeof(*t->hdr));
	t->recs = guarded_alloc(&t->gr, n * sizeof(*t->recs));
	memset(t->hdr, 0, sizeof(*t->hdr));
	memset(t->recs, 0, n * sizeof(*t->recs));
	ring_view_init(&t->view, index, t->hdr, t->recs, n, lossless);
}

static void tring_destroy(struct test_ring *t)
{
	ring_view_destroy(&t->view);
	guarded_free(&t->gh);
	guarded_free(&t->gr);
}

/* The guards work: a child that reads one byte past either end dies of SIGSEGV. */
static int faults(const volatile uint8_t *p)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);	/* not AddressSanitizer's report */
		(void)*p;
		_exit(0);
	}
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) &&
	       WTERMSIG(status) == SIGSEGV;
}

static void test_guards(void)
{
	struct guarded g;
	uint8_t *p = guarded_alloc(&g, 64 * sizeof(struct vt_record));

	CHECK(faults(p + 64 * sizeof(struct vt_record)), "guard page: one byte past the ring faults");
	CHECK(faults(g.map + sysconf(_SC_PAGESIZE) - 1), "guard page: the page before the ring's page faults");
	CHECK(!faults(p) && !faults(p + 64 * sizeof(struct vt_record) - 1), "the ring itself is readable");
	guarded_free(&g);
}

/* ---- a host-side model of the stub ----------------------------------- */

/* The record the model writes for index i: every field derived from i. */
static uint64_t pat_tsc(uint64_t i) { return 1000 + 10 * i; }
static uint64_t pat_func(uint64_t i) { return 0xffffffff81000000ull + (i * 0x9e3779b97f4a7c15ull >> 40); }
static uint64_t pat_parent(uint64_t i) { return ~i; }
static uint16_t pat_cpu(uint64_t i) { return (uint16_t)(i * 7); }
static uint16_t pat_flags(uint64_t i) { return (uint16_t)(i & 1); }

static int pat_ok(const struct ring_event *ev)
{
	uint64_t i = ev->seq;

	return ev->tsc == pat_tsc(i) && ev->func == pat_func(i) && ev->parent == pat_parent(i) &&
	       ev->cpu == pat_cpu(i) && ev->flags == pat_flags(i);
}

/* Reserves the next index like the stub; returns it, or UINT64_MAX when full. */
static uint64_t stub_reserve(struct vt_ring_hdr *h, uint64_t limit)
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
static void stub_write(struct vt_record *recs, uint64_t n, uint64_t i, int commit)
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
static void produce(struct test_ring *t, uint64_t count)
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

static int sink_fn(void *opaque, const struct ring_event *ev)
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
	if (ev->flags & ~VT_REC_FLAG_IRQS_OFF)
		s->bad_flags++;
	s->last_seq = ev->seq;
	s->have_last = 1;
	s->count++;
	return 0;
}

static long drain(struct test_ring *t, struct sink *s, int final, int *in_flight)
{
	int dummy;

	return ring_drain(&t->view, sink_fn, s, final, in_flight ? in_flight : &dummy);
}

/* ---- well-behaved guests: exact accounting --------------------------- */

static void test_lossless_basic(void)
{
	struct test_ring t;
	struct sink s = { .check_pattern = 1 };
	uint64_t i, n = 64, got = 0;
	int in_flight, ok = 1;
	long rc;

	tring_init(&t, n, 1, 3);
	/* Fill, drain, repeat: 50 laps through the ring, never a loss. */
	for (int lap = 0; lap < 50; lap++) {
		uint64_t k = 0;

		while ((i = stub_reserve(t.hdr, n)) != UINT64_MAX) {
			stub_write(t.recs, n, i, 1);
			k++;
		}
		ok &= k == n;
		rc = drain(&t, &s, 0, &in_flight);
		ok &= rc == (long)n && !in_flight;
		got += rc > 0 ? rc : 0;
	}
	CHECK(ok, "lossless: 50 full rings drained whole, %llu events", (unsigned long long)got);
	CHECK(got == 50 * n && s.count == got && t.view.consumed == got && t.view.lost == 0,
	      "lossless: consumed %llu of %llu, lost %llu", (unsigned long long)t.view.consumed,
	      (unsigned long long)(50 * n), (unsigned long long)t.view.lost);
	CHECK(t.hdr->tail == t.hdr->head && t.view.pos == t.hdr->head,
	      "lossless: the host publishes tail == head after a full drain");
	CHECK(!s.bad_pattern && !s.out_of_order && !s.bad_flags,
	      "lossless: every event intact and in order (bad %llu, order %llu)",
	      (unsigned long long)s.bad_pattern, (unsigned long long)s.out_of_order);
	CHECK(!t.view.rejected && !t.view.broken, "lossless: a well-behaved guest is never rejected");
	tring_destroy(&t);
}

static void test_in_flight(void)
{
	struct test_ring t;
	struct sink s = { .check_pattern = 1 };
	uint64_t n = 64, i;
	int in_flight;
	long rc;

	tring_init(&t, n, 1, 0);
	for (int k = 0; k < 5; k++)
		stub_write(t.recs, n, stub_reserve(t.hdr, n), 1);
	i = stub_reserve(t.hdr, n);		/* index 5: reserved, being written */
	stub_write(t.recs, n, i, 0);
	for (int k = 0; k < 3; k++)		/* 6..8 committed behind it */
		stub_write(t.recs, n, stub_reserve(t.hdr, n), 1);
	rc = drain(&t, &s, 0, &in_flight);
	CHECK(rc == 5 && in_flight && t.view.pos == 5 && t.hdr->tail == 5,
	      "a record in flight stops the drain before it (rc %ld, in_flight %d, pos %llu)", rc,
	      in_flight, (unsigned long long)t.view.pos);
	rc = drain(&t, &s, 0, &in_flight);
	CHECK(rc == 0 && in_flight, "... and again while it stays open");
	__atomic_store_n(&t.recs[5].commit, 6, __ATOMIC_RELEASE);
	rc = drain(&t, &s, 0, &in_flight);
	CHECK(rc == 4 && !in_flight && t.view.consumed == 9 && !s.out_of_order && !s.bad_pattern,
	      "once committed it and the ones behind it follow in order (rc %ld)", rc);

	/* A record never committed when the guest is gone counts as unfinished. */
	i = stub_reserve(t.hdr, n);
	stub_write(t.recs, n, i, 0);
	stub_write(t.recs, n, stub_reserve(t.hdr, n), 1);
	rc = drain(&t, &s, 1, &in_flight);
	CHECK(rc == 1 && t.view.unfinished == 1 && t.view.lost == 0 && t.view.consumed == 10 && t.view.pos == t.hdr->head,
	      "final drain: an open record is unfinished, the one behind it consumed (rc %ld, lost %llu)", rc,
	      (unsigned long long)t.view.unfinished);
	tring_destroy(&t);
}

static void test_sink_error(void)
{
	struct test_ring t;
	struct sink s = { .check_pattern = 1, .fail_at = 4 };
	long rc;

	tring_init(&t, 64, 1, 0);
	produce(&t, 10);
	rc = drain(&t, &s, 0, NULL);
	CHECK(rc == -EIO && t.view.pos == 3 && t.view.consumed == 3,
	      "a sink error stops the drain at the failing event (rc %ld, pos %llu)", rc,
	      (unsigned long long)t.view.pos);
	rc = drain(&t, &s, 0, NULL);
	CHECK(rc == 7 && s.count == 10 && !s.out_of_order && !s.bad_pattern,
	      "the next drain resumes with that event, none lost or repeated (rc %ld)", rc);
	tring_destroy(&t);
}

/* Overwrite mode, one thread: random bursts between drains, many laps. */
static void test_overwrite_accounting(void)
{
	struct test_ring t;
	struct sink s = { .check_pattern = 1 };
	uint64_t n = 128, produced = 0;
	unsigned seed = 12345;
	int ok = 1;

	tring_init(&t, n, 0, 1);
	for (int round = 0; round < 2000; round++) {
		uint64_t k = (uint64_t)rand_r(&seed) % (3 * n + 1);

		if (round % 100 == 7)
			k = 10 * n + 3;		/* far behind: many laps at once */
		produce(&t, k);
		produced += k;
		drain(&t, &s, 0, NULL);
		ok &= t.view.consumed + t.view.lost + t.view.unfinished == t.view.pos && t.view.pos == produced;
	}
	/* The guest stops with three records reserved but never committed. */
	for (int k = 0; k < 3; k++)
		stub_write(t.recs, n, stub_reserve(t.hdr, UINT64_MAX), 0);
	produce(&t, 2);
	produced += 5;
	drain(&t, &s, 1, NULL);
	CHECK(ok, "overwrite: after every drain consumed + lost == pos == head");
	CHECK(t.view.unfinished == 3, "overwrite: the final drain counts 3 unfinished records (%llu)",
	      (unsigned long long)t.view.unfinished);
	CHECK(t.view.consumed + t.view.lost + t.view.unfinished == t.hdr->head && t.hdr->head == produced,
	      "overwrite: consumed %llu + lost %llu + unfinished %llu == head %llu",
	      (unsigned long long)t.view.consumed, (unsigned long long)t.view.lost,
	      (unsigned long long)t.view.unfinished, (unsigned long long)t.hdr->head);
	CHECK(t.view.lost > 0 && t.view.consumed > 0, "overwrite: the test did lap the reader");
	CHECK(s.count == t.view.consumed && !s.bad_pattern && !s.out_of_order,
	      "overwrite: every consumed event intact, none twice (bad %llu, order %llu)",
	      (unsigned long long)s.bad_pattern, (unsigned long long)s.out_of_order);
	CHECK(!t.view.rejected && !t.view.broken, "overwrite: lapping is not a guest error");
	tring_destroy(&t);
}

/* Overwrite mode, a producer thread lapping a concurrent reader. */
struct racer {
	struct test_ring *t;
	atomic_int stop;
	uint64_t produced;
};

static void *racer_fn(void *arg)
{
	struct racer *r = arg;

	while (!atomic_load(&r->stop)) {
		for (int k = 0; k < 64; k++)
			stub_write(r->t->recs, r->t->n, stub_reserve(r->t->hdr, UINT64_MAX), 1);
		r->produced += 64;
	}
	return NULL;
}

static void test_overwrite_race(void)
{
	struct test_ring t;
	struct sink s = { .check_pattern = 1 };
	struct racer r = { .t = &t };
	struct timespec end, now;
	pthread_t th;
	long drains = 0;

	tring_init(&t, 1024, 0, 0);
	pthread_create(&th, NULL, racer_fn, &r);
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_nsec += 300 * 1000 * 1000;
	if (end.tv_nsec >= 1000000000) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000;
	}
	do {
		drain(&t, &s, 0, NULL);
		drains++;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec < end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
	atomic_store(&r.stop, 1);
	pthread_join(th, NULL);
	drain(&t, &s, 1, NULL);
	printf("INFO: overwrite race: %ld drains, %llu produced, %llu consumed, %llu lost\n", drains,
	       (unsigned long long)r.produced, (unsigned long long)t.view.consumed,
	       (unsigned long long)t.view.lost);
	CHECK(t.view.consumed + t.view.lost + t.view.unfinished == t.hdr->head && t.hdr->head == r.produced,
	      "overwrite race: consumed + lost == head == produced");
	CHECK(!s.bad_pattern, "overwrite race: no torn record reached the sink (%llu)",
	      (unsigned long long)s.bad_pattern);
	CHECK(!s.out_of_order, "overwrite race: no event twice or out of ring order");
	CHECK(!t.view.rejected && !t.view.broken, "overwrite race: nothing rejected");
	tring_destroy(&t);
}

/* ---- hostile guests --------------------------------------------------- */

static void test_head_backwards(void)
{
	struct test_ring t;
	struct sink s = { 0 };
	long rc;

	tring_init(&t, 64, 1, 0);
	produce(&t, 20);
	drain(&t, &s, 0, NULL);
	t.hdr->head = 5;
	rc = drain(&t, &s, 0, NULL);
	CHECK(rc == 0 && t.view.broken && t.view.rejected >= 1,
	      "head going backwards marks the ring broken (rc %ld)", rc);
	t.hdr->head = 40;
	rc = drain(&t, &s, 1, NULL);
	CHECK(rc == 0 && s.count == 20, "a broken ring is never read again, not even finally");
	tring_destroy(&t);

	/* Backwards but still ahead of what the host consumed. */
	tring_init(&t, 64, 0, 0);
	produce(&t, 10);
	t.hdr->head = 30;		/* lies: 20 reserved, never written */
	drain(&t, &s, 0, NULL);
	t.hdr->head = 12;
	rc = drain(&t, &s, 0, NULL);
	CHECK(rc == 0 && t.view.broken, "head lower than one seen before is rejected even above pos");
	tring_destroy(&t);
}

static void test_head_far_ahead(int lossless)
{
	static const uint64_t heads[] = {
		1000000000000ull, UINT64_MAX / 2, UINT64_MAX - 64, UINT64_MAX - 1, UINT64_MAX,
	};
	const char *m = lossless ? "lossless" : "overwrite";

	for (unsigned h = 0; h < sizeof(heads) / sizeof(heads[0]); h++) {
		struct test_ring t;
		struct sink s = { 0 };
		unsigned seed = h + 1;
		long rc1, rc2;

		tring_init(&t, 64, lossless, 0);
		for (size_t b = 0; b < 64 * sizeof(struct vt_record); b++)
			((uint8_t *)t.recs)[b] = (uint8_t)rand_r(&seed);
		t.hdr->head = heads[h];
		rc1 = drain(&t, &s, 0, NULL);
		rc2 = drain(&t, &s, 1, NULL);
		CHECK(rc1 >= 0 && rc2 >= 0 && t.view.pos <= heads[h] && heads[h] - t.view.pos <= 64 &&
		      s.count <= 64 && (!lossless || t.view.rejected),
		      "%s: head %#llx over garbage records: pos %#llx, %llu events, rejected %llu", m,
		      (unsigned long long)heads[h], (unsigned long long)t.view.pos,
		      (unsigned long long)s.count, (unsigned long long)t.view.rejected);
		if (lossless)
			CHECK(t.hdr->tail == t.view.pos, "%s: the published tail is the host's own position", m);
		tring_destroy(&t);
	}
}

static void test_other_laps(int lossless)
{
	struct test_ring t;
	struct sink s = { .check_pattern = 1 };
	uint64_t n = 64;
	int in_flight, ok_s;
	long rc;

	tring_init(&t, n, lossless, 0);
	produce(&t, 40);
	/* Records 10..19 carry the markers of the lap before and after. */
	for (uint64_t i = 10; i < 20; i++)
		t.recs[i].commit = (uint32_t)(i + 1 + (i & 1 ? n : -n));
	rc = drain(&t, &s, 0, &in_flight);
	CHECK(rc == 10 && in_flight && t.view.pos == 10,
	      "%s: a commit marker of another lap is not this lap's record (rc %ld)",
	      lossless ? "lossless" : "overwrite", rc);
	/* Markers of far laps that agree in the low 32 bits cannot be told apart; all others can. */
	t.recs[10].commit = (uint32_t)(11 + (1ull << 32));
	t.recs[11].commit = (uint32_t)(12 + n * 3);
	rc = drain(&t, &s, 1, &in_flight);
	ok_s = !s.bad_pattern && !s.out_of_order;
	CHECK(rc == 21 && t.view.lost + t.view.unfinished == 9 && t.view.consumed == 31 && ok_s,
	      "%s: finally the other laps' records are lost, the rest delivered (rc %ld, lost %llu)",
	      lossless ? "lossless" : "overwrite", rc, (unsigned long long)(t.view.lost + t.view.unfinished));
	tring_destroy(&t);
}

static void test_unknown_flags(void)
{
	struct test_ring t;
	struct sink s = { 0 };
	long rc;

	tring_init(&t, 64, 1, 0);
	produce(&t, 4);
	t.recs[1].flags = 0xfffe;
	t.recs[2].flags = 0xffff;
	t.recs[3].flags = VT_REC_FLAG_IRQS_OFF;
	rc = drain(&t, &s, 0, NULL);
	CHECK(rc == 4 && !s.bad_flags, "unknown flag bits never reach the sink");
	CHECK(t.view.rejected == 2, "... and count as rejected values (%llu)", (unsigned long long)t.view.rejected);
	tring_destroy(&t);
}

/* Lossless: the guest moves tail itself, so the stub overwrites unread records. */
static void test_lossless_tail_rewritten(void)
{
	struct test_ring t;
	struct sink s = { .check_pattern = 1 };
	uint64_t n = 64, i, written = 0;
	long rc;

	tring_init(&t, n, 1, 0);
	produce(&t, 10);
	drain(&t, &s, 0, NULL);
	t.hdr->tail = 0;
	rc = drain(&t, &s, 0, NULL);
	CHECK(rc == 0 && t.hdr->tail == 10, "a tail the guest moved back is rewritten with the host's");

	/* Tail far ahead: the stub sees room and laps unread records. */
	for (int k = 0; k < 5; k++) {
		t.hdr->tail = t.hdr->head;
		while ((i = stub_reserve(t.hdr, n)) != UINT64_MAX) {
			stub_write(t.recs, n, i, 1);
			written++;
		}
	}
	rc = drain(&t, &s, 0, NULL);
	CHECK(rc == (long)n && t.view.rejected >= 1 && t.view.lost == written - n,
	      "lossless lapped by a guest that moved tail: rejected, %llu lost, last %ld delivered",
	      (unsigned long long)t.view.lost, rc);
	CHECK(t.view.consumed + t.view.lost + t.view.unfinished == t.hdr->head && !s.bad_pattern && !s.out_of_order,
	      "... and the accounting still adds up to head");

	/* Tail set to garbage: the host's reading position does not follow it. */
	t.hdr->tail = UINT64_MAX;
	produce(&t, 3);
	rc = drain(&t, &s, 0, NULL);
	CHECK(rc == 3 && t.hdr->tail == t.hdr->head, "a garbage tail changes nothing the host reads");
	tring_destroy(&t);
}

static void test_dropped_backwards(void)
{
	struct test_ring t;
	struct sink s = { 0 };

	tring_init(&t, 64, 1, 0);
	t.hdr->dropped = 7;
	drain(&t, &s, 0, NULL);
	CHECK(t.view.stub_dropped == 7 && !t.view.rejected, "the stub's drop count is taken");
	t.hdr->dropped = 3;
	drain(&t, &s, 0, NULL);
	CHECK(t.view.stub_dropped == 7 && t.view.rejected == 1, "a drop count going backwards is rejected");
	tring_destroy(&t);
}

/* Every byte random, many times: invariants only. */
static void test_garbage(int lossless)
{
	struct test_ring t;
	unsigned seed = 99 + lossless;
	int ok = 1;

	for (int iter = 0; iter < 3000; iter++) {
		struct sink s = { 0 };
		uint64_t head, before;
		long rc;

		tring_init(&t, 64, lossless, (uint32_t)iter);
		for (size_t b = 0; b < 64 * sizeof(struct vt_record); b++)
			((uint8_t *)t.recs)[b] = (uint8_t)rand_r(&seed);
		for (size_t b = 0; b < sizeof(*t.hdr); b++)
			((uint8_t *)t.hdr)[b] = (uint8_t)rand_r(&seed);
		/* Small heads too, where the random commit markers can match. */
		if (iter & 1)
			t.hdr->head = (uint64_t)rand_r(&seed) % 200;
		/* Plant some valid markers so the sink does get events. */
		for (uint64_t i = 0; i < 64; i++)
			if (rand_r(&seed) & 1)
				t.recs[i].commit = (uint32_t)(i + 1);
		for (int d = 0; d < 4; d++) {
			before = t.view.pos;
			head = t.hdr->head;
			rc = drain(&t, &s, d == 3, NULL);
			ok &= CHECK_QUIET(rc >= 0, "garbage %d: drain error %ld", iter, rc);
			ok &= CHECK_QUIET(!s.bad_flags, "garbage %d: unknown flags reached the sink", iter);
			ok &= CHECK_QUIET(t.view.broken || t.view.pos <= head,
					  "garbage %d: pos %llu beyond head %llu", iter,
					  (unsigned long long)t.view.pos, (unsigned long long)head);
			ok &= CHECK_QUIET(t.view.pos >= before, "garbage %d: pos went back", iter);
			ok &= CHECK_QUIET(!s.out_of_order, "garbage %d: an index twice", iter);
			/* The guest keeps scribbling between drains. */
			t.hdr->head += (uint64_t)rand_r(&seed) % 100;
			t.recs[rand_r(&seed) % 64].commit = (uint32_t)rand_r(&seed);
			if (lossless && (rand_r(&seed) & 1))
				t.hdr->tail = (uint64_t)rand_r(&seed) << 20;
		}
		tring_destroy(&t);
	}
	CHECK(ok, "%s: 3000 rings of random bytes drained without a fault, invariants held",
	      lossless ? "lossless" : "overwrite");
}

/* A guest thread scribbling over header and records while the host drains. */
struct scribbler {
	struct test_ring *t;
	atomic_int stop;
};

static void *scribble_fn(void *arg)
{
	struct scribbler *sc = arg;
	unsigned seed = 7;

	while (!atomic_load(&sc->stop)) {
		uint64_t *w = (uint64_t *)sc->t->recs;
		uint64_t nw = sc->t->n * sizeof(struct vt_record) / 8;
		uint64_t v = (uint64_t)rand_r(&seed) << 32 | (unsigned)rand_r(&seed);

		switch (rand_r(&seed) % 6) {
		case 0: __atomic_store_n(&sc->t->hdr->head, v, __ATOMIC_RELAXED); break;
		case 1: __atomic_fetch_add(&sc->t->hdr->head, v % 70, __ATOMIC_RELAXED); break;
		case 2: __atomic_store_n(&sc->t->hdr->tail, v, __ATOMIC_RELAXED); break;
		case 3: __atomic_store_n(&sc->t->hdr->dropped, v, __ATOMIC_RELAXED); break;
		default: __atomic_store_n(&w[v % nw], v, __ATOMIC_RELAXED); break;
		}
	}
	return NULL;
}

static void test_scribbler(int lossless)
{
	struct test_ring t;
	struct sink s = { 0 };
	struct scribbler sc = { .t = &t };
	pthread_t th;
	long rc, bad = 0;

	tring_init(&t, 64, lossless, 0);
	pthread_create(&th, NULL, scribble_fn, &sc);
	for (int i = 0; i < 100000 && !t.view.broken; i++) {
		rc = drain(&t, &s, 0, NULL);
		bad += rc < 0;
	}
	atomic_store(&sc.stop, 1);
	pthread_join(th, NULL);
	rc = drain(&t, &s, 1, NULL);
	CHECK(!bad && rc >= 0 && !s.bad_flags,
	      "%s: draining while the guest scribbles over the ring: no fault, no error (broken %d, %llu events)",
	      lossless ? "lossless" : "overwrite", t.view.broken, (unsigned long long)s.count);
	tring_destroy(&t);
}

/* ---- trace_buf --------------------------------------------------------- */

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

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_guards();
	test_lossless_basic();
	test_in_flight();
	test_sink_error();
	test_overwrite_accounting();
	test_overwrite_race();
	test_head_backwards();
	test_head_far_ahead(1);
	test_head_far_ahead(0);
	test_other_laps(1);
	test_other_laps(0);
	test_unknown_flags();
	test_lossless_tail_rewritten();
	test_dropped_backwards();
	test_garbage(1);
	test_garbage(0);
	test_scribbler(1);
	test_scribbler(0);
	test_trace_buf();
	test_trace_buf_hostile();
	test_trace_buf_growth();
	test_rings_into_buf();
	return check_exit();
}
