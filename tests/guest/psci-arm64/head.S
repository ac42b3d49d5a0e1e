/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The PSCI payload's Image header, entry points and exception vectors.
 *
 * vmmtrace's arm64 KVM host loads a raw Image at RAM + text_offset and
 * enters its first byte at EL1 with the MMU off, x0 the device tree's
 * address (booting.rst); a PSCI CPU_ON enters `secondary` with x0 the
 * caller's context. Code and data are at their link addresses (RAM
 * starts at 0x40000000, text_offset is 0) and the MMU stays off: data
 * accesses are Device memory, so the C code is built -mstrict-align.
 */
	.section .head.text, "ax"
	.globl	_head
_head:
	b	primary			/* code0 */
	.long	0			/* code1 */
	.quad	0			/* text_offset */
	.quad	_end - _head		/* image_size */
	.quad	0xa			/* flags: little-endian, 4 KiB pages, placed anywhere */
	.quad	0, 0, 0
	.ascii	"ARM\x64"		/* magic */
	.long	0

primary:
	msr	daifset, #0xf
	adr	x1, vectors
	msr	vbar_el1, x1
	isb
	adrp	x1, __bss_start
	add	x1, x1, :lo12:__bss_start
	adrp	x2, __bss_end
	add	x2, x2, :lo12:__bss_end
1:	cmp	x1, x2
	b.hs	2f
	str	xzr, [x1], #8
	b	1b
2:	adrp	x1, stack0_top
	add	x1, x1, :lo12:stack0_top
	mov	sp, x1
	bl	psci_main
3:	wfi
	b	3b

	.globl	secondary
secondary:
	mov	x19, x1			/* what the reset left in x1..x3 and PSTATE, for the report */
	mov	x20, x2
	mov	x21, x3
	mrs	x22, daif
	mrs	x23, CurrentEL
	msr	daifset, #0xf
	adr	x9, vectors
	msr	vbar_el1, x9
	isb
	adrp	x9, stack1_top
	add	x9, x9, :lo12:stack1_top
	mov	sp, x9
	mov	x1, x19
	mov	x2, x20
	mov	x3, x21
	mov	x4, x22
	mov	x5, x23
	bl	psci_secondary
4:	wfi
	b	4b

/* Every exception is fatal here: its class and address on the console, then power off. */
	.balign	2048
vectors:
	.irp	n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
	.balign	128
	mov	x0, #\n
	mrs	x1, esr_el1
	mrs	x2, elr_el1
	mrs	x3, far_el1
	b	psci_fatal
	.endr

	.bss
	.balign	16
	.space	8192
stack0_top:
	.space	8192
stack1_top:
