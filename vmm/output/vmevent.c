// SPDX-License-Identifier: GPL-2.0
/* VM events: names and text (vmevent.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arm64/smccc.h"
#include "vmm/output/vmevent.h"

static const char *const vmev_names[VMEV_NKINDS] = {
	[VMEV_PIO] = "kvm:pio",
	[VMEV_MMIO] = "kvm:mmio",
	[VMEV_MSR] = "kvm:msr",
	[VMEV_EXIT] = "kvm:exit",
	[VMEV_HYPERCALL] = "kvm:hypercall",
	[VMEV_CPUID] = "kvm:cpuid",
};

const char *vmev_name(unsigned kind)
{
	return kind > 0 && kind < VMEV_NKINDS ? vmev_names[kind] : NULL;
}

static const char *vmev_exit_name(uint64_t reason)
{
	static const char *const names[] = {
		"UNKNOWN", "EXCEPTION", "IO", "HYPERCALL", "DEBUG", "HLT", "MMIO",
		"IRQ_WINDOW_OPEN", "SHUTDOWN", "FAIL_ENTRY", "INTR", "SET_TPR",
		"TPR_ACCESS", "S390_SIEIC", "S390_RESET", "DCR", "NMI",
		"INTERNAL_ERROR", "OSI", "PAPR_HCALL", "S390_UCONTROL", "WATCHDOG",
		"S390_TSCH", "EPR", "SYSTEM_EVENT", "S390_STSI", "IOAPIC_EOI",
		"HYPERV", "ARM_NISV", "X86_RDMSR", "X86_WRMSR",
	};

	return reason < sizeof(names) / sizeof(names[0]) ? names[reason] : "UNKNOWN";
}

/*
 * kvm:hypercall, recorded on arm64 only: the host's kvm_hvc_arm64 layout
 * ("HVC at PC (r0: ...)"), then the call's name, its first argument
 * (named when it is another call, as PSCI_FEATURES asks) and its answer.
 */
static int vmev_format_smccc(const struct ring_event *ev, char *buf, size_t len)
{
	uint32_t fid = vmev_hypercall_nr(ev);
	char res[48], arg[64], fidname[40];
	const char *name = smccc_name(fid),
		   *argname = smccc_arg_is_fid(fid) ? smccc_arg_name((uint32_t)ev->arg, fidname, sizeof(fidname)) : NULL;

	if (argname)
		snprintf(arg, sizeof(arg), "%s", argname);
	else if (smccc_nargs(fid) || !name)	/* a call not known: its x1, for what it may be */
		snprintf(arg, sizeof(arg), "0x%" PRIx64 "%s", ev->arg, smccc_nargs(fid) != 1 ? ", ..." : "");
	else
		arg[0] = 0;
	return snprintf(buf, len, "kvm_hvc_arm64: %s at 0x%016" PRIx64 " (r0: 0x%08" PRIx32 ") %s(%s) = %s",
			(ev->flags & VMEV_FLAG_SMC) ? "SMC" : "HVC", ev->func, fid, name ? name : "SMCCC", arg,
			smccc_result(fid, vmev_hypercall_ret(ev), res, sizeof(res)));
}

int vmev_format(const struct ring_event *ev, char *buf, size_t len)
{
	unsigned bits = ev->flags & 0xff, write = bits & VMEV_FLAG_WRITE;
	uint64_t a = ev->parent;

	switch (vmev_kind_of(ev)) {
	case VMEV_PIO:
		return snprintf(buf, len, "kvm_pio: pio_%s at 0x%x size %u count %u val 0x%" PRIx64 " %s",
				write ? "write" : "read", (unsigned)(a & 0xffff), (unsigned)(a >> 16 & 0xff),
				(unsigned)(a >> 32), ev->arg, (a >> 32) > 1 ? "(...)" : "");
	case VMEV_MMIO:
		return snprintf(buf, len, "kvm_mmio: mmio %s len %u gpa 0x%" PRIx64 " val 0x%" PRIx64,
				write ? "write" : "read", bits >> VMEV_LEN_SHIFT, a, ev->arg);
	case VMEV_MSR:
		return snprintf(buf, len, "kvm_msr: msr_%s %" PRIx64 " = 0x%" PRIx64 "%s",
				write ? "write" : "read", (uint64_t)vmev_msr_index(ev), ev->arg,
				(bits & VMEV_FLAG_GP) ? " (#GP)" : "");
	case VMEV_EXIT:
		return snprintf(buf, len, "kvm_userspace_exit: reason %s (%" PRIu64 ")",
				vmev_exit_name(a), a);
	case VMEV_HYPERCALL:
		return vmev_format_smccc(ev, buf, len);
	case VMEV_CPUID:
		/* kvm_cpuid's layout; the entry is the table offered, not a CPUID the guest ran. */
		return snprintf(buf, len, "kvm_cpuid: func %x idx %x rax %x rbx %x rcx %x rdx %x, cpuid entry offered",
				(unsigned)ev->func, (unsigned)(ev->func >> 32), (unsigned)a, (unsigned)(a >> 32),
				(unsigned)ev->arg, (unsigned)(ev->arg >> 32));
	default:
		return snprintf(buf, len, "kvm_unknown: kind %u", vmev_kind_of(ev));
	}
}
