// SPDX-License-Identifier: GPL-2.0
/*
 * What the tracer asks of an arm64 vCPU: execution breakpoints (KVM's
 * guest debugging with the CPU's breakpoint registers: KVM_EXIT_DEBUG at
 * the address, the guest's own debug state left alone), the stub's
 * doorbell as one of them, the stack pointer and link register at a
 * function's entry, and the guest's virtual counter (CNTVCT_EL0), which
 * the stub stamps its records with.
 */
#include <errno.h>
#include <linux/kvm.h>
#include <string.h>
#include <sys/ioctl.h>

#include "arch/slot.h"
#include "proto/trace.h"
#include "vmm/kvm-arm64/a64.h"
#include "vmm/kvm/arch.h"
#include "vmm/kvm/kvm.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/kvm/vm.h"
#include "vmm/util/log.h"

/*
 * DBGBCR<n>_EL1 for an unlinked address match at EL1 and EL0 (Arm ARM
 * D13.3.2): E (bit 0), PMC = 0b11 (bits 2:1), BAS = 0b1111 (bits 8:5, as
 * AArch64 requires), BT = 0 (address match).
 */
#define A64_BCR_EXEC (1ULL | 3ULL << 1 | 0xfULL << 5)

const struct slot_ops *arch_slot_ops(void)
{
	return &slot_ops_arm64;
}

/*
 * The tracer's breakpoints and the host's own (the stub's doorbell, where
 * the guard page gets mapped), in the CPU's breakpoint registers; the
 * tracer's are kept, for when the host's own change.
 */
int arch_vcpu_set_breakpoints(struct vcpu *vcpu, const uint64_t *addrs, unsigned n, struct errbuf *err)
{
	struct a64_state *s = vcpu->vm->arch_state;
	struct kvm_guest_debug dbg;
	unsigned k = 0, have = s->hw_bps < KVM_ARM_MAX_DBG_REGS ? s->hw_bps : KVM_ARM_MAX_DBG_REGS;
	uint64_t own[2] = { s->doorbell_bp, s->guard.bp };

	memset(&dbg, 0, sizeof(dbg));
	if (n > 4)
		return err_set(err, EINVAL, "at most 4 breakpoints");
	if (addrs != s->bps[vcpu->id]) {
		memcpy(s->bps[vcpu->id], addrs, n * sizeof(*addrs));
		s->nbps[vcpu->id] = n;
	}
	for (unsigned i = 0; i < n + 2; i++) {
		uint64_t va = i < n ? addrs[i] : own[i - n];

		if (!va)
			continue;
		if (va & 3)
			return err_set(err, EINVAL, "a breakpoint at %#llx: not an instruction's address",
				       (unsigned long long)va);
		if (k == have)
			return err_set(err, EOPNOTSUPP, "KVM gives %u breakpoint registers on this CPU; vmmtrace needs %u",
				       have, n + (own[0] != 0) + (own[1] != 0));
		dbg.arch.dbg_bvr[k] = va;
		dbg.arch.dbg_bcr[k++] = A64_BCR_EXEC;
	}
	if (k)
		dbg.control = KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_USE_HW;
	if (ioctl(vcpu->fd, KVM_SET_GUEST_DEBUG, &dbg))
		return err_set(err, errno, "vCPU %u: KVM_SET_GUEST_DEBUG: %s", vcpu->id, strerror(errno));
	return 0;
}

int arch_vcpu_pc(struct vcpu *vcpu, uint64_t *pc)
{
	return a64_get_reg(vcpu, A64_CORE_REG(regs.pc), pc);
}

int arch_vcpu_exit_pc(struct vcpu *vcpu, uint64_t *pc)
{
	return arch_vcpu_pc(vcpu, pc);
}

int arch_vcpu_debug_pc(struct vcpu *vcpu, uint64_t *pc)
{
	return arch_vcpu_pc(vcpu, pc);
}

/* The kernel runs on SP_EL1; a function's caller is in the link register until its prologue saves it. */
int arch_vcpu_entry_frame(struct vcpu *vcpu, uint64_t *sp, uint64_t *ret)
{
	if (a64_get_reg(vcpu, A64_CORE_REG(sp_el1), sp) || a64_get_reg(vcpu, A64_CORE_REG(regs.regs[30]), ret))
		return -EIO;
	return 0;
}

/*
 * 6.9 on, at __primary_switched (the kernel's tables built, no traced call
 * made yet): the guard page's entry added to them, checked through this
 * vCPU's own translation, and the breakpoint gone (this vCPU is the only
 * one that runs there: the others start at secondary_entry).
 */
static void a64_guard_now(struct vcpu *vcpu)
{
	struct a64_state *s = vcpu->vm->arch_state;
	struct errbuf err = { "" };
	unsigned bits = 0;
	uint64_t pa = 0;
	int rc = a64_guard_map_now(&s->guard, a64_table, vcpu->vm, &bits, &err);

	if (!rc && (a64_translate_any(vcpu->vm, s->guard.va, &pa) || pa != s->guard.pa))
		rc = err_set(&err, EFAULT, "the stub's guard page at _end (%#llx) does not lead to the stub through the "
			     "kernel's tables (%u-bit VAs)", (unsigned long long)s->guard.va, bits);
	if (!rc)
		rc = arch_vcpu_set_breakpoints(vcpu, s->bps[vcpu->id], s->nbps[vcpu->id], &err);
	if (rc) {
		vm_request_stop(vcpu->vm, VM_STOP_HOST_FAILURE, "%s", err.msg);
		return;
	}
	log_info("kvm: the stub's guard page at %#llx mapped in the kernel's own tables (%u-bit VAs, %u KiB pages)",
		 (unsigned long long)s->guard.va, bits, 1u << (s->guard.page_shift - 10));
}

/*
 * The doorbell (guest-stub/arm64/stub.S): `bti j; br x15` with x11 the
 * full ring's header. The host drains the ring at the breakpoint on its
 * first instruction, then does what the two would: on to x15.
 */
enum arch_break arch_vcpu_host_break(struct vcpu *vcpu, uint64_t pc, uint32_t *ring)
{
	struct a64_state *s = vcpu->vm->arch_state;
	const struct vt_stub_config *c = (const struct vt_stub_config *)s->stub_cfg;
	uint64_t hdr;

	*ring = UINT32_MAX;
	if (s->guard.bp && pc == s->guard.bp) {
		a64_guard_now(vcpu);
		/* The tracer's too (--stop-at __primary_switched): its turn now. */
		for (unsigned i = 0; i < s->nbps[vcpu->id]; i++)
			if (s->bps[vcpu->id][i] == pc)
				return ARCH_BREAK_NONE;
		return ARCH_BREAK_DONE;
	}
	if (!s->doorbell_bp || pc != s->doorbell_bp)
		return ARCH_BREAK_NONE;
	/* The configuration block is the host's copy of what the guest reads: trusted; x11 is the guest's. */
	if (!a64_get_reg(vcpu, A64_CORE_REG(regs.regs[11]), &hdr) && hdr >= c->ring_hdrs &&
	    !((hdr - c->ring_hdrs) % VT_HDR_SIZE) && (hdr - c->ring_hdrs) / VT_HDR_SIZE < UINT32_MAX)
		*ring = (uint32_t)((hdr - c->ring_hdrs) / VT_HDR_SIZE);
	s->doorbells++;
	return ARCH_BREAK_DOORBELL;
}

int arch_stub_doorbell_leave(struct vcpu *vcpu)
{
	uint64_t next;

	if (a64_get_reg(vcpu, A64_CORE_REG(regs.regs[15]), &next) || next & 3)
		return -EIO;
	return a64_set_reg(vcpu, A64_CORE_REG(regs.pc), next, NULL) ? -EIO : 0;
}

/* A leaf's caller from its stack: x86_64's MSR events need it; arm64 has no MSRs. */
int arch_vcpu_caller(struct vcpu *vcpu, uint64_t *ret)
{
	(void)vcpu;
	*ret = 0;
	return -EOPNOTSUPP;
}

/* CNTFRQ_EL0: the frequency firmware (here, KVM) gave the counter, readable at EL0. */
int arch_vcpu_tsc_khz(struct vcpu *vcpu, uint64_t *khz)
{
	uint64_t hz;

	(void)vcpu;
	__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(hz));
	*khz = hz / 1000;
	return *khz ? 0 : -EOPNOTSUPP;
}

/* The guest's virtual counter (CNTVCT_EL0) now. */
int arch_vcpu_read_tsc(struct vcpu *vcpu, uint64_t *tsc)
{
	return a64_get_reg(vcpu, KVM_REG_ARM_TIMER_CNT, tsc) ? -EIO : 0;
}
