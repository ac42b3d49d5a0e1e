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
 * every boot phase, or, where there is none, the guard page after _end
 * (docs/STUB-PLACEMENT.md); its rings lie in memory that
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
 *
 * The common path reads its ring's geometry from the ring header's cache
 * (VT_HDR_RECS, proto/trace.h), filled from the configuration block at the
 * ring's first event when every field it reads is known (its limit is 0
 * until then, so that event takes the full ring's way), and checks no
 * "-1 = unknown" beyond the CPU's; otherwise each event takes RECORD 0's
 * way (.Lgeneral), which checks every field. The arguments are recorded
 * when a client asked for --args (VT_CFG_ARGS) or --graph, one test on the
 * common path with the rarer flags. 63 instructions per traced call on the
 * common path, the slot's two included (bench/stub-insns).
 *
 * A slot the guest's own ftrace enabled calls one of the chained entries
 * (vt_stub_chain, issue 37): the same record by the general way, then on
 * to the guest's target; the common path does not change for them.
 *
 * With --graph (VT_CFG_GRAPH) an entry also hooks the call's return, as
 * the x86_64 stub does (docs/TRACING.md "Call graphs"): a frame on the
 * task's shadow stack keeps x9, the caller's return address, and x9 becomes
 * vt_stub_return, which the function's own `ret` then reaches. A frame is
 * known by the stack pointer at the call (the function returns with the
 * same sp), the key x86_64 takes from its return address's slot. The entry
 * spends x0-x5 as scratch there (the record holds their values, reloaded
 * before the function runs); vt_stub_return keeps the return registers
 * x0-x3 below sp while it uses them and never touches x4-x8.
 */
#include "proto/trace.h"

/*
 * `bti j`: a kernel built with BTI (ARM64_BTI_KERNEL, clang builds) maps
 * its text, the stub's pages with it, as guarded pages, where an indirect
 * branch (the doorbell's `br`s) must land on one; a NOP anywhere else.
 */
#define BTI_J	hint #36

/* The record's flags: their low byte (every VT_REC_FLAG_*), then migration_disabled. */
#define REC_FLAGS	(VT_REC_CPU_FLAGS + 2)
/* Chained entries (VT_CFG_CHAIN): how many distinct targets the guest's ftrace may have at once. */
#define CHAIN_N		32
.if VT_REC_FLAG_HOOKED > 0x80 || VT_REC_MIGR_SHIFT != 8 || VT_HDR_CPU_FLAGS != VT_HDR_RECS + 8
	.error "the record's flags or the header's cache moved"
.endif

	.text
	.globl	vt_stub_image
vt_stub_image:
cfg:
	.fill	VT_CFG_RETURN, 1, 0
	/*
	 * Until the host fills the block: where vt_stub_return and the
	 * doorbell lie in this image (the one-page image's: its wait, which
	 * needs no breakpoint, then its doorbell).
	 */
	.quad	vt_stub_return - vt_stub_image
.if VT_CFG_DOORBELL_PC != VT_CFG_RETURN + 8
	.error "VT_CFG_DOORBELL_PC no longer follows VT_CFG_RETURN"
.endif
#ifdef VT_STUB_ONE_PAGE
	.quad	vt_stub_wait - vt_stub_image
#else
	.quad	vt_stub_doorbell - vt_stub_image
#endif
.if VT_CFG_CPU_MRS != VT_CFG_DOORBELL_PC + 8
	.error "VT_CFG_CPU_MRS no longer follows VT_CFG_DOORBELL_PC"
.endif
	/* The three reads of the CPU's base, which the host may make sp_el0's (proto/trace.h). */
	.long	.Lcpu_mrs0 - vt_stub_image, .Lcpu_mrs1 - vt_stub_image, .Lcpu_mrs_entry - vt_stub_image
	.fill	VT_CFG_CHAIN - VT_CFG_CPU_MRS - 12, 1, 0
	/* The chained entries and their targets (VT_CFG_CHAIN, _TGT, _N; issue 37). */
	.quad	vt_stub_chain - vt_stub_image
	.quad	.Lchain_tgt - vt_stub_image
	.long	CHAIN_N
	.fill	VT_CFG_SIZE - VT_CFG_CHAIN_N - 4, 1, 0

/*
 * Where a task keeps its shadow stack: SHADOW_HASH (proto/trace.h, the
 * host's hash too) puts the hash of its pointer in h; SHADOW_TABLE the
 * address of table h (modulo their number) in t, using k. Callers probe
 * h, h + 1, ... VT_SHADOW_PROBE tables.
 */
.macro SHADOW_TABLE h, t, k
	ldr	\k, cfg + VT_CFG_SHADOW_MASK
	and	\t, \h, \k
	ldr	\k, cfg + VT_CFG_SHADOW
	add	\t, \k, \t, lsl #VT_SHADOW_SHIFT
.endm

/*
 * How many tables from the home table \home on may be a task's whose hash
 * leads there (VT_SHADOW_REACH, at most VT_SHADOW_PROBE) in \n, using k.
 */
.macro SHADOW_REACH n, home, k
	ldr	\n, [\home, #VT_SHADOW_REACH]
	mov	\k, #VT_SHADOW_PROBE
	cmp	\n, \k
	csel	\n, \n, \k, ls
.endm

/*
 * One record, from the CPU number to the publishing store, then back to the
 * traced code, every field checked: kind 0 an entry (x9 the caller's return
 * address, x30 the slot + 8), which goes on at .Lentry_tail for what
 * clients asked for, kind 1 an exit (x9 where the function returns to, x30
 * its slot + 8, x2 the entry's counter, x3 the depth, the return value at
 * [sp]). DAIF is in x17, interrupts masked.
 */
.macro RECORD kind
	/*
	 * The CPU number: this CPU's per-CPU offset (tpidr_el1) plus
	 * cpu_number's address, or thread_info.cpu in the task (the host
	 * makes this read sp_el0: VT_CFG_CPU_MRS).
	 */
	mov	w10, #0
	ldr	x11, cfg + VT_CFG_CPU_OFF
	cmn	x11, #1
	b.eq	1f
.Lcpu_mrs\kind:
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

.Lretry\kind:
	ldxr	x12, [x11]			/* VT_HDR_HEAD is at 0 */
	ldr	x13, [x11, #VT_HDR_TAIL]
	sub	x13, x12, x13
	ldr	x16, cfg + VT_CFG_LIMIT
	cmp	x13, x16
	b.hs	.Lfull\kind
	add	x13, x12, #1
	stxr	w16, x13, [x11]
	cbnz	w16, .Lretry\kind
.Lreserved\kind:
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
.if \kind == 0
	ubfx	x12, x17, #7, #1		/* DAIF.I at entry: irqs off */
.else
	ldr	x12, [sp]			/* the return value */
	stp	x12, x2, [x16, #VT_REC_RETVAL]	/* ... and the entry's counter (VT_REC_CALLTIME) */
	str	w3, [x16, #VT_REC_DEPTH]
	ubfx	x12, x17, #7, #1
	orr	x12, x12, #VT_REC_FLAG_EXIT
.endif

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
.if \kind == 0
	b	.Lentry_tail
.endif
	add	x16, x16, #VT_REC_COMMIT
	stlr	w13, [x16]			/* publish: every store above is seen first */

.Ldone\kind:
.if \kind == 0
	b	.Lentry_out_chained		/* RECORD 0 is the chained entries' way too */
.else
	msr	daif, x17
	ldp	x2, x3, [sp, #16]
	ldp	x0, x1, [sp], #32
	ret	x9
.endif

	/*
	 * Lossless ring full: ring the doorbell once (x15: where it goes on);
	 * still full then, the oldest record is one this CPU's interrupted
	 * context is writing: drop the event and count it.
	 */
.Lfull\kind:
	clrex
	adr	x15, .Lagain\kind
	ldr	x13, cfg + VT_CFG_DOORBELL_PC	/* vt_stub_doorbell, or where the host moved it */
	br	x13
.Lagain\kind:
	BTI_J
	ldxr	x12, [x11]
	ldr	x13, [x11, #VT_HDR_TAIL]
	sub	x13, x12, x13
	ldr	x16, cfg + VT_CFG_LIMIT
	cmp	x13, x16
	b.hs	.Ldrop\kind
	add	x13, x12, #1
	stxr	w16, x13, [x11]
	cbnz	w16, .Lagain\kind
	b	.Lreserved\kind
.Ldrop\kind:
	clrex
	add	x13, x11, #VT_HDR_DROPPED
3:	ldxr	x12, [x13]
	add	x12, x12, #1
	stxr	w16, x12, [x13]
	cbnz	w16, 3b
	b	.Ldone\kind
.endm

/* Sets flag in the record's flags (x16), using w15. */
.macro SETFLAG flag
	ldrh	w15, [x16, #REC_FLAGS]
	orr	w15, w15, #\flag
	strh	w15, [x16, #REC_FLAGS]
.endm

	.globl	vt_stub_entry
vt_stub_entry:
	mrs	x17, daif
	msr	daifset, #3
	/*
	 * The CPU's own ring (cpu_number at tpidr_el1, or thread_info.cpu in
	 * the task): its number known, and below the rings'.
	 */
	ldr	x11, cfg + VT_CFG_CPU_OFF
	cmn	x11, #1
	b.eq	.Lgeneral
.Lcpu_mrs_entry:
	mrs	x12, tpidr_el1			/* or sp_el0 (VT_CFG_CPU_MRS) */
	ldr	w10, [x11, x12]			/* x10: the CPU */
	ldr	w12, cfg + VT_CFG_NRINGS
	cmp	w10, w12
	b.hs	.Lgeneral
	ldr	x11, cfg + VT_CFG_RING_HDRS
	add	x11, x11, x10, lsl #VT_HDR_SHIFT	/* x11: the ring's header */
	/* Its limit is 0 until its cache is filled: its first event goes to .Lfull. */
.Lreserve:
	ldxr	x12, [x11]			/* VT_HDR_HEAD is at 0 */
	ldr	x13, [x11, #VT_HDR_TAIL]
	sub	x13, x12, x13
	ldr	x16, [x11, #VT_HDR_LIMIT]
	cmp	x13, x16
	b.hs	.Lfull
	add	x13, x12, #1
	stxr	w16, x13, [x11]
	cbnz	w16, .Lreserve
.Lreserved:
	/* x12: index, x13: index + 1, the commit marker */
	ldr	x16, cfg + VT_CFG_RING_MASK
	and	x16, x12, x16
	ldp	x14, x12, [x11, #VT_HDR_RECS]	/* the ring's records, its CPU and flags word */
	add	x16, x14, x16, lsl #VT_REC_SHIFT	/* x16: the record */
	str	x12, [x16, #VT_REC_CPU_FLAGS]	/* with commit 0 first: torn until committed */
	dmb	ishst
	mrs	x12, cntvct_el0
	str	x12, [x16, #VT_REC_TSC]
	sub	x12, x30, #8
	stp	x12, x9, [x16, #VT_REC_FUNC]	/* and VT_REC_PARENT */
	tbnz	x17, #7, .Lirqs_off		/* DAIF.I at entry */
.Lirqs_on:
	mrs	x14, sp_el0			/* x14: the task */
	str	x14, [x16, #VT_REC_TASK]
	ldr	x15, cfg + VT_CFG_PID_OFF
	ldr	w15, [x14, x15]
	str	w15, [x16, #VT_REC_PID]
	ldr	x15, cfg + VT_CFG_COMM_OFF
	add	x15, x14, x15
	ldp	x11, x15, [x15]
	stp	x11, x15, [x16, #VT_REC_COMM]
	/* The preempt count, its need-resched bit inverted at bit 32 (clear: a resched is due). */
	ldr	x15, cfg + VT_CFG_PC_OFF
	ldr	x15, [x14, x15]
	str	w15, [x16, #VT_REC_PREEMPT]
	tbz	x15, #32, .Lpreempt_resched
.Lpreempt:
	/*
	 * Done, unless the thread flags' need-resched bit is set, migration
	 * is disabled, or a client asked for --graph or --args (VT_CFG_GRAPH
	 * and VT_CFG_ARGS in one 64-bit word): then .Lmore.
	 */
	ldr	x15, cfg + VT_CFG_TIF_OFF
	ldr	x15, [x14, x15]
	ldr	x11, cfg + VT_CFG_TIF_MASK
	tst	x15, x11
	b.ne	.Lneed_resched
	ldr	x15, cfg + VT_CFG_MIGR_OFF
	ldrh	w15, [x14, x15]
	ldr	x11, cfg + VT_CFG_GRAPH
	orr	x15, x15, x11
	cbnz	x15, .Lmore
.Lpublish:
	add	x16, x16, #VT_REC_COMMIT
	stlr	w13, [x16]			/* publish: every store above is seen first */
.Lentry_out:
	msr	daif, x17
	mov	x16, x30
	mov	x30, x9
	ret	x16

.Lirqs_off:
	SETFLAG	VT_REC_FLAG_IRQS_OFF
	b	.Lirqs_on
.Lpreempt_resched:
	SETFLAG	VT_REC_FLAG_PREEMPT_RESCHED
	b	.Lpreempt
.Lneed_resched:
	SETFLAG	VT_REC_FLAG_NEED_RESCHED
.Lmore:
	/* migrate-disable (at most 15), the flags' second byte */
	ldr	x15, cfg + VT_CFG_MIGR_OFF
	ldrh	w15, [x14, x15]
	mov	w11, #15
	cmp	w15, w11
	csel	w15, w15, w11, ls
	ldrb	w11, [x16, #REC_FLAGS + 1]
	orr	w11, w11, w15
	strb	w11, [x16, #REC_FLAGS + 1]
	/*
	 * What clients asked for (RECORD 0 joins here: x16 the record with
	 * all but the arguments, the return hook and the commit written, x14
	 * the task or 0, x13 the commit marker, x10 the CPU). The arguments
	 * for --args, and for --graph, whose hook spends x0-x5 and reloads
	 * them from the record.
	 */
.Lentry_tail:
	ldr	x15, cfg + VT_CFG_GRAPH		/* and VT_CFG_ARGS */
	cbz	x15, .Lpublish_chained
	stp	x0, x1, [x16, #VT_REC_ARGS]
	stp	x2, x3, [x16, #VT_REC_ARGS + 16]
	stp	x4, x5, [x16, #VT_REC_ARGS + 32]
	ldr	w15, cfg + VT_CFG_ARGS
	cbz	w15, 1f
	SETFLAG	VT_REC_FLAG_ARGS
1:	ldr	w15, cfg + VT_CFG_GRAPH
	cbnz	w15, .Lgraph_entry
	b	.Lpublish_chained

	/*
	 * The rarer ways out, which a chained entry's call (below) takes,
	 * its k + 1 in x17's upper half (DAIF has only bits 6-9): the flags
	 * restored, then on to target k with x30 (the slot + 8) and x9 (the
	 * caller's return address) as the slot's call left them; x10-x17
	 * are free at a function's entry. The target is read before the
	 * interrupts are back on: the host may give entry k another target
	 * once this CPU has left the stub.
	 */
.Lpublish_chained:
	add	x16, x16, #VT_REC_COMMIT
	stlr	w13, [x16]			/* publish: every store above is seen first */
.Lentry_out_chained:
	lsr	x15, x17, #32
	cbnz	x15, 1f
	msr	daif, x17
	mov	x16, x30
	mov	x30, x9
	ret	x16
1:	adr	x16, .Lchain_tgt
	add	x16, x16, x15, lsl #3
	ldur	x16, [x16, #-8]
	and	x17, x17, #0xffffffff
	msr	daif, x17
	br	x16				/* x16: BTI accepts it at the target's `bti c` */

	/*
	 * Full (x16: the limit), or the ring's cache still empty (limit 0). A
	 * full lossless ring: ring the doorbell once (x15: where it goes on);
	 * still full then, the oldest record is one this CPU's interrupted
	 * context is writing: drop the event and count it.
	 */
.Lfull:
	clrex
	cbz	x16, .Lfill
	adr	x15, .Lagain
	ldr	x13, cfg + VT_CFG_DOORBELL_PC
	br	x13
.Lagain:
	BTI_J
	ldxr	x12, [x11]
	ldr	x13, [x11, #VT_HDR_TAIL]
	sub	x13, x12, x13
	ldr	x16, [x11, #VT_HDR_LIMIT]
	cmp	x13, x16
	b.hs	.Ldrop
	add	x13, x12, #1
	stxr	w16, x13, [x11]
	cbnz	w16, .Lagain
	b	.Lreserved
.Ldrop:
	clrex
	add	x13, x11, #VT_HDR_DROPPED
3:	ldxr	x12, [x13]
	add	x12, x12, #1
	stxr	w16, x12, [x13]
	cbnz	w16, 3b
	b	.Lentry_out_chained

	/*
	 * The ring's first event: its cache from the configuration block when
	 * every field the common path reads is known (pid and comm are with
	 * the task: the host's promise), the limit last. Nothing reserved yet.
	 */
.Lfill:
	ldr	x12, cfg + VT_CFG_CUR_OFF
	ldr	x13, cfg + VT_CFG_PC_OFF
	orr	x12, x12, x13
	ldr	x13, cfg + VT_CFG_TIF_OFF
	orr	x12, x12, x13
	ldr	x13, cfg + VT_CFG_MIGR_OFF
	orr	x12, x12, x13
	tbnz	x12, #63, .Lgeneral		/* one of them -1: unknown */
	ldr	x12, cfg + VT_CFG_RING_RECS
	ldr	x13, cfg + VT_CFG_RING_BYTES
	madd	x12, x13, x10, x12		/* the ring's records (x10: its CPU) */
	mov	x13, #((VT_REC_FLAG_CTX | VT_REC_FLAG_TASK) << 16)
	orr	x13, x13, x10
	stp	x12, x13, [x11, #VT_HDR_RECS]
	ldr	x12, cfg + VT_CFG_LIMIT
	str	x12, [x11, #VT_HDR_LIMIT]
	b	.Lreserve

	/* Any field unknown, or the CPU's number, or a CPU without a ring: everything checked. */
.Lgeneral:
	RECORD	0

	/*
	 * --graph, from .Lentry_tail (x16: the record, x13: its commit marker,
	 * x10: the CPU, x14: the task, x9: the caller's return address; x11,
	 * x12, x15 and x0-x5 free; the arguments in the record): push a frame on
	 * the task's shadow stack and point the return at vt_stub_return.
	 * Interrupts are masked, but each step is still ordered as on x86_64
	 * (a frame reserved with its key cleared before it is filled).
	 */
.Lgraph_entry:
	cbz	x14, .Lunhooked			/* no task: nowhere to keep the frame */
	SHADOW_HASH x5, x14, x1
	SHADOW_TABLE x5, x4, x1			/* x4: the home table */
	SHADOW_REACH x3, x4, x1
	mov	x0, x5
	cbz	x3, .Lg_claim
1:	SHADOW_TABLE x0, x11, x1
	ldr	x15, [x11, #VT_SHADOW_TASK]
	cmp	x15, x14
	b.eq	.Lg_found
	add	x0, x0, #1
	subs	x3, x3, #1
	b.ne	1b
	/*
	 * None in reach is the task's: it takes the first free table from its
	 * home on, the home's reach first made to cover it (so that no lookup
	 * misses the table once it is the task's).
	 */
.Lg_claim:
	mov	x0, x5
	mov	x3, #1				/* x3: the reach that covers table x0 */
2:	SHADOW_TABLE x0, x11, x1
	ldr	x15, [x11, #VT_SHADOW_TASK]
	cbz	x15, 3f
	add	x0, x0, #1
	add	x3, x3, #1
	cmp	x3, #VT_SHADOW_PROBE
	b.ls	2b
	b	.Lunhooked			/* every table in reach is taken */
3:	add	x1, x4, #VT_SHADOW_REACH
4:	ldxr	x2, [x1]
	cmp	x2, x3
	b.hs	5f
	stxr	w2, x3, [x1]
	cbnz	w2, 4b
	b	6f
5:	clrex
6:	ldxr	x15, [x11]			/* VT_SHADOW_TASK is at 0 */
	cbnz	x15, .Lg_taken
	stxr	w15, x14, [x11]
	cbnz	w15, 6b
.Lg_found:
	/* x11: the table */
	ldr	x1, [x11, #VT_SHADOW_DEPTH]
	cmp	x1, #VT_SHADOW_FRAMES
	b.hi	.Lunhooked			/* not a depth this stub wrote */
	mov	x0, sp				/* x0: this call's key */
	/*
	 * Dead frames: the top frame's key lies on the task's own stack below
	 * this call's (its function never returned; the task left it, e.g.
	 * do_exit, and its task_struct went to a new task). A key equal to
	 * this one is a tail call's caller, alive.
	 */
	ldr	x2, cfg + VT_CFG_STACK_OFF
	cmn	x2, #1
	b.eq	4f
	ldr	x2, [x14, x2]			/* x2: the task's stack */
	ldr	x3, [x11, #VT_SHADOW_STACK]
	cmp	x3, x2
	b.eq	8f
	/*
	 * Another stack than the frames were pushed on: they are a dead
	 * task's, whose task_struct this task reuses (do_exit never returns).
	 */
	mov	x1, #0
	str	xzr, [x11, #VT_SHADOW_DEPTH]
	str	x2, [x11, #VT_SHADOW_STACK]
8:	ldr	x4, cfg + VT_CFG_STACK_SIZE
	sub	x3, x0, x2
	cmp	x3, x4
	b.hs	4f				/* this call is not on it (an interrupt stack) */
5:	cbz	x1, 4f
	add	x3, x11, x1, lsl #VT_FRAME_SHIFT
	ldr	x3, [x3, #VT_SHADOW_FRAME0 - VT_FRAME_SIZE + VT_FRAME_SLOT]
	cmp	x3, x0
	b.hs	4f
	sub	x3, x3, x2
	cmp	x3, x4
	b.hs	4f
	sub	x1, x1, #1
	str	x1, [x11, #VT_SHADOW_DEPTH]
	b	5b
4:	cmp	x1, #VT_SHADOW_FRAMES
	b.hs	.Lunhooked			/* full: the call returns as it would */
	add	x3, x11, x1, lsl #VT_FRAME_SHIFT
	add	x3, x3, #VT_SHADOW_FRAME0	/* x3: the frame */
	str	xzr, [x3, #VT_FRAME_SLOT]
	add	x2, x1, #1
	str	x2, [x11, #VT_SHADOW_DEPTH]
	str	x9, [x3, #VT_FRAME_RET]
	ldr	x2, [x16, #VT_REC_FUNC]
	str	x2, [x3, #VT_FRAME_FUNC]
	ldr	x2, [x16, #VT_REC_TSC]
	str	x2, [x3, #VT_FRAME_TSC]
	str	x0, [x3, #VT_FRAME_SLOT]
	ldr	x9, cfg + VT_CFG_RETURN		/* the hook: the function returns there */
	str	w1, [x16, #VT_REC_DEPTH]
	SETFLAG	VT_REC_FLAG_HOOKED
	b	.Lg_back
.Lg_taken:
	clrex					/* another CPU's task took it first */
.Lunhooked:
	/* The ring's header again: its CPU's, or ring 0's for an unknown CPU. */
	ldr	w0, cfg + VT_CFG_NRINGS
	cmp	w10, w0
	csel	w0, w10, wzr, lo
	ldr	x1, cfg + VT_CFG_RING_HDRS
	add	x1, x1, x0, lsl #VT_HDR_SHIFT
	add	x1, x1, #VT_HDR_UNHOOKED
6:	ldxr	x0, [x1]
	add	x0, x0, #1
	stxr	w2, x0, [x1]
	cbnz	w2, 6b
.Lg_back:
	ldp	x0, x1, [x16, #VT_REC_ARGS]	/* the arguments back as the function gets them */
	ldp	x2, x3, [x16, #VT_REC_ARGS + 16]
	ldp	x4, x5, [x16, #VT_REC_ARGS + 32]
	b	.Lpublish_chained

	/*
	 * A hooked call returns here (its `ret` came to x30; sp is what it was
	 * at the call). Finds the frame by sp on the current task's shadow
	 * stack, pops it (and any frame above it, left by a call that never
	 * returned), records the exit and returns to the original address with
	 * x0-x8 untouched: x0-x3 wait below sp while they serve as scratch.
	 */
	.globl	vt_stub_return
vt_stub_return:
	stp	x0, x1, [sp, #-32]!
	stp	x2, x3, [sp, #16]
	mrs	x17, daif
	msr	daifset, #3
	add	x9, sp, #32			/* x9: the key */
	mrs	x10, sp_el0			/* the task: --graph hooks only where it is known */
	SHADOW_HASH x11, x10, x15
	SHADOW_TABLE x11, x12, x15
	SHADOW_REACH x16, x12, x15
	cbz	x16, .Lr_scan
1:	SHADOW_TABLE x11, x12, x15
	ldr	x15, [x12, #VT_SHADOW_TASK]
	cmp	x15, x10
	b.eq	2f
	add	x11, x11, #1
	subs	x16, x16, #1
	b.ne	1b
	b	.Lr_scan
2:	ldr	x13, [x12, #VT_SHADOW_DEPTH]
	cmp	x13, #VT_SHADOW_FRAMES
	b.hi	.Lr_scan
3:	cbz	x13, .Lr_scan
	sub	x13, x13, #1
	add	x14, x12, x13, lsl #VT_FRAME_SHIFT
	add	x14, x14, #VT_SHADOW_FRAME0
	ldr	x15, [x14, #VT_FRAME_SLOT]
	cmp	x15, x9
	b.ne	3b
.Lr_found:
	/* x12: the table, x13: the frame's index, x14: the frame, x10: the table's task */
	ldr	x9, [x14, #VT_FRAME_RET]
	ldr	x30, [x14, #VT_FRAME_FUNC]
	add	x30, x30, #8			/* as at the entry: the slot + 8 */
	ldr	x2, [x14, #VT_FRAME_TSC]
	mov	x3, x13
	str	x13, [x12, #VT_SHADOW_DEPTH]	/* popped: copied out first */
	cbnz	x13, 4f
5:	ldxr	x15, [x12]			/* empty: free the table, unless it is no longer the task's */
	cmp	x15, x10
	b.ne	6f
	stxr	w15, xzr, [x12]
	cbnz	w15, 5b
	b	4f
6:	clrex
4:	RECORD	1

	/*
	 * Not on the current task's stack: `current` changed inside the call
	 * (a context switch function a kernel lets ftrace trace). The key is
	 * unique among live frames, so the top frame of every table is
	 * searched for it.
	 */
.Lr_scan:
	ldr	x11, cfg + VT_CFG_SHADOW_MASK
	add	x11, x11, #1
	ldr	x12, cfg + VT_CFG_SHADOW
7:	ldr	x13, [x12, #VT_SHADOW_DEPTH]
	cbz	x13, 8f
	cmp	x13, #VT_SHADOW_FRAMES
	b.hi	8f
	sub	x13, x13, #1
	add	x14, x12, x13, lsl #VT_FRAME_SHIFT
	add	x14, x14, #VT_SHADOW_FRAME0
	ldr	x15, [x14, #VT_FRAME_SLOT]
	cmp	x15, x9
	b.ne	8f
	ldr	x10, [x12, #VT_SHADOW_TASK]
	cbnz	x10, .Lr_found
8:	add	x12, x12, #VT_SHADOW_SIZE
	subs	x11, x11, #1
	b.ne	7b
	/*
	 * No frame for this return anywhere: the original address is gone,
	 * so the guest cannot go on. Stop it where its oops names the stub.
	 */
	brk	#0x800

	/*
	 * The doorbell on a page of its own: QEMU runs every instruction of a
	 * page that holds a breakpoint as a translation block of its own (its
	 * check_for_breakpoints), which made every traced call several times
	 * slower while the breakpoint shared the stub's page. VT_STUB_ONE_PAGE
	 * builds the image that fits one page, for a kernel with one page of
	 * padding or none (the guard page after _end; docs/STUB-PLACEMENT.md).
	 * Its doorbell goes below its page where the padding allows (the host
	 * writes one there); otherwise the host sets no breakpoint at all and
	 * a full ring waits here for the host's consumer, which drains every
	 * ring every few milliseconds, to make room: at most 2^26 rounds (a
	 * second or so under QEMU), then on through vt_stub_doorbell (no
	 * breakpoint: a plain branch back), where a ring still full drops
	 * the event and counts it. x11: the ring's header; x12, x13 and x16
	 * are scratch here as on the way back.
	 */
	/*
	 * The chained entries (VT_CFG_CHAIN): entry k is called from a slot
	 * the guest's own ftrace enabled towards target k (`mov x9, x30; bl`
	 * as its own call). It marks x17 with k + 1 and takes the general way,
	 * which checks each field (the common path stays as it was) and
	 * leaves through .Lentry_out_chained, to target k.
	 */
	.balign	VT_CHAIN_STRIDE
	.globl	vt_stub_chain
vt_stub_chain:
	.set	.Lk, 1
	.rept	CHAIN_N
	mrs	x17, daif
	msr	daifset, #3
	mov	x15, #.Lk
	b	.Lchain_common
	.set	.Lk, .Lk + 1
	.endr
.if VT_CHAIN_STRIDE != 16
	.error "a chained entry is 4 instructions: VT_CHAIN_STRIDE must be 16"
.endif
.Lchain_common:
	orr	x17, x17, x15, lsl #32
	b	.Lgeneral

	/* Their targets, written by the host while every vCPU is paused. */
	.balign	8
.Lchain_tgt:
	.fill	CHAIN_N, 8, 0

#ifdef VT_STUB_ONE_PAGE
	.balign	16
	.globl	vt_stub_wait
vt_stub_wait:
	BTI_J
	movz	x13, #(1 << 26) >> 16, lsl #16
1:	ldr	x12, [x11]
	ldr	x16, [x11, #VT_HDR_TAIL]
	sub	x12, x12, x16
	ldr	x16, cfg + VT_CFG_LIMIT
	cmp	x12, x16
	b.lo	.Ldoorbell
	yield
	subs	x13, x13, #1
	b.ne	1b
#else
	.balign	4096
#endif
	.globl	vt_stub_doorbell
vt_stub_doorbell:
.Ldoorbell:
	BTI_J					/* the host's breakpoint: x11 is the ring's header */
	br	x15				/* where the full ring's way goes on */

	.globl	vt_stub_end
vt_stub_end:
