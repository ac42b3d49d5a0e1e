/* SPDX-License-Identifier: GPL-2.0 */
/* x86_64-internal interfaces between its files, and what it offers of struct arch_optional. */
#ifndef ARCH_X86_64_CPU_H
#define ARCH_X86_64_CPU_H

#include <linux/kvm.h>
#include <stdint.h>

#include "vmm/host/host-exits.h"
#include "vmm/util/error.h"

struct vm;
struct vcpu;

/* struct arch_optional's (vmm/kvm/arch.h), all of which x86_64 has: compat.c, debug.c, msr.c, cpu.c. */
int x86_compat_detect(void);
const char *x86_compat_assist_name(unsigned assist);
int x86_vcpu_nmi(struct vcpu *vcpu, struct errbuf *err);
int x86_vcpu_nmi_busy(struct vcpu *vcpu);
int x86_vm_msr_intercept(struct vm *vm, const uint32_t (*ranges)[2], unsigned n, struct errbuf *err);
int x86_vcpu_cpuid(struct vcpu *vcpu, struct host_cpuid_leaf *out, unsigned max, unsigned *n);

/* compat.c: CPUID adjustments of the compatibility layer. */
void compat_cpuid_adjust(struct vm *vm, struct kvm_cpuid_entry2 *e);

#endif
