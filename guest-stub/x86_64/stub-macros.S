/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The x86_64 stub's macros (guest-stub/x86_64/stub.S includes this where
 * they were): its shadow stacks' tables, the doorbell, a ring's reservation.
 */

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
 * A lossless ring is full (its header in hdr): ring the doorbell, the host
 * drains the ring before this vCPU runs again, and go on after the macro.
 * At vt_stub_doorbell r8 is the ring's header, eax its number and edx the
 * port (the host's protocol); rcx where to go on. Clobbers rax and rdx.
 */
.macro DOORBELL hdr
	pushq	%rcx
	pushq	%r8
	movq	\hdr, %r8
	movq	\hdr, %rax
	subq	cfg+VT_CFG_RING_HDRS(%rip), %rax
	shrq	$VT_HDR_SHIFT, %rax
	movl	cfg+VT_CFG_DOORBELL(%rip), %edx
	leaq	.Lrang\@(%rip), %rcx
	jmp	vt_stub_doorbell
.Lrang\@:
	popq	%r8
	popq	%rcx
.endm

/*
 * Reserves a record on the ring whose header is in r10 against the limit
 * at lim: rax the index, r11 index + 1 (the commit marker); to full when
 * the ring holds lim records.
 */
.macro RESERVE lim, full
	movq	VT_HDR_HEAD(%r10), %rax
.Lreserve\@:
	movq	%rax, %rdx
	subq	VT_HDR_TAIL(%r10), %rdx
	cmpq	\lim, %rdx
	jae	\full
	leaq	1(%rax), %r11
	lock cmpxchgq %r11, VT_HDR_HEAD(%r10)
	jne	.Lreserve\@
.endm
