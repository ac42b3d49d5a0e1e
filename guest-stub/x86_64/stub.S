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
 * 117 instructions per event on the common path with every field known
 * (docs/TRACING.md counts them).
 */
#include "proto/trace.h"

	.text
	.code64
	.globl	vt_stub_image
vt_stub_image:
cfg:
	.fill	VT_CFG_SIZE, 1, 0

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

.Lretry:
	movq	VT_HDR_HEAD(%r8), %rax
	movq	%rax, %rcx
	subq	VT_HDR_TAIL(%r8), %rcx
	cmpq	cfg+VT_CFG_LIMIT(%rip), %rcx
	jae	.Lfull
	leaq	1(%rax), %rdx
	lock cmpxchgq %rdx, VT_HDR_HEAD(%r8)
	jne	.Lretry

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
	subq	$5, %rax			/* the slot: call rel32 is 5 bytes */
	movq	%rax, VT_REC_FUNC(%rcx)
	movq	80(%rsp), %rax
	movq	%rax, VT_REC_PARENT(%rcx)
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
	movl	64(%rsp), %r9d			/* flags at entry: IF clear = irqs off */
	notl	%r9d
	shrl	$9, %r9d
	andl	$VT_REC_FLAG_IRQS_OFF, %r9d
	orl	$VT_REC_FLAG_ARGS, %r9d		/* r9d: the record's flags */

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
6:	shll	$16, %r9d
	movw	%di, %r9w
	movl	%r9d, VT_REC_CPU_FLAGS(%rcx)
	movl	%esi, VT_REC_COMMIT(%rcx)	/* publish */
.Ldone:
	popq	%r10
	popq	%r9
	popq	%r8
	popq	%rdi
	popq	%rsi
	popq	%rdx
	popq	%rcx
	popq	%rax
	popfq
	ret

	/*
	 * Lossless ring full: ring the doorbell once; the host drains the
	 * ring before this vCPU runs again. Still full afterwards means the
	 * oldest record is one this CPU's interrupted context is writing
	 * (an NMI nested in the stub): drop the event and count it.
	 */
.Lfull:
	btsq	$63, %rdi
	jc	.Ldrop
	movq	%r8, %rax
	subq	cfg+VT_CFG_RING_HDRS(%rip), %rax
	shrq	$VT_HDR_SHIFT, %rax
	movl	cfg+VT_CFG_DOORBELL(%rip), %edx
	outl	%eax, %dx
	jmp	.Lretry
.Ldrop:
	lock incq VT_HDR_DROPPED(%r8)
	jmp	.Ldone

	.globl	vt_stub_end
vt_stub_end:
