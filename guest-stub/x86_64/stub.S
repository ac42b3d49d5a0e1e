/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmmtrace's x86_64 guest stub. A traced function's entry slot is
 * `call vt_stub_entry`; the stub appends one record to its CPU's ring and
 * returns into the function with every register and flag as they were.
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
 * 119 instructions per event on the common path with every field known
 * (docs/TRACING.md counts them).
 *
 * With --graph (VT_CFG_GRAPH) an entry also hooks the call's return:
 * vt_stub_return records the exit and goes back to the caller
 * (docs/TRACING.md "Call graphs" has the rules for the shadow stacks).
 */
#include "proto/trace.h"

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
	.fill	VT_CFG_SIZE - VT_CFG_DOORBELL_PC - 8, 1, 0

/*
 * Where the task in r10 keeps its shadow stack: SHADOW_HASH (proto/trace.h,
 * the host's hash too; clobbers rdx) puts its hash in h, SHADOW_TABLE the
 * address of table h (modulo their number) in t. Callers probe h, h + 1, ...
 * as far as SHADOW_REACH puts in n: how many tables from the home table
 * (VT_SHADOW_REACH, at most VT_SHADOW_PROBE) a task whose hash leads there
 * may own.
 */
.macro SHADOW_TABLE h, t
	movq	\h, \t
	andq	cfg+VT_CFG_SHADOW_MASK(%rip), \t
	shlq	$VT_SHADOW_SHIFT, \t
	addq	cfg+VT_CFG_SHADOW(%rip), \t
.endm
.macro SHADOW_REACH n, home
	movq	VT_SHADOW_REACH(\home), \n
	cmpq	$VT_SHADOW_PROBE, \n
	jbe	.Lreach\@
	movq	$VT_SHADOW_PROBE, \n
.Lreach\@:
.endm

/*
 * One record, from the CPU number to the publishing store, then back to
 * the traced code: kind 0 an entry (the frame of vt_stub_entry), kind 1 an
 * exit (the frame of vt_stub_return).
 */
.macro RECORD kind
	/* CPU number from the guest's per-CPU data, when the host found it. */
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

.Lretry\kind:
	movq	VT_HDR_HEAD(%r8), %rax
	movq	%rax, %rcx
	subq	VT_HDR_TAIL(%r8), %rcx
	cmpq	cfg+VT_CFG_LIMIT(%rip), %rcx
	jae	.Lfull\kind
	leaq	1(%rax), %rdx
	lock cmpxchgq %rdx, VT_HDR_HEAD(%r8)
	jne	.Lretry\kind

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
.if \kind == 0
	subq	$5, %rax			/* the slot: call rel32 is 5 bytes */
	movq	%rax, VT_REC_FUNC(%rcx)
	movq	80(%rsp), %rax
.else
	movq	%rax, VT_REC_FUNC(%rcx)		/* the frame keeps the slot */
	movq	96(%rsp), %rax			/* where the function returns to */
.endif
	movq	%rax, VT_REC_PARENT(%rcx)
.if \kind == 0
	/* The arguments as the function receives them (SysV: rdi, rsi, rdx, rcx, r8, r9). */
	movq	24(%rsp), %rax
	movq	%rax, VT_REC_ARGS(%rcx)
	movq	32(%rsp), %rax
	movq	%rax, VT_REC_ARGS+8(%rcx)
	movq	40(%rsp), %rax
	movq	%rax, VT_REC_ARGS+16(%rcx)
	movq	48(%rsp), %rax
	movq	%rax, VT_REC_ARGS+24(%rcx)
	movq	16(%rsp), %rax
	movq	%rax, VT_REC_ARGS+32(%rcx)
	movq	8(%rsp), %rax
	movq	%rax, VT_REC_ARGS+40(%rcx)
.else
	movq	56(%rsp), %rax			/* the return value */
	movq	%rax, VT_REC_RETVAL(%rcx)
	movq	80(%rsp), %rax
	movq	%rax, VT_REC_CALLTIME(%rcx)
	movl	88(%rsp), %eax
	movl	%eax, VT_REC_DEPTH(%rcx)
.endif
	movl	64(%rsp), %r9d			/* flags at entry: IF clear = irqs off */
	notl	%r9d
	shrl	$9, %r9d
	andl	$VT_REC_FLAG_IRQS_OFF, %r9d
.if \kind == 0
	orl	$VT_REC_FLAG_ARGS, %r9d		/* r9d: the record's flags */
.else
	orl	$VT_REC_FLAG_EXIT, %r9d
.endif

	/*
	 * The preempt count. x86 keeps its need-resched bit inverted in bit
	 * 31 (arch/x86/include/asm/preempt.h): clear means a resched is due.
	 */
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
6:
.if \kind == 0
	cmpq	$0, cfg+VT_CFG_GRAPH(%rip)
	jne	.Lgraph_entry
.Lgraph_back:
.endif
	shll	$16, %r9d
	movw	%di, %r9w
	movl	%r9d, VT_REC_CPU_FLAGS(%rcx)
	movl	%esi, VT_REC_COMMIT(%rcx)	/* publish */
.Ldone\kind:
	popq	%r10
	popq	%r9
	popq	%r8
	popq	%rdi
	popq	%rsi
	popq	%rdx
	popq	%rcx
	popq	%rax
	popfq
.if \kind == 1
	leaq	24(%rsp), %rsp			/* func, calltime, depth: to the original return address */
.endif
	ret

	/*
	 * Lossless ring full: ring the doorbell once; the host drains the
	 * ring before this vCPU runs again. Still full afterwards means the
	 * oldest record is one this CPU's interrupted context is writing
	 * (an NMI nested in the stub): drop the event and count it.
	 */
.Lfull\kind:
	btsq	$63, %rdi
	jc	.Ldrop\kind
	movq	%r8, %rax
	subq	cfg+VT_CFG_RING_HDRS(%rip), %rax
	shrq	$VT_HDR_SHIFT, %rax
	movl	cfg+VT_CFG_DOORBELL(%rip), %edx
	movl	$\kind, %ecx
	jmp	vt_stub_doorbell
.Ldrop\kind:
	lock incq VT_HDR_DROPPED(%r8)
	jmp	.Ldone\kind

.endm

	.globl	vt_stub_entry
vt_stub_entry:
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
	/* 0 r10, 8 r9, 16 r8, 24 rdi, 32 rsi, 40 rdx, 48 rcx, 56 rax, 64 rflags, 72 ret, 80 parent */

	RECORD	0

	/*
	 * --graph, from the entry's label 6 (rcx: the record, rsi: its commit
	 * marker, r8: the ring header, r9d: the flags, r10: the task, edi: the
	 * CPU): push a frame on the task's shadow stack and point the return
	 * address at vt_stub_return. Interrupts are off; only an NMI can nest,
	 * and it leaves the stack as it found it, so each step is safe to be
	 * interrupted: a frame is reserved (depth raised) with its slot field
	 * cleared first, then filled.
	 */
.Lgraph_entry:
	testq	%r10, %r10
	jz	.Lunhooked			/* no task: nowhere to keep the frame */
	pushq	%r11
	pushq	%rbx
	pushq	%rbp
	/* 24 more bytes on the stack: the caller's return address is at 24+80(%rsp). */
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
3:	movq	%rcx, %rdx
	movq	VT_SHADOW_REACH(%rbp), %rax
4:	cmpq	%r11, %rax
	jae	5f
	lock cmpxchgq %r11, VT_SHADOW_REACH(%rbp)
	jne	4b
5:	xorl	%eax, %eax
	lock cmpxchgq %r10, VT_SHADOW_TASK(%rbx)
	movq	%rdx, %rcx
	jne	.Lg_unhooked			/* another CPU's task took it first */
.Lg_found:
	movq	VT_SHADOW_DEPTH(%rbx), %rax
	cmpq	$VT_SHADOW_FRAMES, %rax
	ja	.Lg_unhooked			/* not a depth this stub wrote */
	leaq	24+80(%rsp), %rdx		/* rdx: the return address's slot */
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
	movq	VT_REC_FUNC(%rcx), %r11
	movq	%r11, VT_FRAME_FUNC(%rbp)
	movq	VT_REC_TSC(%rcx), %r11
	movq	%r11, VT_FRAME_TSC(%rbp)
	movq	%rdx, VT_FRAME_SLOT(%rbp)
	movq	cfg+VT_CFG_RETURN(%rip), %r11
	movq	%r11, (%rdx)			/* the hook */
	movl	%eax, VT_REC_DEPTH(%rcx)
	orl	$VT_REC_FLAG_HOOKED, %r9d
	popq	%rbp
	popq	%rbx
	popq	%r11
	jmp	.Lgraph_back
.Lg_unhooked:
	popq	%rbp
	popq	%rbx
	popq	%r11
.Lunhooked:
	lock incq VT_HDR_UNHOOKED(%r8)
	jmp	.Lgraph_back

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
	RECORD	1

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

	/*
	 * The doorbell (eax: the ring, r8: its header, edx: the port, ecx: the
	 * record's kind): on KVM the port write exits and the VMM drains the
	 * ring; QEMU reports no port write, so its host keeps a breakpoint
	 * here and drains there, and the write then goes to a port no device
	 * claims. On a page of its own: QEMU runs every instruction of a page
	 * that holds a breakpoint as a translation block of its own.
	 */
	.balign	4096
	.globl	vt_stub_doorbell
vt_stub_doorbell:
	outl	%eax, %dx
	testl	%ecx, %ecx
	jnz	.Lretry1
	jmp	.Lretry0

	.globl	vt_stub_end
vt_stub_end:
