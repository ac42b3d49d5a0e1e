// SPDX-License-Identifier: GPL-2.0
/* Breakpoints and guest state the tracer needs on x86_64. */
#include <errno.h>
#include <string.h>

#include "vmm/kvm/arch.h"
#include "vmm/kvm-x86_64/cpu.h"
#include "arch/slot.h"
#include "vmm/kvm-x86_64/pagewalk.h"
#include "vmm/kvm-x86_64/regs.h"
#include "vmm/kvm/kvm.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/kvm/vm.h"

const struct slot_ops *arch_slot_ops(void)
{
	return &slot_ops_x86_64;
}

int arch_vcpu_set_breakpoints(struct vcpu *vcpu, const uint64_t *addrs, unsigned n,
			      struct errbuf *err)
{
	struct kvm_guest_debug dbg;
	int rc;

	memset(&dbg, 0, sizeof(dbg));
	if (n > 4)
		return err_set(err, EINVAL, "at most 4 hardware breakpoints");
	if (n) {
		dbg.control = KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_USE_HW_BP;
		dbg.arch.debugreg[7] = X86_DR7_FIXED1;
		for (unsigned i = 0; i < n; i++) {
			dbg.arch.debugreg[i] = addrs[i];	/* R/W 00 (execute), LEN 00 */
			dbg.arch.debugreg[7] |= X86_DR7_L(i);
		}
	}
	rc = kvm_ioctl(vcpu->fd, KVM_SET_GUEST_DEBUG, &dbg, err);
	return rc < 0 ? rc : 0;
}

/* x86_64's stub rings with a port write (vmm/guest/x86-stub.c): every breakpoint is the tracer's. */
enum arch_break arch_vcpu_host_break(struct vcpu *vcpu, uint64_t pc, uint32_t *ring)
{
	(void)vcpu, (void)pc;
	*ring = UINT32_MAX;
	return ARCH_BREAK_NONE;
}

int arch_stub_doorbell_leave(struct vcpu *vcpu)
{
	(void)vcpu;
	return 0;
}

int arch_vcpu_pc(struct vcpu *vcpu, uint64_t *pc)
{
	struct kvm_regs regs;

	if (kvm_ioctl(vcpu->fd, KVM_GET_REGS, &regs, NULL) < 0)
		return -EIO;
	*pc = regs.rip;
	return 0;
}

int arch_vcpu_entry_frame(struct vcpu *vcpu, uint64_t *sp, uint64_t *ret)
{
	struct kvm_regs regs;
	struct kvm_sregs sregs;

	if (kvm_ioctl(vcpu->fd, KVM_GET_REGS, &regs, NULL) < 0 ||
	    kvm_ioctl(vcpu->fd, KVM_GET_SREGS, &sregs, NULL) < 0)
		return -EIO;
	*sp = regs.rsp;
	return pagewalk_read(vcpu->vm, &sregs, regs.rsp, ret, sizeof(*ret));
}

/*
 * Whether the six bytes before a return address end in a call: direct
 * (e8 rel32; its target may be the leaf itself or a function that
 * tail-called it, as kvm_register_clock jumps to native_write_msr),
 * through memory (ff 15 disp32: a paravirt call through pv_ops not yet
 * patched) or through a register (ff d0..d7). A word that follows no call
 * is a saved register or a local, not a return address.
 */
static int x86_call_before(const uint8_t b[6])
{
	return b[1] == 0xe8 || (b[0] == 0xff && b[1] == 0x15) || (b[4] == 0xff && (b[5] & 0xf8) == 0xd0);
}

int arch_vcpu_caller(struct vcpu *vcpu, uint64_t *ret)
{
	struct kvm_regs regs;
	struct kvm_sregs sregs;

	if (kvm_ioctl(vcpu->fd, KVM_GET_REGS, &regs, NULL) < 0 ||
	    kvm_ioctl(vcpu->fd, KVM_GET_SREGS, &sregs, NULL) < 0)
		return -EIO;
	/* A leaf may have pushed a few registers before the instruction that exited. */
	for (unsigned i = 0; i < ARCH_CALLER_WORDS; i++) {
		uint64_t word;
		uint8_t b[6];

		if (pagewalk_read(vcpu->vm, &sregs, regs.rsp + 8 * i, &word, sizeof(word)))
			return -EFAULT;
		if (word > 6 && !pagewalk_read(vcpu->vm, &sregs, word - 6, b, sizeof(b)) &&
		    x86_call_before(b)) {
			*ret = word;
			return 0;
		}
	}
	return -ENOENT;
}

int x86_vcpu_nmi(struct vcpu *vcpu, struct errbuf *err)
{
	return kvm_ioctl(vcpu->fd, KVM_NMI, NULL, err);
}

int x86_vcpu_nmi_busy(struct vcpu *vcpu)
{
	struct kvm_vcpu_events ev;

	if (kvm_ioctl(vcpu->fd, KVM_GET_VCPU_EVENTS, &ev, NULL) < 0)
		return 0;
	return ev.nmi.pending || ev.nmi.injected;
}

int arch_vcpu_tsc_khz(struct vcpu *vcpu, uint64_t *khz)
{
	int rc = kvm_ioctl_val(vcpu->fd, KVM_GET_TSC_KHZ, 0, "KVM_GET_TSC_KHZ", NULL);

	if (rc <= 0)
		return rc < 0 ? rc : -ENODATA;
	*khz = (uint64_t)rc;
	return 0;
}

int arch_vcpu_read_tsc(struct vcpu *vcpu, uint64_t *tsc)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e;
	} m = { .hdr.nmsrs = 1, .e.index = X86_MSR_IA32_TSC };

	if (kvm_ioctl(vcpu->fd, KVM_GET_MSRS, &m, NULL) != 1)
		return -EIO;
	*tsc = m.e.data;
	return 0;
}
