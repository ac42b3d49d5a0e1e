/* SPDX-License-Identifier: GPL-2.0 */
/* x86_64-internal interfaces between cpu.c, compat.c and pagewalk.c. */
#ifndef ARCH_X86_64_CPU_H
#define ARCH_X86_64_CPU_H

#include <linux/kvm.h>
#include <stdint.h>

struct vm;
struct vcpu;

/* compat.c: CPUID adjustments of the compatibility layer. */
void compat_cpuid_adjust(struct vm *vm, struct kvm_cpuid_entry2 *e);

/*
 * pagewalk.c: guest-virtual to guest-physical through the guest's own page
 * tables (4- or 5-level, large pages). Returns 0, -EFAULT (not present) or
 * -EACCES (a write to a read-only page with CR0.WP set). A write marks the
 * leaf entry accessed and dirty.
 */
int pagewalk_translate(struct vm *vm, const struct kvm_sregs *sregs, uint64_t gva,
		       int write, uint64_t *gpa);
/* Whether all of [gva, gva+len) is reachable; on failure *fault is the first bad address. */
int pagewalk_check(struct vm *vm, const struct kvm_sregs *sregs, uint64_t gva, size_t len,
		   int write, uint64_t *fault);
/* Copies between host and guest-virtual memory, page by page. */
int pagewalk_read(struct vm *vm, const struct kvm_sregs *sregs, uint64_t gva, void *buf, size_t len);
int pagewalk_write(struct vm *vm, const struct kvm_sregs *sregs, uint64_t gva, const void *buf, size_t len);

#endif
