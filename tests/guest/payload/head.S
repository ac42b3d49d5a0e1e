/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The payload's entry points and the tables vmmtrace reads from the image.
 *
 * vmmtrace enters startup_64 at its physical address, in long mode on its
 * own identity map, with RSI = the zero page. The payload switches to its
 * own page tables at once: Linux's layout, where PML4[511] points to
 * level3_kernel_pgt and its [510] maps the image. vmmtrace wrote
 * level3_kernel_pgt[509] (the stub) into the loaded image before the first
 * instruction, so these tables must be static and at their link-time
 * physical addresses, and no traced C code may run before CR3 holds them.
 */
#include "tests/guest/payload/payload.h"

#define PTE_TABLE  0x63		/* present, writable, accessed, dirty */
#define PTE_LARGE  0xe3		/* the same, 2 MiB page */
#define PTE_UC     0x18		/* PWT | PCD: the local APIC's page */
#define APIC_BASE  0xfee00000

	.section .head.text, "ax"
	.code64
	.globl	startup_64
startup_64:
	cli
	/* Still at the physical address: RIP-relative references only. */
	leaq	early_top_pgt(%rip), %rax
	movq	%rax, %cr3
	movl	$MSR_EFER, %ecx
	rdmsr
	orl	$EFER_NX, %eax		/* vmmtrace's EFER lacks it; the rings need it */
	wrmsr
	movabsq	$1f, %rax
	jmp	*%rax
1:	leaq	percpu_areas(%rip), %rax	/* CPU 0's area: before any slot can run */
	movq	boot_stack_top(%rip), %rsp
	movq	%rsi, %rdi
	pushq	%rdi
	call	load_segments
	popq	%rdi
	call	bsp_main
	ud2

	.text
/* The GDT and segments, then GS base = %rax; the return address survives. */
load_segments:
	movq	%rax, %r8
	lgdt	gdt_desc(%rip)
	movl	$SEL_DATA, %eax
	movl	%eax, %ds
	movl	%eax, %es
	movl	%eax, %ss
	movl	%eax, %fs
	movl	%eax, %gs
	popq	%rax
	pushq	$SEL_CODE64
	pushq	%rax
	movl	$MSR_GS_BASE, %ecx
	movl	%r8d, %eax
	shrq	$32, %r8
	movl	%r8d, %edx
	wrmsr
	lretq

/* The APs arrive here from the trampoline, on early_top_pgt. */
	.globl	ap_start64
ap_start64:
	movq	ap_boot_stack(%rip), %rsp
	movq	ap_boot_gsbase(%rip), %rax
	call	load_segments
	movl	ap_boot_cpu(%rip), %edi
	call	ap_main
	ud2

/* What -mfentry slots call until vmmtrace or ftrace_init rewrites them. */
	.globl	__fentry__
__fentry__:
	ret

	.data
	.balign	8
	.globl	gdt
gdt:
	.quad	0
	.quad	0x00cf9a000000ffff	/* SEL_CODE32 */
	.quad	0x00af9a000000ffff	/* SEL_CODE64 */
	.quad	0x00cf92000000ffff	/* SEL_DATA */
gdt_desc:
	.word	GDT_ENTRIES * 8 - 1
	.quad	gdt
boot_stack_top:
	.quad	boot_stack + STACK_SIZE

	.section .data..page_aligned, "aw"
	.balign	4096
	/* The low GiB identity-mapped (zero page, trampoline) and the image. */
	.globl	early_top_pgt
early_top_pgt:
	.quad	level3_ident_pgt - KERNEL_MAP + PTE_TABLE
	.fill	510, 8, 0
	.quad	level3_kernel_pgt - KERNEL_MAP + PTE_TABLE
level3_ident_pgt:
	.quad	level2_kernel_pgt - KERNEL_MAP + PTE_TABLE
	.fill	2, 8, 0
	.quad	level2_apic_pgt - KERNEL_MAP + PTE_TABLE
	.fill	508, 8, 0
	/* [509] stays zero here: vmmtrace puts its stub there. */
	.globl	level3_kernel_pgt
level3_kernel_pgt:
	.fill	510, 8, 0
	.quad	level2_kernel_pgt - KERNEL_MAP + PTE_TABLE
	.quad	0
	/* Physical 0..1 GiB in 2 MiB pages: the image and the identity map share it. */
level2_kernel_pgt:
	pfn = 0
	.rept	512
	.quad	(pfn << 21) + PTE_LARGE
	pfn = pfn + 1
	.endr
	/* 3..4 GiB: only the local APIC's page, uncached. */
	.globl	level2_apic_pgt
level2_apic_pgt:
	.fill	(APIC_BASE - 0xc0000000) >> 21, 8, 0
	.quad	APIC_BASE + PTE_LARGE + PTE_UC
	.fill	511 - ((APIC_BASE - 0xc0000000) >> 21), 8, 0

	/*
	 * Per-CPU data, linked at 0: a symbol's value is its offset from a
	 * CPU's GS base, as in Linux, where the stub finds cpu_number. Laid
	 * out here so that cpu_number is not at offset 0 (vmmtrace must use
	 * the symbol, not assume).
	 */
	.section .data..percpu, "aw"
	.quad	0
	.globl	nmi_count
nmi_count:
	.quad	0
	.globl	cpu_number
cpu_number:
	.long	0

	.bss
	.balign	16
boot_stack:
	.skip	STACK_SIZE

	.section .note.GNU-stack, "", @progbits
