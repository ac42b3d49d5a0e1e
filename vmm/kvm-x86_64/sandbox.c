// SPDX-License-Identifier: GPL-2.0
/*
 * The x86_64 KVM calls of a running VM (arch_sandbox_ioctls): registers
 * and the FPU state for the compat assists and the flight recorder, MSRs
 * (kvm:msr completes the guest's writes, the clock reads the TSC), NMIs
 * (--hang), the TSC's frequency and the local APIC (kvm:cpuid, diagnoses).
 */
#include <linux/kvm.h>

#include "vmm/kvm/arch.h"

static const unsigned long x86_sandbox_ioctls[] = {
	KVM_GET_REGS, KVM_SET_REGS, KVM_GET_SREGS, KVM_SET_SREGS,
	KVM_GET_FPU, KVM_SET_FPU, KVM_GET_XSAVE, KVM_SET_XSAVE, KVM_GET_XCRS,
	KVM_SET_XCRS, KVM_GET_VCPU_EVENTS, KVM_SET_VCPU_EVENTS,
	KVM_NMI, KVM_GET_MSRS, KVM_SET_MSRS, KVM_GET_TSC_KHZ, KVM_GET_LAPIC,
};

const unsigned long *arch_sandbox_ioctls(size_t *n)
{
	*n = sizeof(x86_sandbox_ioctls) / sizeof(x86_sandbox_ioctls[0]);
	return x86_sandbox_ioctls;
}
