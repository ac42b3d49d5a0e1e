// SPDX-License-Identifier: GPL-2.0
/*
 * loongarch64 slots. Debian has no loongarch64 binutils, so the expected
 * words are packed here from the ISA manual's instruction formats (2RI12 for
 * andi, 3R for or, I26 for bl), independently of arch/loongarch64/slot.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/slot.h"
#include "tests/unit/check.h"

static const struct slot_ops *ops = &slot_ops_loongarch64;

#define SLOT 0x9000000000234560ull
#define STUB 0x9000000000100000ull
#define OTHER 0x9000000001000000ull
#define R_ZERO 0
#define R_RA 1
#define R_T0 12

/* 2RI12: opcode[31:22] imm12[21:10] rj[9:5] rd[4:0]; andi is opcode 0x00d. */
static uint32_t fmt_2ri12(uint32_t op, uint32_t imm, uint32_t rj, uint32_t rd)
{
	return op << 22 | (imm & 0xfff) << 10 | rj << 5 | rd;
}

/* 3R: opcode[31:15] rk[14:10] rj[9:5] rd[4:0]; or is opcode 0x2a. */
static uint32_t fmt_3r(uint32_t op, uint32_t rk, uint32_t rj, uint32_t rd)
{
	return op << 15 | rk << 10 | rj << 5 | rd;
}

/* I26: opcode[31:26] offs[15:0] at [25:10], offs[25:16] at [9:0]; bl is 0x15. */
static uint32_t fmt_i26(uint32_t op, int64_t offs)
{
	uint32_t o = (uint32_t)offs & 0x3ffffff;

	return op << 26 | (o & 0xffff) << 10 | o >> 16;
}

static uint32_t word(enum slot_insn insn, uint64_t pc, uint64_t target)
{
	uint8_t b[SLOT_INSN_MAX_BYTES];
	size_t len = 0;

	if (slot_encode(ops, insn, pc, target, b, &len, NULL) || len != 4)
		return 0;
	return slot_get_le32(b);
}

static void put2(uint8_t *b, uint32_t w0, uint32_t w1)
{
	slot_put_le32(b, w0);
	slot_put_le32(b + 4, w1);
}

static void test_encode(void)
{
	uint8_t b[SLOT_INSN_MAX_BYTES];
	uint64_t t;
	size_t len;
	int bad = 0;

	CHECK(word(SLOT_INSN_NOP, 0, 0) == 0x03400000 &&
	      word(SLOT_INSN_NOP, 0, 0) == fmt_2ri12(0x00d, 0, R_ZERO, R_ZERO),
	      "nop is andi zero, zero, 0 = 03400000");
	CHECK(word(SLOT_INSN_SAVE_RA, 0, 0) == fmt_3r(0x2a, R_ZERO, R_RA, R_T0) &&
	      word(SLOT_INSN_SAVE_RA, 0, 0) == 0x0015002c, "save-ra is or t0, ra, zero = 0015002c");
	CHECK(word(SLOT_INSN_CALL, 0x1000, 0x1004) == 0x54000400, "bl +4 is 54000400");
	CHECK(word(SLOT_INSN_CALL, SLOT, SLOT + (1 << 27) - 4) == fmt_i26(0x15, (1 << 25) - 1),
	      "bl +128 MiB - 4 (forward edge) packs offs 0x1ffffff");
	CHECK(word(SLOT_INSN_CALL, SLOT, SLOT - (1 << 27)) == fmt_i26(0x15, -(1 << 25)),
	      "bl -128 MiB (backward edge) packs offs -0x2000000");
	CHECK(slot_encode(ops, SLOT_INSN_CALL, SLOT, SLOT + (1 << 27), b, &len, NULL) == -ERANGE &&
	      slot_encode(ops, SLOT_INSN_CALL, SLOT, SLOT - (1 << 27) - 4, b, &len, NULL) == -ERANGE,
	      "one word past either edge is -ERANGE");
	CHECK(slot_encode(ops, SLOT_INSN_CALL, SLOT, SLOT + 6, b, &len, NULL) == -EINVAL,
	      "misaligned target is -EINVAL");
	srand(4);
	for (int i = 0; i < 20000; i++) {
		int64_t offs = (int64_t)(rand() % (1 << 26)) - (1 << 25);

		t = SLOT + (uint64_t)(offs * 4);
		bad += !CHECK_QUIET(word(SLOT_INSN_CALL, SLOT, t) == fmt_i26(0x15, offs),
				    "bl offs %lld", (long long)offs);
	}
	CHECK(bad == 0, "20000 random bl words match the manual's I26 packing");
}

static void test_classify(void)
{
	struct slot_ctx ctx = { SLOT, 0, STUB };
	uint32_t mv = fmt_3r(0x2a, R_ZERO, R_RA, R_T0), nop = 0x03400000;
	uint8_t b[8];
	uint64_t t = 1;

	put2(b, nop, nop);
	CHECK(slot_classify(ops, &ctx, b, &t) == SLOT_ORIGINAL && t == 0, "two NOPs are original");
	put2(b, mv, nop);
	CHECK(slot_classify(ops, &ctx, b, NULL) == SLOT_DISABLED, "move t0, ra + nop is disabled");
	put2(b, mv, fmt_i26(0x15, (int64_t)(STUB - SLOT - 4) / 4));
	CHECK(slot_classify(ops, &ctx, b, &t) == SLOT_ENABLED && t == STUB, "move + bl stub is enabled");
	put2(b, mv, fmt_i26(0x15, (int64_t)(OTHER - SLOT - 4) / 4));
	CHECK(slot_classify(ops, &ctx, b, &t) == SLOT_ENABLED_ELSEWHERE && t == OTHER,
	      "move + bl ftrace_caller is enabled-elsewhere");
	put2(b, nop, fmt_i26(0x15, 4));
	CHECK(slot_classify(ops, &ctx, b, NULL) == SLOT_UNKNOWN, "bl without the ra save is unknown");
	put2(b, mv, fmt_i26(0x14, 4));
	CHECK(slot_classify(ops, &ctx, b, NULL) == SLOT_UNKNOWN, "b (opcode 0x14, no link) is unknown");
}

static void test_changes(void)
{
	struct slot_ctx ctx = { SLOT, 0, STUB };
	uint8_t orig[8], dis[8], en[8];
	struct slot_change c;

	memcpy(orig, ops->layout->compiled[0], 8);
	CHECK(!slot_build(ops, SLOT_DISABLED, &ctx, dis, NULL) &&
	      !slot_build(ops, SLOT_ENABLED, &ctx, en, NULL) &&
	      slot_classify(ops, &ctx, dis, NULL) == SLOT_DISABLED &&
	      slot_classify(ops, &ctx, en, NULL) == SLOT_ENABLED, "built slots classify");
	CHECK(!slot_plan_change(ops, SLOT, orig, dis, &c) && c.offset == 0 && c.len == 4 &&
	      c.needs_quiet_guest, "placing move t0, ra needs a quiet guest");
	CHECK(!slot_plan_change(ops, SLOT, dis, en, &c) && c.offset == 4 && c.len == 4 &&
	      !c.needs_quiet_guest && !slot_change_pc_unsafe(&c, SLOT + 4),
	      "enable flips the second instruction only");
	CHECK(!slot_plan_change(ops, SLOT, en, dis, &c) && c.offset == 4 && !c.needs_quiet_guest,
	      "disable flips the second instruction only");
}

int main(void)
{
	test_encode();
	test_classify();
	test_changes();
	return check_exit();
}
