// SPDX-License-Identifier: GPL-2.0
/*
 * The tracer while the guest runs: the consumer thread, the doorbell, and
 * the hand-over around the guest's ftrace_init (DESIGN.md §3): on entry
 * every held slot goes back to the compiler's call __fentry__, which
 * ftrace_init checks and turns into a NOP; on return the slots call the stub
 * again. Both changes happen with every other vCPU paused.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "arch/arch.h"
#include "vmm/cmd.h"
#include "vmm/log.h"
#include "vmm/tracer-int.h"
#include "vmm/vcpu.h"
#include "vmm/vm.h"

#define CONSUMER_PERIOD_NS (20 * 1000 * 1000)

int tracer_drain_all(struct tracer *t, int final)
{
	int any = 0, in_flight;

	for (unsigned i = 0; i < t->nrings; i++) {
		struct ring_view *r = &t->rings[i];

		pthread_mutex_lock(&r->lock);
		ring_drain(r, trace_buf_add, &t->buf, final, &in_flight);
		pthread_mutex_unlock(&r->lock);
		any |= in_flight;
	}
	return any;
}

/* The stub found its lossless ring full: drain it before this vCPU goes on. */
void tracer_doorbell(void *opaque, uint16_t port, int is_write, uint8_t *data, unsigned size)
{
	struct tracer *t = opaque;
	uint32_t ring = 0;
	int in_flight;

	(void)port;
	if (!is_write) {
		memset(data, 0xff, size);
		return;
	}
	memcpy(&ring, data, size < 4 ? size : 4);
	if (ring >= t->nrings) {
		atomic_fetch_add(&t->bad_doorbells, 1);	/* the guest's value: never an index */
		return;
	}
	atomic_fetch_add(&t->doorbells, 1);
	pthread_mutex_lock(&t->rings[ring].lock);
	ring_drain(&t->rings[ring], trace_buf_add, &t->buf, 0, &in_flight);
	pthread_mutex_unlock(&t->rings[ring].lock);
}

static void *tracer_consumer(void *arg)
{
	struct tracer *t = arg;
	struct timespec period = { 0, CONSUMER_PERIOD_NS };

	while (!atomic_load(&t->consumer_stop)) {
		uint64_t before = t->round_max;
		int in_flight;

		nanosleep(&period, NULL);
		in_flight = tracer_drain_all(t, 0);
		trace_buf_round(&t->buf, before, in_flight);
		pthread_mutex_lock(&t->buf.lock);
		t->round_max = t->buf.max_tsc;
		pthread_mutex_unlock(&t->buf.lock);
		trace_buf_flush(&t->buf, 0, trace_text_event, &t->text);
	}
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

int tracer_set_breakpoints(struct tracer *t, struct vcpu *vcpu, struct errbuf *err)
{
	uint64_t bp[2];
	unsigned n = 0;

	if (t->stop_at)
		bp[n++] = t->stop_at;
	if (vcpu->id == 0 && atomic_load(&t->phase) == PHASE_EARLY && t->ftrace_init)
		bp[n++] = t->ftrace_init;
	if (vcpu->id == 0 && atomic_load(&t->phase) == PHASE_FTRACE_INIT)
		bp[n++] = t->ftrace_ret;
	return arch_vcpu_set_breakpoints(vcpu, bp, n, err);
}

static void tracer_handoff_enter(struct tracer *t, struct vcpu *vcpu)
{
	struct errbuf err;
	uint64_t sp;

	vm_pause(t->vm, vcpu);
	tracer_drain_all(t, 0);
	t->early_events = t->buf.emitted + t->buf.count;
	patch_restore(&t->ps, &t->handoff_restore);
	if (arch_vcpu_entry_frame(vcpu, &sp, &t->ftrace_ret)) {
		vm_resume(t->vm);
		vm_request_stop(t->vm, EXIT_FAILURE_RUN, "cannot read ftrace_init's return address");
		return;
	}
	atomic_store(&t->phase, PHASE_FTRACE_INIT);
	if (tracer_set_breakpoints(t, vcpu, &err))
		vm_request_stop(t->vm, EXIT_FAILURE_RUN, "%s", err.msg);
	log_info("guest entered ftrace_init: %zu slots restored, %zu foreign",
		 t->handoff_restore.written, t->handoff_restore.foreign);
	vm_resume(t->vm);
}

static void tracer_handoff_leave(struct tracer *t, struct vcpu *vcpu)
{
	struct errbuf err;

	vm_pause(t->vm, vcpu);
	patch_enable(&t->ps, &t->handoff_enable);
	t->handed_over = 1;
	atomic_store(&t->phase, PHASE_RUNNING);
	if (tracer_set_breakpoints(t, vcpu, &err))
		vm_request_stop(t->vm, EXIT_FAILURE_RUN, "%s", err.msg);
	log_info("ftrace_init returned: %zu slots re-enabled, %zu foreign",
		 t->handoff_enable.written, t->handoff_enable.foreign);
	vm_resume(t->vm);
}

void tracer_breakpoint(struct vcpu *vcpu, uint64_t pc)
{
	struct tracer *t = vcpu->vm->tracer;
	struct errbuf err;
	int phase;

	if (!t) {
		vm_request_stop(vcpu->vm, EXIT_FAILURE_RUN, "unexpected breakpoint at 0x%llx",
				(unsigned long long)pc);
		return;
	}
	phase = atomic_load(&t->phase);
	if (t->stop_at && pc == t->stop_at) {
		vm_request_stop(vcpu->vm, EXIT_OK, "stopped at %s (--stop-at) on vCPU %u",
				t->cfg.stop_at, vcpu->id);
	} else if (phase == PHASE_EARLY && pc == t->ftrace_init && vcpu->id == 0) {
		tracer_handoff_enter(t, vcpu);
	} else if (phase == PHASE_FTRACE_INIT && pc == t->ftrace_ret && vcpu->id == 0) {
		tracer_handoff_leave(t, vcpu);
	} else {
		/* Not ours any more (a stale hit): re-arm what this phase needs. */
		log_warn("unexpected breakpoint at 0x%llx on vCPU %u", (unsigned long long)pc, vcpu->id);
		if (tracer_set_breakpoints(t, vcpu, &err))
			vm_request_stop(vcpu->vm, EXIT_FAILURE_RUN, "%s", err.msg);
	}
}
