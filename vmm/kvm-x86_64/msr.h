/* SPDX-License-Identifier: GPL-2.0 */
/* MSR accesses the filter brings to the VMM (msr.c). */
#ifndef VMM_X86_64_MSR_H
#define VMM_X86_64_MSR_H

struct vcpu;

/* A KVM_EXIT_X86_RDMSR/WRMSR: completed through KVM, then reported. */
void msr_exit(struct vcpu *vcpu);

#endif
