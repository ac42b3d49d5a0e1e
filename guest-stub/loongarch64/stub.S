/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmmtrace's loongarch64 guest stub (issue 30): function, caller, CPU, the
 * task and its context (pid, comm, preempt count, need-resched,
 * migrate-disable, irqs-off), arguments. A traced function's slot is
 * `move t0, ra; bl vt_stub_entry` (docs/ARCH-SLOTS.md, the layout of
 * Linux's own LoongArch ftrace): the stub finds the caller's return address
 * in t0 and slot + 8 in ra, appends one record (proto/trace.h) to its CPU's
 * ring and returns to slot + 8 with ra as the caller left it (the body's
 * prologue saves ra).
 *
 * Where it lives: anywhere within ±128 MiB of the slots (bl offs26) in RAM
 * the kernel never hands out. The kernel runs in the cached direct-mapped
 * window (DMW1, VA 0x9000000000000000 + PA), which is RWX at PLV0 from
 * kernel_entry on and has no page tables: no boot phase changes what the
 * stub can execute or write (docs/LOONGARCH64.md). Its first 16 KiB hold
 * the configuration block and the code; vt_stub_doorbell starts the next
 * 16 KiB page (QEMU's TARGET_PAGE_BITS is 14 for LoongArch), so the image
 * must be placed 16 KiB aligned.
 *
 * Rules, as the riscv64 stub's: it uses t1-t8, which a function's entry
 * may clobber (psABI temporaries), and s0-s2 saved on the stack; a0-a7,
 * tp and r21 (the kernel's per-CPU base) are untouched; interrupts masked
 * (CRMD.IE) from reservation to commit; the reservation is ll.d/sc.d on
 * the ring's head, the record published by a store of its commit marker
 * after a full barrier (dbar 0); a full lossless ring stops at
 * vt_stub_doorbell, where the host keeps a breakpoint and drains.
 *
 * The task and its context (LoongArch keeps thread_info outside the
 * task): tp holds the current thread_info from kernel_entry on.
 * VT_CFG_CPU_OFF, VT_CFG_PC_OFF and VT_CFG_TIF_OFF are offsets in
 * thread_info (cpu, preempt_count, flags), read from tp; VT_CFG_CUR_OFF is
 * the thread_info offset of its task pointer (thread_info.task), and
 * VT_CFG_PID_OFF, VT_CFG_COMM_OFF, VT_CFG_MIGR_OFF and VT_CFG_STACK_OFF are
 * offsets in that task.
 *
 * A slot the guest's own ftrace enabled calls one of the chained entries
 * (vt_stub_chain, issue 37): the same record, then on to the guest's
 * target.
 *
 * With --graph (VT_CFG_GRAPH) an entry also hooks the call's return, as
 * the other stubs do (docs/TRACING.md "Call graphs"): a frame on the
 * task's shadow stack keeps t0, the caller's return address, and the
 * function is entered with ra = vt_stub_return instead, which its own
 * `jr ra` then reaches. A frame is known by sp at the call. The entry
 * spends a0-a5 as scratch there (the record holds them, reloaded before
 * the function runs); vt_stub_return leaves a0-a7 alone (a0 and a1 are the
 * return value) and returns with ra = t0 = the original return address.
 */
#include "proto/trace.h"

#define CSR_CRMD	0x0
#define CRMD_IE		0x4
/* Chained entries (VT_CFG_CHAIN): how many distinct targets the guest's ftrace may have at once. */
#define CHAIN_N		32


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
 * r := the configuration block, pc-relative (pcaddi: pc + 4 * si20), so
 * the image runs wherever it lies. The offset is a PCREL20_S2 relocation
 * against .text that the link at 0 resolves (clang-19's assembler crashes
 * on a label difference as an instruction's immediate).
 */
.macro CFG_BASE r
	pcaddi	\r, %pcrel_20(cfg)
.endm

/*
 * Where a task keeps its shadow stack: SHADOW_HASH puts the hash of its
 * pointer in h; SHADOW_TABLE the address of table h (modulo their number)
 * in t, using k (s0: the configuration block). Callers probe h, h + 1, ...
 */
.macro SHADOW_TABLE h, t, k
	ld.d	\k, $s0, VT_CFG_SHADOW_MASK
	and	\t, \h, \k
	slli.d	\t, \t, VT_SHADOW_SHIFT
	ld.d	\k, $s0, VT_CFG_SHADOW
	add.d	\t, \k, \t
.endm
/*
 * How many tables from the home table \home on may be a task's whose hash
 * leads there (VT_SHADOW_REACH, at most VT_SHADOW_PROBE) in \n, using k.
 */
.macro SHADOW_REACH n, home, k
	ld.d	\n, \home, VT_SHADOW_REACH
	li.w	\k, VT_SHADOW_PROBE
	bgeu	\k, \n, .Lreach\@
	move	\n, \k
.Lreach\@:
.endm

/*
 * An entry's first steps, once sp holds its 32 bytes: s0-s2 saved at 0(sp),
 * interrupts masked with t6 = CRMD at entry (the plain and the chained
 * entries alike).
 */
.macro ENTRY_SAVE
	st.d	$s0, $sp, 0
	st.d	$s1, $sp, 8
	st.d	$s2, $sp, 16
	move	$t6, $zero
	li.w	$t7, CRMD_IE
	csrxchg	$t6, $t7, CSR_CRMD		/* t6: CRMD at entry; IE cleared */
.endm

/*
 * One record, from the CPU number to the publishing store, then back to the
 * traced code: kind 0 an entry (ra the slot + 8, t0 the caller's return
 * address; s0-s2 at 0(sp), 32 bytes), kind 1 an exit (ra its slot + 8, t0
 * where it returns to, a0 the return value; s0-s2 at 0(sp), the entry's
 * counter at 24(sp), the depth at 32(sp), 48 bytes). s0 is the
 * configuration block, t6 CRMD at entry (IE cleared).
 */
.macro RECORD kind
	/* The CPU number: thread_info.cpu of the current thread (tp). */
	move	$t1, $zero
	ld.d	$t2, $s0, VT_CFG_CPU_OFF
	addi.d	$t3, $t2, 1
	beqz	$t3, 2f
	add.d	$t2, $t2, $tp
	ld.wu	$t1, $t2, 0
2:	ld.wu	$t2, $s0, VT_CFG_NRINGS
	move	$t3, $t1
	bltu	$t3, $t2, 3f
	move	$t3, $zero			/* unknown CPU: the shared ring 0 */
3:	ld.d	$s1, $s0, VT_CFG_RING_HDRS
	slli.d	$t2, $t3, VT_HDR_SHIFT
	add.d	$s1, $s1, $t2			/* s1: ring header */
	ld.d	$t2, $s0, VT_CFG_RING_BYTES
	mul.d	$t3, $t2, $t3
	ld.d	$t2, $s0, VT_CFG_RING_RECS
	add.d	$t5, $t2, $t3			/* t5: ring records */
	li.w	$s2, (\kind << 1)		/* bit 0: the doorbell rung; bit 1: the kind */

.Lretry\kind:
	ll.d	$t2, $s1, 0			/* VT_HDR_HEAD is at 0 */
	ld.d	$t3, $s1, VT_HDR_TAIL
	sub.d	$t3, $t2, $t3
	ld.d	$t4, $s0, VT_CFG_LIMIT
	bgeu	$t3, $t4, .Lfull\kind
	addi.d	$t3, $t2, 1
	move	$t4, $t3
	sc.d	$t4, $s1, 0			/* t4: 1 stored, 0 lost the reservation */
	beqz	$t4, .Lretry\kind

	/* t2: index, t3: index + 1, the commit marker; s1 free from here */
	ld.d	$t4, $s0, VT_CFG_RING_MASK
	and	$t4, $t2, $t4
	slli.d	$t4, $t4, VT_REC_SHIFT
	add.d	$t5, $t5, $t4			/* t5: the record */
	st.w	$zero, $t5, VT_REC_COMMIT	/* overwrite mode: torn until committed */
	dbar	0
	rdtime.d $t2, $zero
	st.d	$t2, $t5, VT_REC_TSC
	addi.d	$t2, $ra, -8
	st.d	$t2, $t5, VT_REC_FUNC
	st.d	$t0, $t5, VT_REC_PARENT
	andi	$t4, $t6, CRMD_IE
	sltui	$t4, $t4, 1			/* IE clear at entry: irqs off */
.if \kind == 0
	st.d	$a0, $t5, VT_REC_ARGS
	st.d	$a1, $t5, VT_REC_ARGS + 8
	st.d	$a2, $t5, VT_REC_ARGS + 16
	st.d	$a3, $t5, VT_REC_ARGS + 24
	st.d	$a4, $t5, VT_REC_ARGS + 32
	st.d	$a5, $t5, VT_REC_ARGS + 40
	ori	$t4, $t4, VT_REC_FLAG_ARGS
.else
	st.d	$a0, $t5, VT_REC_RETVAL
	ld.d	$t2, $sp, 24
	st.d	$t2, $t5, VT_REC_CALLTIME
	ld.w	$t2, $sp, 32
	st.w	$t2, $t5, VT_REC_DEPTH
	ori	$t4, $t4, VT_REC_FLAG_EXIT
.endif

	/*
	 * The task: its context from thread_info (tp), pid and comm from the
	 * task, at the offsets the host found in BTF.
	 */
	move	$s1, $zero
	st.w	$zero, $t5, VT_REC_PREEMPT
	ld.d	$t2, $s0, VT_CFG_CUR_OFF
	addi.d	$t7, $t2, 1
	beqz	$t7, 4f
	ldx.d	$s1, $tp, $t2			/* s1: thread_info.task */
	ori	$t4, $t4, VT_REC_FLAG_TASK
	/* thread_info.preempt_count: the generic one, without a resched bit. */
	ld.d	$t2, $s0, VT_CFG_PC_OFF
	addi.d	$s2, $t2, 1
	beqz	$s2, 5f
	ldx.w	$t2, $tp, $t2
	st.w	$t2, $t5, VT_REC_PREEMPT
	ori	$t4, $t4, VT_REC_FLAG_CTX
5:	ld.d	$t2, $s0, VT_CFG_TIF_OFF
	addi.d	$s2, $t2, 1
	beqz	$s2, 6f
	ldx.d	$t2, $tp, $t2
	ld.d	$s2, $s0, VT_CFG_TIF_MASK
	and	$t2, $t2, $s2
	beqz	$t2, 6f
	ori	$t4, $t4, VT_REC_FLAG_NEED_RESCHED
6:	ld.d	$t2, $s0, VT_CFG_MIGR_OFF
	addi.d	$s2, $t2, 1
	beqz	$s2, 7f
	ldx.hu	$t2, $s1, $t2
	li.w	$s2, 15
	bgeu	$s2, $t2, 8f
	move	$t2, $s2
8:	slli.d	$t2, $t2, VT_REC_MIGR_SHIFT
	or	$t4, $t4, $t2
7:	ld.d	$t2, $s0, VT_CFG_PID_OFF
	ldx.w	$t2, $s1, $t2
	st.w	$t2, $t5, VT_REC_PID
	ld.d	$t2, $s0, VT_CFG_COMM_OFF
	add.d	$t2, $t2, $s1
	ld.d	$s2, $t2, 0
	st.d	$s2, $t5, VT_REC_COMM
	ld.d	$s2, $t2, 8
	st.d	$s2, $t5, VT_REC_COMM + 8
4:	st.d	$s1, $t5, VT_REC_TASK
.if \kind == 0
	ld.w	$t2, $s0, VT_CFG_GRAPH		/* u32: VT_CFG_ARGS follows */
	bnez	$t2, .Lgraph_entry
.Lgraph_back:
.endif
	slli.d	$t4, $t4, 16
	or	$t4, $t4, $t1			/* cpu | flags << 16 */
	st.w	$t4, $t5, VT_REC_CPU_FLAGS
	dbar	0				/* publish: every store above is seen first */
	st.w	$t3, $t5, VT_REC_COMMIT

.Ldone\kind:
.if \kind == 0
	/*
	 * A chained entry's call (k + 1 in t6's bits 40-45; CRMD has 10):
	 * its target, read before interrupts are back on (the host may give
	 * entry k another once this CPU has left the stub), then on to it
	 * with ra (the slot + 8) and t0 as the slot's `move t0, ra; bl` left
	 * them; t1-t8 are free at a function's entry. t2 is 0 for any other
	 * call.
	 */
	srli.d	$t2, $t6, 40
	andi	$t2, $t2, 63
	beqz	$t2, 5f
	pcaddi	$t1, %pcrel_20(.Lchain_tgt)
	alsl.d	$t1, $t2, $t1, 3
	ld.d	$t2, $t1, -8
5:
.endif
	andi	$t6, $t6, CRMD_IE
	li.w	$t7, CRMD_IE
	csrxchg	$t6, $t7, CSR_CRMD		/* IE as it was at entry */
	ld.d	$s0, $sp, 0
	ld.d	$s1, $sp, 8
	ld.d	$s2, $sp, 16
.if \kind == 0
	addi.d	$sp, $sp, 32
	bnez	$t2, 6f
	move	$t1, $ra			/* slot + 8 */
	move	$ra, $t0			/* the caller's return address, or the hook */
	jr	$t1
6:	jr	$t2
.else
	addi.d	$sp, $sp, 48
	move	$ra, $t0
	jr	$t0				/* where the function returns to */
.endif

.Lfull\kind:
	dbar	0x700				/* an ll.d without its sc.d, as Linux's cmpxchg leaves one */
	andi	$t2, $s2, 1
	bnez	$t2, .Ldrop\kind
	ori	$s2, $s2, 1
	b	.Ldoorbell			/* a local label: no relocation left in the flat image */
.Ldrop\kind:
	addi.d	$t2, $s1, VT_HDR_DROPPED
	li.w	$t3, 1
	amadd.d	$zero, $t3, $t2
	b	.Ldone\kind
.endm

	.globl	vt_stub_entry
vt_stub_entry:
	addi.d	$sp, $sp, -32
	ENTRY_SAVE
	CFG_BASE $s0				/* s0: the configuration block */
.Lentry_record:
	RECORD	0

	/*
	 * --graph, from the entry's label 4 (t5: the record, t3: its commit
	 * marker, t4: the flags, t1: the CPU, s1: the task, t0: the caller's
	 * return address; t2, t7, t8, s2 and a0-a5 free): push a frame on the
	 * task's shadow stack and enter the function with ra = vt_stub_return.
	 * Interrupts are masked, but each step is still ordered as on x86_64
	 * (a frame reserved with its key cleared before it is filled).
	 */
.Lgraph_entry:
	beqz	$s1, .Lunhooked			/* no task: nowhere to keep the frame */
	SHADOW_HASH $a5, $s1, $a1
	SHADOW_TABLE $a5, $a2, $a1		/* a2: the home table */
	SHADOW_REACH $a3, $a2, $a1
	move	$a0, $a5
	beqz	$a3, .Lg_claim
1:	SHADOW_TABLE $a0, $a4, $a1
	ld.d	$t2, $a4, VT_SHADOW_TASK
	beq	$t2, $s1, .Lg_found
	addi.d	$a0, $a0, 1
	addi.d	$a3, $a3, -1
	bnez	$a3, 1b
	/*
	 * None in reach is the task's: it takes the first free table from its
	 * home on, the home's reach first made to cover it (so that no lookup
	 * misses the table once it is the task's).
	 */
.Lg_claim:
	move	$a0, $a5
	li.w	$a3, 1				/* a3: the reach that covers table a0 */
	li.w	$s2, VT_SHADOW_PROBE
2:	SHADOW_TABLE $a0, $a4, $a1
	ld.d	$t2, $a4, VT_SHADOW_TASK
	beqz	$t2, 3f
	addi.d	$a0, $a0, 1
	addi.d	$a3, $a3, 1
	bgeu	$s2, $a3, 2b
	b	.Lunhooked			/* every table in reach is taken */
3:	addi.d	$a1, $a2, VT_SHADOW_REACH
	ammax_db.du $zero, $a3, $a1
4:	ll.d	$t2, $a4, 0			/* VT_SHADOW_TASK is at 0 */
	bnez	$t2, 9f				/* another CPU's task took it first */
	move	$t2, $s1
	sc.d	$t2, $a4, 0
	beqz	$t2, 4b
	b	.Lg_found
9:	dbar	0x700
	b	.Lunhooked
.Lg_found:
	/* a4: the table */
	ld.d	$a1, $a4, VT_SHADOW_DEPTH
	li.w	$t2, VT_SHADOW_FRAMES
	bltu	$t2, $a1, .Lunhooked		/* not a depth this stub wrote */
	addi.d	$a0, $sp, 32			/* a0: this call's key, sp at the call */
	/*
	 * Dead frames: the top frame's key lies on the task's own stack below
	 * this call's (its function never returned; the task left it). A key
	 * equal to this one is a tail call's caller, alive.
	 */
	ld.d	$a2, $s0, VT_CFG_STACK_OFF
	addi.d	$t2, $a2, 1
	beqz	$t2, 4f
	ldx.d	$a2, $s1, $a2			/* a2: the task's stack */
	ld.d	$t2, $a4, VT_SHADOW_STACK
	beq	$t2, $a2, 8f
	/*
	 * Another stack than the frames were pushed on: they are a dead
	 * task's, whose task_struct this task reuses (do_exit never returns).
	 */
	move	$a1, $zero
	st.d	$zero, $a4, VT_SHADOW_DEPTH
	st.d	$a2, $a4, VT_SHADOW_STACK
8:	ld.d	$a5, $s0, VT_CFG_STACK_SIZE
	sub.d	$a3, $a0, $a2
	bgeu	$a3, $a5, 4f			/* this call is not on it (an interrupt stack) */
5:	beqz	$a1, 4f
	slli.d	$a3, $a1, VT_FRAME_SHIFT
	add.d	$a3, $a4, $a3
	ld.d	$a3, $a3, VT_SHADOW_FRAME0 - VT_FRAME_SIZE + VT_FRAME_SLOT
	bgeu	$a3, $a0, 4f
	sub.d	$a3, $a3, $a2
	bgeu	$a3, $a5, 4f
	addi.d	$a1, $a1, -1
	st.d	$a1, $a4, VT_SHADOW_DEPTH
	b	5b
4:	li.w	$t2, VT_SHADOW_FRAMES
	bgeu	$a1, $t2, .Lunhooked		/* full: the call returns as it would */
	slli.d	$a3, $a1, VT_FRAME_SHIFT
	add.d	$a3, $a4, $a3
	addi.d	$a3, $a3, VT_SHADOW_FRAME0	/* a3: the frame */
	st.d	$zero, $a3, VT_FRAME_SLOT
	addi.d	$a2, $a1, 1
	st.d	$a2, $a4, VT_SHADOW_DEPTH
	st.d	$t0, $a3, VT_FRAME_RET
	ld.d	$a2, $t5, VT_REC_FUNC
	st.d	$a2, $a3, VT_FRAME_FUNC
	ld.d	$a2, $t5, VT_REC_TSC
	st.d	$a2, $a3, VT_FRAME_TSC
	st.d	$a0, $a3, VT_FRAME_SLOT
	ld.d	$t0, $s0, VT_CFG_RETURN		/* the hook: the function returns there */
	st.w	$a1, $t5, VT_REC_DEPTH
	ori	$t4, $t4, VT_REC_FLAG_HOOKED
	b	.Lg_back
.Lunhooked:
	/* The ring's header again: its CPU's, or ring 0's for an unknown CPU. */
	ld.wu	$a0, $s0, VT_CFG_NRINGS
	move	$a1, $t1
	bltu	$a1, $a0, 6f
	move	$a1, $zero
6:	slli.d	$a1, $a1, VT_HDR_SHIFT
	ld.d	$a0, $s0, VT_CFG_RING_HDRS
	add.d	$a1, $a0, $a1
	addi.d	$a1, $a1, VT_HDR_UNHOOKED
	li.w	$a0, 1
	amadd.d	$zero, $a0, $a1
.Lg_back:
	ld.d	$a0, $t5, VT_REC_ARGS		/* the arguments back as the function gets them */
	ld.d	$a1, $t5, VT_REC_ARGS + 8
	ld.d	$a2, $t5, VT_REC_ARGS + 16
	ld.d	$a3, $t5, VT_REC_ARGS + 24
	ld.d	$a4, $t5, VT_REC_ARGS + 32
	ld.d	$a5, $t5, VT_REC_ARGS + 40
	b	.Lgraph_back

	/*
	 * A hooked call returns here (its `jr ra` came to ra; sp is what it
	 * was at the call). Finds the frame by sp on the current task's shadow
	 * stack, pops it (and any frame above it, left by a call that never
	 * returned), records the exit and returns to the original address.
	 */
	.globl	vt_stub_return
vt_stub_return:
	addi.d	$sp, $sp, -48
	st.d	$s0, $sp, 0
	st.d	$s1, $sp, 8
	st.d	$s2, $sp, 16
	move	$t6, $zero
	li.w	$t7, CRMD_IE
	csrxchg	$t6, $t7, CSR_CRMD
	CFG_BASE $s0
	addi.d	$t0, $sp, 48			/* t0: the key */
	ld.d	$t2, $s0, VT_CFG_CUR_OFF	/* the task: --graph hooks only where it is known */
	ldx.d	$s1, $tp, $t2
	SHADOW_HASH $t1, $s1, $t2
	SHADOW_TABLE $t1, $t3, $t2
	SHADOW_REACH $s2, $t3, $t2
	beqz	$s2, .Lr_scan
1:	SHADOW_TABLE $t1, $t3, $t2
	ld.d	$t2, $t3, VT_SHADOW_TASK
	beq	$t2, $s1, 2f
	addi.d	$t1, $t1, 1
	addi.d	$s2, $s2, -1
	bnez	$s2, 1b
	b	.Lr_scan
2:	ld.d	$t4, $t3, VT_SHADOW_DEPTH
	li.w	$t2, VT_SHADOW_FRAMES
	bltu	$t2, $t4, .Lr_scan
3:	beqz	$t4, .Lr_scan
	addi.d	$t4, $t4, -1
	slli.d	$t5, $t4, VT_FRAME_SHIFT
	add.d	$t5, $t3, $t5
	addi.d	$t5, $t5, VT_SHADOW_FRAME0
	ld.d	$t2, $t5, VT_FRAME_SLOT
	bne	$t2, $t0, 3b
.Lr_found:
	/* t3: the table, t4: the frame's index, t5: the frame, s1: the table's task */
	ld.d	$t0, $t5, VT_FRAME_RET
	ld.d	$ra, $t5, VT_FRAME_FUNC
	addi.d	$ra, $ra, 8			/* as at the entry: the slot + 8 */
	ld.d	$t2, $t5, VT_FRAME_TSC
	st.d	$t2, $sp, 24
	st.d	$t4, $sp, 32
	st.d	$t4, $t3, VT_SHADOW_DEPTH	/* popped: copied out first */
	bnez	$t4, 4f
5:	ll.d	$t2, $t3, 0			/* empty: free the table, unless it is no longer the task's */
	bne	$t2, $s1, 6f
	move	$t2, $zero
	sc.d	$t2, $t3, 0
	beqz	$t2, 5b
	b	4f
6:	dbar	0x700
4:	RECORD	1

	/*
	 * Not on the current task's stack: `current` changed inside the call
	 * (a context switch function a kernel lets ftrace trace). The key is
	 * unique among live frames, so the top frame of every table is
	 * searched for it.
	 */
.Lr_scan:
	ld.d	$t1, $s0, VT_CFG_SHADOW_MASK
	addi.d	$t1, $t1, 1
	ld.d	$t3, $s0, VT_CFG_SHADOW
7:	ld.d	$t4, $t3, VT_SHADOW_DEPTH
	beqz	$t4, 8f
	li.w	$t2, VT_SHADOW_FRAMES
	bltu	$t2, $t4, 8f
	addi.d	$t4, $t4, -1
	slli.d	$t5, $t4, VT_FRAME_SHIFT
	add.d	$t5, $t3, $t5
	addi.d	$t5, $t5, VT_SHADOW_FRAME0
	ld.d	$t2, $t5, VT_FRAME_SLOT
	bne	$t2, $t0, 8f
	ld.d	$s1, $t3, VT_SHADOW_TASK
	bnez	$s1, .Lr_found
8:	li.w	$t2, VT_SHADOW_SIZE
	add.d	$t3, $t3, $t2
	addi.d	$t1, $t1, -1
	bnez	$t1, 7b
	/*
	 * No frame for this return anywhere: the original address is gone,
	 * so the guest cannot go on. Stop it where its oops names the stub.
	 */
	break	0

	/*
	 * The doorbell on a page of its own: QEMU runs every instruction of a
	 * page that holds a breakpoint as a translation block of its own (its
	 * check_for_breakpoints), which made every traced call several times
	 * slower while the breakpoint shared the stub's page. QEMU's page is
	 * 16 KiB for LoongArch (TARGET_PAGE_BITS 14).
	 */
	/*
	 * The chained entries (VT_CFG_CHAIN): entry k is called from a slot
	 * the guest's own ftrace enabled towards target k (`move t0, ra; bl`
	 * as its own call). It marks t6 with k + 1 (bits 40-45) and records
	 * the call as the entry does, leaving at .Ldone0, to target k.
	 */
	.balign	VT_CHAIN_STRIDE
	.globl	vt_stub_chain
vt_stub_chain:
	.set	.Lk, 1
	.rept	CHAIN_N
	addi.d	$sp, $sp, -32
	li.w	$t2, .Lk
	b	.Lchain_common
	.org	vt_stub_chain + .Lk * VT_CHAIN_STRIDE	/* fails if an entry outgrew its stride */
	.set	.Lk, .Lk + 1
	.endr
.Lchain_common:
	ENTRY_SAVE
	slli.d	$t2, $t2, 40
	or	$t6, $t6, $t2
	CFG_BASE $s0
	b	.Lentry_record

	/* Their targets, written by the host while every vCPU is paused. */
	.balign	8
.Lchain_tgt:
	.fill	CHAIN_N, 8, 0

	.balign	16384
	.globl	vt_stub_doorbell
vt_stub_doorbell:
.Ldoorbell:
	nop					/* the host's breakpoint: s1 is the ring's header */
	andi	$t2, $s2, 2
	beqz	$t2, 1f
	b	.Lretry1
1:	b	.Lretry0

	.globl	vt_stub_end
vt_stub_end:
