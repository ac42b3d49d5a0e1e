// SPDX-License-Identifier: GPL-2.0
/*
 * x86_64 slots: -mfentry puts `call __fentry__` (e8 rel32) at the function's
 * first byte; the guest's ftrace_init turns it into the 5-byte NOP; vmmtrace
 * writes `call stub`. Every form is one 5-byte instruction, so no context can
 * ever be stopped inside the slot and each change is a single instruction.
 */
#include <errno.h>
#include <string.h>

#include "arch/slot.h"

#define X86_CALL_REL32 0xe8
#define X86_CALL_BYTES 5
#define X86_INT3 0xcc

/* The kernel's ideal 5-byte NOP on x86_64 (nopl 0x0(%rax,%rax,1)). */
static const uint8_t x86_nop5[X86_CALL_BYTES] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

static int x86_encode(enum slot_insn insn, uint64_t pc, uint64_t target,
		      uint8_t *buf, size_t *len, struct slot_err *err)
{
	switch (insn) {
	case SLOT_INSN_CALL:
		/* rel32 counts from the end of the call; range already checked. */
		buf[0] = X86_CALL_REL32;
		slot_put_le32(buf + 1, (uint32_t)(target - (pc + X86_CALL_BYTES)));
		*len = X86_CALL_BYTES;
		return 0;
	case SLOT_INSN_NOP:
		memcpy(buf, x86_nop5, sizeof(x86_nop5));
		*len = sizeof(x86_nop5);
		return 0;
	case SLOT_INSN_SAVE_RA:
		return slot_err_set(err, EOPNOTSUPP, "x86_64: no return-address save in the slot: "
				    "call pushes the return address itself");
	default:
		return slot_err_set(err, EINVAL, "x86_64: unknown slot instruction %d", (int)insn);
	}
}

static int x86_decode_call(const uint8_t *bytes, uint64_t slot_pc, uint64_t *target)
{
	int32_t rel;

	if (bytes[0] != X86_CALL_REL32)
		return -ENOENT;
	rel = (int32_t)slot_get_le32(bytes + 1);
	*target = slot_pc + X86_CALL_BYTES + (uint64_t)(int64_t)rel;
	return 0;
}

static unsigned int x86_insn_len(const uint8_t *p, size_t avail)
{
	if (avail >= X86_CALL_BYTES &&
	    (p[0] == X86_CALL_REL32 || !memcmp(p, x86_nop5, sizeof(x86_nop5))))
		return X86_CALL_BYTES;
	/* Anything else, e.g. the int3 of a text_poke_bp() in flight, may have
	 * a context stopped after any byte: treat every byte as a boundary. */
	return 1;
}

static const struct slot_layout x86_layout = {
	.slot_bytes = X86_CALL_BYTES,
	.insn_align = 1,
	.target_align = 1,
	.save_ra_bytes = 0,
	.call_offset = 0,
	.toggle_offset = 0,
	.toggle_bytes = X86_CALL_BYTES,
	.reach_min = (int64_t)INT32_MIN + X86_CALL_BYTES,
	.reach_max = (int64_t)INT32_MAX + X86_CALL_BYTES,
	.reach_text = "±2 GiB, call rel32",
	.byte_stream = true,
	.compiled_call = true,
	.n_compiled = 0,
	/* IBT kernels start functions with ENDBR64 and put the call after it. */
	.entry_pad_bytes = 4,
	.entry_pad = { 0xf3, 0x0f, 0x1e, 0xfa },
};

const struct slot_ops slot_ops_x86_64 = {
	.arch = SLOT_ARCH_X86_64,
	.name = "x86_64",
	.layout = &x86_layout,
	.encode = x86_encode,
	.decode_call = x86_decode_call,
	.insn_len = x86_insn_len,
};
