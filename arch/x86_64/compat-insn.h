/* SPDX-License-Identifier: GPL-2.0 */
/* Instruction assists of the x86_64 compatibility layer (compat-insn.c). */
#ifndef ARCH_X86_64_COMPAT_INSN_H
#define ARCH_X86_64_COMPAT_INSN_H

#include <linux/kvm.h>
#include <stdint.h>

struct vcpu;

enum compat_assist {
	ASSIST_FWAIT, ASSIST_INT3, ASSIST_LDMXCSR, ASSIST_STMXCSR, ASSIST_FNSTSW,
	ASSIST_FLDCW, ASSIST_FNCLEX, ASSIST_EMMS, ASSIST_LSL, ASSIST_XGETBV, ASSIST_XSETBV,
	ASSIST_XSAVE, ASSIST_XRSTOR,
	ASSIST_FAULT,	/* an assisted instruction raised #GP or #PF in the guest */
	ASSIST_COUNT,
};

/*
 * Completes the instruction behind an emulation failure, if it is one the
 * layer knows. 0: done, the vCPU may go on; -ENOTSUP: not an assisted
 * instruction (or the layer is off); other -errno: the assist failed.
 */
int compat_insn_assist(struct vcpu *vcpu);
/* The failing instruction's bytes: from KVM's exit data, else guest memory. */
int compat_insn_bytes(struct vcpu *vcpu, const struct kvm_sregs *sregs, uint64_t rip,
		      uint8_t *buf, unsigned *len);

#endif
