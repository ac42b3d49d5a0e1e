// SPDX-License-Identifier: GPL-2.0
/* The arch-independent slot layer: lookup by name, errors, the change rules. */
#include <errno.h>
#include <string.h>

#include "arch/slot.h"
#include "tests/unit/check.h"

static void test_lookup(void)
{
	static const struct {
		const char *name;
		enum slot_arch arch;
	} names[] = {
		{ "x86_64", SLOT_ARCH_X86_64 }, { "amd64", SLOT_ARCH_X86_64 },
		{ "arm64", SLOT_ARCH_ARM64 }, { "aarch64", SLOT_ARCH_ARM64 },
		{ "riscv64", SLOT_ARCH_RISCV64 }, { "loongarch64", SLOT_ARCH_LOONGARCH64 },
		{ "loong64", SLOT_ARCH_LOONGARCH64 },
	};
	enum slot_arch arch;
	enum slot_insn insn;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		arch = SLOT_ARCH_COUNT;
		CHECK(slot_arch_from_name(names[i].name, &arch) == 0 && arch == names[i].arch,
		      "arch name '%s' finds arch %d", names[i].name, names[i].arch);
	}
	CHECK(slot_arch_from_name("mips", &arch) == -EINVAL, "unknown arch name is -EINVAL");
	CHECK(slot_arch_from_name("ARM64", &arch) == -EINVAL, "arch names are exact");
	for (int a = 0; a < SLOT_ARCH_COUNT; a++) {
		const struct slot_ops *ops = slot_ops_for((enum slot_arch)a);

		CHECK(ops && ops->arch == (enum slot_arch)a && ops->layout &&
		      ops->layout->slot_bytes <= SLOT_MAX_BYTES &&
		      ops->layout->toggle_offset + ops->layout->toggle_bytes <=
		      ops->layout->slot_bytes, "slot_ops_for(%d) is %s with a sane layout", a,
		      ops ? ops->name : "NULL");
		CHECK(slot_arch_from_name(ops->name, &arch) == 0 && arch == (enum slot_arch)a,
		      "%s finds itself by its own name", ops->name);
	}
	CHECK(slot_ops_for(SLOT_ARCH_COUNT) == NULL, "slot_ops_for(out of range) is NULL");
	CHECK(!slot_insn_from_name("call", &insn) && insn == SLOT_INSN_CALL &&
	      !slot_insn_from_name("nop", &insn) && insn == SLOT_INSN_NOP &&
	      !slot_insn_from_name("save-ra", &insn) && insn == SLOT_INSN_SAVE_RA,
	      "instruction names call, nop, save-ra");
	CHECK(slot_insn_from_name("jmp", &insn) == -EINVAL, "unknown instruction is -EINVAL");
	CHECK(!strcmp(slot_state_name(SLOT_ENABLED_ELSEWHERE), "enabled-elsewhere") &&
	      !strcmp(slot_state_name(SLOT_UNKNOWN), "unknown") &&
	      !strcmp(slot_state_name((enum slot_state)99), "unknown"), "state names");
}

static void test_errors(void)
{
	const struct slot_ops *ops = &slot_ops_arm64;
	struct slot_err err = { "" };
	uint8_t buf[SLOT_INSN_MAX_BYTES];
	size_t len = 0;
	int ret;

	ret = slot_encode(ops, SLOT_INSN_CALL, 0x1000, 0x1000 + (1 << 27), buf, &len, &err);
	CHECK(ret == -ERANGE && strstr(err.msg, "arm64") && strstr(err.msg, "0x1000") &&
	      strstr(err.msg, "0x8001000") && strstr(err.msg, "128 MiB"),
	      "out of range names arch, pc, target and range: %s", err.msg);
	ret = slot_encode(ops, SLOT_INSN_CALL, 0x1002, 0x2000, buf, &len, &err);
	CHECK(ret == -EINVAL && strstr(err.msg, "0x1002"), "misaligned pc: %s", err.msg);
	ret = slot_encode(ops, SLOT_INSN_CALL, 0x1000, 0x2001, buf, &len, &err);
	CHECK(ret == -EINVAL && strstr(err.msg, "0x2001"), "misaligned target: %s", err.msg);
	ret = slot_encode(ops, SLOT_INSN_COUNT, 0, 0, buf, &len, &err);
	CHECK(ret == -EINVAL, "instruction out of the enum is -EINVAL: %s", err.msg);
	ret = slot_encode(ops, SLOT_INSN_CALL, 0x1000, 0x1000 + (1 << 27), buf, &len, NULL);
	CHECK(ret == -ERANGE, "the error text is optional");
	/* Far apart in 64 bits must not wrap into range. */
	ret = slot_check_call(&slot_ops_x86_64, 0, UINT64_C(1) << 63, NULL);
	CHECK(ret == -ERANGE, "x86_64: 2^63 away is out of range");
	ret = slot_check_call(&slot_ops_x86_64, UINT64_MAX - 3, 16, NULL);
	CHECK(ret == 0, "x86_64: targets wrap modulo 2^64 as the CPU's do");
}

/* A made-up change on a 4-byte-instruction arch, to pin the PC rule. */
static void test_pc_rule(void)
{
	const struct slot_ops *ops = &slot_ops_arm64;
	uint8_t cur[8], next[8];
	struct slot_change chg;
	struct slot_err err = { "" };
	uint64_t s = 0xffff800010000000, pcs[3];

	memcpy(cur, ops->layout->compiled[0], 8);
	memcpy(next, cur, 8);
	next[5] ^= 1;
	CHECK(!slot_plan_change(ops, s, cur, next, &chg) && chg.offset == 4 && chg.len == 4 &&
	      chg.insns == 1 && !chg.needs_quiet_guest,
	      "one changed byte widens to its instruction [4,8)");
	CHECK(!slot_change_pc_unsafe(&chg, s) && !slot_change_pc_unsafe(&chg, s + 4) &&
	      slot_change_pc_unsafe(&chg, s + 5) && !slot_change_pc_unsafe(&chg, s + 8) &&
	      !slot_change_pc_unsafe(&chg, s - 4), "only PCs past the first written byte are unsafe");
	pcs[0] = s + 8;
	pcs[1] = s;
	pcs[2] = s + 6;
	CHECK(slot_change_check_pcs(&chg, pcs, 2, &err) == 0, "safe PCs pass");
	CHECK(slot_change_check_pcs(&chg, pcs, 3, &err) == -EBUSY &&
	      strstr(err.msg, "vCPU 2") && strstr(err.msg, "0xffff800010000006"),
	      "an unsafe PC is -EBUSY naming the vCPU: %s", err.msg);
	CHECK(!slot_plan_change(ops, s, cur, cur, &chg) && chg.len == 0 &&
	      !slot_change_pc_unsafe(&chg, s + 4), "no change writes nothing and blocks no PC");
	/* Wrap-around: a slot at the top of the address space. */
	CHECK(!slot_plan_change(ops, UINT64_MAX - 7, cur, next, &chg) &&
	      slot_change_pc_unsafe(&chg, UINT64_MAX - 2) && !slot_change_pc_unsafe(&chg, 0),
	      "PC rule works for a slot that ends at 2^64");
}

int main(void)
{
	test_lookup();
	test_errors();
	test_pc_rule();
	return check_exit();
}
