// SPDX-License-Identifier: GPL-2.0
// Counting stub for riscv64 slots. Entered by the slot's `jalr t0` with
// t0 = slot + 8 (the function body) and ra untouched. Preserves the argument
// registers, reports the slot to st_count_hit(slot_pc), then jumps back to
// the body through t0. Position-independent and relocation-free: the test
// stores st_count_hit's address in st_stub_hook, a literal inside
// [st_stub, st_stub_end) loaded pc-relative (no linker relaxation), at run
// time, so that copies at the edges of auipc+jalr range work too.
	.option	norelax
	.text
	.balign	8
	.globl	st_stub
	.globl	st_stub_end
	.globl	st_stub_hook
	.type	st_stub, %function
st_stub:
	addi	sp, sp, -160
	sd	ra, 0(sp)
	sd	t0, 8(sp)
	sd	a0, 16(sp)
	sd	a1, 24(sp)
	sd	a2, 32(sp)
	sd	a3, 40(sp)
	sd	a4, 48(sp)
	sd	a5, 56(sp)
	sd	a6, 64(sp)
	sd	a7, 72(sp)
	fsd	fa0, 80(sp)
	fsd	fa1, 88(sp)
	fsd	fa2, 96(sp)
	fsd	fa3, 104(sp)
	fsd	fa4, 112(sp)
	fsd	fa5, 120(sp)
	fsd	fa6, 128(sp)
	fsd	fa7, 136(sp)
	addi	a0, t0, -8
1:	auipc	t1, %pcrel_hi(2f)
	ld	t1, %pcrel_lo(1b)(t1)
	jalr	ra, t1, 0
	fld	fa7, 136(sp)
	fld	fa6, 128(sp)
	fld	fa5, 120(sp)
	fld	fa4, 112(sp)
	fld	fa3, 104(sp)
	fld	fa2, 96(sp)
	fld	fa1, 88(sp)
	fld	fa0, 80(sp)
	ld	a7, 72(sp)
	ld	a6, 64(sp)
	ld	a5, 56(sp)
	ld	a4, 48(sp)
	ld	a3, 40(sp)
	ld	a2, 32(sp)
	ld	a1, 24(sp)
	ld	a0, 16(sp)
	ld	t0, 8(sp)
	ld	ra, 0(sp)
	addi	sp, sp, 160
	jr	t0
	.balign	8
2:
st_stub_hook:
	.dword	0
st_stub_end:
	.size	st_stub, st_stub_end - st_stub
	.section .note.GNU-stack,"",%progbits
