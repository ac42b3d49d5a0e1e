// SPDX-License-Identifier: GPL-2.0
/* VM events: names, selection, --msr lists and text (vmevent.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/trace/filter.h"
#include "vmm/trace/vmevent.h"

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

int vmev_select(const char *glob, uint32_t *mask)
{
	uint32_t m = 0;

	for (unsigned k = 1; k < VMEV_NKINDS; k++)
		if (filter_glob_match(glob, vmev_names[k]))
			m |= VMEV_MASK(k);
	if (!m)
		return -ENOENT;
	*mask |= m;
	return 0;
}

void vmev_msr_defaults(struct vmev_msr_set *set)
{
	/*
	 * The KVM PV MSRs a Linux guest writes during its handshake
	 * (Documentation/virt/kvm/x86/msr.rst): the legacy wall-clock and
	 * system-time pair, and 0x4b564d00..08 (wall clock, system time,
	 * async PF, steal time, PV EOI, poll control, async PF int and ack,
	 * migration control).
	 */
	set->n = 0;
	set->r[set->n++] = (struct vmev_msr_range){ 0x11, 0x12 };
	set->r[set->n++] = (struct vmev_msr_range){ 0x4b564d00, 0x4b564d08 };
}

static int vmev_msr_number(const char *s, const char **end, uint32_t *out)
{
	unsigned long long v;
	char *e;

	if (*s < '0' || *s > '9')	/* strtoull would take a sign or spaces */
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &e, 0);
	if (errno || e == s || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	*end = e;
	return 0;
}

int vmev_msr_parse(const char *list, struct vmev_msr_set *set)
{
	const char *p = list;

	if (!*p)
		return -EINVAL;
	for (;;) {
		struct vmev_msr_range r;

		if (vmev_msr_number(p, &p, &r.first))
			return -EINVAL;
		r.last = r.first;
		if (*p == '-' && vmev_msr_number(p + 1, &p, &r.last))
			return -EINVAL;
		/* A range is a handful of MSRs: a large one is a typo, not a wish. */
		if (r.last < r.first || r.last - r.first >= 256)
			return -EINVAL;
		if (set->n == VMEV_MAX_MSR_RANGES)
			return -E2BIG;
		set->r[set->n++] = r;
		if (!*p)
			return 0;
		if (*p++ != ',' || !*p)
			return -EINVAL;
	}
}

/* include/trace/events/kvm.h's names for KVM_EXIT_* (kvm_userspace_exit). */
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
	case VMEV_CPUID:
		/* kvm_cpuid's layout; the entry is the table offered, not a CPUID the guest ran. */
		return snprintf(buf, len, "kvm_cpuid: func %x idx %x rax %x rbx %x rcx %x rdx %x, cpuid entry offered",
				(unsigned)ev->func, (unsigned)(ev->func >> 32), (unsigned)a, (unsigned)(a >> 32),
				(unsigned)ev->arg, (unsigned)(ev->arg >> 32));
	default:
		return snprintf(buf, len, "kvm_unknown: kind %u", vmev_kind_of(ev));
	}
}
