/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The x86 KVM paravirtual interface as a guest sees it: the feature bits
 * of CPUID leaf 0x40000001's EAX (Documentation/virt/kvm/x86/cpuid.rst)
 * and the MSRs that turn the features on (Documentation/virt/kvm/x86/msr.rst).
 * An ABI, so the numbers are facts of every kernel; they are here rather
 * than taken from <asm/kvm_para.h> so that the code reading an x86 guest's
 * handshake builds on any host (only x86 hosts ship that header).
 */
#ifndef ARCH_X86_64_KVM_PARA_H
#define ARCH_X86_64_KVM_PARA_H

/* CPUID 0x40000001 EAX: bit numbers. */
#define X86_KVM_FEATURE_CLOCKSOURCE		0
#define X86_KVM_FEATURE_NOP_IO_DELAY		1
#define X86_KVM_FEATURE_CLOCKSOURCE2		3
#define X86_KVM_FEATURE_ASYNC_PF		4
#define X86_KVM_FEATURE_STEAL_TIME		5
#define X86_KVM_FEATURE_PV_EOI			6
#define X86_KVM_FEATURE_PV_UNHALT		7
#define X86_KVM_FEATURE_PV_TLB_FLUSH		9
#define X86_KVM_FEATURE_ASYNC_PF_VMEXIT		10
#define X86_KVM_FEATURE_PV_SEND_IPI		11
#define X86_KVM_FEATURE_POLL_CONTROL		12
#define X86_KVM_FEATURE_PV_SCHED_YIELD		13
#define X86_KVM_FEATURE_ASYNC_PF_INT		14
#define X86_KVM_FEATURE_MSI_EXT_DEST_ID		15
#define X86_KVM_FEATURE_HC_MAP_GPA_RANGE	16
#define X86_KVM_FEATURE_MIGRATION_CONTROL	17
#define X86_KVM_FEATURE_CLOCKSOURCE_STABLE_BIT	24

/* The MSRs. */
#define X86_MSR_KVM_WALL_CLOCK			0x11
#define X86_MSR_KVM_SYSTEM_TIME			0x12
#define X86_MSR_KVM_WALL_CLOCK_NEW		0x4b564d00
#define X86_MSR_KVM_SYSTEM_TIME_NEW		0x4b564d01
#define X86_MSR_KVM_ASYNC_PF_EN			0x4b564d02
#define X86_MSR_KVM_STEAL_TIME			0x4b564d03
#define X86_MSR_KVM_PV_EOI_EN			0x4b564d04
#define X86_MSR_KVM_POLL_CONTROL		0x4b564d05
#define X86_MSR_KVM_ASYNC_PF_INT		0x4b564d06
#define X86_MSR_KVM_MIGRATION_CONTROL		0x4b564d08

/* Bits of the values written. */
#define X86_KVM_MSR_ENABLED			(1u << 0)	/* system time, steal time, PV EOI */
#define X86_KVM_ASYNC_PF_ENABLED		(1u << 0)
#define X86_KVM_ASYNC_PF_DELIVERY_AS_PF_VMEXIT	(1u << 2)

#endif
