// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the slot code of every arch (arch/): what the
 * tracer does with slot bytes read from an untrusted guest or image. The
 * input picks the arch and gives the slot PC, the targets and two slots'
 * worth of bytes (cur, next). Checked: classify and plan_change stay in
 * the slot; a plan applied to cur yields next; what slot_build makes,
 * slot_classify recognises; decode_call agrees with classify on targets.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arch/slot.h"

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

#define HDR (1 + 3 * 8)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct slot_ops *ops;
	const struct slot_layout *l;
	struct slot_ctx ctx;
	struct slot_change chg;
	uint8_t cur[SLOT_MAX_BYTES], next[SLOT_MAX_BYTES], built[SLOT_MAX_BYTES], applied[SLOT_MAX_BYTES];
	uint64_t tgt, t2;
	enum slot_state st;
	unsigned n, len;

	if (size < HDR + 2 * SLOT_MAX_BYTES)
		return 0;
	ops = slot_ops_for((enum slot_arch)(data[0] % SLOT_ARCH_COUNT));
	if (!ops)
		abort();
	l = ops->layout;
	n = l->slot_bytes;
	if (!n || n > SLOT_MAX_BYTES || l->call_offset >= n || l->toggle_offset + l->toggle_bytes > n)
		abort();
	ctx.slot_pc = get64(data + 1);
	ctx.original_target = get64(data + 9);
	/* Half the inputs with no stub known, as when reading an image. */
	ctx.our_target = data[0] & 0x80 ? SLOT_TARGET_NONE : get64(data + 17);
	memcpy(cur, data + HDR, SLOT_MAX_BYTES);
	memcpy(next, data + HDR + SLOT_MAX_BYTES, SLOT_MAX_BYTES);

	tgt = 0xdead;
	st = slot_classify(ops, &ctx, cur, &tgt);
	if ((unsigned)st >= SLOT_STATE_COUNT)
		abort();
	if (st == SLOT_ENABLED && tgt != ctx.our_target)
		abort();
	if (st == SLOT_ENABLED && ctx.our_target == SLOT_TARGET_NONE)
		abort();	/* no stub known: nothing is ours */
	if ((st == SLOT_ENABLED || st == SLOT_ENABLED_ELSEWHERE) &&
	    (ops->decode_call(cur, ctx.slot_pc, &t2) || t2 != tgt))
		abort();	/* a call classify saw, decode_call sees with the same target */

	/* Whatever the guest put there, a plan only writes inside the slot. */
	if (slot_plan_change(ops, ctx.slot_pc, cur, next, &chg))
		abort();
	if (chg.offset > n || chg.offset + chg.len > n || chg.insns > n)
		abort();
	memcpy(applied, cur, n);
	memcpy(applied + chg.offset, chg.bytes + chg.offset, chg.len);
	if (memcmp(applied, next, n))
		abort();
	if (!chg.len != !memcmp(cur, next, n))
		abort();
	slot_change_pc_unsafe(&chg, ctx.slot_pc + data[HDR] % (n + 2));

	/* What we build for our stub, we recognise; ORIGINAL wins only where
	 * the stub is the compiler's own target (a degenerate setup). */
	if (!slot_build(ops, SLOT_DISABLED, &ctx, built, NULL) &&
	    slot_classify(ops, &ctx, built, NULL) != SLOT_DISABLED)
		abort();
	if (ctx.our_target != SLOT_TARGET_NONE &&
	    !(l->compiled_call && ctx.our_target == ctx.original_target) &&
	    !slot_build(ops, SLOT_ENABLED, &ctx, built, NULL) &&
	    (slot_classify(ops, &ctx, built, &t2) != SLOT_ENABLED || t2 != ctx.our_target))
		abort();

	/* Instruction lengths over every suffix of the input's bytes. */
	for (size_t i = HDR; i < size && i < HDR + 64; i++) {
		len = ops->insn_len(data + i, size - i);
		if (!len || len > SLOT_INSN_MAX_BYTES)
			abort();
	}
	slot_entry_pad(ops, cur, n);
	return 0;
}
