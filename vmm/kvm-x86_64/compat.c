// SPDX-License-Identifier: GPL-2.0
/*
 * The x86_64 host-compatibility layer: everything vmmtrace does differently
 * on a software-assisted KVM host (shared/docs/HOST-KVM.md), in one place.
 * Each workaround says which host behaviour it answers. On hardware KVM the
 * layer is off and none of it runs; the instruction assists are reached only
 * through emulation failures, which hardware KVM does not produce for them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vmm/kvm/arch.h"
#include "vmm/kvm-x86_64/compat-insn.h"
#include "vmm/kvm-x86_64/cpu.h"
#include "vmm/kvm-x86_64/regs.h"
#include "vmm/kvm/compat.h"
#include "vmm/kvm/kvm.h"
#include "vmm/util/log.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/kvm/vm.h"

static const char *const assist_names[ASSIST_COUNT] = {
	[ASSIST_FWAIT] = "fwait", [ASSIST_INT3] = "int3", [ASSIST_LDMXCSR] = "ldmxcsr",
	[ASSIST_STMXCSR] = "stmxcsr", [ASSIST_FNSTSW] = "fnstsw", [ASSIST_FLDCW] = "fldcw",
	[ASSIST_FNCLEX] = "fnclex", [ASSIST_EMMS] = "emms", [ASSIST_LSL] = "lsl", [ASSIST_VERW] = "verw",
	[ASSIST_XGETBV] = "xgetbv", [ASSIST_XSETBV] = "xsetbv", [ASSIST_XSAVE] = "xsave",
	[ASSIST_XRSTOR] = "xrstor", [ASSIST_FAULT] = "fault-injected",
};

_Static_assert(ASSIST_COUNT <= COMPAT_MAX_ASSISTS, "compat_stats has too few counters");

const char *x86_compat_assist_name(unsigned assist)
{
	return assist < ASSIST_COUNT ? assist_names[assist] : NULL;
}

/*
 * HOST-KVM §1: the host's KVM is kvm_pvm, or at least its CPU has neither
 * VMX nor SVM, so guest kernel code is emulated instead of run.
 */
int x86_compat_detect(void)
{
	char line[4096];
	FILE *f;
	int hw = 0;

	if (!access("/sys/module/kvm_pvm", F_OK))
		return 1;
	f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "flags", 5)) {
			hw = strstr(line, " vmx") || strstr(line, " svm");
			break;
		}
	fclose(f);
	return !hw;
}

/*
 * HOST-KVM §2, §3, §7: what a guest kernel needs to run at all here. Not
 * `noxsave` as HOST-KVM §7 has it: the guest kernel must switch the AVX
 * and AVX-512 state its user code uses natively (see compat-xsave.c);
 * clearing avx2 and avx512vl keeps the kernel's own vector code away, and
 * clearing the xsave variants leaves it xsave and xrstor, which are
 * assisted.
 */
static const struct cmdline_opt compat_opts[] = {
	{ "clearcpuid=smap,popcnt,ssse3,avx2,avx512vl,xsaveopt,xsavec,xsaves,xgetbv1",
	  "instructions this host's emulator cannot run at CPL0, kept out of the kernel" },
	{ "rcupdate.rcu_cpu_stall_timeout=300 watchdog_thresh=60",
	  "emulated CPUs on a loaded host look stalled to the kernel's detectors" },
	{ NULL, NULL },
};

/*
 * HOST-KVM §7: what only makes an emulated boot shorter. With them off
 * (--fast-boot off) the kernel runs its own checks as on hardware KVM.
 */
static const struct cmdline_opt fast_boot_opts[] = {
	{ "cryptomgr.notests", "the crypto self-tests run for minutes when emulated" },
	{ "rodata=off", "the kernel's W+X page-table walk (CONFIG_DEBUG_WX) takes ~85 s when emulated" },
	{ "initcall_blacklist=ftrace_check_for_weak_functions", "ftrace's weak-function scan takes ~26 s when emulated" },
	{ NULL, NULL },
};

/*
 * No traced option: this host boots the decompressed vmlinux, never the
 * decompressor, which is what would move it (guest_arch.nokaslr_why).
 */
const struct cmdline_opt *arch_cmdline_opts(enum arch_cmdline why)
{
	static const struct cmdline_opt none[] = { { NULL, NULL } };

	switch (why) {
	case ARCH_CMDLINE_COMPAT: return compat_opts;
	case ARCH_CMDLINE_FAST_BOOT: return fast_boot_opts;
	case ARCH_CMDLINE_TRACED: break;
	}
	return none;
}

void compat_cpuid_adjust(struct vm *vm, struct kvm_cpuid_entry2 *e)
{
	if (!vm->cfg.compat)
		return;
	/* HOST-KVM §2/§3: cmpxchg16b is not emulated; CX16 is one bit the host honours. */
	if (e->function == X86_CPUID_LEAF_FEATURES)
		e->ecx &= ~X86_CPUID1_ECX_CX16;
	/*
	 * With 2+ vCPUs the guest sends IPIs through the KVM_HC_SEND_IPI
	 * hypercall, which never completes here (an AP hung in
	 * kvm_hypercall4 while the BSP spun on the lock it held): hide the
	 * feature so the guest writes the APIC ICR instead.
	 */
	if (e->function == X86_CPUID_LEAF_KVM_FEATURES) {
		log_debug("KVM CPUID features 0x%x", e->eax);
		e->eax &= ~X86_CPUID_KVM_PV_SEND_IPI;
	}
}
