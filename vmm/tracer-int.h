/* SPDX-License-Identifier: GPL-2.0 */
/* The tracer's state, shared by tracer.c (set-up, output) and tracer-run.c (while the guest runs). */
#ifndef VMM_TRACER_INT_H
#define VMM_TRACER_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "vmm/filter.h"
#include "vmm/mcount.h"
#include "vmm/patch.h"
#include "vmm/ring.h"
#include "vmm/stub.h"
#include "vmm/symtab.h"
#include "vmm/trace-buf.h"
#include "vmm/trace-text.h"
#include "vmm/tracer.h"

enum tracer_phase {
	PHASE_EARLY,		/* slots call the stub instead of __fentry__ */
	PHASE_FTRACE_INIT,	/* inside ftrace_init: slots show their original bytes */
	PHASE_RUNNING,		/* slots call the stub instead of the NOP */
};

struct tracer {
	struct vm *vm;
	struct tracer_config cfg;
	struct symtab syms;
	struct mcount_table mt;
	struct filter filter;
	struct stub_region stub;
	struct patch_set ps;
	unsigned nrings;
	uint64_t nrecords;
	struct ring_view *rings;
	struct trace_buf buf;
	struct trace_text text;
	FILE *out;

	uint64_t stub_entry;
	uint64_t ftrace_init;		/* 0: the kernel has no ftrace to hand over to */
	uint64_t ftrace_ret;
	uint64_t stop_at;
	_Atomic int phase;

	pthread_t consumer;
	int consumer_running;
	atomic_int consumer_stop;
	uint64_t round_max;

	atomic_ulong doorbells;
	atomic_ulong bad_doorbells;
	uint64_t early_events;		/* drained when the guest entered ftrace_init */
	struct patch_result handoff_restore, handoff_enable;
	int handed_over;
};

/* tracer-run.c */
void tracer_doorbell(void *opaque, uint16_t port, int is_write, uint8_t *data, unsigned size);
/* Drains every ring once; returns 1 if a ring stopped at a record in flight. */
int tracer_drain_all(struct tracer *t, int final);
int tracer_consumer_start(struct tracer *t, struct errbuf *err);
void tracer_consumer_stop(struct tracer *t);
/* The breakpoints the current phase needs, on one vCPU. */
int tracer_set_breakpoints(struct tracer *t, struct vcpu *vcpu, struct errbuf *err);

#endif
