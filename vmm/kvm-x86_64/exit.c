// SPDX-License-Identifier: GPL-2.0
/* x86_64 exits the generic vCPU loop hands over: port I/O, MSRs, emulation failures and the unknown. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "vmm/kvm/arch.h"
#include "vmm/kvm-x86_64/compat-insn.h"
#include "vmm/kvm/kvm.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/kvm/vm.h"
#include "vmm/util/log.h"
#include "vmm/kvm-x86_64/devices.h"
#include "vmm/kvm-x86_64/msr.h"

static const char *internal_suberror_name(unsigned sub)
{
	switch (sub) {
	case KVM_INTERNAL_ERROR_EMULATION: return "emulation failure";
	case KVM_INTERNAL_ERROR_SIMUL_EX: return "exception during exception delivery";
	case KVM_INTERNAL_ERROR_DELIVERY_EV: return "event delivery failed";
	default: return "internal error";
	}
}

static void exit_internal_error(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	char regs[256], bytes[64] = "unavailable";
	struct kvm_sregs sregs;
	struct kvm_regs r;
	uint8_t insn[16];
	unsigned len = 0;

	if (run->internal.suberror == KVM_INTERNAL_ERROR_EMULATION && !compat_insn_assist(vcpu))
		return;
	arch_vcpu_describe(vcpu, regs, sizeof(regs));
	if (kvm_ioctl(vcpu->fd, KVM_GET_REGS, &r, NULL) >= 0 &&
	    kvm_ioctl(vcpu->fd, KVM_GET_SREGS, &sregs, NULL) >= 0 &&
	    !compat_insn_bytes(vcpu, &sregs, r.rip, insn, &len)) {
		size_t off = 0;

		for (unsigned i = 0; i < len && off + 4 < sizeof(bytes); i++)
			off += snprintf(bytes + off, sizeof(bytes) - off, "%s%02x", i ? " " : "", insn[i]);
	}
	vm_request_stop(vcpu->vm, VM_STOP_UNEMULATED,
			"KVM internal error on vCPU %u: %s (suberror %u), %s, instruction bytes: %s%s",
			vcpu->id, internal_suberror_name(run->internal.suberror),
			run->internal.suberror, regs, bytes,
			vcpu->vm->cfg.compat ? "" : " (try --compat on)");
}

int arch_vcpu_debug_pc(struct vcpu *vcpu, uint64_t *pc)
{
	*pc = vcpu->run->debug.arch.pc;
	return 0;
}

int arch_vcpu_exit(struct vcpu *vcpu)
{
	char regs[256];

	switch (vcpu->run->exit_reason) {
	case KVM_EXIT_INTERNAL_ERROR:
		exit_internal_error(vcpu);
		return atomic_load(&vcpu->vm->stopping) ? -EIO : 0;
	case KVM_EXIT_IO:
		x86_exit_io(vcpu);
		return 0;
	case KVM_EXIT_HLT:
		return 0;
	case KVM_EXIT_X86_RDMSR:
	case KVM_EXIT_X86_WRMSR:
		msr_exit(vcpu);	/* only when the tracer asked for kvm:msr */
		return 0;	/* only without an in-kernel LAPIC; it waits in KVM otherwise */
	default:
		arch_vcpu_describe(vcpu, regs, sizeof(regs));
		vm_request_stop(vcpu->vm, VM_STOP_UNEMULATED, "unexpected KVM exit %u on vCPU %u (%s)",
				vcpu->run->exit_reason, vcpu->id, regs);
		return -EIO;
	}
}

/*
 * KVM answers an x86 guest's hypercalls itself; KVM_CAP_EXIT_HYPERCALL
 * hands user space only those in its mask (KVM_HC_MAP_GPA_RANGE, bit 12,
 * for encrypted guests), so nothing a Linux guest makes can be recorded.
 */
int arch_vm_hypercall_exits(struct vm *vm, const char **why, struct errbuf *err)
{
	(void)err;
	log_info("kvm:hypercall: KVM_CAP_EXIT_HYPERCALL mask 0x%x",
		 kvm_check_cap(vm->kvm_fd, KVM_CAP_EXIT_HYPERCALL));
	*why = "this host's KVM hands user space no hypercall a Linux guest makes (only KVM_HC_MAP_GPA_RANGE, "
	       "for encrypted guests)";
	return -EOPNOTSUPP;
}

unsigned arch_vm_exit_kinds(void)
{
	return HOST_EV_EXIT | HOST_EV_PIO | HOST_EV_MMIO | HOST_EV_CPUID;
}

void arch_vcpu_before_run(struct vcpu *vcpu)
{
	(void)vcpu;
}
