// SPDX-License-Identifier: GPL-2.0
/*
 * The host's ring consumer (vmm/trace/ring.c) against what a guest can put in the
 * shared memory: garbage, torn records, headers that go backwards or far
 * ahead, commit markers of other laps, unknown flag bits, a lossless ring
 * whose tail the guest rewrote, and a producer that laps the reader. The guest is untrusted, so the reader must
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
#include "vmm/trace/ring.h"
#include "tests/unit/ring-model.h"

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

/* A batch sink: takes up to `take` events of a batch, then fails; checks each like sink_fn. */
struct batch_sink {
	struct sink s;
	size_t batches, largest;
	size_t take_at_fail;	/* on the batch that fails: how many it takes first */
	int fail_batch;		/* 1-based batch that fails; 0: never */
};

static int batch_fn(void *opaque, struct ring_event *ev, size_t n, size_t *taken)
{
	struct batch_sink *b = opaque;
	size_t k = n;

	b->batches++;
	b->largest = n > b->largest ? n : b->largest;
	if (b->fail_batch && (int)b->batches == b->fail_batch)
		k = b->take_at_fail < n ? b->take_at_fail : n;
	for (*taken = 0; *taken < k; ++*taken)
		sink_fn(&b->s, &ev[*taken]);
	return k < n ? -EIO : 0;
}

/*
 * The tracer's path: many events go out in batches of at most RING_BATCH;
 * a batch the sink takes only part of rewinds the ring to the first event
 * it left, and the rejections of the events it left count only once they
 * are taken.
 */
static void test_drain_batch(void)
{
	struct test_ring t;
	struct batch_sink b = { .s = { .check_pattern = 1 } };
	const uint64_t n = 3 * RING_BATCH + 17;
	int in_flight;
	long rc;

	tring_init(&t, 1024, 1, 0);
	produce(&t, n);
	rc = ring_drain_batch(&t.view, batch_fn, &b, 0, &in_flight);
	CHECK(rc == (long)n && b.s.count == n && !b.s.out_of_order && !b.s.bad_pattern &&
	      b.batches == 4 && b.largest == RING_BATCH && t.hdr->tail == n && !in_flight,
	      "batch drain: %llu events in %zu batches of at most %d, in order, tail released (rc %ld)",
	      (unsigned long long)n, b.batches, RING_BATCH, rc);
	tring_destroy(&t);

	b = (struct batch_sink){ .s = { .check_pattern = 1 }, .fail_batch = 2, .take_at_fail = 10 };
	tring_init(&t, 1024, 1, 0);
	produce(&t, n);
	t.recs[RING_BATCH + 20].flags = 0xffe0;	/* in the part the failing batch leaves */
	t.recs[RING_BATCH + 3].flags = 0xffe0;	/* in the part it takes */
	rc = ring_drain_batch(&t.view, batch_fn, &b, 0, &in_flight);
	CHECK(rc == -EIO && t.view.pos == RING_BATCH + 10 && t.view.consumed == RING_BATCH + 10 &&
	      t.hdr->tail == RING_BATCH + 10 && t.view.rejected == 1,
	      "batch drain: a partly taken batch rewinds to the first event left (rc %ld, pos %llu, rejected %llu)",
	      rc, (unsigned long long)t.view.pos, (unsigned long long)t.view.rejected);
	rc = ring_drain_batch(&t.view, batch_fn, &b, 0, &in_flight);
	CHECK(rc == (long)(n - RING_BATCH - 10) && b.s.count == n && !b.s.out_of_order &&
	      t.view.rejected == 2 && !b.s.bad_flags,
	      "batch drain: the next drain resumes there, none lost or repeated, each rejection counted once");
	tring_destroy(&t);

	/* An open record ends the batch before it; the events before it go out. */
	b = (struct batch_sink){ .s = { .check_pattern = 1 } };
	tring_init(&t, 1024, 1, 0);
	produce(&t, 300);
	t.recs[280].commit = 0;
	rc = ring_drain_batch(&t.view, batch_fn, &b, 0, &in_flight);
	CHECK(rc == 280 && in_flight && t.view.pos == 280 && b.s.count == 280,
	      "batch drain: stops at a record in flight, the %d before it handed on (rc %ld)", 280, rc);
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
	t.recs[1].flags = 0xffee;
	t.recs[2].flags = 0xffef;
	t.recs[3].flags = VT_REC_FLAG_IRQS_OFF;
	rc = drain(&t, &s, 0, NULL);
	CHECK(rc == 4 && !s.bad_flags, "unknown flag bits never reach the sink");
	CHECK(t.view.rejected == 2, "... and count as rejected values (%llu)", (unsigned long long)t.view.rejected);
	tring_destroy(&t);
}

/*
 * The task fields: a task needs a pointer and a pid a kernel could give;
 * comm is cut at 15 bytes and anything unprintable shown as '?'; fields the
 * flags do not claim are zero.
 */
struct ev_log { struct ring_event ev[8]; unsigned n; };

static int log_fn(void *opaque, const struct ring_event *ev)
{
	struct ev_log *l = opaque;

	if (l->n < 8)
		l->ev[l->n] = *ev;
	l->n++;
	return 0;
}

static void test_task_fields(void)
{
	struct test_ring t;
	struct ev_log log = { .n = 0 };
	int in_flight;
	long rc;

	tring_init(&t, 64, 1, 0);
	produce(&t, 6);
	/* 0: a good task. */
	t.recs[0].flags = VT_REC_FLAG_TASK | VT_REC_FLAG_CTX;
	t.recs[0].task = 0xffff888001234000ull;
	t.recs[0].pid = 42;
	t.recs[0].preempt = 0x10001;
	memcpy(t.recs[0].comm, "sysloop\0garbage", 16);
	/* 1: a task without a pointer. */
	t.recs[1].flags = VT_REC_FLAG_TASK | VT_REC_FLAG_NEED_RESCHED;
	t.recs[1].pid = 7;
	/* 2: a pid no kernel gives. */
	t.recs[2].flags = VT_REC_FLAG_TASK;
	t.recs[2].task = 0xffff888001234000ull;
	t.recs[2].pid = -5;
	/* 3: comm unterminated and unprintable. */
	t.recs[3].flags = VT_REC_FLAG_TASK;
	t.recs[3].task = 0xffff888001234000ull;
	t.recs[3].pid = 9;
	memcpy(t.recs[3].comm, "ab" "\x01" "\xff" "cdefghijklmnop", 16);
	/* 4: no task claimed, fields left over from an older record. */
	t.recs[4].flags = 0;
	t.recs[4].task = 0xffff888001234000ull;
	t.recs[4].pid = 11;
	t.recs[4].preempt = 3;
	memcpy(t.recs[4].comm, "leftover", 9);
	rc = ring_drain(&t.view, log_fn, &log, 0, &in_flight);
	CHECK(rc == 6 && log.n == 6, "task fields: every record reaches the sink (rc %ld)", rc);
	CHECK(log.ev[0].pid == 42 && !strcmp(log.ev[0].comm, "sysloop") && log.ev[0].preempt == 0x10001 &&
	      (log.ev[0].flags & VT_REC_FLAG_TASK), "task fields: a good task arrives as written, comm cut at its NUL");
	CHECK(!(log.ev[1].flags & (VT_REC_FLAG_TASK | VT_REC_FLAG_NEED_RESCHED)) && !log.ev[1].pid,
	      "task fields: no pointer, no task (nor its need-resched flag)");
	CHECK(!(log.ev[2].flags & VT_REC_FLAG_TASK) && !log.ev[2].pid && !log.ev[2].task,
	      "task fields: a negative pid is no task");
	CHECK((log.ev[3].flags & VT_REC_FLAG_TASK) && !strcmp(log.ev[3].comm, "ab??cdefghijklm"),
	      "task fields: comm cut at 15 bytes, unprintable bytes shown as '?' (%s)", log.ev[3].comm);
	CHECK(!log.ev[4].task && !log.ev[4].pid && !log.ev[4].comm[0] && !log.ev[4].preempt,
	      "task fields: what the flags do not claim is zero");
	CHECK(t.view.rejected == 2, "task fields: the two bad tasks count as rejected (%llu)",
	      (unsigned long long)t.view.rejected);
	tring_destroy(&t);
}

/*
 * --graph's fields: an exit's return value and entry time come from the
 * argument slots, an entry time after the exit is clamped to it, depths
 * past the shadow stack are clamped, an exit cannot be an entry too, and
 * a record that is neither has depth 0. The unhooked count is taken while
 * it moves forward and stays within head.
 */
static void test_graph_fields(void)
{
	struct test_ring t;
	struct ev_log log = { .n = 0 };
	struct sink s = { 0 };
	int in_flight;
	long rc;

	tring_init(&t, 64, 1, 0);
	produce(&t, 5);
	/* 0: a good exit. */
	t.recs[0].flags = VT_REC_FLAG_EXIT;
	t.recs[0].args[0] = 0xffffffea;
	t.recs[0].args[1] = t.recs[0].tsc - 1;
	t.recs[0].depth = 3;
	/* 1: an exit that began after it ended, at a depth no stack has. */
	t.recs[1].flags = VT_REC_FLAG_EXIT;
	t.recs[1].args[1] = t.recs[1].tsc + 1000;
	t.recs[1].depth = VT_SHADOW_FRAMES;
	/* 2: an exit that claims arguments and a hook. */
	t.recs[2].flags = VT_REC_FLAG_EXIT | VT_REC_FLAG_ARGS | VT_REC_FLAG_HOOKED;
	t.recs[2].args[0] = 5;
	t.recs[2].depth = 1;
	/* 3: a hooked entry with its arguments. */
	t.recs[3].flags = VT_REC_FLAG_HOOKED | VT_REC_FLAG_ARGS;
	t.recs[3].args[0] = 77;
	t.recs[3].depth = 2;
	/* 4: neither: its depth field is left over. */
	t.recs[4].flags = 0;
	t.recs[4].depth = 9;
	rc = ring_drain(&t.view, log_fn, &log, 0, &in_flight);
	CHECK(rc == 5 && log.n == 5, "graph fields: every record reaches the sink (rc %ld)", rc);
	CHECK(log.ev[0].retval == 0xffffffea && log.ev[0].calltime == log.ev[0].tsc - 1 && log.ev[0].depth == 3 &&
	      !log.ev[0].args[0], "graph fields: an exit's return value, entry time and depth as written, no arguments");
	CHECK(log.ev[1].calltime == log.ev[1].tsc && log.ev[1].depth == VT_SHADOW_FRAMES - 1,
	      "graph fields: an entry time after the exit and a depth past the stack are clamped");
	CHECK(log.ev[2].flags == VT_REC_FLAG_EXIT && log.ev[2].retval == 5 && log.ev[2].depth == 1,
	      "graph fields: an exit keeps only its exit flag");
	CHECK(log.ev[3].flags == (VT_REC_FLAG_HOOKED | VT_REC_FLAG_ARGS) && log.ev[3].args[0] == 77 &&
	      log.ev[3].depth == 2 && !log.ev[3].retval && !log.ev[3].calltime,
	      "graph fields: a hooked entry keeps its arguments and depth, no return fields");
	CHECK(!log.ev[4].depth, "graph fields: a record that is neither has depth 0");
	CHECK(t.view.rejected == 3, "graph fields: three bad values rejected (%llu)",
	      (unsigned long long)t.view.rejected);

	t.hdr->unhooked = 4;
	drain(&t, &s, 0, NULL);
	CHECK(t.view.unhooked == 4, "the stub's unhooked count is taken");
	t.hdr->unhooked = 2;
	drain(&t, &s, 0, NULL);
	CHECK(t.view.unhooked == 4 && t.view.rejected == 4, "an unhooked count going backwards is rejected");
	t.hdr->unhooked = t.hdr->head + 1;
	drain(&t, &s, 0, NULL);
	CHECK(t.view.unhooked == 4 && t.view.rejected == 5, "more unhooked returns than entries are rejected");
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
	t.view.doorbells = 7;	/* each drop follows a doorbell */
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

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_guards();
	test_lossless_basic();
	test_in_flight();
	test_sink_error();
	test_drain_batch();
	test_overwrite_accounting();
	test_overwrite_race();
	test_head_backwards();
	test_head_far_ahead(1);
	test_head_far_ahead(0);
	test_other_laps(1);
	test_other_laps(0);
	test_unknown_flags();
	test_task_fields();
	test_graph_fields();
	test_lossless_tail_rewritten();
	test_dropped_backwards();
	test_garbage(1);
	test_garbage(0);
	test_scribbler(1);
	test_scribbler(0);
	return check_exit();
}
