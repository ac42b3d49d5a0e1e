/* SPDX-License-Identifier: GPL-2.0 */
/* Instruction assists of the x86_64 compatibility layer (compat-insn.c). */
#ifndef ARCH_X86_64_COMPAT_INSN_H
#define ARCH_X86_64_COMPAT_INSN_H

#include <linux/kvm.h>
#include <stdint.h>

struct vcpu;

enum compat_assist {
	ASSIST_FWAIT, ASSIST_INT3, ASSIST_LDMXCSR, ASSIST_STMXCSR, ASSIST_FNSTSW,
	ASSIST_FLDCW, ASSIST_FNCLEX, ASSIST_EMMS, ASSIST_LSL, ASSIST_VERW, ASSIST_XGETBV, ASSIST_XSETBV,
	ASSIST_XSAVE, ASSIST_XRSTOR,
	ASSIST_FAULT,	/* an assisted instruction raised #GP or #PF in the guest */
	ASSIST_COUNT,
};

/* A decoded instruction (compat-insn.c). */
struct insn {
	uint8_t b[16];
	unsigned avail, pos;
	int rex, seg_fs, seg_gs, addr32, simd_prefix;
	uint8_t modrm;
	int has_modrm;
	int32_t disp;
	int rip_rel;
	int base, index, scale;	/* -1: none */
};

/* What an assist works on: the vCPU's registers and the failing instruction. */
struct assist_ctx {
	struct vcpu *vcpu;
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	struct insn in;
};

/*
 * Decodes bytes as one of the instructions the layer completes (at most
 * the first 15 count): 0 with *in filled (in->pos is the instruction's
 * length) and *assist, or -ENOTSUP. Pure: reads no guest state.
 */
int compat_insn_decode(const uint8_t *bytes, unsigned len, struct insn *in, unsigned *assist);
/*
 * The linear address of a decoded instruction's memory operand; a
 * RIP-relative one counts from the instruction's end (in->pos).
 */
uint64_t compat_insn_address(const struct insn *in, const struct kvm_regs *r,
			    const struct kvm_sregs *s);
/*
 * Injects the exception the instruction raises instead of completing
 * (vector nr; CR2 for a #PF), RIP left on it. Returns 1, or -errno.
 */
int compat_insn_fault(struct assist_ctx *c, unsigned nr, uint32_t error, uint64_t cr2);

/*
 * compat-xsave.c: xgetbv/xsetbv, and xsave/xrstor. Return 0 (done), 1 (an
 * exception was injected instead) or -errno.
 */
int compat_xsave_xcr(struct assist_ctx *c, unsigned assist);
int compat_xsave_run(struct assist_ctx *c, unsigned assist);

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
