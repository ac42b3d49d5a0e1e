/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmmtrace's own KVM VMM as a host of the boundary in vmm/host/host.h: each
 * operation is the VM core's or the host arch's, each hook a translation of
 * the core's vm_hooks.
 */
#ifndef VMM_KVM_HOST_KVM_H
#define VMM_KVM_HOST_KVM_H

#include "vmm/host/host.h"
#include "vmm/kvm/vm.h"

struct host_kvm {
	struct host h;
	struct vm *vm;
	struct host_hooks hooks;
	int doorbell_registered;
};

/* After the kernel is loaded, before the vCPUs exist; vm outlives it. */
void host_kvm_init(struct host_kvm *hk, struct vm *vm);

#endif
