// SPDX-License-Identifier: GPL-2.0
/* arm64 slots: NOP / mov x9, x30 / bl encodings, states and changes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/slot.h"
#include "tests/unit/check.h"

static const struct slot_ops *ops = &slot_ops_arm64;

#define SLOT 0xffff800008123450ull
#define STUB 0xffff800008000000ull
#define OTHER 0xffff800009000000ull
#define NOP 0xd503201fu
#define MOV_X9_X30 0xaa1e03e9u

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
	size_t len;

	/* Reference words from the Arm ARM, confirmed with objdump. */
	CHECK(word(SLOT_INSN_NOP, 0, 0) == NOP, "nop is d503201f");
	CHECK(word(SLOT_INSN_SAVE_RA, 0, 0) == MOV_X9_X30, "save-ra is mov x9, x30 = aa1e03e9");
	CHECK(word(SLOT_INSN_CALL, 0x1000, 0x2000) == 0x94000400, "bl +0x1000 is 94000400");
	CHECK(word(SLOT_INSN_CALL, 0x1000, 0x1000) == 0x94000000, "bl to itself is 94000000");
	CHECK(word(SLOT_INSN_CALL, 0x1000, 0xffc) == 0x97ffffff, "bl -4 is 97ffffff");
	CHECK(word(SLOT_INSN_CALL, SLOT, SLOT + (1 << 27) - 4) == 0x95ffffff,
	      "bl +128 MiB - 4 (the forward edge) is 95ffffff");
	CHECK(word(SLOT_INSN_CALL, SLOT, SLOT - (1 << 27)) == 0x96000000,
	      "bl -128 MiB (the backward edge) is 96000000");
	CHECK(slot_encode(ops, SLOT_INSN_CALL, SLOT, SLOT + (1 << 27), b, &len, NULL) == -ERANGE,
	      "bl +128 MiB is -ERANGE");
	CHECK(slot_encode(ops, SLOT_INSN_CALL, SLOT, SLOT - (1 << 27) - 4, b, &len, NULL) == -ERANGE,
	      "bl -128 MiB - 4 is -ERANGE");
	CHECK(slot_encode(ops, SLOT_INSN_CALL, SLOT + 2, SLOT, b, &len, NULL) == -EINVAL &&
	      slot_encode(ops, SLOT_INSN_CALL, SLOT, SLOT + 2, b, &len, NULL) == -EINVAL,
	      "misaligned pc or target is -EINVAL");
}

static void test_roundtrip(void)
{
	uint8_t b[8];
	uint64_t pc, t, got;
	int bad = 0;

	srand(2);
	for (int i = 0; i < 20000; i++) {
		pc = ((uint64_t)rand() << 33 ^ (uint64_t)rand() << 2) & ~3ull;
		t = pc + 4 + (uint64_t)(((int64_t)(rand() % (1 << 26)) - (1 << 25)) * 4);
		put2(b, MOV_X9_X30, word(SLOT_INSN_CALL, pc + 4, t));
		bad += !CHECK_QUIET(!ops->decode_call(b, pc, &got) && got == t,
				    "slot 0x%llx -> 0x%llx", (unsigned long long)pc,
				    (unsigned long long)t);
	}
	CHECK(bad == 0, "20000 random enabled slots decode back to their targets");
}

static void test_classify(void)
{
	struct slot_ctx ctx = { SLOT, 0, STUB };
	uint8_t b[8];
	uint64_t t = 1;

	put2(b, NOP, NOP);
	CHECK(slot_classify(ops, &ctx, b, &t) == SLOT_ORIGINAL && t == 0,
	      "two NOPs (-fpatchable-function-entry=2) are original");
	put2(b, MOV_X9_X30, NOP);
	CHECK(slot_classify(ops, &ctx, b, NULL) == SLOT_DISABLED, "mov x9, x30 + nop is disabled");
	put2(b, MOV_X9_X30, word(SLOT_INSN_CALL, SLOT + 4, STUB));
	CHECK(slot_classify(ops, &ctx, b, &t) == SLOT_ENABLED && t == STUB, "mov + bl stub is enabled");
	put2(b, MOV_X9_X30, word(SLOT_INSN_CALL, SLOT + 4, OTHER));
	CHECK(slot_classify(ops, &ctx, b, &t) == SLOT_ENABLED_ELSEWHERE && t == OTHER,
	      "mov + bl ftrace_caller is enabled-elsewhere");
	put2(b, NOP, word(SLOT_INSN_CALL, SLOT + 4, STUB));
	CHECK(slot_classify(ops, &ctx, b, NULL) == SLOT_UNKNOWN,
	      "bl without the x30 save (would lose the return address) is unknown");
	put2(b, MOV_X9_X30, 0x14000002);
	CHECK(slot_classify(ops, &ctx, b, NULL) == SLOT_UNKNOWN, "b (no link) is unknown");
}

static void test_changes(void)
{
	struct slot_ctx ctx = { SLOT, 0, STUB };
	uint8_t orig[8], dis[8], en[8], other[8];
	struct slot_change c;

	memcpy(orig, ops->layout->compiled[0], 8);
	CHECK(!slot_build(ops, SLOT_DISABLED, &ctx, dis, NULL) &&
	      slot_get_le32(dis) == MOV_X9_X30 && slot_get_le32(dis + 4) == NOP,
	      "built disabled slot is mov x9, x30; nop");
	CHECK(!slot_build(ops, SLOT_ENABLED, &ctx, en, NULL) &&
	      slot_classify(ops, &ctx, en, NULL) == SLOT_ENABLED, "built enabled slot classifies");
	CHECK(!slot_plan_change(ops, SLOT, orig, dis, &c) && c.offset == 0 && c.len == 4 &&
	      c.needs_quiet_guest && slot_change_pc_unsafe(&c, SLOT + 4),
	      "placing mov x9, x30 needs a quiet guest: a task at +4 skipped the save");
	CHECK(!slot_plan_change(ops, SLOT, dis, en, &c) && c.offset == 4 && c.len == 4 &&
	      c.insns == 1 && !c.needs_quiet_guest && !slot_change_pc_unsafe(&c, SLOT + 4) &&
	      !slot_change_pc_unsafe(&c, SLOT),
	      "enable flips one instruction; a vCPU at the bl itself is fine");
	CHECK(!slot_plan_change(ops, SLOT, en, dis, &c) && c.offset == 4 && !c.needs_quiet_guest,
	      "disable flips one instruction");
	CHECK(!slot_plan_change(ops, SLOT, orig, en, &c) && c.offset == 0 && c.len == 8 &&
	      c.insns == 2 && c.needs_quiet_guest, "original -> enabled in one go is two writes");
	ctx.our_target = OTHER;
	CHECK(!slot_build(ops, SLOT_ENABLED, &ctx, other, NULL) &&
	      !slot_plan_change(ops, SLOT, en, other, &c) && c.offset == 4 && !c.needs_quiet_guest,
	      "retargeting the bl is one instruction");
	ctx.our_target = SLOT + 4 + (1 << 27);
	CHECK(slot_build(ops, SLOT_DISABLED, &ctx, dis, NULL) == -ERANGE,
	      "a stub out of bl range cannot be prepared");
}

int main(void)
{
	test_encode();
	test_roundtrip();
	test_classify();
	test_changes();
	return check_exit();
}
