/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The x86_64 stub's chained entries (issue 37), included by stub.S where
 * they sit in the image, before the doorbell's page.
 */

	/*
	 * The chained entries (VT_CFG_CHAIN): entry k is called from a slot
	 * the guest's own ftrace enabled towards target k. It marks its saved
	 * RFLAGS with k + 1 and takes the general way, which checks each field
	 * (the common path stays as it was) and leaves through
	 * .Lentry_out_chained, to target k. The frame is the entry's.
	 */
	.balign	VT_CHAIN_STRIDE
	.globl	vt_stub_chain
vt_stub_chain:
	.set	.Lk, 1
	.rept	CHAIN_N
	pushfq
	movl	$.Lk, 4(%rsp)
	jmp	.Lchain_common
	.org	vt_stub_chain + .Lk * VT_CHAIN_STRIDE, 0xcc	/* fails if an entry outgrew its stride */
	.set	.Lk, .Lk + 1
	.endr
.Lchain_common:
	cli
	pushq	%rax
	pushq	%rdx
	pushq	%rsi
	jmp	.Lgeneral

	/* Their targets, written by the host while every vCPU is paused. */
	.balign	8
	.globl	vt_stub_chain_tgt
vt_stub_chain_tgt:
.Lchain_tgt:
	.fill	CHAIN_N, 8, 0
