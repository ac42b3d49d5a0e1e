// SPDX-License-Identifier: GPL-2.0
/*
 * riscv64 slots. Linux builds with -fpatchable-function-entry=4 when the C
 * extension is on (four 2-byte c.nop) and =2 without it (two 4-byte nop):
 * 8 bytes either way, room for `auipc t0, hi` + `jalr t0, lo(t0)`, which
 * reaches ±2 GiB and links through t0, leaving ra alone.
 *
 * The pair is two instructions, and a task preempted between them resumes at
 * the jalr with whatever t0 the auipc left. So vmmtrace writes the auipc
 * (aimed at its stub) once, before any context can run the slot, and from
 * then on flips only the jalr with a NOP, as Linux does since it moved to
 * patching without stop_machine. t0 is a temporary at function entry, so the
 * lone auipc is harmless while disabled.
 */
#include <errno.h>

#include "arch/slot.h"

#define RV_INSN_BYTES 4
#define RV_NOP 0x00000013u		/* addi zero, zero, 0 */
#define RV_REG_T0 5
#define RV_AUIPC 0x17u
#define RV_JALR 0x67u
#define RV_AUIPC_T0 (RV_AUIPC | RV_REG_T0 << 7)
#define RV_JALR_T0_T0 (RV_JALR | RV_REG_T0 << 7 | RV_REG_T0 << 15)

static int rv_encode(enum slot_insn insn, uint64_t pc, uint64_t target,
		     uint8_t *buf, size_t *len, struct slot_err *err)
{
	int64_t off = (int64_t)(target - pc), hi, lo;

	switch (insn) {
	case SLOT_INSN_CALL:
		/* jalr adds a signed 12-bit lo, so round hi to the nearest 4 KiB. */
		hi = (off + 0x800) >> 12;
		lo = off - hi * 4096;
		slot_put_le32(buf, RV_AUIPC_T0 | (uint32_t)(hi & 0xfffff) << 12);
		slot_put_le32(buf + RV_INSN_BYTES, RV_JALR_T0_T0 | (uint32_t)(lo & 0xfff) << 20);
		*len = 2 * RV_INSN_BYTES;
		return 0;
	case SLOT_INSN_NOP:
		slot_put_le32(buf, RV_NOP);
		*len = RV_INSN_BYTES;
		return 0;
	case SLOT_INSN_SAVE_RA:
		return slot_err_set(err, EOPNOTSUPP, "riscv64: no return-address save in the slot: "
				    "jalr links through t0 and leaves ra alone");
	default:
		return slot_err_set(err, EINVAL, "riscv64: unknown slot instruction %d", (int)insn);
	}
}

static int rv_decode_call(const uint8_t *bytes, uint64_t slot_pc, uint64_t *target)
{
	uint32_t auipc = slot_get_le32(bytes), jalr = slot_get_le32(bytes + RV_INSN_BYTES);
	int64_t hi, lo;

	if ((auipc & 0xfffu) != RV_AUIPC_T0 || (jalr & 0xfffffu) != RV_JALR_T0_T0)
		return -ENOENT;
	/* auipc sign-extends its 32-bit result on RV64; jalr clears bit 0. */
	hi = (int32_t)(auipc & 0xfffff000u);
	lo = (int32_t)jalr >> 20;
	*target = (slot_pc + (uint64_t)(hi + lo)) & ~UINT64_C(1);
	return 0;
}

static unsigned int rv_insn_len(const uint8_t *p, size_t avail)
{
	/* Low bits 11 mark a 32-bit instruction; anything else is compressed. */
	return (p[0] & 3) == 3 && avail >= RV_INSN_BYTES ? RV_INSN_BYTES : 2;
}

static const struct slot_layout rv_layout = {
	.slot_bytes = 2 * RV_INSN_BYTES,
	.insn_align = 2,
	.target_align = 2,
	.save_ra_bytes = 0,
	.call_offset = 0,
	.toggle_offset = RV_INSN_BYTES,
	.toggle_bytes = RV_INSN_BYTES,
	.reach_min = -(INT64_C(1) << 31) - 0x800,
	.reach_max = (INT64_C(1) << 31) - 0x800 - 1,
	.reach_text = "±2 GiB, auipc+jalr",
	.n_compiled = 2,
	.compiled = {
		{ 0x01, 0x00, 0x01, 0x00, 0x01, 0x00, 0x01, 0x00 },	/* 4 x c.nop */
		{ 0x13, 0x00, 0x00, 0x00, 0x13, 0x00, 0x00, 0x00 },	/* 2 x nop */
	},
};

const struct slot_ops slot_ops_riscv64 = {
	.arch = SLOT_ARCH_RISCV64,
	.name = "riscv64",
	.layout = &rv_layout,
	.encode = rv_encode,
	.decode_call = rv_decode_call,
	.insn_len = rv_insn_len,
};
