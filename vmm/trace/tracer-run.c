// SPDX-License-Identifier: GPL-2.0
/*
 * The tracer while the guest runs: the consumer thread, the doorbell, and
 * the guest's boot milestones. Around ftrace_init (DESIGN.md §3) every held
 * slot goes back to the compiler's call __fentry__, which ftrace_init checks
 * and turns into a NOP; when it returns the slots call the stub again. When
 * the guest frees its init text, the slots there are forgotten. Each change
 * happens with every other vCPU paused.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <urcu/urcu-memb.h>

#include "vmm/util/log.h"
#include "vmm/trace/tracer-int.h"

/*
 * The consumer's round: every 20 ms while the guest is quiet, halved
 * (down to 1 ms) after each round that found a ring more than a quarter
 * full or followed a doorbell, doubled back after rounds that found every
 * ring under 1/16. A ring that fills between two rounds rings the
 * doorbell, and the vCPU waits for the drain: under QEMU TCG a doorbell
 * costs milliseconds, so a guest calling a traced function every
 * microsecond rang one per round with a fixed 20 ms (docs/PERFORMANCE.md).
 */
#define CONSUMER_PERIOD_NS (20 * 1000 * 1000L)
#define CONSUMER_PERIOD_MIN_NS (1000 * 1000L)

/* Drains every ring; *most (if not NULL) gets the largest share of a ring drained, in 1/64ths. */
static int tracer_drain_rings(struct tracer *t, int final, unsigned *most)
{
	int any = 0, in_flight;

	if (most)
		*most = 0;
	for (unsigned i = 0; i < t->nrings; i++) {
		struct ring_view *r = &t->rings[i];
		uint64_t nrecords;
		long n;

		pthread_mutex_lock(&r->lock);
		n = ring_drain_batch(r, tracer_route, t, final, &in_flight);
		nrecords = r->nrecords;	/* tracer_rings_move changes it under the lock */
		pthread_mutex_unlock(&r->lock);
		any |= in_flight;
		if (most && n > 0 && nrecords) {
			uint64_t share = (uint64_t)n * 64 / nrecords;

			*most = share > *most ? (unsigned)share : *most;
		}
	}
	/* A VM event between its TSC read and its buffers counts as a record in flight. */
	return any | (atomic_load(&t->vmev_inflight) != 0);
}

int tracer_drain_all(struct tracer *t, int final)
{
	return tracer_drain_rings(t, final, NULL);
}

/* The stub found its lossless ring full: drain it before this vCPU goes on. */
void tracer_doorbell(void *opaque, uint32_t ring)
{
	struct tracer *t = opaque;
	int in_flight;

	if (ring >= t->nrings) {
		atomic_fetch_add(&t->bad_doorbells, 1);	/* the guest's value: never an index */
		return;
	}
	atomic_fetch_add(&t->doorbells, 1);
	pthread_mutex_lock(&t->rings[ring].lock);
	t->rings[ring].doorbells++;
	ring_drain_batch(&t->rings[ring], tracer_route, t, 0, &in_flight);
	pthread_mutex_unlock(&t->rings[ring].lock);
}

void tracer_flush_clients(struct tracer *t, int all)
{
	urcu_memb_read_lock();
	for (unsigned i = 0; i < PATCH_MAX_CLIENTS; i++) {
		struct trace_client *c = rcu_dereference(t->clients[i]);

		if (c)
			trace_buf_flush(&c->buf, all, tracer_client_emit, c);
	}
	urcu_memb_read_unlock();
}

static void tracer_round(struct tracer *t, uint64_t before, int in_flight)
{
	urcu_memb_read_lock();
	for (unsigned i = 0; i < PATCH_MAX_CLIENTS; i++) {
		struct trace_client *c = rcu_dereference(t->clients[i]);

		if (c) {
			trace_buf_round(&c->buf, before, in_flight);
			trace_buf_flush(&c->buf, 0, tracer_client_emit, c);
			tracer_client_flush(c);
		}
	}
	urcu_memb_read_unlock();
}

/*
 * The boot command's output failed (disk full, file too large, I/O error):
 * the guest is stopped cleanly, once. From here, outside the round, since a
 * stop pauses the vCPUs and a vCPU at a doorbell may wait for a client's
 * buffer lock the round holds.
 */
static void tracer_check_output(struct tracer *t)
{
	int rc = tracer_client_error(t->boot_client);
	char msg[384];

	if (!rc || t->output_stopped)
		return;
	t->output_stopped = 1;
	tracer_output_msg(t, rc, msg, sizeof(msg));
	t->host->ops->stop(t->host, HOST_NO_CPU, VM_STOP_HOST_FAILURE, msg);
}

static void *tracer_consumer(void *arg)
{
	struct tracer *t = arg;
	struct timespec period = { 0, CONSUMER_PERIOD_NS };
	uint64_t doorbells = 0;

	tracer_rcu_register();
	while (!atomic_load(&t->consumer_stop)) {
		uint64_t before = t->round_max, rung;
		unsigned most;
		int in_flight;

		nanosleep(&period, NULL);
		t->round_max = atomic_load(&t->max_tsc);
		most = 0;
		in_flight = t->cfg.drain_at_doorbells ? 0 : tracer_drain_rings(t, 0, &most);
		rung = atomic_load(&t->doorbells);	/* during the sleep and the drain */
		if (most > 64 / 4 || rung != doorbells)
			period.tv_nsec = period.tv_nsec / 2 > CONSUMER_PERIOD_MIN_NS ? period.tv_nsec / 2
										 : CONSUMER_PERIOD_MIN_NS;
		else if (most < 64 / 16)
			period.tv_nsec = period.tv_nsec * 2 < CONSUMER_PERIOD_NS ? period.tv_nsec * 2 : CONSUMER_PERIOD_NS;
		doorbells = rung;
		tracer_round(t, before, in_flight);
		tracer_check_output(t);
	}
	tracer_rcu_unregister();
	return NULL;
}

int tracer_consumer_start(struct tracer *t, struct errbuf *err)
{
	int rc = pthread_create(&t->consumer, NULL, tracer_consumer, t);

	if (rc)
		return err_set(err, rc, "cannot start the trace consumer: %s", strerror(rc));
	t->consumer_running = 1;
	return 0;
}

void tracer_consumer_stop(struct tracer *t)
{
	if (!t->consumer_running)
		return;
	atomic_store(&t->consumer_stop, 1);
	pthread_join(t->consumer, NULL);
	t->consumer_running = 0;
}

int tracer_set_breakpoints(struct tracer *t, unsigned cpu, struct errbuf *err)
{
	uint64_t bp[4];
	unsigned n = 0;

	if (t->stop_at)
		bp[n++] = t->stop_at;
	if (t->emergency_restart)
		bp[n++] = t->emergency_restart;
	if (t->free_initmem && !t->init_dropped)
		bp[n++] = t->free_initmem;
	/*
	 * Every vCPU: the boot CPU calls ftrace_init, and it is not always
	 * vCPU 0 (riscv64's OpenSBI lets the harts draw lots for it); the
	 * others do not run yet.
	 */
	if (t->ps.phase == PATCH_PHASE_EARLY && t->ftrace_init)
		bp[n++] = t->ftrace_init;
	if (t->ps.phase == PATCH_PHASE_FTRACE_INIT)
		bp[n++] = t->ftrace_ret;
	/*
	 * The guest's ftrace changing code: its entry on every vCPU, then its
	 * return on every vCPU (arm64's may sleep inside and come back on
	 * another CPU; its ftrace_lock lets no other task there meanwhile).
	 */
	if (t->ps.phase == PATCH_PHASE_RUNNING && t->guest_ftrace)
		bp[n++] = t->guest_ftrace;
	if (t->ps.phase == PATCH_PHASE_GUEST_FTRACE)
		bp[n++] = t->guest_ftrace_ret;
	return t->host->ops->set_breakpoints(t->host, cpu, bp, n, err);
}

/* A new phase's breakpoints on every vCPU but self (which re-arms after the change), all paused. */
static int tracer_rearm_others(struct tracer *t, unsigned self)
{
	struct errbuf err;

	for (unsigned i = 0; i < t->host->ncpus; i++)
		if (i != self && tracer_set_breakpoints(t, i, &err)) {
			log_warn("vCPU %u: %s", i, err.msg);
			return -EIO;
		}
	return 0;
}

static int handoff_enter_fn(struct tracer *t, void *arg)
{
	unsigned cpu = *(const unsigned *)arg;
	uint64_t sp;

	t->early_events = atomic_load(&t->events);
	/*
	 * A host that cannot read the guest's counter now (QEMU's gdbstub shows
	 * no CNTVCT or time): just after the newest event, every ring being
	 * drained; with none yet, a boundary before every event.
	 */
	if (t->host->ops->read_clock(t->host, cpu, &t->ftrace_init_tsc) || !t->ftrace_init_tsc)
		t->ftrace_init_tsc = atomic_load(&t->max_tsc) + 1;
	patch_restore_all(&t->ps, &t->handoff_restore);
	tracer_rings_move(t);
	if (t->host->ops->entry_frame(t->host, cpu, &sp, &t->ftrace_ret))
		return -EFAULT;
	t->ps.phase = PATCH_PHASE_FTRACE_INIT;
	return 0;
}

static int handoff_leave_fn(struct tracer *t, void *arg)
{
	unsigned cpu = *(const unsigned *)arg;

	t->ps.phase = PATCH_PHASE_RUNNING;
	t->handed_over = 1;
	/* From here the guest's ftrace may change code on any vCPU. */
	if (t->guest_ftrace)
		tracer_rearm_others(t, cpu);
	return 0;
}

/*
 * The guest's ftrace is about to change code (ftrace_modify_all_code): the
 * slots we hold go back to its own bytes, which it checks before writing
 * (x86_64's ftrace_verify_code, the others' ftrace_modify_code), and stay
 * its own until it returns; a change set meanwhile waits for that.
 */
static int guest_ftrace_enter_fn(struct tracer *t, void *arg)
{
	unsigned cpu = *(const unsigned *)arg;
	uint64_t sp;

	if (t->host->ops->entry_frame(t->host, cpu, &sp, &t->guest_ftrace_ret))
		return -EFAULT;
	patch_release_all(&t->ps, &t->guest_release);
	t->ps.phase = PATCH_PHASE_GUEST_FTRACE;
	tracer_rearm_others(t, cpu);
	return 0;
}

/* It returned: our calls back in every held slot, through a chained entry where it enabled the slot. */
static int guest_ftrace_leave_fn(struct tracer *t, void *arg)
{
	t->ps.phase = PATCH_PHASE_RUNNING;
	t->guest_ftrace_changes++;
	tracer_rearm_others(t, *(const unsigned *)arg);
	return 0;
}

static int free_init_fn(struct tracer *t, void *arg)
{
	(void)arg;
	t->init_dropped = patch_drop_init(&t->ps);
	if (!t->init_dropped)
		t->init_dropped = 1;	/* nothing to drop: still, done */
	return 0;
}

/*
 * After a milestone: this vCPU gets the breakpoints of the new phase; the
 * others keep theirs, and a stale hit re-arms them then.
 */
static void tracer_rearm(struct tracer *t, unsigned cpu)
{
	struct errbuf err;

	if (tracer_set_breakpoints(t, cpu, &err))
		t->host->ops->request_stop(t->host, VM_STOP_HOST_FAILURE, err.msg);
}

/* Inside the stub, or at its doorbell (which the QEMU host may put below an arm64 stub's page). */
bool tracer_pc_in_stub(const struct tracer *t, uint64_t pc)
{
	return (pc >= t->stub_entry && pc < t->stub.code_va + t->stub.code_size) ||
	       (t->doorbell_pc && pc >= t->doorbell_pc && pc < t->doorbell_pc + 8);
}

void tracer_breakpoint(void *opaque, unsigned cpu, uint64_t pc)
{
	struct tracer *t = opaque;
	struct patch_result res;
	char msg[512];

	if (t->emergency_restart && pc == t->emergency_restart) {
		snprintf(msg, sizeof(msg), "guest kernel panic: vCPU %u called "
			 "emergency_restart() (a panic with panic=-1 reboots through it)", cpu);
		t->host->ops->stop(t->host, (int)cpu, VM_STOP_GUEST_PANIC, msg);
		return;
	}
	if (t->stop_at && pc == t->stop_at) {
		snprintf(msg, sizeof(msg), "stopped at %s (--stop-at) on vCPU %u", t->cfg.stop_at, cpu);
		t->host->ops->stop(t->host, (int)cpu, VM_STOP_REQUESTED, msg);
	} else if (t->ps.phase == PATCH_PHASE_EARLY && pc == t->ftrace_init) {
		if (tracer_change(t, (int)cpu, handoff_enter_fn, &cpu, &res))
			t->host->ops->request_stop(t->host, VM_STOP_HOST_FAILURE,
						   "cannot read ftrace_init's return address");
		log_info("guest entered ftrace_init: %zu slots restored, %zu foreign, %zu not written",
			 t->handoff_restore.written, t->handoff_restore.foreign, t->handoff_restore.failed);
		tracer_rearm(t, cpu);
	} else if (t->ps.phase == PATCH_PHASE_FTRACE_INIT && pc == t->ftrace_ret) {
		tracer_change(t, (int)cpu, handoff_leave_fn, &cpu, &t->handoff_enable);
		log_info("ftrace_init returned: %zu slots re-enabled, %zu foreign, %zu not written",
			 t->handoff_enable.written, t->handoff_enable.foreign, t->handoff_enable.failed);
		tracer_rearm(t, cpu);
	} else if (t->ps.phase == PATCH_PHASE_RUNNING && t->guest_ftrace && pc == t->guest_ftrace) {
		if (tracer_change(t, (int)cpu, guest_ftrace_enter_fn, &cpu, &res))
			t->host->ops->request_stop(t->host, VM_STOP_HOST_FAILURE,
						   "cannot read the return address of the guest's ftrace_modify_all_code");
		log_info("the guest's ftrace changes code on vCPU %u: %zu held slots given back to it, "
			 "%zu foreign, %zu not written", cpu, t->guest_release.written, t->guest_release.foreign,
			 t->guest_release.failed);
		tracer_rearm(t, cpu);
	} else if (t->ps.phase == PATCH_PHASE_GUEST_FTRACE && pc == t->guest_ftrace_ret) {
		tracer_change(t, (int)cpu, guest_ftrace_leave_fn, &cpu, &t->guest_retake);
		log_info("the guest's ftrace is done: %zu slots taken again (%zu on to its tracer), %zu given to it, "
			 "%zu foreign, %zu not written", t->guest_retake.written, t->guest_retake.chained,
			 t->guest_retake.given, t->guest_retake.foreign, t->guest_retake.failed);
		if (t->guest_retake.given && t->ps.chain.n)
			log_warn("%zu slots given to the guest's ftrace: more than %u targets of its calls at once",
				 t->guest_retake.given, t->ps.chain.n);
		tracer_rearm(t, cpu);
	} else if (t->free_initmem && pc == t->free_initmem && !t->init_dropped) {
		tracer_change(t, (int)cpu, free_init_fn, NULL, &res);
		log_info("guest frees its init text: %zu init slots forgotten", t->init_dropped);
		tracer_rearm(t, cpu);
	} else {
		/* A stale hit: re-arm only what this vCPU still needs. */
		log_warn("unexpected breakpoint at 0x%llx on vCPU %u", (unsigned long long)pc, cpu);
		tracer_rearm(t, cpu);
	}
}
