/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SHADOW_HASH, where the stub starts looking for a task's shadow stack:
 * Fibonacci hashing of the task pointer, vt_shadow_hash() in
 * proto/trace.h, which the host uses when it moves the stacks
 * (tests/unit/shadow-hash.sh runs this against it). The task is in r10;
 * h gets the hash; clobbers rdx.
 */
.macro SHADOW_HASH h
	movq	%r10, \h
	movabsq	$0x9e3779b97f4a7c15, %rdx
	imulq	%rdx, \h
	shrq	$40, \h
.endm
