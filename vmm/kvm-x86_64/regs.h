/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86_64 architectural bits (Intel SDM, AMD APM): control and flag
 * registers, page-table entries, exception vectors, CPUID leaves and bits,
 * MSR and local-APIC register numbers. The one place for them (STYLE.md
 * rule 1); the guest's memory map is in layout.h.
 */
#ifndef ARCH_X86_64_REGS_H
#define ARCH_X86_64_REGS_H

/* Control registers and EFER (SDM vol. 3 §2.2.1, §2.5). */
#define X86_CR0_PE          (1ULL << 0)
#define X86_CR0_ET          (1ULL << 4)
#define X86_CR0_NE          (1ULL << 5)
#define X86_CR0_WP          (1ULL << 16)
#define X86_CR0_PG          (1ULL << 31)
#define X86_CR4_PAE         (1ULL << 5)
#define X86_CR4_LA57        (1ULL << 12)
#define X86_EFER_LME        (1ULL << 8)
#define X86_EFER_LMA        (1ULL << 10)

/* RFLAGS: bit 1 is reserved and always 1. */
#define X86_RFLAGS_FIXED    (1ULL << 1)
#define X86_RFLAGS_ZF       (1ULL << 6)

/* DR7: local enable of breakpoint i; bit 10 is reserved and reads as 1. */
#define X86_DR7_L(i)        (1ULL << ((i) * 2))
#define X86_DR7_FIXED1      (1ULL << 10)

/* Paging-structure entries: arch/x86_64/paging.h (the stub map builds them too). */
#include "arch/x86_64/paging.h"

/* Page-fault error code (SDM vol. 3 §4.7). */
#define X86_PF_P            (1u << 0)	/* 0: no translation; 1: protection violation */
#define X86_PF_W            (1u << 1)

/* Exception vectors. */
#define X86_VEC_BP          3
#define X86_VEC_GP          13
#define X86_VEC_PF          14

/* Segment descriptors (SDM vol. 3 §3.4.5) and KVM segment types. */
#define X86_DESC_WRITABLE   (1ULL << 41)	/* a data segment's W type bit */
#define X86_DESC_CODE       (1ULL << 43)	/* type: code, not data */
#define X86_DESC_S          (1ULL << 44)	/* code or data, not a system descriptor */
#define X86_DESC_P          (1ULL << 47)
#define X86_DESC_G          (1ULL << 55)	/* limit in 4 KiB units */
#define X86_SEG_TYPE_DATA   0x3	/* read/write, accessed */
#define X86_SEG_TYPE_CODE   0xb	/* execute/read, accessed */
#define X86_SEG_TYPE_TSS    0xb	/* 64-bit TSS, busy */

/* An instruction is at most 15 bytes long; a longer one raises #GP. */
#define X86_INSN_MAX_LEN    15

/* XCR0 state components (SDM vol. 1 §13.1). */
#define X86_XCR0_X87        (1ULL << 0)
#define X86_XCR0_SSE        (1ULL << 1)
#define X86_XCR0_YMM        (1ULL << 2)

/* x87 and SSE control and status registers. */
#define X86_FCW_DEFAULT     0x037f	/* after FNINIT */
#define X86_MXCSR_DEFAULT   0x1f80	/* after reset */
#define X86_MXCSR_MASK_DEFAULT 0xffbf	/* when the FXSAVE image's MXCSR_MASK is 0 */
#define X86_FSW_EXCEPTIONS  0x00ff	/* IE..PE, SF, ES */
#define X86_FSW_B           (1u << 15)

/* CPUID leaves and bits. */
#define X86_CPUID_LEAF_FEATURES     0x1
#define X86_CPUID1_EBX_APIC_ID_SHIFT 24	/* initial APIC ID in EBX[31:24] */
#define X86_CPUID1_ECX_CX16         (1u << 13)
#define X86_CPUID1_ECX_HYPERVISOR   (1u << 31)
#define X86_CPUID_LEAF_TOPOLOGY     0xb	/* x2APIC ID in EDX */
#define X86_CPUID_LEAF_XSAVE        0xd
#define X86_CPUID_LEAF_TOPOLOGY_V2  0x1f	/* x2APIC ID in EDX */
#define X86_CPUID_LEAF_KVM_FEATURES 0x40000001	/* Documentation/virt/kvm/x86/cpuid.rst */
#define X86_CPUID_KVM_PV_SEND_IPI   (1u << 11)

/* MSRs. */
#define X86_MSR_IA32_TSC    0x10

/* Local APIC registers (offsets in its page) and LVT delivery modes. */
#define X86_APIC_LVT0       0x350
#define X86_APIC_LVT1       0x360
#define X86_APIC_LVT_MODE   0x700	/* delivery-mode field */
#define X86_APIC_MODE_NMI   0x400
#define X86_APIC_MODE_EXTINT 0x700

#endif
