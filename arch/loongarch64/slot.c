// SPDX-License-Identifier: GPL-2.0
/*
 * loongarch64 slots, as Linux's dynamic ftrace lays them out with
 * -fpatchable-function-entry=2: two NOPs; `move t0, ra` replaces the first
 * once, before any context can run the slot; from then on the second flips
 * between NOP and `bl stub`. t0 is a temporary at function entry under the
 * LoongArch psABI, so the save is harmless while disabled.
 */
#include <errno.h>

#include "arch/slot.h"

#define LA_INSN_BYTES 4
#define LA_NOP 0x03400000u		/* andi zero, zero, 0 */
#define LA_OR 0x00150000u		/* or rd, rj, rk (3R format) */
#define LA_REG_ZERO 0
#define LA_REG_RA 1
#define LA_REG_T0 12
#define LA_BL 0x54000000u		/* opcode 0x15 in bits 31..26 */
#define LA_OPCODE_MASK 0xfc000000u

/* move t0, ra is or t0, ra, zero, as the assembler expands it. */
#define LA_MOVE_T0_RA (LA_OR | LA_REG_ZERO << 10 | LA_REG_RA << 5 | LA_REG_T0)

/* I26 format: offs[15:0] in bits 25..10, offs[25:16] in bits 9..0. */
static uint32_t la_bl(uint64_t pc, uint64_t target)
{
	uint32_t offs = (uint32_t)((target - pc) >> 2) & 0x03ffffffu;

	return LA_BL | (offs & 0xffffu) << 10 | offs >> 16;
}

static int la_encode(enum slot_insn insn, uint64_t pc, uint64_t target,
		     uint8_t *buf, size_t *len, struct slot_err *err)
{
	uint32_t word;

	switch (insn) {
	case SLOT_INSN_CALL:
		word = la_bl(pc, target);
		break;
	case SLOT_INSN_NOP:
		word = LA_NOP;
		break;
	case SLOT_INSN_SAVE_RA:
		word = LA_MOVE_T0_RA;
		break;
	default:
		return slot_err_set(err, EINVAL, "loongarch64: unknown slot instruction %d", (int)insn);
	}
	slot_put_le32(buf, word);
	*len = LA_INSN_BYTES;
	return 0;
}

static int la_decode_call(const uint8_t *bytes, uint64_t slot_pc, uint64_t *target)
{
	uint32_t save = slot_get_le32(bytes), bl = slot_get_le32(bytes + LA_INSN_BYTES);
	uint32_t offs;
	int64_t words;

	if (save != LA_MOVE_T0_RA || (bl & LA_OPCODE_MASK) != LA_BL)
		return -ENOENT;
	offs = (bl >> 10 & 0xffffu) | (bl & 0x3ffu) << 16;
	words = (int64_t)((uint64_t)offs << 38) >> 38;
	*target = slot_pc + LA_INSN_BYTES + (uint64_t)(words * 4);
	return 0;
}

static unsigned int la_insn_len(const uint8_t *p, size_t avail)
{
	(void)p;
	(void)avail;
	return LA_INSN_BYTES;
}

static const struct slot_layout la_layout = {
	.slot_bytes = 2 * LA_INSN_BYTES,
	.insn_align = LA_INSN_BYTES,
	.target_align = LA_INSN_BYTES,
	.save_ra_bytes = LA_INSN_BYTES,
	.call_offset = LA_INSN_BYTES,
	.toggle_offset = LA_INSN_BYTES,
	.toggle_bytes = LA_INSN_BYTES,
	.reach_min = -(INT64_C(1) << 27),
	.reach_max = (INT64_C(1) << 27) - LA_INSN_BYTES,
	.reach_text = "±128 MiB, bl offs26",
	.n_compiled = 1,
	.compiled = { { 0x00, 0x00, 0x40, 0x03, 0x00, 0x00, 0x40, 0x03 } },
};

const struct slot_ops slot_ops_loongarch64 = {
	.arch = SLOT_ARCH_LOONGARCH64,
	.name = "loongarch64",
	.layout = &la_layout,
	.encode = la_encode,
	.decode_call = la_decode_call,
	.insn_len = la_insn_len,
};
