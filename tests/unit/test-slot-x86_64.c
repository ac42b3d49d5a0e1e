// SPDX-License-Identifier: GPL-2.0
/* x86_64 slots: call rel32 / 5-byte NOP encodings, states and changes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/slot.h"
#include "tests/unit/check.h"

static const struct slot_ops *ops = &slot_ops_x86_64;

/* Addresses like the stock 6.1 kernel's: text, __fentry__, a stub in the
 * unused hole below the kernel (see DESIGN.md). */
#define SLOT 0xffffffff81234560ull
#define FENTRY 0xffffffff82001000ull
#define STUB 0xffffffff7fe00000ull
#define OTHER 0xffffffffc0001000ull

static void put_call(uint8_t *b, uint64_t pc, uint64_t target)
{
	b[0] = 0xe8;
	slot_put_le32(b + 1, (uint32_t)(target - pc - 5));
}

static void test_encode(void)
{
	static const uint8_t self[5] = { 0xe8, 0xfb, 0xff, 0xff, 0xff };
	static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	uint8_t b[SLOT_INSN_MAX_BYTES];
	size_t len = 0;

	CHECK(!slot_encode(ops, SLOT_INSN_CALL, SLOT, SLOT, b, &len, NULL) && len == 5 &&
	      !memcmp(b, self, 5), "call to itself is e8 fb ff ff ff");
	CHECK(!slot_encode(ops, SLOT_INSN_NOP, 0, 0, b, &len, NULL) && len == 5 &&
	      !memcmp(b, nop5, 5), "nop is the kernel's 0f 1f 44 00 00");
	CHECK(slot_encode(ops, SLOT_INSN_SAVE_RA, 0, 0, b, &len, NULL) == -EOPNOTSUPP,
	      "save-ra does not exist on x86_64");
	CHECK(!slot_encode(ops, SLOT_INSN_CALL, 0x1000, 0x1005ull + INT32_MAX, b, &len, NULL) &&
	      b[0] == 0xe8 && slot_get_le32(b + 1) == 0x7fffffff, "rel32 = INT32_MAX reaches");
	CHECK(slot_encode(ops, SLOT_INSN_CALL, 0x1000, 0x1000 + 6ull + INT32_MAX, b, &len,
			  NULL) == -ERANGE, "rel32 = INT32_MAX + 1 is -ERANGE");
	CHECK(!slot_encode(ops, SLOT_INSN_CALL, SLOT, SLOT + 5 - 0x80000000ull, b, &len, NULL) &&
	      slot_get_le32(b + 1) == 0x80000000u, "rel32 = INT32_MIN reaches");
	CHECK(slot_encode(ops, SLOT_INSN_CALL, SLOT, SLOT + 4 - 0x80000000ull, b, &len,
			  NULL) == -ERANGE, "rel32 = INT32_MIN - 1 is -ERANGE");
	CHECK(!slot_check_call(ops, SLOT, STUB, NULL), "text reaches the stub hole");
	CHECK(!slot_check_call(ops, 0xffffffffc0000000ull, STUB, NULL),
	      "module space reaches the stub hole");
}

static void test_roundtrip(void)
{
	uint8_t b[SLOT_INSN_MAX_BYTES];
	uint64_t pc, t, got;
	size_t len;
	int bad = 0;

	srand(1);
	for (int i = 0; i < 20000; i++) {
		pc = (uint64_t)rand() << 33 ^ (uint64_t)rand() << 2 ^ (uint64_t)rand();
		t = pc + (uint64_t)(int64_t)((int32_t)((uint32_t)rand() << 1 ^ (uint32_t)rand())) + 5;
		bad += !CHECK_QUIET(!slot_encode(ops, SLOT_INSN_CALL, pc, t, b, &len, NULL) &&
				    !ops->decode_call(b, pc, &got) && got == t,
				    "call 0x%llx -> 0x%llx", (unsigned long long)pc,
				    (unsigned long long)t);
	}
	CHECK(bad == 0, "20000 random calls decode back to their targets");
}

static void test_classify(void)
{
	struct slot_ctx ctx = { SLOT, FENTRY, STUB };
	uint8_t b[5];
	uint64_t t = 0;

	put_call(b, SLOT, FENTRY);
	CHECK(slot_classify(ops, &ctx, b, &t) == SLOT_ORIGINAL && t == FENTRY,
	      "call __fentry__ is original");
	memcpy(b, "\x0f\x1f\x44\x00\x00", 5);
	CHECK(slot_classify(ops, &ctx, b, &t) == SLOT_DISABLED && t == 0,
	      "the guest's 5-byte NOP is disabled");
	put_call(b, SLOT, STUB);
	CHECK(slot_classify(ops, &ctx, b, &t) == SLOT_ENABLED && t == STUB, "call stub is enabled");
	put_call(b, SLOT, OTHER);
	CHECK(slot_classify(ops, &ctx, b, &t) == SLOT_ENABLED_ELSEWHERE && t == OTHER,
	      "call elsewhere (a guest ftrace trampoline) is enabled-elsewhere");
	put_call(b, SLOT, FENTRY);
	b[0] = 0xcc;
	CHECK(slot_classify(ops, &ctx, b, NULL) == SLOT_UNKNOWN,
	      "int3 of a guest text_poke_bp in flight is unknown");
	memcpy(b, "\x66\x90\x66\x90\x90", 5);
	CHECK(slot_classify(ops, &ctx, b, NULL) == SLOT_UNKNOWN, "other NOP forms are unknown");
}

/* An image read from disk: no stub known; and where a function's slot sits. */
static void test_classify_no_stub(void)
{
	struct slot_ctx ctx = { SLOT, FENTRY, SLOT_TARGET_NONE };
	static const uint8_t endbr[8] = { 0xf3, 0x0f, 0x1e, 0xfa, 0xe8 };
	uint8_t b[5];

	memcpy(b, "\x0f\x1f\x44\x00\x00", 5);
	CHECK(slot_classify(ops, &ctx, b, NULL) == SLOT_DISABLED, "no stub known: the NOP is disabled");
	put_call(b, SLOT, STUB);
	CHECK(slot_classify(ops, &ctx, b, NULL) == SLOT_ENABLED_ELSEWHERE,
	      "no stub known: a call to the stub is enabled-elsewhere");
	put_call(b, SLOT, SLOT_TARGET_NONE);
	CHECK(slot_classify(ops, &ctx, b, NULL) == SLOT_ENABLED_ELSEWHERE,
	      "a call to the no-stub marker itself is not enabled");
	put_call(b, SLOT, FENTRY);
	CHECK(slot_classify(ops, &ctx, b, NULL) == SLOT_ORIGINAL, "no stub known: call __fentry__ is original");
	CHECK(slot_entry_pad(ops, endbr, 8) == 4 && slot_entry_pad(ops, endbr, 3) == 0 &&
	      slot_entry_pad(ops, endbr + 1, 7) == 0,
	      "IBT: a function starting with ENDBR64 has its slot 4 bytes in; short or other bytes: 0");
}

static void test_changes(void)
{
	struct slot_ctx ctx = { SLOT, FENTRY, STUB };
	uint8_t orig[5], dis[5], en[5], poke[5];
	struct slot_change c;

	put_call(orig, SLOT, FENTRY);
	CHECK(!slot_build(ops, SLOT_DISABLED, &ctx, dis, NULL) && !memcmp(dis, "\x0f\x1f\x44\0\0", 5),
	      "built disabled slot is the 5-byte NOP");
	CHECK(!slot_build(ops, SLOT_ENABLED, &ctx, en, NULL) &&
	      slot_classify(ops, &ctx, en, NULL) == SLOT_ENABLED, "built enabled slot classifies");
	CHECK(slot_build(ops, SLOT_ORIGINAL, &ctx, en, NULL) == -EINVAL,
	      "original is not built (the tracer keeps what it read)");
	CHECK(!slot_plan_change(ops, SLOT, orig, en, &c) && c.offset == 0 && c.len == 5 &&
	      c.insns == 1 && !c.needs_quiet_guest,
	      "before ftrace_init: call __fentry__ -> call stub is one whole instruction");
	CHECK(!slot_plan_change(ops, SLOT, dis, en, &c) && c.len == 5 && !c.needs_quiet_guest,
	      "after ftrace_init: NOP -> call stub is one instruction");
	CHECK(!slot_change_pc_unsafe(&c, SLOT) && slot_change_pc_unsafe(&c, SLOT + 1) &&
	      slot_change_pc_unsafe(&c, SLOT + 4) && !slot_change_pc_unsafe(&c, SLOT + 5),
	      "only a PC inside the 5 bytes (never a real boundary) blocks it");
	CHECK(!slot_plan_change(ops, SLOT, en, orig, &c) && c.len == 5 && !c.needs_quiet_guest,
	      "restoring call __fentry__ for ftrace_init is one instruction");
	memcpy(poke, orig, 5);
	poke[0] = 0xcc;
	CHECK(!slot_plan_change(ops, SLOT, poke, orig, &c) && c.needs_quiet_guest,
	      "rewriting an int3-patched slot may meet a context after the int3");
	ctx.our_target = SLOT + 0x100000000ull;
	CHECK(slot_build(ops, SLOT_ENABLED, &ctx, en, NULL) == -ERANGE,
	      "a stub 4 GiB away cannot be built");
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
