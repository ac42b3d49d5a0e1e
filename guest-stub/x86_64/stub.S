/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmmtrace's x86_64 guest stub. A traced function's entry slot is
 * `call vt_stub_entry`; the stub appends one record to its CPU's ring and
 * returns into the function with every register and flag as they were,
 * except r10 and r11: nothing lives in them at a function's fentry call
 * (the kernel's own ftrace_caller saves only rax, the argument registers
 * and rbp, and the C it calls clobbers the rest), so the entry uses them
 * as scratch. The return hook (vt_stub_return) keeps every register.
 *
 * Runs in every guest context that can reach a slot (task, softirq, hardirq,
 * NMI; from the first call of start_kernel on), so it:
 *  - touches only the stack it is called on and the rings (no calls);
 *  - keeps interrupts off from reservation to commit, so on one CPU only an
 *    NMI can nest inside a half-written record;
 *  - reserves with lock cmpxchg (several CPUs may share ring 0 when the CPU
 *    number is unknown) and publishes with a final store of the commit
 *    marker (x86 stores are seen in order);
 *  - uses only instructions the software-assisted host emulates at CPL0
 *    (rdtsc and lock cmpxchg: no rdtscp, no rdpid; HOST-KVM.md §2).
 * 70 instructions per traced call on the common path (the slot's call
 * included; ring not full, every field known, no --args, no --graph), as
 * bench/stub-insns counts them in real calls under QEMU.
 *
 * The common path reads each ring's geometry from the ring header's cache
 * (VT_HDR_RECS, proto/trace.h), which the ring's first event fills from
 * the configuration block, and checks "-1 = unknown" once there: a ring
 * whose cache is empty has limit 0, so its first event takes the full
 * ring's way, which fills the cache when every field the common path reads
 * is known. Otherwise every event takes .Lgeneral's way, which checks each
 * field at each event. The rarer cases (irqs off, a resched due, no task,
 * migration disabled, the arguments with --args, the return hook with
 * --graph; the last three tested at once) are branches the common path
 * does not take, their work done out of its way, each flag set in the
 * record's flags there.
 *
 * A slot the guest's own ftrace enabled calls one of the chained entries
 * (vt_stub_chain, issue 37): the same record by the general way, then on
 * to the guest's target; the common path does not change for them.
 *
 * With --graph (VT_CFG_GRAPH) an entry also hooks the call's return:
 * vt_stub_return records the exit and goes back to the caller
 * (docs/TRACING.md "Call graphs" has the rules for the shadow stacks).
 */
#include "proto/trace.h"

/* The entry's frame: what it saves, the slot's call, the function's own return address. */
#define E_RSI		0
#define E_RDX		8
#define E_RAX		16
#define E_RFLAGS	24
#define E_RET		32	/* into the function, past its slot */
#define E_PARENT	40	/* from the function into its caller */
/* Chained entries (VT_CFG_CHAIN): how many distinct targets the guest's ftrace may have at once. */
#define CHAIN_N		32
/* The record's flags: their low byte (every VT_REC_FLAG_*), then migration_disabled. */
#define REC_FLAGS	(VT_REC_CPU_FLAGS + 2)

.if VT_REC_FLAG_HOOKED > 0x80 || VT_REC_MIGR_SHIFT != 8
	.error "the record's flags no longer fit their first byte"
.endif
.if VT_CFG_ARGS != VT_CFG_GRAPH + 4
	.error "VT_CFG_ARGS no longer follows VT_CFG_GRAPH"
.endif

	.text
	.code64
	.globl	vt_stub_image
vt_stub_image:
cfg:
	.fill	VT_CFG_RETURN, 1, 0
	/* Until the host fills the block: where vt_stub_return lies in this image. */
	.quad	vt_stub_return - vt_stub_image
	/* ... and vt_stub_doorbell (VT_CFG_DOORBELL_PC follows VT_CFG_RETURN). */
.if VT_CFG_DOORBELL_PC != VT_CFG_RETURN + 8
	.error "VT_CFG_DOORBELL_PC no longer follows VT_CFG_RETURN"
.endif
	.quad	vt_stub_doorbell - vt_stub_image
	.fill	VT_CFG_CHAIN - VT_CFG_DOORBELL_PC - 8, 1, 0
	/* ... and the chained entries with their targets (VT_CFG_CHAIN, _TGT, _N). */
.if VT_CFG_CHAIN_TGT != VT_CFG_CHAIN + 8 || VT_CFG_CHAIN_N != VT_CFG_CHAIN + 16
	.error "VT_CFG_CHAIN_TGT and VT_CFG_CHAIN_N no longer follow VT_CFG_CHAIN"
.endif
	.quad	vt_stub_chain - vt_stub_image
	.quad	vt_stub_chain_tgt - vt_stub_image
	.long	CHAIN_N
	.fill	VT_CFG_SIZE - VT_CFG_CHAIN_N - 4, 1, 0

#include "guest-stub/x86_64/stub-macros.S"

	.globl	vt_stub_entry
vt_stub_entry:
	pushfq
	cli
	pushq	%rax
	pushq	%rdx
	pushq	%rsi
	/* The CPU's own ring: its number known, and below the rings'. */
	movq	cfg+VT_CFG_CPU_OFF(%rip), %rax
	cmpq	$-1, %rax
	je	.Lgeneral
	movl	%gs:(%rax), %r10d
	cmpl	cfg+VT_CFG_NRINGS(%rip), %r10d
	jae	.Lgeneral
	shll	$VT_HDR_SHIFT, %r10d
	addq	cfg+VT_CFG_RING_HDRS(%rip), %r10	/* r10: the ring's header */
	/* Its limit is 0 until its cache is filled: its first event goes to .Lfull. */
	RESERVE	VT_HDR_LIMIT(%r10), .Lfull
.Lreserved:
	andq	cfg+VT_CFG_RING_MASK(%rip), %rax
	shlq	$VT_REC_SHIFT, %rax
	movq	VT_HDR_RECS(%r10), %rsi
	addq	%rax, %rsi			/* rsi: the record */
	/*
	 * The CPU, the flags every event on this ring has (CTX, TASK) and
	 * commit 0 in one store, first: in overwrite mode the record is torn
	 * until committed.
	 */
	movq	VT_HDR_CPU_FLAGS(%r10), %rax
	movq	%rax, VT_REC_CPU_FLAGS(%rsi)
	rdtsc					/* after the reservation: see vmm/trace/trace-buf.h */
	movl	%eax, VT_REC_TSC(%rsi)
	movl	%edx, VT_REC_TSC+4(%rsi)
	movq	E_RET(%rsp), %rax
	subq	$5, %rax			/* the slot: call rel32 is 5 bytes */
	movq	%rax, VT_REC_FUNC(%rsi)
	movq	E_PARENT(%rsp), %rax
	movq	%rax, VT_REC_PARENT(%rsi)
	btl	$9, E_RFLAGS(%rsp)		/* IF at the call */
	jnc	.Lirqs_off
.Lirqs_on:
	/*
	 * The preempt count. x86 keeps its need-resched bit inverted in bit
	 * 31 (arch/x86/include/asm/preempt.h): clear means a resched is due.
	 */
	movq	cfg+VT_CFG_PC_OFF(%rip), %rax
	movl	%gs:(%rax), %eax
	btrl	$31, %eax
	jnc	.Lpreempt_resched
.Lpreempt:
	movl	%eax, VT_REC_PREEMPT(%rsi)
	/* The current task: its pid and comm. */
	movq	cfg+VT_CFG_CUR_OFF(%rip), %rax
	movq	%gs:(%rax), %r10		/* r10: the task */
	movq	%r10, VT_REC_TASK(%rsi)
	testq	%r10, %r10
	jz	.Lno_task
	movq	cfg+VT_CFG_PID_OFF(%rip), %rax
	movl	(%r10,%rax), %eax
	movl	%eax, VT_REC_PID(%rsi)
	movq	cfg+VT_CFG_COMM_OFF(%rip), %rdx
	movq	(%r10,%rdx), %rax
	movq	%rax, VT_REC_COMM(%rsi)
	movq	8(%r10,%rdx), %rax
	movq	%rax, VT_REC_COMM+8(%rsi)
	/*
	 * Done, unless the task's need-resched flag is set, its migration
	 * disabled, or a client asked for --graph or --args (VT_CFG_GRAPH
	 * and VT_CFG_ARGS in one 64-bit word): then .Lmore.
	 */
	movq	cfg+VT_CFG_TIF_OFF(%rip), %rax
	movq	(%r10,%rax), %rax
	testq	cfg+VT_CFG_TIF_MASK(%rip), %rax
	jnz	.Lneed_resched
	movq	cfg+VT_CFG_MIGR_OFF(%rip), %rax
	movzwl	(%r10,%rax), %eax
	orq	cfg+VT_CFG_GRAPH(%rip), %rax
	jnz	.Lmore
	movl	%r11d, VT_REC_COMMIT(%rsi)	/* publish */
.Lentry_out:
	popq	%rsi
	popq	%rdx
	popq	%rax
	popfq
	ret

	/* The common path's rarer flags, each set in the record's flags. */
.Lirqs_off:
	orb	$VT_REC_FLAG_IRQS_OFF, REC_FLAGS(%rsi)
	jmp	.Lirqs_on
.Lpreempt_resched:
	orb	$VT_REC_FLAG_PREEMPT_RESCHED, REC_FLAGS(%rsi)
	jmp	.Lpreempt
.Lno_task:
	andb	$(~VT_REC_FLAG_TASK & 0xff), REC_FLAGS(%rsi)
	jmp	.Lentry_tail

	/*
	 * The task's need-resched flag, its migration_disabled (r10: the task,
	 * both offsets known), then what clients asked for. .Lgeneral joins
	 * at .Lmigr (rax: the offset) and .Lentry_tail: rsi the record with
	 * all but the arguments, the return hook and the commit written, r10
	 * the task or 0, r11d the commit marker, the entry's frame.
	 */
.Lneed_resched:
	orb	$VT_REC_FLAG_NEED_RESCHED, REC_FLAGS(%rsi)
.Lmore:
	movq	cfg+VT_CFG_MIGR_OFF(%rip), %rax
.Lmigr:
	movzwl	(%r10,%rax), %eax
	cmpl	$15, %eax
	jbe	2f
	movl	$15, %eax
2:	orb	%al, REC_FLAGS+1(%rsi)		/* VT_REC_MIGR_SHIFT: the flags' second byte */
.Lentry_tail:
	cmpl	$0, cfg+VT_CFG_ARGS(%rip)
	je	3f
	/* The arguments as the function receives them (SysV: rdi, rsi, rdx, rcx, r8, r9). */
	movq	%rdi, VT_REC_ARGS(%rsi)
	movq	E_RSI(%rsp), %rax
	movq	%rax, VT_REC_ARGS+8(%rsi)
	movq	E_RDX(%rsp), %rax
	movq	%rax, VT_REC_ARGS+16(%rsi)
	movq	%rcx, VT_REC_ARGS+24(%rsi)
	movq	%r8, VT_REC_ARGS+32(%rsi)
	movq	%r9, VT_REC_ARGS+40(%rsi)
	orb	$VT_REC_FLAG_ARGS, REC_FLAGS(%rsi)
3:	cmpl	$0, cfg+VT_CFG_GRAPH(%rip)
	jne	.Lgraph_entry
.Lpublish:
	movl	%r11d, VT_REC_COMMIT(%rsi)	/* publish */
	jmp	.Lentry_out_chained

	/*
	 * Full (rdx: head - tail, at least the limit), or the ring's cache is
	 * still empty (limit 0). A full lossless ring: ring the doorbell once;
	 * the host drains the ring before this vCPU runs again. Still full
	 * afterwards means the oldest record is one this CPU's interrupted
	 * context is writing (an NMI nested in the stub): drop the event and
	 * count it.
	 */
.Lfull:
	cmpq	$0, VT_HDR_LIMIT(%r10)
	je	.Lfill
	DOORBELL %r10
	RESERVE	VT_HDR_LIMIT(%r10), .Ldrop
	jmp	.Lreserved
.Ldrop:
	lock incq VT_HDR_DROPPED(%r10)
	jmp	.Lentry_out_chained

	/*
	 * The rarer ways out: a chained entry's call (below) takes them all,
	 * its k + 1 in the saved RFLAGS' upper half (reserved, always 0 in a
	 * real RFLAGS): cleared, the flags restored, then on to target k with
	 * every register as the slot's call left it but r10 and r11 (free at
	 * a fentry call, as the entry's header says). The target is read
	 * before popfq: once interrupts are back on, this task may be
	 * preempted, and the host may give entry k another target meanwhile.
	 */
.Lentry_out_chained:
	popq	%rsi
	popq	%rdx
	popq	%rax
	cmpl	$0, 4(%rsp)
	jne	1f
	popfq
	ret
1:	movl	4(%rsp), %r11d
	movl	$0, 4(%rsp)
	leaq	.Lchain_tgt(%rip), %r10		/* a local label: a global one would leave a relocation */
	movq	-8(%r10,%r11,8), %r11
	popfq
	jmp	*%r11

	/*
	 * The ring's first event: its cache from the configuration block,
	 * when every field the common path reads is known (pid and comm are
	 * whenever the task is: the host's promise), the limit last. An NMI
	 * nested in here writes the same values. Nothing is reserved yet.
	 */
.Lfill:
	movq	cfg+VT_CFG_PC_OFF(%rip), %rax
	orq	cfg+VT_CFG_CUR_OFF(%rip), %rax
	orq	cfg+VT_CFG_TIF_OFF(%rip), %rax
	orq	cfg+VT_CFG_MIGR_OFF(%rip), %rax
	js	.Lgeneral			/* one of them -1: unknown */
	movq	%r10, %rax
	subq	cfg+VT_CFG_RING_HDRS(%rip), %rax
	shrq	$VT_HDR_SHIFT, %rax		/* the ring: this CPU's number */
	movq	%rax, %rdx
	imulq	cfg+VT_CFG_RING_BYTES(%rip), %rdx
	addq	cfg+VT_CFG_RING_RECS(%rip), %rdx
	movq	%rdx, VT_HDR_RECS(%r10)
	orq	$((VT_REC_FLAG_CTX | VT_REC_FLAG_TASK) << 16), %rax
	movq	%rax, VT_HDR_CPU_FLAGS(%r10)
	movq	cfg+VT_CFG_LIMIT(%rip), %rax
	movq	%rax, VT_HDR_LIMIT(%r10)
	RESERVE	VT_HDR_LIMIT(%r10), .Lfull
	jmp	.Lreserved

	/*
	 * Any field unknown, or the CPU's number (all CPUs then share ring 0),
	 * or a CPU without a ring (ring 0 too): each field as far as it is
	 * known, the others zero. Nothing is reserved yet; the entry's frame.
	 */
.Lgeneral:
	xorl	%r10d, %r10d
	movq	cfg+VT_CFG_CPU_OFF(%rip), %rax
	cmpq	$-1, %rax
	je	1f
	movl	%gs:(%rax), %r10d
	cmpl	cfg+VT_CFG_NRINGS(%rip), %r10d
	jb	1f
	xorl	%r10d, %r10d			/* no ring of its own: the shared ring 0 */
1:	movq	%r10, %rsi
	imulq	cfg+VT_CFG_RING_BYTES(%rip), %rsi
	addq	cfg+VT_CFG_RING_RECS(%rip), %rsi	/* rsi: the ring's records */
	shlq	$VT_HDR_SHIFT, %r10
	addq	cfg+VT_CFG_RING_HDRS(%rip), %r10	/* r10: its header */
	RESERVE	cfg+VT_CFG_LIMIT(%rip), .Lgen_full
.Lgen_reserved:
	andq	cfg+VT_CFG_RING_MASK(%rip), %rax
	shlq	$VT_REC_SHIFT, %rax
	addq	%rax, %rsi			/* rsi: the record */
	/* The CPU as the record's (0 when unknown), commit 0 with it, first. */
	xorl	%eax, %eax
	movq	cfg+VT_CFG_CPU_OFF(%rip), %rdx
	cmpq	$-1, %rdx
	je	2f
	movzwl	%gs:(%rdx), %eax
2:	movq	%rax, VT_REC_CPU_FLAGS(%rsi)
	rdtsc
	movl	%eax, VT_REC_TSC(%rsi)
	movl	%edx, VT_REC_TSC+4(%rsi)
	movq	E_RET(%rsp), %rax
	subq	$5, %rax
	movq	%rax, VT_REC_FUNC(%rsi)
	movq	E_PARENT(%rsp), %rax
	movq	%rax, VT_REC_PARENT(%rsi)
	btl	$9, E_RFLAGS(%rsp)
	jc	3f
	orb	$VT_REC_FLAG_IRQS_OFF, REC_FLAGS(%rsi)
3:	xorl	%eax, %eax
	movq	cfg+VT_CFG_PC_OFF(%rip), %rdx
	cmpq	$-1, %rdx
	je	4f
	orb	$VT_REC_FLAG_CTX, REC_FLAGS(%rsi)
	movl	%gs:(%rdx), %eax
	btrl	$31, %eax
	jc	4f
	orb	$VT_REC_FLAG_PREEMPT_RESCHED, REC_FLAGS(%rsi)
4:	movl	%eax, VT_REC_PREEMPT(%rsi)
	xorl	%r10d, %r10d
	movq	cfg+VT_CFG_CUR_OFF(%rip), %rdx
	cmpq	$-1, %rdx
	je	5f
	movq	%gs:(%rdx), %r10
5:	movq	%r10, VT_REC_TASK(%rsi)
	testq	%r10, %r10
	jz	.Lentry_tail
	orb	$VT_REC_FLAG_TASK, REC_FLAGS(%rsi)
	movq	cfg+VT_CFG_PID_OFF(%rip), %rax
	movl	(%r10,%rax), %eax
	movl	%eax, VT_REC_PID(%rsi)
	movq	cfg+VT_CFG_COMM_OFF(%rip), %rdx
	movq	(%r10,%rdx), %rax
	movq	%rax, VT_REC_COMM(%rsi)
	movq	8(%r10,%rdx), %rax
	movq	%rax, VT_REC_COMM+8(%rsi)
	movq	cfg+VT_CFG_TIF_OFF(%rip), %rax
	cmpq	$-1, %rax
	je	6f
	movq	(%r10,%rax), %rax
	testq	cfg+VT_CFG_TIF_MASK(%rip), %rax
	jz	6f
	orb	$VT_REC_FLAG_NEED_RESCHED, REC_FLAGS(%rsi)
6:	movq	cfg+VT_CFG_MIGR_OFF(%rip), %rax
	cmpq	$-1, %rax
	jne	.Lmigr
	jmp	.Lentry_tail
.Lgen_full:
	DOORBELL %r10
	RESERVE	cfg+VT_CFG_LIMIT(%rip), .Ldrop
	jmp	.Lgen_reserved

	/*
	 * --graph, from .Lentry_tail (rsi: the record, its TSC written, r10:
	 * the task or 0, r11d: the commit marker): push a frame on the task's
	 * shadow stack and point the function's return address at
	 * vt_stub_return. Interrupts are off; only an NMI can nest, and it
	 * leaves the stack as it found it, so each step is safe to be
	 * interrupted: a frame is reserved (depth raised) with its slot field
	 * cleared first, then filled.
	 */
.Lgraph_entry:
	testq	%r10, %r10
	jz	.Lunhooked			/* no task: nowhere to keep the frame */
	pushq	%r11
	pushq	%rbx
	pushq	%rbp
	/* 24 more bytes on the stack: the function's return address is at 24+E_PARENT(%rsp). */
	SHADOW_HASH %rax
	movq	%rax, %rdx			/* rdx: the hash */
	SHADOW_TABLE %rax, %rbp			/* rbp: the home table */
	SHADOW_REACH %r11, %rbp
	testq	%r11, %r11
	jz	.Lg_claim
1:	SHADOW_TABLE %rax, %rbx
	cmpq	%r10, VT_SHADOW_TASK(%rbx)
	je	.Lg_found
	incq	%rax
	decq	%r11
	jnz	1b
	/*
	 * None in reach is the task's: it takes the first free table from its
	 * home on, the home's reach first made to cover it (so that no lookup,
	 * an NMI's included, misses the table once it is the task's).
	 */
.Lg_claim:
	movq	%rdx, %rax
	movl	$1, %r11d			/* r11: the reach that covers table rax */
2:	SHADOW_TABLE %rax, %rbx
	cmpq	$0, VT_SHADOW_TASK(%rbx)
	je	3f
	incq	%rax
	incl	%r11d
	cmpl	$VT_SHADOW_PROBE, %r11d
	jbe	2b
	jmp	.Lg_unhooked			/* every table in reach is taken */
3:	movq	VT_SHADOW_REACH(%rbp), %rax
4:	cmpq	%r11, %rax
	jae	5f
	lock cmpxchgq %r11, VT_SHADOW_REACH(%rbp)
	jne	4b
5:	xorl	%eax, %eax
	lock cmpxchgq %r10, VT_SHADOW_TASK(%rbx)
	jne	.Lg_unhooked			/* another CPU's task took it first */
.Lg_found:
	movq	VT_SHADOW_DEPTH(%rbx), %rax
	cmpq	$VT_SHADOW_FRAMES, %rax
	ja	.Lg_unhooked			/* not a depth this stub wrote */
	leaq	24+E_PARENT(%rsp), %rdx		/* rdx: the return address's slot */
	/*
	 * Dead frames: the top frame's slot lies on the task's own stack below
	 * this call's (its function never returned; the task left it, e.g.
	 * do_exit, and its task_struct went to a new task). A slot equal to
	 * this one is a tail call's caller, alive.
	 */
	movq	cfg+VT_CFG_STACK_OFF(%rip), %r11
	cmpq	$-1, %r11
	je	4f
	movq	(%r10,%r11), %r11		/* r11: the task's stack */
	cmpq	%r11, VT_SHADOW_STACK(%rbx)
	je	8f
	/*
	 * Another stack than the frames were pushed on: they are a dead
	 * task's, whose task_struct this task reuses (do_exit never returns).
	 */
	xorl	%eax, %eax
	movq	%rax, VT_SHADOW_DEPTH(%rbx)
	movq	%r11, VT_SHADOW_STACK(%rbx)
8:	movq	%rdx, %rbp
	subq	%r11, %rbp
	cmpq	cfg+VT_CFG_STACK_SIZE(%rip), %rbp
	jae	4f				/* this call is not on it (an interrupt stack) */
3:	testq	%rax, %rax
	jz	4f
	movq	%rax, %rbp
	shlq	$VT_FRAME_SHIFT, %rbp
	movq	VT_SHADOW_FRAME0-VT_FRAME_SIZE+VT_FRAME_SLOT(%rbx,%rbp), %rbp
	cmpq	%rdx, %rbp
	jae	4f
	subq	%r11, %rbp
	cmpq	cfg+VT_CFG_STACK_SIZE(%rip), %rbp
	jae	4f
	decq	%rax
	movq	%rax, VT_SHADOW_DEPTH(%rbx)
	jmp	3b
4:	cmpq	$VT_SHADOW_FRAMES, %rax
	jae	.Lg_unhooked			/* full: the call returns as it would */
	movq	%rax, %rbp
	shlq	$VT_FRAME_SHIFT, %rbp
	leaq	VT_SHADOW_FRAME0(%rbx,%rbp), %rbp	/* rbp: the frame */
	movq	$0, VT_FRAME_SLOT(%rbp)
	leaq	1(%rax), %r11
	movq	%r11, VT_SHADOW_DEPTH(%rbx)
	movq	(%rdx), %r11
	movq	%r11, VT_FRAME_RET(%rbp)
	movq	VT_REC_FUNC(%rsi), %r11
	movq	%r11, VT_FRAME_FUNC(%rbp)
	movq	VT_REC_TSC(%rsi), %r11
	movq	%r11, VT_FRAME_TSC(%rbp)
	movq	%rdx, VT_FRAME_SLOT(%rbp)
	movq	cfg+VT_CFG_RETURN(%rip), %r11
	movq	%r11, (%rdx)			/* the hook */
	movl	%eax, VT_REC_DEPTH(%rsi)
	orb	$VT_REC_FLAG_HOOKED, REC_FLAGS(%rsi)
	popq	%rbp
	popq	%rbx
	popq	%r11
	jmp	.Lpublish
.Lg_unhooked:
	popq	%rbp
	popq	%rbx
	popq	%r11
.Lunhooked:
	/* Counted on the record's ring: its CPU's, or ring 0 (as the reservation chose). */
	movzwl	VT_REC_CPU_FLAGS(%rsi), %eax
	cmpl	cfg+VT_CFG_NRINGS(%rip), %eax
	jb	6f
	xorl	%eax, %eax
6:	shll	$VT_HDR_SHIFT, %eax
	addq	cfg+VT_CFG_RING_HDRS(%rip), %rax
	lock incq VT_HDR_UNHOOKED(%rax)
	jmp	.Lpublish

	/*
	 * A hooked call returns here (its `ret` popped the slot, rsp = slot + 8).
	 * Finds the frame by the slot's address on the current task's shadow
	 * stack, pops it (and any frame above it, left by a call that never
	 * returned), records the exit and returns to the original address with
	 * the return registers untouched.
	 */
	.globl	vt_stub_return
vt_stub_return:
	subq	$32, %rsp			/* func, calltime, depth, and the original return address at the slot */
	pushfq
	cli
	pushq	%rax
	pushq	%rcx
	pushq	%rdx
	pushq	%rsi
	pushq	%rdi
	pushq	%r8
	pushq	%r9
	pushq	%r10
	/* 0 r10 ... 56 rax, 64 rflags, 72 func, 80 calltime, 88 depth, 96 return address */
	pushq	%r11
	pushq	%rbx
	movq	cfg+VT_CFG_CUR_OFF(%rip), %rdx
	movq	%gs:(%rdx), %r10
	SHADOW_HASH %rax
	SHADOW_TABLE %rax, %rbx
	SHADOW_REACH %r11, %rbx
	testq	%r11, %r11
	jz	.Lr_scan
1:	SHADOW_TABLE %rax, %rbx
	cmpq	%r10, VT_SHADOW_TASK(%rbx)
	je	2f
	incq	%rax
	decq	%r11
	jnz	1b
	jmp	.Lr_scan
2:	leaq	16+96(%rsp), %rdx		/* the slot */
	movq	VT_SHADOW_DEPTH(%rbx), %rax
	cmpq	$VT_SHADOW_FRAMES, %rax
	ja	.Lr_scan
3:	testq	%rax, %rax
	jz	.Lr_scan
	decq	%rax
	movq	%rax, %rcx
	shlq	$VT_FRAME_SHIFT, %rcx
	leaq	VT_SHADOW_FRAME0(%rbx,%rcx), %rcx
	cmpq	%rdx, VT_FRAME_SLOT(%rcx)
	jne	3b
.Lr_found:
	/* rbx: the table, rax: the frame's index, rcx: the frame, r10: the table's task */
	movq	VT_FRAME_RET(%rcx), %r11
	movq	%r11, 16+96(%rsp)
	movq	VT_FRAME_FUNC(%rcx), %r11
	movq	%r11, 16+72(%rsp)
	movq	VT_FRAME_TSC(%rcx), %r11
	movq	%r11, 16+80(%rsp)
	movq	%rax, 16+88(%rsp)
	movq	%rax, VT_SHADOW_DEPTH(%rbx)	/* popped: copied out first, an NMI may reuse it now */
	testq	%rax, %rax
	jnz	4f
	movq	%r10, %rax			/* empty: free the table, unless an NMI already did */
	xorl	%ecx, %ecx
	lock cmpxchgq %rcx, VT_SHADOW_TASK(%rbx)
4:	popq	%rbx
	popq	%r11

	/*
	 * The exit's record, every field checked (the CPU in edi, r8 the
	 * ring's header, rcx the record, esi the commit marker, r9d the flags;
	 * bit 63 of rdi: the doorbell rang).
	 */
	xorl	%edi, %edi
	movq	cfg+VT_CFG_CPU_OFF(%rip), %rcx
	cmpq	$-1, %rcx
	je	1f
	movl	%gs:(%rcx), %edi
1:	movl	%edi, %esi
	cmpl	cfg+VT_CFG_NRINGS(%rip), %esi
	jb	2f
	xorl	%esi, %esi			/* unknown CPU: the shared ring 0 */
2:	movq	%rsi, %r8
	shlq	$VT_HDR_SHIFT, %r8
	addq	cfg+VT_CFG_RING_HDRS(%rip), %r8	/* r8: ring header */
	imulq	cfg+VT_CFG_RING_BYTES(%rip), %rsi
	addq	cfg+VT_CFG_RING_RECS(%rip), %rsi	/* rsi: ring records */
.Lx_retry:
	movq	VT_HDR_HEAD(%r8), %rax
	movq	%rax, %rcx
	subq	VT_HDR_TAIL(%r8), %rcx
	cmpq	cfg+VT_CFG_LIMIT(%rip), %rcx
	jae	.Lx_full
	leaq	1(%rax), %rdx
	lock cmpxchgq %rdx, VT_HDR_HEAD(%r8)
	jne	.Lx_retry

	/* rax: index, rdx: index + 1 = the commit marker */
	movq	%rax, %rcx
	andq	cfg+VT_CFG_RING_MASK(%rip), %rcx
	shlq	$VT_REC_SHIFT, %rcx
	addq	%rsi, %rcx			/* rcx: the record */
	movl	$0, VT_REC_COMMIT(%rcx)		/* overwrite mode: torn until committed */
	movq	%rdx, %rsi
	rdtsc					/* after the reservation: see vmm/trace/trace-buf.h */
	shlq	$32, %rdx
	orq	%rdx, %rax
	movq	%rax, VT_REC_TSC(%rcx)
	movq	72(%rsp), %rax
	movq	%rax, VT_REC_FUNC(%rcx)		/* the frame keeps the slot */
	movq	96(%rsp), %rax			/* where the function returns to */
	movq	%rax, VT_REC_PARENT(%rcx)
	movq	56(%rsp), %rax			/* the return value */
	movq	%rax, VT_REC_RETVAL(%rcx)
	movq	80(%rsp), %rax
	movq	%rax, VT_REC_CALLTIME(%rcx)
	movl	88(%rsp), %eax
	movl	%eax, VT_REC_DEPTH(%rcx)
	movl	64(%rsp), %r9d			/* flags at entry: IF clear = irqs off */
	notl	%r9d
	shrl	$9, %r9d
	andl	$VT_REC_FLAG_IRQS_OFF, %r9d
	orl	$VT_REC_FLAG_EXIT, %r9d

	/* The preempt count, its need-resched bit inverted in bit 31 as at the entry. */
	xorl	%eax, %eax
	movq	cfg+VT_CFG_PC_OFF(%rip), %rdx
	cmpq	$-1, %rdx
	je	3f
	orl	$VT_REC_FLAG_CTX, %r9d
	movl	%gs:(%rdx), %eax
	btrl	$31, %eax
	jc	3f
	orl	$VT_REC_FLAG_PREEMPT_RESCHED, %r9d
3:	movl	%eax, VT_REC_PREEMPT(%rcx)

	/* The current task: its pid, comm, need-resched flag, migrate-disable. */
	xorl	%r10d, %r10d
	movq	cfg+VT_CFG_CUR_OFF(%rip), %rdx
	cmpq	$-1, %rdx
	je	4f
	movq	%gs:(%rdx), %r10
4:	movq	%r10, VT_REC_TASK(%rcx)
	testq	%r10, %r10
	jz	6f
	orl	$VT_REC_FLAG_TASK, %r9d
	movq	cfg+VT_CFG_PID_OFF(%rip), %rdx
	movl	(%r10,%rdx), %eax
	movl	%eax, VT_REC_PID(%rcx)
	movq	cfg+VT_CFG_COMM_OFF(%rip), %rdx
	movq	(%r10,%rdx), %rax
	movq	%rax, VT_REC_COMM(%rcx)
	movq	8(%r10,%rdx), %rax
	movq	%rax, VT_REC_COMM+8(%rcx)
	movq	cfg+VT_CFG_TIF_OFF(%rip), %rdx
	cmpq	$-1, %rdx
	je	5f
	movq	(%r10,%rdx), %rax
	testq	cfg+VT_CFG_TIF_MASK(%rip), %rax
	jz	5f
	orl	$VT_REC_FLAG_NEED_RESCHED, %r9d
5:	movq	cfg+VT_CFG_MIGR_OFF(%rip), %rdx
	cmpq	$-1, %rdx
	je	6f
	movzwl	(%r10,%rdx), %eax
	cmpl	$15, %eax
	jbe	7f
	movl	$15, %eax
7:	shll	$VT_REC_MIGR_SHIFT, %eax
	orl	%eax, %r9d
6:	shll	$16, %r9d
	movw	%di, %r9w
	movl	%r9d, VT_REC_CPU_FLAGS(%rcx)
	movl	%esi, VT_REC_COMMIT(%rcx)	/* publish */
.Lx_done:
	popq	%r10
	popq	%r9
	popq	%r8
	popq	%rdi
	popq	%rsi
	popq	%rdx
	popq	%rcx
	popq	%rax
	popfq
	leaq	24(%rsp), %rsp			/* func, calltime, depth: to the original return address */
	ret

	/* Lossless ring full: as the entry's .Lfull, r8 the header already. */
.Lx_full:
	btsq	$63, %rdi
	jc	.Lx_drop
	movq	%r8, %rax
	subq	cfg+VT_CFG_RING_HDRS(%rip), %rax
	shrq	$VT_HDR_SHIFT, %rax
	movl	cfg+VT_CFG_DOORBELL(%rip), %edx
	leaq	.Lx_retry(%rip), %rcx
	jmp	vt_stub_doorbell
.Lx_drop:
	lock incq VT_HDR_DROPPED(%r8)
	jmp	.Lx_done

	/*
	 * Not on the current task's stack: `current` changed inside the call
	 * (a context switch function a kernel lets ftrace trace). The slot's
	 * address is unique among live frames, so the top frame of every
	 * table is searched for it.
	 */
.Lr_scan:
	leaq	16+96(%rsp), %rdx
	movq	cfg+VT_CFG_SHADOW_MASK(%rip), %r11
	incq	%r11
	movq	cfg+VT_CFG_SHADOW(%rip), %rbx
5:	movq	VT_SHADOW_DEPTH(%rbx), %rax
	testq	%rax, %rax
	jz	6f
	cmpq	$VT_SHADOW_FRAMES, %rax
	ja	6f
	decq	%rax
	movq	%rax, %rcx
	shlq	$VT_FRAME_SHIFT, %rcx
	leaq	VT_SHADOW_FRAME0(%rbx,%rcx), %rcx
	cmpq	%rdx, VT_FRAME_SLOT(%rcx)
	jne	6f
	movq	VT_SHADOW_TASK(%rbx), %r10
	testq	%r10, %r10
	jnz	.Lr_found
6:	addq	$VT_SHADOW_SIZE, %rbx
	decq	%r11
	jnz	5b
	/*
	 * No frame for this return anywhere: the original address is gone,
	 * so the guest cannot go on. Stop it where its oops names the stub.
	 */
	ud2

#include "guest-stub/x86_64/stub-chain.S"

	/*
	 * The doorbell (eax: the ring, r8: its header, edx: the port, rcx:
	 * where to go on): on KVM the port write exits and the VMM drains the
	 * ring; QEMU reports no port write, so its host keeps a breakpoint
	 * here and drains there, and the write then goes to a port no device
	 * claims. On a page of its own: QEMU runs every instruction of a page
	 * that holds a breakpoint as a translation block of its own.
	 */
	.balign	4096
	.globl	vt_stub_doorbell
vt_stub_doorbell:
	outl	%eax, %dx
	jmp	*%rcx

	.globl	vt_stub_end
vt_stub_end:
