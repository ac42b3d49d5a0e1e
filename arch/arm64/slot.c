// SPDX-License-Identifier: GPL-2.0
/*
 * arm64 slots, as Linux's dynamic ftrace lays them out with
 * -fpatchable-function-entry=2: the compiler emits two NOPs; `mov x9, x30`
 * replaces the first once, before any context can run the slot; from then on
 * the second flips between NOP and `bl stub`. x9 is a scratch register at
 * function entry under AAPCS64, so the save is harmless while disabled.
 */
#include <errno.h>

#include "arch/slot.h"

#define A64_INSN_BYTES 4
#define A64_NOP 0xd503201fu
#define A64_MOV_X9_X30 0xaa1e03e9u	/* orr x9, xzr, x30 */
#define A64_BL 0x94000000u
#define A64_BL_MASK 0xfc000000u
#define A64_IMM26_MASK 0x03ffffffu

static int a64_encode(enum slot_insn insn, uint64_t pc, uint64_t target,
		      uint8_t *buf, size_t *len, struct slot_err *err)
{
	uint32_t word;

	switch (insn) {
	case SLOT_INSN_CALL:
		/* imm26 counts words from the bl itself; range already checked. */
		word = A64_BL | ((uint32_t)((target - pc) >> 2) & A64_IMM26_MASK);
		break;
	case SLOT_INSN_NOP:
		word = A64_NOP;
		break;
	case SLOT_INSN_SAVE_RA:
		word = A64_MOV_X9_X30;
		break;
	default:
		return slot_err_set(err, EINVAL, "arm64: unknown slot instruction %d", (int)insn);
	}
	slot_put_le32(buf, word);
	*len = A64_INSN_BYTES;
	return 0;
}

static int a64_decode_call(const uint8_t *bytes, uint64_t slot_pc, uint64_t *target)
{
	uint32_t save = slot_get_le32(bytes), bl = slot_get_le32(bytes + A64_INSN_BYTES);
	int64_t words;

	if (save != A64_MOV_X9_X30 || (bl & A64_BL_MASK) != A64_BL)
		return -ENOENT;
	/* Sign-extend imm26 from bit 25. */
	words = (int64_t)((uint64_t)(bl & A64_IMM26_MASK) << 38) >> 38;
	*target = slot_pc + A64_INSN_BYTES + (uint64_t)(words * 4);
	return 0;
}

static unsigned int a64_insn_len(const uint8_t *p, size_t avail)
{
	(void)p;
	(void)avail;
	return A64_INSN_BYTES;
}

static const struct slot_layout a64_layout = {
	.slot_bytes = 2 * A64_INSN_BYTES,
	.insn_align = A64_INSN_BYTES,
	.target_align = A64_INSN_BYTES,
	.save_ra_bytes = A64_INSN_BYTES,
	.call_offset = A64_INSN_BYTES,
	.toggle_offset = A64_INSN_BYTES,
	.toggle_bytes = A64_INSN_BYTES,
	.reach_min = -(INT64_C(1) << 27),
	.reach_max = (INT64_C(1) << 27) - A64_INSN_BYTES,
	.reach_text = "±128 MiB, bl imm26",
	.n_compiled = 1,
	.compiled = { { 0x1f, 0x20, 0x03, 0xd5, 0x1f, 0x20, 0x03, 0xd5 } },
	/* BTI kernels start functions with `bti c` and put the NOPs after it. */
	.entry_pad_bytes = A64_INSN_BYTES,
	.entry_pad = { 0x5f, 0x24, 0x03, 0xd5 },
	/* -fpatchable-function-entry=4,2 (6.5+ WITH_CALL_OPS): two NOPs before the function. */
	.pre_bytes = 2 * A64_INSN_BYTES,
};

const struct slot_ops slot_ops_arm64 = {
	.arch = SLOT_ARCH_ARM64,
	.name = "arm64",
	.layout = &a64_layout,
	.encode = a64_encode,
	.decode_call = a64_decode_call,
	.insn_len = a64_insn_len,
};
