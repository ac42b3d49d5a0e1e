// SPDX-License-Identifier: GPL-2.0
// Counting stub for arm64 slots. Entered by the slot's `bl` with x30 =
// slot + 8 (the function body) and x9 = the caller's return address (the
// slot's `mov x9, x30`). Preserves the argument registers, reports the slot
// to st_count_hit(slot_pc), then returns to the body with x30 restored.
// Position-independent and relocation-free: the test stores st_count_hit's
// address in st_stub_hook, a literal inside [st_stub, st_stub_end), at run
// time, so that copies at the edges of bl range work too.
	.text
	.balign	16
	.globl	st_stub
	.globl	st_stub_end
	.globl	st_stub_hook
	.type	st_stub, %function
st_stub:
	stp	x29, x30, [sp, #-224]!
	mov	x29, sp
	stp	x0, x1, [sp, #16]
	stp	x2, x3, [sp, #32]
	stp	x4, x5, [sp, #48]
	stp	x6, x7, [sp, #64]
	stp	x8, x9, [sp, #80]
	stp	q0, q1, [sp, #96]
	stp	q2, q3, [sp, #128]
	stp	q4, q5, [sp, #160]
	stp	q6, q7, [sp, #192]
	sub	x0, x30, #8
	ldr	x16, 1f
	blr	x16
	ldp	q6, q7, [sp, #192]
	ldp	q4, q5, [sp, #160]
	ldp	q2, q3, [sp, #128]
	ldp	q0, q1, [sp, #96]
	ldp	x8, x9, [sp, #80]
	ldp	x6, x7, [sp, #64]
	ldp	x4, x5, [sp, #48]
	ldp	x2, x3, [sp, #32]
	ldp	x0, x1, [sp, #16]
	ldp	x29, x30, [sp], #224
	// x10 is a scratch register at function entry (AAPCS64), like x9.
	mov	x10, x30
	mov	x30, x9
	ret	x10
	.balign	8
1:
st_stub_hook:
	.quad	0
st_stub_end:
	.size	st_stub, st_stub_end - st_stub
	.section .note.GNU-stack,"",%progbits
