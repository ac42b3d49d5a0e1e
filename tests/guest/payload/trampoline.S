/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where an AP starts after INIT and SIPI: real mode at TRAMP_PHYS, to which
 * cpu.c copies this code and fills in the three fields at its end. Real
 * mode, then 32-bit protected mode, then long mode on the BSP's page tables
 * (with EFER.NX: the stub's rings are mapped no-execute), then ap_start64.
 * Every address is TRAMP_PHYS + an offset: this code never runs where it
 * is linked.
 */
#include "tests/guest/payload/payload.h"

#define AT(label) (TRAMP_PHYS + (label) - ap_trampoline)

	.section .rodata, "a"
	.globl	ap_trampoline, ap_trampoline_end
	.globl	tramp_gdt_base, tramp_cr3, tramp_entry

	.code16
ap_trampoline:
	cli
	movw	%cs, %ax
	movw	%ax, %ds
	lgdtl	tramp_gdt_desc - ap_trampoline
	movl	%cr0, %eax
	andl	$~CR0_CD_NW, %eax	/* INIT left caching disabled */
	orl	$CR0_PE, %eax
	movl	%eax, %cr0
	ljmpl	$SEL_CODE32, $AT(tramp_32)

	.code32
tramp_32:
	movl	$SEL_DATA, %eax
	movl	%eax, %ds
	movl	%eax, %es
	movl	%eax, %ss
	movl	%cr4, %eax
	orl	$CR4_PAE, %eax
	movl	%eax, %cr4
	movl	AT(tramp_cr3), %eax
	movl	%eax, %cr3
	movl	$MSR_EFER, %ecx
	rdmsr
	orl	$(EFER_LME | EFER_NX), %eax
	wrmsr
	movl	%cr0, %eax
	orl	$CR0_PG, %eax
	movl	%eax, %cr0
	ljmpl	$SEL_CODE64, $AT(tramp_64)

	.code64
tramp_64:
	movq	AT(tramp_entry), %rax
	jmp	*%rax

	.balign	8
tramp_gdt_desc:
	.word	GDT_ENTRIES * 8 - 1
tramp_gdt_base:
	.long	0			/* the GDT's physical address */
	.balign	8
tramp_cr3:
	.long	0			/* early_top_pgt's physical address */
	.balign	8
tramp_entry:
	.quad	0			/* ap_start64 */
ap_trampoline_end:

	.section .note.GNU-stack, "", @progbits
