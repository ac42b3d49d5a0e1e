// SPDX-License-Identifier: GPL-2.0
/*
 * vCPU state at power-on: CPUID, LAPIC virtual-wire setup, FPU defaults;
 * the boot vCPU also gets long mode (paging, flat segments) at the kernel's
 * 64-bit entry. The other vCPUs wait for INIT/SIPI in the in-kernel LAPIC.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/kvm/arch.h"
#include "vmm/kvm-x86_64/cpu.h"
#include "vmm/kvm-x86_64/layout.h"
#include "vmm/kvm-x86_64/regs.h"
#include "vmm/kvm/kvm.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/kvm/vm.h"

#define CPUID_MAX_ENTRIES 256

static int cpu_setup_cpuid(struct vcpu *vcpu, struct errbuf *err)
{
	struct vm *vm = vcpu->vm;
	struct kvm_cpuid2 *cpuid;
	int rc;

	cpuid = calloc(1, sizeof(*cpuid) + CPUID_MAX_ENTRIES * sizeof(cpuid->entries[0]));
	if (!cpuid)
		return err_set(err, ENOMEM, "out of memory for CPUID");
	cpuid->nent = CPUID_MAX_ENTRIES;
	rc = kvm_ioctl(vm->kvm_fd, KVM_GET_SUPPORTED_CPUID, cpuid, err);
	if (rc < 0)
		goto out;
	for (unsigned i = 0; i < cpuid->nent; i++) {
		struct kvm_cpuid_entry2 *e = &cpuid->entries[i];

		switch (e->function) {
		case X86_CPUID_LEAF_FEATURES:
			e->ebx = (e->ebx & 0x00ffffff) | (vcpu->id << X86_CPUID1_EBX_APIC_ID_SHIFT);
			e->ecx |= X86_CPUID1_ECX_HYPERVISOR;
			break;
		case X86_CPUID_LEAF_TOPOLOGY:
		case X86_CPUID_LEAF_TOPOLOGY_V2:
			e->edx = vcpu->id;	/* x2APIC ID */
			break;
		default:
			break;
		}
		compat_cpuid_adjust(vm, e);
	}
	rc = kvm_ioctl(vcpu->fd, KVM_SET_CPUID2, cpuid, err);
out:
	free(cpuid);
	return rc < 0 ? rc : 0;
}

/* Virtual-wire mode as firmware leaves it: LINT0 ExtINT, LINT1 NMI. */
static int cpu_setup_lapic(struct vcpu *vcpu, struct errbuf *err)
{
	struct kvm_lapic_state lapic;
	uint32_t *lvt0 = (uint32_t *)&lapic.regs[X86_APIC_LVT0];
	uint32_t *lvt1 = (uint32_t *)&lapic.regs[X86_APIC_LVT1];
	int rc;

	if ((rc = kvm_ioctl(vcpu->fd, KVM_GET_LAPIC, &lapic, err)) < 0)
		return rc;
	*lvt0 = (*lvt0 & ~X86_APIC_LVT_MODE) | X86_APIC_MODE_EXTINT;
	*lvt1 = (*lvt1 & ~X86_APIC_LVT_MODE) | X86_APIC_MODE_NMI;
	rc = kvm_ioctl(vcpu->fd, KVM_SET_LAPIC, &lapic, err);
	return rc < 0 ? rc : 0;
}

static int cpu_setup_fpu(struct vcpu *vcpu, struct errbuf *err)
{
	struct kvm_fpu fpu = { .fcw = X86_FCW_DEFAULT, .mxcsr = X86_MXCSR_DEFAULT };
	int rc = kvm_ioctl(vcpu->fd, KVM_SET_FPU, &fpu, err);

	return rc < 0 ? rc : 0;
}

static void cpu_flat_segment(struct kvm_segment *s, uint16_t sel, uint8_t type, int code)
{
	*s = (struct kvm_segment){
		.base = 0, .limit = 0xffffffff, .selector = sel, .type = type,
		.present = 1, .dpl = 0, .db = !code, .s = 1, .l = code, .g = 1,
	};
}

static int cpu_setup_long_mode(struct vcpu *vcpu, struct errbuf *err)
{
	struct vm *vm = vcpu->vm;
	struct kvm_sregs sregs;
	struct kvm_regs regs = { 0 };
	int rc;

	if ((rc = kvm_ioctl(vcpu->fd, KVM_GET_SREGS, &sregs, err)) < 0)
		return rc;
	cpu_flat_segment(&sregs.cs, LAYOUT_SEL_CODE, X86_SEG_TYPE_CODE, 1);
	cpu_flat_segment(&sregs.ds, LAYOUT_SEL_DATA, X86_SEG_TYPE_DATA, 0);
	sregs.es = sregs.fs = sregs.gs = sregs.ss = sregs.ds;
	sregs.tr = (struct kvm_segment){ .limit = 0xfffff, .selector = LAYOUT_SEL_TSS, .type = X86_SEG_TYPE_TSS, .present = 1, .s = 0, .g = 1 };
	sregs.gdt.base = LAYOUT_GDT;
	sregs.gdt.limit = LAYOUT_GDT_ENTRIES * 8 - 1;
	sregs.idt.base = LAYOUT_IDT;
	sregs.idt.limit = 0;
	sregs.cr0 = X86_CR0_PE | X86_CR0_ET | X86_CR0_NE | X86_CR0_PG;
	sregs.cr3 = LAYOUT_PML4;
	sregs.cr4 = X86_CR4_PAE;
	sregs.efer = X86_EFER_LME | X86_EFER_LMA;
	if ((rc = kvm_ioctl(vcpu->fd, KVM_SET_SREGS, &sregs, err)) < 0)
		return rc;
	regs.rip = vm->boot_entry;
	regs.rsi = vm->boot_arg;
	regs.rsp = LAYOUT_BOOT_STACK;
	regs.rflags = X86_RFLAGS_FIXED;
	rc = kvm_ioctl(vcpu->fd, KVM_SET_REGS, &regs, err);
	return rc < 0 ? rc : 0;
}

int arch_vcpu_init(struct vcpu *vcpu, struct errbuf *err)
{
	int rc;

	if ((rc = cpu_setup_cpuid(vcpu, err)))
		return rc;
	if ((rc = cpu_setup_lapic(vcpu, err)))
		return rc;
	if ((rc = cpu_setup_fpu(vcpu, err)))
		return rc;
	if (vcpu->id == 0 && (rc = cpu_setup_long_mode(vcpu, err)))
		return rc;
	/*
	 * KVM_CAP_SYNC_REGS: KVM copies the general registers into kvm_run at
	 * every exit, so a VM event learns the guest's RIP without an ioctl
	 * (arch_vcpu_exit_pc). Nothing is ever marked dirty: they are only read.
	 */
	if (kvm_check_cap(vcpu->vm->kvm_fd, KVM_CAP_SYNC_REGS) & KVM_SYNC_X86_REGS)
		vcpu->run->kvm_valid_regs = KVM_SYNC_X86_REGS;
	return 0;
}

int arch_vcpu_exit_pc(struct vcpu *vcpu, uint64_t *pc)
{
	if (!(vcpu->run->kvm_valid_regs & KVM_SYNC_X86_REGS))
		return arch_vcpu_pc(vcpu, pc);
	*pc = vcpu->run->s.regs.regs.rip;
	return 0;
}

/* Both register sets, or "registers unavailable" (with end, "\n" or "") in buf. */
static int vcpu_get_state(struct vcpu *vcpu, struct kvm_regs *r, struct kvm_sregs *s, char *buf, size_t len,
			  const char *end)
{
	if (kvm_ioctl(vcpu->fd, KVM_GET_REGS, r, NULL) < 0 || kvm_ioctl(vcpu->fd, KVM_GET_SREGS, s, NULL) < 0) {
		snprintf(buf, len, "registers unavailable%s", end);
		return -1;
	}
	return 0;
}

void arch_vcpu_describe(struct vcpu *vcpu, char *buf, size_t len)
{
	struct kvm_regs regs;
	struct kvm_sregs sregs;

	if (vcpu_get_state(vcpu, &regs, &sregs, buf, len, ""))
		return;
	snprintf(buf, len, "rip 0x%llx rsp 0x%llx cs 0x%x cpl %u cr0 0x%llx cr3 0x%llx",
		 (unsigned long long)regs.rip, (unsigned long long)regs.rsp,
		 sregs.cs.selector, sregs.cs.selector & 3,
		 (unsigned long long)sregs.cr0, (unsigned long long)sregs.cr3);
}

void arch_vcpu_registers(struct vcpu *vcpu, char *buf, size_t len, uint64_t *pc)
{
	struct kvm_regs r;
	struct kvm_sregs s;

	*pc = 0;
	if (vcpu_get_state(vcpu, &r, &s, buf, len, "\n"))
		return;
	*pc = r.rip;
	snprintf(buf, len,
		 "RIP: %016llx RSP: %016llx RFLAGS: %08llx CS: %04x SS: %04x\n"
		 "RAX: %016llx RBX: %016llx RCX: %016llx\n"
		 "RDX: %016llx RSI: %016llx RDI: %016llx\n"
		 "RBP: %016llx R08: %016llx R09: %016llx\n"
		 "R10: %016llx R11: %016llx R12: %016llx\n"
		 "R13: %016llx R14: %016llx R15: %016llx\n"
		 "CR0: %016llx CR2: %016llx CR3: %016llx\n"
		 "CR4: %016llx EFER: %016llx\n",
		 r.rip, r.rsp, r.rflags, s.cs.selector, s.ss.selector, r.rax, r.rbx, r.rcx,
		 r.rdx, r.rsi, r.rdi, r.rbp, r.r8, r.r9, r.r10, r.r11, r.r12, r.r13, r.r14, r.r15,
		 s.cr0, s.cr2, s.cr3, s.cr4, s.efer);
}

int x86_vcpu_cpuid(struct vcpu *vcpu, struct host_cpuid_leaf *out, unsigned max, unsigned *n)
{
	struct kvm_cpuid2 *cpuid = calloc(1, sizeof(*cpuid) + CPUID_MAX_ENTRIES * sizeof(cpuid->entries[0]));
	int rc;

	if (!cpuid)
		return -ENOMEM;
	cpuid->nent = CPUID_MAX_ENTRIES;
	rc = kvm_ioctl(vcpu->fd, KVM_GET_CPUID2, cpuid, NULL);
	*n = 0;
	for (unsigned i = 0; rc >= 0 && i < cpuid->nent && *n < max; i++) {
		const struct kvm_cpuid_entry2 *e = &cpuid->entries[i];

		out[(*n)++] = (struct host_cpuid_leaf){ e->function, e->index, e->eax, e->ebx, e->ecx, e->edx };
	}
	free(cpuid);
	return rc < 0 ? rc : 0;
}
