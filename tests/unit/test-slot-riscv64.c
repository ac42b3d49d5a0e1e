// SPDX-License-Identifier: GPL-2.0
/* riscv64 slots: auipc t0 + jalr t0 / nop encodings, states and changes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/slot.h"
#include "tests/unit/check.h"

static const struct slot_ops *ops = &slot_ops_riscv64;

#define SLOT 0xffffffff80234560ull
#define STUB 0xffffffff80001000ull
#define OTHER 0xffffffff90000000ull
#define NOP 0x00000013u

static int call(uint64_t pc, uint64_t target, uint32_t *w0, uint32_t *w1)
{
	uint8_t b[SLOT_INSN_MAX_BYTES];
	size_t len = 0;
	int ret = slot_encode(ops, SLOT_INSN_CALL, pc, target, b, &len, NULL);

	if (ret)
		return ret;
	*w0 = slot_get_le32(b);
	*w1 = slot_get_le32(b + 4);
	return len == 8 ? 0 : -1;
}

static void put2(uint8_t *b, uint32_t w0, uint32_t w1)
{
	slot_put_le32(b, w0);
	slot_put_le32(b + 4, w1);
}

static void test_encode(void)
{
	uint8_t b[SLOT_INSN_MAX_BYTES];
	uint32_t w0 = 0, w1 = 0;
	size_t len;

	CHECK(!slot_encode(ops, SLOT_INSN_NOP, 0, 0, b, &len, NULL) && len == 4 &&
	      slot_get_le32(b) == NOP, "nop is addi zero, zero, 0 = 00000013");
	CHECK(slot_encode(ops, SLOT_INSN_SAVE_RA, 0, 0, b, &len, NULL) == -EOPNOTSUPP,
	      "no save-ra: jalr links through t0");
	/* Reference words confirmed with riscv64-linux-gnu-objdump. */
	CHECK(!call(0x1000, 0x80000000, &w0, &w1) && w0 == 0x7ffff297 && w1 == 0x000282e7,
	      "call +0x7ffff000 is auipc t0, 0x7ffff; jalr t0, 0(t0)");
	CHECK(!call(0x1000, 0x1800, &w0, &w1) && w0 == 0x00001297 && w1 == 0x800282e7,
	      "lo = -2048 rounds hi up: auipc t0, 1; jalr t0, -2048(t0)");
	CHECK(!call(SLOT, SLOT - 0x80000800ull, &w0, &w1) && w0 == 0x80000297 && w1 == 0x800282e7,
	      "backward edge -2 GiB - 2 KiB is auipc 0x80000; jalr -2048");
	CHECK(!call(SLOT, SLOT + 0x7ffff7feull, &w0, &w1) && w0 == 0x7ffff297 && w1 == 0x7fe282e7,
	      "forward edge +2 GiB - 2 KiB - 2 is auipc 0x7ffff; jalr 2046");
	CHECK(call(SLOT, SLOT + 0x7ffff800ull, &w0, &w1) == -ERANGE &&
	      call(SLOT, SLOT - 0x80000802ull, &w0, &w1) == -ERANGE, "past either edge is -ERANGE");
	CHECK(call(SLOT + 1, SLOT + 0x100, &w0, &w1) == -EINVAL &&
	      call(SLOT, SLOT + 0x101, &w0, &w1) == -EINVAL, "odd pc or target is -EINVAL");
	CHECK(!call(SLOT + 2, SLOT + 0x102, &w0, &w1), "2-byte alignment is enough (C extension)");
}

static void test_roundtrip(void)
{
	uint8_t b[8];
	uint64_t pc, t, got;
	uint32_t w0, w1;
	int bad = 0;

	srand(3);
	for (int i = 0; i < 20000; i++) {
		pc = ((uint64_t)rand() << 33 ^ (uint64_t)rand() << 2) & ~1ull;
		t = pc + (uint64_t)(int64_t)((int32_t)((uint32_t)rand() << 1 ^ (uint32_t)rand()) & ~1);
		if (slot_check_call(ops, pc, t, NULL))
			continue;
		bad += !CHECK_QUIET(!call(pc, t, &w0, &w1), "encode 0x%llx", (unsigned long long)t);
		put2(b, w0, w1);
		bad += !CHECK_QUIET(!ops->decode_call(b, pc, &got) && got == t,
				    "slot 0x%llx -> 0x%llx", (unsigned long long)pc,
				    (unsigned long long)t);
	}
	CHECK(bad == 0, "random in-range calls decode back to their targets");
}

static void test_classify(void)
{
	struct slot_ctx ctx = { SLOT, 0, STUB };
	uint8_t b[8];
	uint32_t w0, w1;
	uint64_t t = 1;

	memcpy(b, "\x01\x00\x01\x00\x01\x00\x01\x00", 8);
	CHECK(slot_classify(ops, &ctx, b, &t) == SLOT_ORIGINAL && t == 0,
	      "four c.nop (-fpatchable-function-entry=4, RVC) are original");
	put2(b, NOP, NOP);
	CHECK(slot_classify(ops, &ctx, b, NULL) == SLOT_ORIGINAL,
	      "two nop (=2 without RVC, or after a 6.1 guest's ftrace_init) are original");
	call(SLOT, STUB, &w0, &w1);
	put2(b, w0, NOP);
	CHECK(slot_classify(ops, &ctx, b, NULL) == SLOT_DISABLED,
	      "auipc t0 aimed at the stub + nop is disabled");
	put2(b, w0, w1);
	CHECK(slot_classify(ops, &ctx, b, &t) == SLOT_ENABLED && t == STUB,
	      "auipc + jalr stub is enabled");
	call(SLOT, OTHER, &w0, &w1);
	put2(b, w0, w1);
	CHECK(slot_classify(ops, &ctx, b, &t) == SLOT_ENABLED_ELSEWHERE && t == OTHER,
	      "auipc + jalr elsewhere is enabled-elsewhere");
	put2(b, w0, NOP);
	CHECK(slot_classify(ops, &ctx, b, NULL) == SLOT_UNKNOWN,
	      "auipc aimed elsewhere + nop cannot be enabled with one write: unknown");
	put2(b, 0x00000097, 0x000080e7);
	CHECK(slot_classify(ops, &ctx, b, NULL) == SLOT_UNKNOWN, "auipc ra + jalr ra is unknown");
}

/* An image read from disk: no stub known, so disabled means aimed anywhere. */
static void test_classify_no_stub(void)
{
	struct slot_ctx ctx = { SLOT, 0, SLOT_TARGET_NONE };
	uint8_t b[8];
	uint32_t w0, w1;

	call(SLOT, OTHER, &w0, &w1);
	put2(b, w0, NOP);
	CHECK(slot_classify(ops, &ctx, b, NULL) == SLOT_DISABLED,
	      "no stub known: auipc t0 aimed anywhere + nop is disabled");
	put2(b, w0, w1);
	CHECK(slot_classify(ops, &ctx, b, NULL) == SLOT_ENABLED_ELSEWHERE,
	      "no stub known: auipc + jalr is enabled-elsewhere, never enabled");
	put2(b, 0x00000097, NOP);
	CHECK(slot_classify(ops, &ctx, b, NULL) == SLOT_UNKNOWN,
	      "no stub known: auipc ra + nop is still unknown");
	put2(b, w0, 0x00000001);
	CHECK(slot_classify(ops, &ctx, b, NULL) == SLOT_UNKNOWN,
	      "no stub known: auipc t0 + anything but nop is unknown");
	CHECK(slot_entry_pad(ops, b, 8) == 0, "riscv64 slots sit at the function's first byte");
}

static void test_changes(void)
{
	struct slot_ctx ctx = { SLOT, 0, STUB };
	uint8_t cnop[8], nop2[8], dis[8], en[8], near[8];
	struct slot_change c;

	memcpy(cnop, ops->layout->compiled[0], 8);
	memcpy(nop2, ops->layout->compiled[1], 8);
	CHECK(!slot_build(ops, SLOT_DISABLED, &ctx, dis, NULL) &&
	      !slot_build(ops, SLOT_ENABLED, &ctx, en, NULL) &&
	      slot_get_le32(dis + 4) == NOP && slot_get_le32(en) == slot_get_le32(dis),
	      "disabled keeps the enabled auipc, with a nop for the jalr");
	CHECK(!slot_plan_change(ops, SLOT, cnop, dis, &c) && c.offset == 0 && c.len == 8 &&
	      c.insns == 2 && c.needs_quiet_guest && slot_change_pc_unsafe(&c, SLOT + 2) &&
	      slot_change_pc_unsafe(&c, SLOT + 6) && !slot_change_pc_unsafe(&c, SLOT),
	      "c.nop x4 -> auipc + nop: two writes, contexts at +2/+4/+6 would break");
	CHECK(!slot_plan_change(ops, SLOT, nop2, dis, &c) && c.offset == 0 && c.len == 4 &&
	      c.needs_quiet_guest && slot_change_pc_unsafe(&c, SLOT + 4),
	      "nop x2 -> auipc + nop: one write, but a task preempted at +4 skipped the auipc");
	CHECK(!slot_plan_change(ops, SLOT, dis, en, &c) && c.offset == 4 && c.len == 4 &&
	      !c.needs_quiet_guest && !slot_change_pc_unsafe(&c, SLOT + 4),
	      "enable flips the jalr only: safe for a task between auipc and jalr");
	CHECK(!slot_plan_change(ops, SLOT, en, dis, &c) && c.offset == 4 && !c.needs_quiet_guest,
	      "disable flips the jalr only");
	CHECK(!slot_plan_change(ops, SLOT, nop2, en, &c) && c.len == 8 && c.needs_quiet_guest,
	      "nop x2 -> auipc + jalr (Linux 6.1's way) needs a quiet guest");
	ctx.our_target = STUB + 0x10;
	CHECK(!slot_build(ops, SLOT_ENABLED, &ctx, near, NULL) &&
	      !slot_plan_change(ops, SLOT, en, near, &c) && c.offset == 4 && !c.needs_quiet_guest,
	      "retarget within the same 4 KiB-rounded hi changes the jalr only");
	ctx.our_target = OTHER;
	CHECK(!slot_build(ops, SLOT_ENABLED, &ctx, near, NULL) &&
	      !slot_plan_change(ops, SLOT, en, near, &c) && c.offset == 0 && c.needs_quiet_guest,
	      "retarget with a new hi rewrites the auipc: quiet guest only");
}

int main(void)
{
	test_encode();
	test_roundtrip();
	test_classify();
	test_classify_no_stub();
	test_changes();
	return check_exit();
}
