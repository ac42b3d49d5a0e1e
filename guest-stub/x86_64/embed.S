/* SPDX-License-Identifier: GPL-2.0 */
/* Embeds the flat stub image in the host binary (read-only data). */
	.section .rodata
	.balign 4096
	.globl	vt_stub_blob
vt_stub_blob:
	.incbin	STUB_BIN
	.globl	vt_stub_blob_end
vt_stub_blob_end:
	.section .note.GNU-stack,"",@progbits
