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
 *
 * The common path needs no stack: it reads its ring's geometry from the
 * ring header's cache (VT_HDR_RECS, proto/trace.h), filled from the
 * configuration block at the ring's first event when every field it reads
 * is known (its limit is 0 until then, so that event takes the full ring's
 * way), and checks no "-1 = unknown" beyond the CPU's; otherwise each event
 * takes RECORD 0's way (.Lgeneral), which checks every field. The
 * arguments are recorded when a client asked for --args (VT_CFG_ARGS) or
 * --graph, one test on the common path with the rarer flags. 70
 * instructions per traced call on the common path, the slot's two
 * included (bench/stub-insns).
 *
 * A slot the guest's own ftrace enabled calls one of the chained entries
 * (vt_stub_chain, issue 37): the same record by the general way, then on
 * to the guest's target; the common path does not change for them.
 *
 * With --graph (VT_CFG_GRAPH) an entry also hooks the call's return, as
 * the x86_64 and arm64 stubs do (docs/TRACING.md "Call graphs"): a frame on
 * the task's shadow stack keeps ra, and ra becomes vt_stub_return, which
 * the function's own `ret` then reaches. A frame is known by sp at the
 * call. The entry spends a0-a5 as scratch there (the record holds them,
 * reloaded before the function runs); vt_stub_return leaves a0-a7 alone
 * (a0 and a1 are the return value).
 */
#include "proto/trace.h"

/* The record's flags: their low byte (every VT_REC_FLAG_*), then migration_disabled. */
#define REC_FLAGS	(VT_REC_CPU_FLAGS + 2)
/* Chained entries (VT_CFG_CHAIN): how many distinct targets the guest's ftrace may have at once. */
#define CHAIN_N		32
.if VT_REC_FLAG_HOOKED > 0x80 || VT_REC_MIGR_SHIFT != 8
	.error "the record's flags no longer fit their first byte"
.endif

	.option	norelax
	.option	nopic
	.text
	.globl	vt_stub_image
vt_stub_image:
cfg:
	.fill	VT_CFG_RETURN, 1, 0
	/* Until the host fills the block: where vt_stub_return and vt_stub_doorbell lie in this image. */
	.dword	vt_stub_return - vt_stub_image
.if VT_CFG_DOORBELL_PC != VT_CFG_RETURN + 8
	.error "VT_CFG_DOORBELL_PC no longer follows VT_CFG_RETURN"
.endif
	.dword	vt_stub_doorbell - vt_stub_image
	.fill	VT_CFG_CHAIN - VT_CFG_DOORBELL_PC - 8, 1, 0
	/* The chained entries and their targets (VT_CFG_CHAIN, _TGT, _N; issue 37). */
	.dword	vt_stub_chain - vt_stub_image
	.dword	.Lchain_tgt - vt_stub_image
	.word	CHAIN_N
	.fill	VT_CFG_SIZE - VT_CFG_CHAIN_N - 4, 1, 0

/*
 * Where a task keeps its shadow stack: SHADOW_HASH (proto/trace.h, the
 * host's hash too) puts the hash of its pointer in h; SHADOW_TABLE the
 * address of table h (modulo their number) in t, using k (s0: the
 * configuration block). Callers probe h, h + 1, ...
 */
.macro SHADOW_TABLE h, t, k
	ld	\k, VT_CFG_SHADOW_MASK(s0)
	and	\t, \h, \k
	slli	\t, \t, VT_SHADOW_SHIFT
	ld	\k, VT_CFG_SHADOW(s0)
	add	\t, \k, \t
.endm
/*
 * How many tables from the home table \home on may be a task's whose hash
 * leads there (VT_SHADOW_REACH, at most VT_SHADOW_PROBE) in \n, using k.
 */
.macro SHADOW_REACH n, home, k
	ld	\n, VT_SHADOW_REACH(\home)
	li	\k, VT_SHADOW_PROBE
	bleu	\n, \k, .Lreach\@
	mv	\n, \k
.Lreach\@:
.endm

/* Sets flag in the record's flags (t5), using t2. */
.macro SETFLAG flag
	lhu	t2, REC_FLAGS(t5)
	ori	t2, t2, \flag
	sh	t2, REC_FLAGS(t5)
.endm

/*
 * The arguments for --args, and for --graph, whose hook spends a0-a5 and
 * reloads them from the record (t5); the flag for --args only (cfg: the
 * configuration block; t2 spent).
 */
.macro ARGS cfg
	sd	a0, VT_REC_ARGS(t5)
	sd	a1, VT_REC_ARGS + 8(t5)
	sd	a2, VT_REC_ARGS + 16(t5)
	sd	a3, VT_REC_ARGS + 24(t5)
	sd	a4, VT_REC_ARGS + 32(t5)
	sd	a5, VT_REC_ARGS + 40(t5)
	lw	t2, VT_CFG_ARGS(\cfg)
	beqz	t2, .Lno_args\@
	SETFLAG	VT_REC_FLAG_ARGS
.Lno_args\@:
.endm

/*
 * One record, from the CPU number to the publishing store, then back to the
 * traced code, every field checked: kind 0 an entry (t0 the slot + 8, ra
 * the caller's return address; s0-s2 at 0(sp), 32 bytes), which goes on at
 * .Lentry_tail for what clients asked for, kind 1 an exit (t0 its slot + 8, ra
 * where it returns to, a0 the return value; s0-s2 at 0(sp), the entry's
 * counter at 24(sp), the depth at 32(sp), 48 bytes). s0 is the
 * configuration block, t6 sstatus at entry (SIE cleared).
 */
.macro RECORD kind
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

.Lretry\kind:
	lr.d	t2, (s1)			/* VT_HDR_HEAD is at 0 */
	ld	t3, VT_HDR_TAIL(s1)
	sub	t3, t2, t3
	ld	t4, VT_CFG_LIMIT(s0)
	bgeu	t3, t4, .Lfull\kind
	addi	t3, t2, 1
	sc.d	t4, t3, (s1)
	bnez	t4, .Lretry\kind
.Lreserved\kind:
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
	andi	t4, t6, 2
	seqz	t4, t4				/* SIE clear at entry: irqs off */
.if \kind == 1
	sd	a0, VT_REC_RETVAL(t5)
	ld	t2, 24(sp)
	sd	t2, VT_REC_CALLTIME(t5)
	lw	t2, 32(sp)
	sw	t2, VT_REC_DEPTH(t5)
	ori	t4, t4, VT_REC_FLAG_EXIT
.endif

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
	ld	s2, 0(t2)
	sd	s2, VT_REC_COMM(t5)
	ld	s2, 8(t2)
	sd	s2, VT_REC_COMM + 8(t5)
4:	sd	s1, VT_REC_TASK(t5)
	slli	t4, t4, 16
	or	t4, t4, t1			/* cpu | flags << 16 */
	sw	t4, VT_REC_CPU_FLAGS(t5)
.if \kind == 0
	j	.Lentry_tail
.endif
	fence	rw, w				/* publish: every store above is seen first */
	sw	t3, VT_REC_COMMIT(t5)

.Ldone\kind:
.if \kind == 0
	/*
	 * A chained entry's call (k + 1 in t6's bits 40-45, which sstatus
	 * leaves 0: its UXL is bits 32-33, SD bit 63; SIE is bit 1):
	 * its target, read before interrupts are back on (the host may give
	 * entry k another once this CPU has left the stub), then on to it
	 * with t0 (the slot + 8) and ra as the slot's call left them; t1-t6
	 * are free at a function's entry. t2 is 0 for any other call.
	 */
	srli	t2, t6, 40
	andi	t2, t2, 63
	beqz	t2, 5f
	lla	t1, .Lchain_tgt
	slli	t2, t2, 3
	add	t1, t1, t2
	ld	t2, -8(t1)
5:
.endif
	andi	t6, t6, 2
	csrs	sstatus, t6
	ld	s0, 0(sp)
	ld	s1, 8(sp)
	ld	s2, 16(sp)
.if \kind == 0
	addi	sp, sp, 32
	bnez	t2, 6f
	jr	t0
6:	jr	t2
.else
	addi	sp, sp, 48
	ret					/* ra: where the function returns to */
.endif

	/*
	 * Lossless ring full: ring the doorbell once (s2: where it goes on; the
	 * lone lr.d's reservation just lapses); still full then, the oldest
	 * record is one this CPU's interrupted context is writing: drop the
	 * event and count it.
	 */
.Lfull\kind:
	lla	s2, .Lagain\kind
	j	.Ldoorbell			/* a local label: no relocation left in the flat image */
.Lagain\kind:
	lr.d	t2, (s1)
	ld	t3, VT_HDR_TAIL(s1)
	sub	t3, t2, t3
	ld	t4, VT_CFG_LIMIT(s0)
	bgeu	t3, t4, .Ldrop\kind
	addi	t3, t2, 1
	sc.d	t4, t3, (s1)
	bnez	t4, .Lagain\kind
	j	.Lreserved\kind
.Ldrop\kind:
	addi	t2, s1, VT_HDR_DROPPED
	li	t3, 1
	amoadd.d zero, t3, (t2)
	j	.Ldone\kind
.endm

	.globl	vt_stub_entry
vt_stub_entry:
	csrrci	t6, sstatus, 2			/* t6: sstatus at entry; SIE cleared */
	lla	t1, cfg				/* t1: the configuration block (pc-relative: the link resolves it) */
	/* The CPU's own ring (thread_info.cpu of tp): its number known, and below the rings'. */
	ld	t2, VT_CFG_CPU_OFF(t1)
	addi	t3, t2, 1
	beqz	t3, .Lgeneral
	add	t2, t2, tp
	lwu	t2, 0(t2)			/* t2: the CPU */
	lwu	t3, VT_CFG_NRINGS(t1)
	bgeu	t2, t3, .Lgeneral
	ld	t4, VT_CFG_RING_HDRS(t1)
	slli	t3, t2, VT_HDR_SHIFT
	add	t4, t4, t3			/* t4: the ring's header */
	/* Its limit is 0 until its cache is filled: its first event goes to .Lfull. */
.Lreserve:
	lr.d	t2, (t4)			/* VT_HDR_HEAD is at 0 */
	ld	t3, VT_HDR_TAIL(t4)
	sub	t3, t2, t3
	ld	t5, VT_HDR_LIMIT(t4)
	bgeu	t3, t5, .Lfull
	addi	t3, t2, 1
	sc.d	t5, t3, (t4)
	bnez	t5, .Lreserve
.Lreserved:
	/* t2: index, t3: index + 1, the commit marker */
	ld	t5, VT_CFG_RING_MASK(t1)
	and	t5, t2, t5
	slli	t5, t5, VT_REC_SHIFT
	ld	t2, VT_HDR_RECS(t4)
	add	t5, t2, t5			/* t5: the record */
	ld	t2, VT_HDR_CPU_FLAGS(t4)	/* the CPU, the flags every event here has, commit 0 ... */
	sd	t2, VT_REC_CPU_FLAGS(t5)	/* ... first: torn until committed */
	fence	w, w
	rdtime	t2
	sd	t2, VT_REC_TSC(t5)
	addi	t2, t0, -8
	sd	t2, VT_REC_FUNC(t5)
	sd	ra, VT_REC_PARENT(t5)
	andi	t2, t6, 2
	beqz	t2, .Lirqs_off			/* SIE clear at entry */
.Lirqs_on:
	/* The task (tp): pid, comm, the preempt count (the generic one, without a resched bit). */
	sd	tp, VT_REC_TASK(t5)
	ld	t2, VT_CFG_PID_OFF(t1)
	add	t2, t2, tp
	lw	t2, 0(t2)
	sw	t2, VT_REC_PID(t5)
	ld	t2, VT_CFG_COMM_OFF(t1)
	add	t2, t2, tp
	ld	t4, 0(t2)
	sd	t4, VT_REC_COMM(t5)
	ld	t4, 8(t2)
	sd	t4, VT_REC_COMM + 8(t5)
	ld	t2, VT_CFG_PC_OFF(t1)
	add	t2, t2, tp
	lw	t2, 0(t2)
	sw	t2, VT_REC_PREEMPT(t5)
	/*
	 * Done, unless the thread flags' need-resched bit is set, migration
	 * is disabled, or a client asked for --graph or --args (VT_CFG_GRAPH
	 * and VT_CFG_ARGS in one 64-bit word): then .Lmore.
	 */
	ld	t2, VT_CFG_TIF_OFF(t1)
	add	t2, t2, tp
	ld	t2, 0(t2)
	ld	t4, VT_CFG_TIF_MASK(t1)
	and	t2, t2, t4
	bnez	t2, .Lneed_resched
	ld	t2, VT_CFG_MIGR_OFF(t1)
	add	t2, t2, tp
	lhu	t2, 0(t2)
	ld	t4, VT_CFG_GRAPH(t1)
	or	t2, t2, t4
	bnez	t2, .Lmore
	fence	rw, w				/* publish: every store above is seen first */
	sw	t3, VT_REC_COMMIT(t5)
.Lentry_out:
	andi	t6, t6, 2
	csrs	sstatus, t6
	jr	t0

.Lirqs_off:
	SETFLAG	VT_REC_FLAG_IRQS_OFF
	j	.Lirqs_on
.Lneed_resched:
	SETFLAG	VT_REC_FLAG_NEED_RESCHED
.Lmore:
	/* migrate-disable (at most 15), the flags' second byte */
	ld	t2, VT_CFG_MIGR_OFF(t1)
	add	t2, t2, tp
	lhu	t2, 0(t2)
	li	t4, 15
	bleu	t2, t4, 1f
	mv	t2, t4
1:	lbu	t4, REC_FLAGS + 1(t5)
	or	t4, t4, t2
	sb	t4, REC_FLAGS + 1(t5)
	/* What clients asked for, as at .Lentry_tail. */
	ld	t2, VT_CFG_GRAPH(t1)		/* and VT_CFG_ARGS */
	beqz	t2, .Lpublish_fast
	ARGS	t1
	lw	t2, VT_CFG_GRAPH(t1)
	beqz	t2, .Lpublish_fast
	/* --graph: RECORD 0's frame and registers (s0-s2 saved, s0 the block, s1 the task, t1 the CPU). */
	addi	sp, sp, -32
	sd	s0, 0(sp)
	sd	s1, 8(sp)
	sd	s2, 16(sp)
	mv	s0, t1
	mv	s1, tp
	lhu	t1, VT_REC_CPU_FLAGS(t5)	/* the ring's CPU */
	j	.Lgraph_entry
.Lpublish_fast:
	fence	rw, w				/* publish: every store above is seen first */
	sw	t3, VT_REC_COMMIT(t5)
	j	.Lentry_out

	/*
	 * What clients asked for, from RECORD 0 (its frame: t5 the record with
	 * all but the arguments, the return hook and the commit written, s1
	 * the task or 0, t3 the commit marker, t1 the CPU).
	 */
.Lentry_tail:
	ld	t2, VT_CFG_GRAPH(s0)		/* and VT_CFG_ARGS */
	beqz	t2, .Lpublish
	ARGS	s0
	lw	t2, VT_CFG_GRAPH(s0)
	bnez	t2, .Lgraph_entry
.Lpublish:
	fence	rw, w				/* publish: every store above is seen first */
	sw	t3, VT_REC_COMMIT(t5)
	j	.Ldone0

	/*
	 * Full (t5: the limit), or the ring's cache still empty (limit 0). A
	 * full lossless ring: ring the doorbell once (the host's protocol: s1
	 * the ring's header; s2 where it goes on); still full then, the
	 * oldest record is one this CPU's interrupted context is writing:
	 * drop the event and count it.
	 */
.Lfull:
	beqz	t5, .Lfill
	addi	sp, sp, -16
	sd	s1, 0(sp)
	sd	s2, 8(sp)
	mv	s1, t4
	lla	s2, .Lrang
	j	.Ldoorbell
.Lrang:
	ld	s1, 0(sp)
	ld	s2, 8(sp)
	addi	sp, sp, 16
.Lagain:
	lr.d	t2, (t4)
	ld	t3, VT_HDR_TAIL(t4)
	sub	t3, t2, t3
	ld	t5, VT_HDR_LIMIT(t4)
	bgeu	t3, t5, .Ldrop
	addi	t3, t2, 1
	sc.d	t5, t3, (t4)
	bnez	t5, .Lagain
	j	.Lreserved
.Ldrop:
	addi	t2, t4, VT_HDR_DROPPED
	li	t3, 1
	amoadd.d zero, t3, (t2)
	j	.Lentry_out

	/*
	 * The ring's first event: its cache from the configuration block when
	 * every field the common path reads is known (pid and comm are with
	 * the task: the host's promise), the limit last. Nothing reserved yet.
	 */
.Lfill:
	ld	t2, VT_CFG_CUR_OFF(t1)
	ld	t3, VT_CFG_PC_OFF(t1)
	or	t2, t2, t3
	ld	t3, VT_CFG_TIF_OFF(t1)
	or	t2, t2, t3
	ld	t3, VT_CFG_MIGR_OFF(t1)
	or	t2, t2, t3
	bltz	t2, .Lgeneral			/* one of them -1: unknown */
	ld	t2, VT_CFG_RING_HDRS(t1)
	sub	t2, t4, t2
	srli	t2, t2, VT_HDR_SHIFT		/* the ring: this CPU */
	ld	t3, VT_CFG_RING_BYTES(t1)
	mul	t3, t3, t2
	ld	t5, VT_CFG_RING_RECS(t1)
	add	t3, t3, t5
	sd	t3, VT_HDR_RECS(t4)
	li	t3, (VT_REC_FLAG_CTX | VT_REC_FLAG_TASK) << 16
	or	t2, t2, t3
	sd	t2, VT_HDR_CPU_FLAGS(t4)
	ld	t2, VT_CFG_LIMIT(t1)
	sd	t2, VT_HDR_LIMIT(t4)
	j	.Lreserve

	/* Any field unknown, or the CPU's number, or a CPU without a ring: everything checked. */
.Lgeneral:
	addi	sp, sp, -32
	sd	s0, 0(sp)
	sd	s1, 8(sp)
	sd	s2, 16(sp)
	mv	s0, t1				/* s0: the configuration block */
	RECORD	0

	/*
	 * --graph, from .Lmore or .Lentry_tail (t5: the record, t3: its commit marker,
	 * t1: the CPU, s1: the task, ra: the caller's return address; t2, t4,
	 * s2 and a0-a5 free; the arguments in the record): push a frame on the task's
	 * shadow stack and point the return at vt_stub_return. Interrupts are
	 * masked, but each step is still ordered as on x86_64 (a frame
	 * reserved with its key cleared before it is filled).
	 */
.Lgraph_entry:
	beqz	s1, .Lunhooked			/* no task: nowhere to keep the frame */
	SHADOW_HASH a5, s1, a1
	SHADOW_TABLE a5, a2, a1			/* a2: the home table */
	SHADOW_REACH a3, a2, a1
	mv	a0, a5
	beqz	a3, .Lg_claim
1:	SHADOW_TABLE a0, a4, a1
	ld	t2, VT_SHADOW_TASK(a4)
	beq	t2, s1, .Lg_found
	addi	a0, a0, 1
	addi	a3, a3, -1
	bnez	a3, 1b
	/*
	 * None in reach is the task's: it takes the first free table from its
	 * home on, the home's reach first made to cover it (so that no lookup
	 * misses the table once it is the task's).
	 */
.Lg_claim:
	mv	a0, a5
	li	a3, 1				/* a3: the reach that covers table a0 */
	li	s2, VT_SHADOW_PROBE
2:	SHADOW_TABLE a0, a4, a1
	ld	t2, VT_SHADOW_TASK(a4)
	beqz	t2, 3f
	addi	a0, a0, 1
	addi	a3, a3, 1
	bleu	a3, s2, 2b
	j	.Lunhooked			/* every table in reach is taken */
3:	addi	a1, a2, VT_SHADOW_REACH
	amomaxu.d zero, a3, (a1)
4:	lr.d	t2, (a4)			/* VT_SHADOW_TASK is at 0 */
	bnez	t2, .Lunhooked			/* another CPU's task took it first */
	sc.d	t2, s1, (a4)
	bnez	t2, 4b
.Lg_found:
	/* a4: the table */
	ld	a1, VT_SHADOW_DEPTH(a4)
	li	t2, VT_SHADOW_FRAMES
	bgtu	a1, t2, .Lunhooked		/* not a depth this stub wrote */
	addi	a0, sp, 32			/* a0: this call's key, sp at the call */
	/*
	 * Dead frames: the top frame's key lies on the task's own stack below
	 * this call's (its function never returned; the task left it). A key
	 * equal to this one is a tail call's caller, alive.
	 */
	ld	a2, VT_CFG_STACK_OFF(s0)
	addi	t2, a2, 1
	beqz	t2, 4f
	add	a2, a2, s1
	ld	a2, 0(a2)			/* a2: the task's stack */
	ld	t2, VT_SHADOW_STACK(a4)
	beq	t2, a2, 8f
	/*
	 * Another stack than the frames were pushed on: they are a dead
	 * task's, whose task_struct this task reuses (do_exit never returns).
	 */
	li	a1, 0
	sd	zero, VT_SHADOW_DEPTH(a4)
	sd	a2, VT_SHADOW_STACK(a4)
8:	ld	a5, VT_CFG_STACK_SIZE(s0)
	sub	a3, a0, a2
	bgeu	a3, a5, 4f			/* this call is not on it (an interrupt stack) */
5:	beqz	a1, 4f
	slli	a3, a1, VT_FRAME_SHIFT
	add	a3, a4, a3
	ld	a3, VT_SHADOW_FRAME0 - VT_FRAME_SIZE + VT_FRAME_SLOT(a3)
	bgeu	a3, a0, 4f
	sub	a3, a3, a2
	bgeu	a3, a5, 4f
	addi	a1, a1, -1
	sd	a1, VT_SHADOW_DEPTH(a4)
	j	5b
4:	li	t2, VT_SHADOW_FRAMES
	bgeu	a1, t2, .Lunhooked		/* full: the call returns as it would */
	slli	a3, a1, VT_FRAME_SHIFT
	add	a3, a4, a3
	addi	a3, a3, VT_SHADOW_FRAME0	/* a3: the frame */
	sd	zero, VT_FRAME_SLOT(a3)
	addi	a2, a1, 1
	sd	a2, VT_SHADOW_DEPTH(a4)
	sd	ra, VT_FRAME_RET(a3)
	ld	a2, VT_REC_FUNC(t5)
	sd	a2, VT_FRAME_FUNC(a3)
	ld	a2, VT_REC_TSC(t5)
	sd	a2, VT_FRAME_TSC(a3)
	sd	a0, VT_FRAME_SLOT(a3)
	ld	ra, VT_CFG_RETURN(s0)		/* the hook: the function returns there */
	sw	a1, VT_REC_DEPTH(t5)
	SETFLAG	VT_REC_FLAG_HOOKED
	j	.Lg_back
.Lunhooked:
	/* The ring's header again: its CPU's, or ring 0's for an unknown CPU. */
	lwu	a0, VT_CFG_NRINGS(s0)
	mv	a1, t1
	bltu	a1, a0, 6f
	li	a1, 0
6:	slli	a1, a1, VT_HDR_SHIFT
	ld	a0, VT_CFG_RING_HDRS(s0)
	add	a1, a0, a1
	addi	a1, a1, VT_HDR_UNHOOKED
	li	a0, 1
	amoadd.d zero, a0, (a1)
.Lg_back:
	ld	a0, VT_REC_ARGS(t5)		/* the arguments back as the function gets them */
	ld	a1, VT_REC_ARGS + 8(t5)
	ld	a2, VT_REC_ARGS + 16(t5)
	ld	a3, VT_REC_ARGS + 24(t5)
	ld	a4, VT_REC_ARGS + 32(t5)
	ld	a5, VT_REC_ARGS + 40(t5)
	j	.Lpublish

	/*
	 * A hooked call returns here (its `ret` came to ra; sp is what it was
	 * at the call). Finds the frame by sp on the current task's shadow
	 * stack, pops it (and any frame above it, left by a call that never
	 * returned), records the exit and returns to the original address.
	 */
	.globl	vt_stub_return
vt_stub_return:
	addi	sp, sp, -48
	sd	s0, 0(sp)
	sd	s1, 8(sp)
	sd	s2, 16(sp)
	csrrci	t6, sstatus, 2
	lla	s0, cfg
	addi	t0, sp, 48			/* t0: the key */
	mv	s1, tp				/* the task: --graph hooks only where it is known */
	SHADOW_HASH t1, s1, t2
	SHADOW_TABLE t1, t3, t2
	SHADOW_REACH s2, t3, t2
	beqz	s2, .Lr_scan
1:	SHADOW_TABLE t1, t3, t2
	ld	t2, VT_SHADOW_TASK(t3)
	beq	t2, s1, 2f
	addi	t1, t1, 1
	addi	s2, s2, -1
	bnez	s2, 1b
	j	.Lr_scan
2:	ld	t4, VT_SHADOW_DEPTH(t3)
	li	t2, VT_SHADOW_FRAMES
	bgtu	t4, t2, .Lr_scan
3:	beqz	t4, .Lr_scan
	addi	t4, t4, -1
	slli	t5, t4, VT_FRAME_SHIFT
	add	t5, t3, t5
	addi	t5, t5, VT_SHADOW_FRAME0
	ld	t2, VT_FRAME_SLOT(t5)
	bne	t2, t0, 3b
.Lr_found:
	/* t3: the table, t4: the frame's index, t5: the frame, s1: the table's task */
	ld	ra, VT_FRAME_RET(t5)
	ld	t0, VT_FRAME_FUNC(t5)
	addi	t0, t0, 8			/* as at the entry: the slot + 8 */
	ld	t2, VT_FRAME_TSC(t5)
	sd	t2, 24(sp)
	sd	t4, 32(sp)
	sd	t4, VT_SHADOW_DEPTH(t3)		/* popped: copied out first */
	bnez	t4, 4f
5:	lr.d	t2, (t3)			/* empty: free the table, unless it is no longer the task's */
	bne	t2, s1, 4f
	sc.d	t2, zero, (t3)
	bnez	t2, 5b
4:	RECORD	1

	/*
	 * Not on the current task's stack: `current` changed inside the call
	 * (a context switch function a kernel lets ftrace trace). The key is
	 * unique among live frames, so the top frame of every table is
	 * searched for it.
	 */
.Lr_scan:
	ld	t1, VT_CFG_SHADOW_MASK(s0)
	addi	t1, t1, 1
	ld	t3, VT_CFG_SHADOW(s0)
7:	ld	t4, VT_SHADOW_DEPTH(t3)
	beqz	t4, 8f
	li	t2, VT_SHADOW_FRAMES
	bgtu	t4, t2, 8f
	addi	t4, t4, -1
	slli	t5, t4, VT_FRAME_SHIFT
	add	t5, t3, t5
	addi	t5, t5, VT_SHADOW_FRAME0
	ld	t2, VT_FRAME_SLOT(t5)
	bne	t2, t0, 8f
	ld	s1, VT_SHADOW_TASK(t3)
	bnez	s1, .Lr_found
8:	li	t2, VT_SHADOW_SIZE
	add	t3, t3, t2
	addi	t1, t1, -1
	bnez	t1, 7b
	/*
	 * No frame for this return anywhere: the original address is gone,
	 * so the guest cannot go on. Stop it where its oops names the stub.
	 */
	unimp

	/*
	 * The chained entries (VT_CFG_CHAIN): entry k is called from a slot
	 * the guest's own ftrace enabled towards target k (`auipc t0; jalr
	 * t0` as its own call). It marks t6 with k + 1 (bits 40-45) and takes the general
	 * way (RECORD 0), which checks each field (the common path stays as
	 * it was) and leaves at .Ldone0, to target k.
	 */
	.balign	VT_CHAIN_STRIDE
	.globl	vt_stub_chain
vt_stub_chain:
	.set	.Lk, 1
	.rept	CHAIN_N
	csrrci	t6, sstatus, 2
	li	t1, .Lk
	j	.Lchain_common
	.org	vt_stub_chain + .Lk * VT_CHAIN_STRIDE	/* fails if an entry outgrew its stride */
	.set	.Lk, .Lk + 1
	.endr
.Lchain_common:
	slli	t1, t1, 40
	or	t6, t6, t1
	lla	t1, cfg
	j	.Lgeneral

	/* Their targets, written by the host while every vCPU is paused. */
	.balign	8
.Lchain_tgt:
	.fill	CHAIN_N, 8, 0

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
	jr	s2				/* where the full ring's way goes on */

	.globl	vt_stub_end
vt_stub_end:
