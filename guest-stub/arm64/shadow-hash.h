/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SHADOW_HASH, where the stub starts looking for a task's shadow stack:
 * Fibonacci hashing of the task pointer, vt_shadow_hash() in
 * proto/trace.h, which the host uses when it moves the stacks
 * (tests/unit/shadow-hash.sh runs this against it). h gets the hash of
 * task, using k.
 */
.macro SHADOW_HASH h, task, k
	movz	\k, #0x7c15
	movk	\k, #0x7f4a, lsl #16
	movk	\k, #0x79b9, lsl #32
	movk	\k, #0x9e37, lsl #48
	mul	\h, \task, \k
	lsr	\h, \h, #40
.endm
