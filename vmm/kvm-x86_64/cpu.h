/* SPDX-License-Identifier: GPL-2.0 */
/* x86_64-internal interfaces between cpu.c and compat.c. */
#ifndef ARCH_X86_64_CPU_H
#define ARCH_X86_64_CPU_H

#include <linux/kvm.h>
#include <stdint.h>

struct vm;
struct vcpu;

/* compat.c: CPUID adjustments of the compatibility layer. */
void compat_cpuid_adjust(struct vm *vm, struct kvm_cpuid_entry2 *e);

#endif
