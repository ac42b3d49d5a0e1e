/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Embeds a flat stub image in the host binary (read-only data) as
 * STUB_SYM[] .. STUB_SYM_end (assembled by the host's compiler).
 */
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
	.section .rodata
	.balign 4096
	.globl	STUB_SYM
STUB_SYM:
	.incbin	STUB_BIN
	.globl	CAT(STUB_SYM, _end)
CAT(STUB_SYM, _end):
	.section .note.GNU-stack,"",@progbits
