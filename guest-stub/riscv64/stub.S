/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmmtrace's riscv64 guest stub (issue 12): function, caller, CPU, the
 * task and its context (pid, comm, preempt count, need-resched,
 * migrate-disable, irqs-off), arguments. A
 * traced function's slot is `auipc t0, hi; jalr t0, lo(t0)`
 * (docs/ARCH-SLOTS.md): the stub finds slot + 8 in t0 and the caller's
 * return address in ra (untouched by the slot), appends one record
 * (proto/trace.h) to its CPU's ring and returns with `jr t0`.
 *
 * Where it lives: [_etext, __init_begin) of a STRICT_KERNEL_RWX kernel,
 * executable in every boot phase (docs/STUB-PLACEMENT.md).
 *
 * Rules, as the other stubs': it uses t1-t6, which a function's entry may
 * clobber, and s0-s2 saved on the stack; a0-a7 and ra are untouched;
 * interrupts masked (sstatus.SIE) from reservation to commit; the
 * reservation is lr.d/sc.d on the ring's head, the record published by a
 * release store of its commit marker; a full lossless ring stops at
 * vt_stub_doorbell, where the host keeps a breakpoint and drains.
 *
 * The current task is in tp (riscv keeps it there from the first
 * instruction of C); VT_CFG_CPU_OFF is the task offset of thread_info.cpu.
 */
#include "proto/trace.h"

	.option	norelax
	.option	nopic
	.text
	.globl	vt_stub_image
vt_stub_image:
cfg:
	.fill	VT_CFG_DOORBELL_PC, 1, 0
	/* Until the host fills the block: where vt_stub_doorbell lies in this image. */
	.dword	vt_stub_doorbell - vt_stub_image
	.fill	VT_CFG_SIZE - VT_CFG_DOORBELL_PC - 8, 1, 0

	.globl	vt_stub_entry
vt_stub_entry:
	addi	sp, sp, -32
	sd	s0, 0(sp)
	sd	s1, 8(sp)
	sd	s2, 16(sp)
	csrrci	t6, sstatus, 2			/* t6: sstatus at entry; SIE cleared */
	lla	s0, cfg			/* s0: the configuration block (pc-relative: the link resolves it) */

	/* The CPU number: thread_info.cpu of the current task (tp). */
	li	t1, 0
	ld	t2, VT_CFG_CPU_OFF(s0)
	addi	t3, t2, 1
	beqz	t3, 2f
	add	t2, t2, tp
	lwu	t1, 0(t2)
2:	lwu	t2, VT_CFG_NRINGS(s0)
	mv	t3, t1
	bltu	t3, t2, 3f
	li	t3, 0				/* unknown CPU: the shared ring 0 */
3:	ld	s1, VT_CFG_RING_HDRS(s0)
	slli	t2, t3, VT_HDR_SHIFT
	add	s1, s1, t2			/* s1: ring header */
	ld	t2, VT_CFG_RING_BYTES(s0)
	mul	t3, t2, t3
	ld	t2, VT_CFG_RING_RECS(s0)
	add	t5, t2, t3			/* t5: ring records */
	li	s2, 0				/* the doorbell not rung yet */

.Lretry:
	lr.d	t2, (s1)			/* VT_HDR_HEAD is at 0 */
	ld	t3, VT_HDR_TAIL(s1)
	sub	t3, t2, t3
	ld	t4, VT_CFG_LIMIT(s0)
	bgeu	t3, t4, .Lfull
	addi	t3, t2, 1
	sc.d	t4, t3, (s1)
	bnez	t4, .Lretry

	/* t2: index, t3: index + 1, the commit marker; s1 free from here */
	ld	t4, VT_CFG_RING_MASK(s0)
	and	t4, t2, t4
	slli	t4, t4, VT_REC_SHIFT
	add	t5, t5, t4			/* t5: the record */
	sw	zero, VT_REC_COMMIT(t5)		/* overwrite mode: torn until committed */
	fence	w, w
	rdtime	t2
	sd	t2, VT_REC_TSC(t5)
	addi	t2, t0, -8
	sd	t2, VT_REC_FUNC(t5)
	sd	ra, VT_REC_PARENT(t5)
	sd	a0, VT_REC_ARGS(t5)
	sd	a1, VT_REC_ARGS + 8(t5)
	sd	a2, VT_REC_ARGS + 16(t5)
	sd	a3, VT_REC_ARGS + 24(t5)
	sd	a4, VT_REC_ARGS + 32(t5)
	sd	a5, VT_REC_ARGS + 40(t5)
	andi	t4, t6, 2
	seqz	t4, t4				/* SIE clear at entry: irqs off */
	ori	t4, t4, VT_REC_FLAG_ARGS

	/* The task: its context, pid and comm at the offsets the host found in BTF. */
	li	s1, 0
	sw	zero, VT_REC_PREEMPT(t5)
	ld	t2, VT_CFG_CUR_OFF(s0)
	addi	t2, t2, 1
	beqz	t2, 4f
	mv	s1, tp
	ori	t4, t4, VT_REC_FLAG_TASK
	/* thread_info.preempt_count: the generic one, without a resched bit. */
	ld	t2, VT_CFG_PC_OFF(s0)
	addi	s2, t2, 1
	beqz	s2, 5f
	add	t2, t2, tp
	lw	t2, 0(t2)
	sw	t2, VT_REC_PREEMPT(t5)
	ori	t4, t4, VT_REC_FLAG_CTX
5:	ld	t2, VT_CFG_TIF_OFF(s0)
	addi	s2, t2, 1
	beqz	s2, 6f
	add	t2, t2, tp
	ld	t2, 0(t2)
	ld	s2, VT_CFG_TIF_MASK(s0)
	and	t2, t2, s2
	beqz	t2, 6f
	ori	t4, t4, VT_REC_FLAG_NEED_RESCHED
6:	ld	t2, VT_CFG_MIGR_OFF(s0)
	addi	s2, t2, 1
	beqz	s2, 7f
	add	t2, t2, tp
	lhu	t2, 0(t2)
	li	s2, 15
	bleu	t2, s2, 8f
	mv	t2, s2
8:	slli	t2, t2, VT_REC_MIGR_SHIFT
	or	t4, t4, t2
7:	ld	t2, VT_CFG_PID_OFF(s0)
	add	t2, t2, tp
	lw	t2, 0(t2)
	sw	t2, VT_REC_PID(t5)
	ld	t2, VT_CFG_COMM_OFF(s0)
	add	t2, t2, tp
	ld	s0, 0(t2)			/* the block is not needed after this */
	sd	s0, VT_REC_COMM(t5)
	ld	s0, 8(t2)
	sd	s0, VT_REC_COMM + 8(t5)
4:	sd	s1, VT_REC_TASK(t5)
	slli	t4, t4, 16
	or	t4, t4, t1			/* cpu | flags << 16 */
	sw	t4, VT_REC_CPU_FLAGS(t5)
	fence	rw, w				/* publish: every store above is seen first */
	sw	t3, VT_REC_COMMIT(t5)

.Ldone:
	andi	t6, t6, 2
	csrs	sstatus, t6
	ld	s0, 0(sp)
	ld	s1, 8(sp)
	ld	s2, 16(sp)
	addi	sp, sp, 32
	jr	t0

.Lfull:
	bnez	s2, .Ldrop			/* (the lone lr.d's reservation just lapses) */
	li	s2, 1
	j	.Ldoorbell			/* a local label: no relocation left in the flat image */
.Ldrop:
	addi	t2, s1, VT_HDR_DROPPED
	li	t3, 1
	amoadd.d zero, t3, (t2)
	j	.Ldone

	/*
	 * The doorbell on a page of its own: QEMU runs every instruction of a
	 * page that holds a breakpoint as a translation block of its own (its
	 * check_for_breakpoints), which made every traced call several times
	 * slower while the breakpoint shared the stub's page.
	 */
	.balign	4096
	.globl	vt_stub_doorbell
vt_stub_doorbell:
.Ldoorbell:
	nop					/* the host's breakpoint: s1 is the ring's header */
	j	.Lretry

	.globl	vt_stub_end
vt_stub_end:
