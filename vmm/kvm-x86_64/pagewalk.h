/* SPDX-License-Identifier: GPL-2.0 */
/* Guest-virtual memory through the guest's own page tables (pagewalk.c). */
#ifndef ARCH_X86_64_PAGEWALK_H
#define ARCH_X86_64_PAGEWALK_H

#include <linux/kvm.h>
#include <stddef.h>
#include <stdint.h>

struct vm;

/*
 * Guest-virtual to guest-physical through the guest's own page tables
 * (4- or 5-level, large pages), as a supervisor access. Returns 0,
 * -EFAULT (not present), -EACCES (a write to a read-only page with
 * CR0.WP set) or -EINVAL (a non-canonical address: #GP, not #PF). A write
 * marks the leaf entry accessed and dirty.
 */
int pagewalk_translate(struct vm *vm, const struct kvm_sregs *sregs, uint64_t gva,
		       int write, uint64_t *gpa);
/* Whether all of [gva, gva+len) is reachable; on failure *fault is the first bad address. */
int pagewalk_check(struct vm *vm, const struct kvm_sregs *sregs, uint64_t gva, size_t len,
		   int write, uint64_t *fault);
/*
 * The #PF error code of a failed supervisor access (rc from
 * pagewalk_translate or pagewalk_check): P=1 only for a protection
 * violation, W for a write.
 */
uint32_t pagewalk_pf_error(int rc, int write);
/*
 * Copies between host and guest-virtual memory, page by page; -EFAULT if
 * any of it is unreachable, in which case a write has written nothing.
 */
int pagewalk_read(struct vm *vm, const struct kvm_sregs *sregs, uint64_t gva, void *buf, size_t len);
int pagewalk_write(struct vm *vm, const struct kvm_sregs *sregs, uint64_t gva, const void *buf, size_t len);

#endif
