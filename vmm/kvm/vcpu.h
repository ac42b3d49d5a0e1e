/* SPDX-License-Identifier: GPL-2.0 */
/* vCPUs: one thread each, running KVM_RUN and dispatching exits. */
#ifndef VMM_VCPU_H
#define VMM_VCPU_H

#include <linux/kvm.h>
#include <pthread.h>
#include <stddef.h>

#include "vmm/util/error.h"

struct vm;

enum vcpu_state { VCPU_NEW, VCPU_IN_GUEST, VCPU_IN_VMM, VCPU_PAUSED, VCPU_STOPPED };

struct vcpu {
	struct vm *vm;
	unsigned id;
	int fd;
	struct kvm_run *run;
	size_t run_size;
	pthread_t thread;
	int thread_started;
	_Atomic int state;		/* enum vcpu_state, for status reports */
	_Atomic int nmi_pending;	/* set by vm_inject_nmi, taken by the vCPU's thread */
	_Atomic unsigned long nmis;	/* NMIs handed to KVM */
	_Atomic unsigned long nmis_in_stub;	/* ... while the vCPU was inside the tracer's stub */
	_Atomic unsigned long runs;	/* KVM_RUN calls begun: a resumed vCPU ran once this moves */
};

const char *vcpu_state_name(int state);

int vcpu_create(struct vm *vm, struct vcpu *vcpu, unsigned id, struct errbuf *err);
void vcpu_destroy(struct vcpu *vcpu);
int vcpu_start(struct vcpu *vcpu, struct errbuf *err);
/* Makes the vCPU leave KVM_RUN soon (immediate_exit + signal). */
void vcpu_kick(struct vcpu *vcpu);
void vcpu_join(struct vcpu *vcpu);
/* The kick signal must have a handler before any vCPU runs. */
int vcpu_init_signals(struct errbuf *err);

#endif
