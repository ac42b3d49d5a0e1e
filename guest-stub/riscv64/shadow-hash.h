/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SHADOW_HASH, where the stub starts looking for a task's shadow stack:
 * Fibonacci hashing of the task pointer, vt_shadow_hash() in
 * proto/trace.h, which the host uses when it moves the stacks
 * (tests/unit/shadow-hash.sh runs this against it). h gets the hash of
 * task, using k.
 */
.macro SHADOW_HASH h, task, k
	li	\k, 0x9e3779b97f4a7c15
	mul	\h, \task, \k
	srli	\h, \h, 40
.endm
