/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmmtrace's arm64 guest stub (issue 12): function, caller, CPU, the task
 * and its context (pid, comm, preempt count, need-resched, migrate-disable,
 * irqs-off), arguments. A traced function's slot is
 * `mov x9, x30; bl vt_stub_entry` (docs/ARCH-SLOTS.md): the stub finds the
 * caller's return address in x9 and slot + 8 in x30, appends one record
 * (proto/trace.h) to its CPU's ring and returns to slot + 8 with x30 as the
 * caller left it.
 *
 * Where it lives: padding at the end of the kernel's .text, executable in
 * every boot phase (docs/STUB-PLACEMENT.md); its rings lie in memory that
 * is writable in every phase, at addresses the host writes into the
 * configuration block before the guest runs.
 *
 * Rules, as the x86_64 stub's:
 *  - no stack and no calls: it uses only x10-x17, which a function's entry
 *    may clobber (AAPCS64: temporaries and the intra-procedure-call
 *    registers), so x0-x8 (arguments) and every callee-saved register are
 *    untouched; the condition flags are not preserved across a call anyway;
 *  - IRQs and FIQs masked from reservation to commit (DAIF saved and
 *    restored), so on one CPU nothing but a debug or SError exception can
 *    nest inside a half-written record;
 *  - the reservation is an exclusive load/store pair on the ring's head
 *    (several CPUs may share ring 0 while the CPU number is unknown), the
 *    record is published by a store-release of its commit marker;
 *  - lossless mode: a full ring stops at vt_stub_doorbell, where the host
 *    keeps a breakpoint (QEMU's gdbstub) and drains the ring before it lets
 *    the vCPU go on; still full then, the event is dropped and counted.
 */
#include "proto/trace.h"

	.text
	.globl	vt_stub_image
vt_stub_image:
cfg:
	.fill	VT_CFG_DOORBELL_PC, 1, 0
	/* Until the host fills the block: where vt_stub_doorbell lies in this image. */
	.quad	vt_stub_doorbell - vt_stub_image
	.fill	VT_CFG_SIZE - VT_CFG_DOORBELL_PC - 8, 1, 0

	.globl	vt_stub_entry
vt_stub_entry:
	mrs	x17, daif
	msr	daifset, #3

	/* The CPU number: this CPU's per-CPU offset (tpidr_el1) plus cpu_number's address. */
	mov	w10, #0
	ldr	x11, cfg + VT_CFG_CPU_OFF
	cmn	x11, #1
	b.eq	1f
	mrs	x12, tpidr_el1
	ldr	w10, [x11, x12]
1:	ldr	w12, cfg + VT_CFG_NRINGS
	cmp	w10, w12
	csel	w13, w10, wzr, lo		/* unknown CPU: the shared ring 0 */
	ldr	x11, cfg + VT_CFG_RING_HDRS
	add	x11, x11, x13, lsl #VT_HDR_SHIFT	/* x11: ring header */
	ldr	x14, cfg + VT_CFG_RING_RECS
	ldr	x12, cfg + VT_CFG_RING_BYTES
	madd	x14, x12, x13, x14		/* x14: ring records */
	mov	x15, #0				/* the doorbell not rung yet */

.Lretry:
	ldxr	x12, [x11]			/* VT_HDR_HEAD is at 0 */
	ldr	x13, [x11, #VT_HDR_TAIL]
	sub	x13, x12, x13
	ldr	x16, cfg + VT_CFG_LIMIT
	cmp	x13, x16
	b.hs	.Lfull
	add	x13, x12, #1
	stxr	w16, x13, [x11]
	cbnz	w16, .Lretry

	/* x12: index, x13: index + 1, the commit marker */
	ldr	x16, cfg + VT_CFG_RING_MASK
	and	x16, x12, x16
	add	x16, x14, x16, lsl #VT_REC_SHIFT	/* x16: the record */
	str	wzr, [x16, #VT_REC_COMMIT]	/* overwrite mode: torn until committed */
	dmb	ishst
	mrs	x12, cntvct_el0
	str	x12, [x16, #VT_REC_TSC]
	sub	x12, x30, #8
	str	x12, [x16, #VT_REC_FUNC]
	str	x9, [x16, #VT_REC_PARENT]
	stp	x0, x1, [x16, #VT_REC_ARGS]
	stp	x2, x3, [x16, #VT_REC_ARGS + 16]
	stp	x4, x5, [x16, #VT_REC_ARGS + 32]
	ubfx	x12, x17, #7, #1		/* DAIF.I at entry: irqs off */
	orr	x12, x12, #VT_REC_FLAG_ARGS

	/* The current task is in sp_el0 (arm64 keeps it there from the first instruction of C). */
	ldr	x15, cfg + VT_CFG_CUR_OFF
	mov	x14, #0
	cmn	x15, #1
	b.eq	2f
	mrs	x14, sp_el0
	orr	x12, x12, #VT_REC_FLAG_TASK
	ldr	x15, cfg + VT_CFG_PID_OFF
	ldr	w15, [x14, x15]
	str	w15, [x16, #VT_REC_PID]
	ldr	x15, cfg + VT_CFG_COMM_OFF
	add	x15, x14, x15
	ldp	x11, x15, [x15]
	stp	x11, x15, [x16, #VT_REC_COMM]
2:	str	x14, [x16, #VT_REC_TASK]
	str	wzr, [x16, #VT_REC_PREEMPT]
	cbz	x14, 7f

	/*
	 * The preempt count: thread_info.preempt_count, 64 bits, the count in
	 * the low half and the need-resched bit inverted at bit 32
	 * (arch/arm64/include/asm/preempt.h): clear means a resched is due.
	 */
	ldr	x15, cfg + VT_CFG_PC_OFF
	cmn	x15, #1
	b.eq	5f
	ldr	x15, [x14, x15]
	orr	x12, x12, #VT_REC_FLAG_CTX
	str	w15, [x16, #VT_REC_PREEMPT]
	tbnz	x15, #32, 5f
	orr	x12, x12, #VT_REC_FLAG_PREEMPT_RESCHED
	/* The thread flags' need-resched bit, and migrate-disable (at most 15). */
5:	ldr	x15, cfg + VT_CFG_TIF_OFF
	cmn	x15, #1
	b.eq	6f
	ldr	x15, [x14, x15]
	ldr	x11, cfg + VT_CFG_TIF_MASK
	tst	x15, x11
	b.eq	6f
	orr	x12, x12, #VT_REC_FLAG_NEED_RESCHED
6:	ldr	x15, cfg + VT_CFG_MIGR_OFF
	cmn	x15, #1
	b.eq	7f
	ldrh	w15, [x14, x15]
	mov	w11, #15
	cmp	w15, w11
	csel	w15, w15, w11, ls
	orr	x12, x12, x15, lsl #VT_REC_MIGR_SHIFT
7:	orr	w12, w10, w12, lsl #16		/* cpu | flags << 16 */
	str	w12, [x16, #VT_REC_CPU_FLAGS]
	add	x16, x16, #VT_REC_COMMIT
	stlr	w13, [x16]			/* publish: every store above is seen first */

.Ldone:
	msr	daif, x17
	mov	x16, x30
	mov	x30, x9
	ret	x16

.Lfull:
	clrex
	cbnz	x15, .Ldrop
	mov	x15, #1
	b	.Ldoorbell			/* a local label: no relocation left in the flat image */
.Ldrop:
	add	x13, x11, #VT_HDR_DROPPED
3:	ldxr	x12, [x13]
	add	x12, x12, #1
	stxr	w16, x12, [x13]
	cbnz	w16, 3b
	b	.Ldone

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
	nop					/* the host's breakpoint: x11 is the ring's header */
	b	.Lretry

	.globl	vt_stub_end
vt_stub_end:
