/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interrupt entry. The payload runs with interrupts off and the PIC masked,
 * so every vector but the NMI is a failure: its stub pushes the vector and
 * cpu.c reports it on the console and resets. The NMI handler is real: it
 * counts (nmi_handler, traced), so that `vmmtrace nmi` can land NMIs inside
 * the stub and the tests can check that the nested records all arrive.
 */
#include "tests/guest/payload/payload.h"

	.text
	.balign	IDT_STUB_SIZE
	.globl	idt_stubs
idt_stubs:
	vector = 0
	.rept	NR_VECTORS
	.balign	IDT_STUB_SIZE
	pushq	$vector
	jmp	exception_common
	vector = vector + 1
	.endr

/*
 * The frame (vector, [error code,] rip, cs, ...) goes to C, which resets
 * unless a hostile mode expected the fault (hostile.c): then it returns the
 * address of the iret frame it rewrote to resume at the fix-up.
 */
exception_common:
	movq	%rsp, %rdi
	andq	$-16, %rsp
	call	payload_exception
	movq	%rax, %rsp
	iretq

/*
 * No IST: the NMI lands on whatever stack the CPU was using, the stub's
 * included (red zones are off). The five-word frame leaves RSP 8 bytes off
 * 16; nine pushes realign it for the call.
 */
	.globl	nmi_entry
nmi_entry:
	pushq	%rax
	pushq	%rcx
	pushq	%rdx
	pushq	%rsi
	pushq	%rdi
	pushq	%r8
	pushq	%r9
	pushq	%r10
	pushq	%r11
	call	nmi_handler
	popq	%r11
	popq	%r10
	popq	%r9
	popq	%r8
	popq	%rdi
	popq	%rsi
	popq	%rdx
	popq	%rcx
	popq	%rax
	iretq

	.section .note.GNU-stack, "", @progbits
