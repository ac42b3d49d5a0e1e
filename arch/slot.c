// SPDX-License-Identifier: GPL-2.0
/*
 * The arch-independent half of the slot layer: arch lookup by name, range
 * checks, and the rules that follow from each arch's layout (build, classify,
 * plan a change, which PCs make it unsafe). The arch files only encode and
 * decode instructions.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "arch/slot.h"

static const struct {
	const char *name;
	enum slot_arch arch;
} arch_names[] = {
	{ "x86_64", SLOT_ARCH_X86_64 },
	{ "x86-64", SLOT_ARCH_X86_64 },
	{ "amd64", SLOT_ARCH_X86_64 },
	{ "arm64", SLOT_ARCH_ARM64 },
	{ "aarch64", SLOT_ARCH_ARM64 },
	{ "riscv64", SLOT_ARCH_RISCV64 },
	{ "riscv", SLOT_ARCH_RISCV64 },
	{ "loongarch64", SLOT_ARCH_LOONGARCH64 },
	{ "loongarch", SLOT_ARCH_LOONGARCH64 },
	{ "loong64", SLOT_ARCH_LOONGARCH64 },
};

static const char *const insn_names[SLOT_INSN_COUNT] = {
	[SLOT_INSN_CALL] = "call",
	[SLOT_INSN_NOP] = "nop",
	[SLOT_INSN_SAVE_RA] = "save-ra",
};

int slot_err_set(struct slot_err *err, int errnum, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return -errnum;
}

const struct slot_ops *slot_ops_for(enum slot_arch arch)
{
	switch (arch) {
	case SLOT_ARCH_X86_64:
		return &slot_ops_x86_64;
	case SLOT_ARCH_ARM64:
		return &slot_ops_arm64;
	case SLOT_ARCH_RISCV64:
		return &slot_ops_riscv64;
	case SLOT_ARCH_LOONGARCH64:
		return &slot_ops_loongarch64;
	default:
		return NULL;
	}
}

int slot_arch_from_name(const char *name, enum slot_arch *arch)
{
	for (size_t i = 0; i < sizeof(arch_names) / sizeof(arch_names[0]); i++) {
		if (!strcmp(name, arch_names[i].name)) {
			*arch = arch_names[i].arch;
			return 0;
		}
	}
	return -EINVAL;
}

const char *slot_arch_names(void)
{
	return "x86_64, arm64, riscv64, loongarch64";
}

const char *slot_state_name(enum slot_state state)
{
	switch (state) {
	case SLOT_ORIGINAL:
		return "original";
	case SLOT_DISABLED:
		return "disabled";
	case SLOT_ENABLED:
		return "enabled";
	case SLOT_ENABLED_ELSEWHERE:
		return "enabled-elsewhere";
	default:
		return "unknown";
	}
}

int slot_insn_from_name(const char *name, enum slot_insn *insn)
{
	for (int i = 0; i < SLOT_INSN_COUNT; i++) {
		if (!strcmp(name, insn_names[i])) {
			*insn = (enum slot_insn)i;
			return 0;
		}
	}
	return -EINVAL;
}

/* Hex with a sign, so that the limits read the way people write them. */
static void format_signed_hex(char *buf, size_t n, int64_t v)
{
	uint64_t mag = v < 0 ? -(uint64_t)v : (uint64_t)v;

	snprintf(buf, n, "%s0x%" PRIx64, v < 0 ? "-" : "+", mag);
}

int slot_check_call(const struct slot_ops *ops, uint64_t pc, uint64_t target,
		    struct slot_err *err)
{
	const struct slot_layout *l = ops->layout;
	/* Modulo 2^64, as the CPU computes PC-relative targets. */
	int64_t off = (int64_t)(target - pc);
	char o[24], lo[24], hi[24];

	if (pc % l->insn_align)
		return slot_err_set(err, EINVAL, "%s: call address 0x%" PRIx64
				    " is not a multiple of %u", ops->name, pc, l->insn_align);
	if (target % l->target_align)
		return slot_err_set(err, EINVAL, "%s: call target 0x%" PRIx64
				    " is not a multiple of %u", ops->name, target, l->target_align);
	if (off >= l->reach_min && off <= l->reach_max)
		return 0;
	format_signed_hex(o, sizeof(o), off);
	format_signed_hex(lo, sizeof(lo), l->reach_min);
	format_signed_hex(hi, sizeof(hi), l->reach_max);
	return slot_err_set(err, ERANGE, "%s: call at 0x%" PRIx64 " cannot reach 0x%" PRIx64
			    ": offset %s is outside %s..%s (%s)", ops->name, pc, target,
			    o, lo, hi, l->reach_text);
}

int slot_encode(const struct slot_ops *ops, enum slot_insn insn, uint64_t pc,
		uint64_t target, uint8_t *buf, size_t *len, struct slot_err *err)
{
	int ret;

	if ((unsigned int)insn >= SLOT_INSN_COUNT)
		return slot_err_set(err, EINVAL, "%s: no slot instruction number %d",
				    ops->name, (int)insn);
	if (insn == SLOT_INSN_CALL) {
		ret = slot_check_call(ops, pc, target, err);
		if (ret)
			return ret;
	}
	return ops->encode(insn, pc, target, buf, len, err);
}

/* Encodes insn at slot_pc + offset straight into the slot buffer. */
static int build_insn(const struct slot_ops *ops, enum slot_insn insn,
		      const struct slot_ctx *ctx, unsigned int offset, uint8_t *slot,
		      struct slot_err *err)
{
	uint8_t buf[SLOT_INSN_MAX_BYTES];
	size_t len = 0;
	int ret;

	ret = slot_encode(ops, insn, ctx->slot_pc + offset, ctx->our_target, buf, &len, err);
	if (ret)
		return ret;
	if (offset + len > ops->layout->slot_bytes)
		return slot_err_set(err, EINVAL, "%s: %s does not fit the %u-byte slot",
				    ops->name, insn_names[insn], ops->layout->slot_bytes);
	memcpy(slot + offset, buf, len);
	return 0;
}

int slot_build(const struct slot_ops *ops, enum slot_state state,
	       const struct slot_ctx *ctx, uint8_t *buf, struct slot_err *err)
{
	const struct slot_layout *l = ops->layout;
	uint8_t tmp[SLOT_MAX_BYTES];
	int ret;

	if (state != SLOT_DISABLED && state != SLOT_ENABLED)
		return slot_err_set(err, EINVAL, "%s: cannot build a %s slot (keep the bytes read)",
				    ops->name, slot_state_name(state));
	/* The disabled slot is prepared for our_target too: that is what lets
	 * one toggle write enable it. */
	if (l->save_ra_bytes) {
		ret = build_insn(ops, SLOT_INSN_SAVE_RA, ctx, 0, tmp, err);
		if (ret)
			return ret;
	}
	ret = build_insn(ops, SLOT_INSN_CALL, ctx, l->call_offset, tmp, err);
	if (ret)
		return ret;
	if (state == SLOT_DISABLED) {
		ret = build_insn(ops, SLOT_INSN_NOP, ctx, l->toggle_offset, tmp, err);
		if (ret)
			return ret;
	}
	memcpy(buf, tmp, l->slot_bytes);
	return 0;
}

static bool is_compiled_nops(const struct slot_layout *l, const uint8_t *bytes)
{
	for (unsigned int i = 0; i < l->n_compiled; i++)
		if (!memcmp(bytes, l->compiled[i], l->slot_bytes))
			return true;
	return false;
}

/*
 * With no stub known: the target the bytes would call once the toggle holds
 * a call. The toggle of a call to the slot itself (always in reach) stands
 * in for the real one; the rest of the bytes then decide the target.
 */
static int disabled_target(const struct slot_ops *ops, const struct slot_ctx *ctx,
			   const uint8_t *bytes, uint64_t *target)
{
	const struct slot_layout *l = ops->layout;
	struct slot_ctx self = *ctx;
	uint8_t probe[SLOT_MAX_BYTES];

	self.our_target = ctx->slot_pc + l->call_offset;
	if (slot_build(ops, SLOT_ENABLED, &self, probe, NULL))
		return -EINVAL;
	memcpy(probe, bytes, l->toggle_offset);
	memcpy(probe + l->toggle_offset + l->toggle_bytes, bytes + l->toggle_offset + l->toggle_bytes,
	       l->slot_bytes - l->toggle_offset - l->toggle_bytes);
	return ops->decode_call(probe, ctx->slot_pc, target);
}

/* Disabled means prepared for our target: on riscv64 the auipc must
 * already hold its upper bits, else the toggle alone cannot enable it. */
static bool is_disabled(const struct slot_ops *ops, const struct slot_ctx *ctx,
			const uint8_t *bytes)
{
	struct slot_ctx for_target = *ctx;
	uint8_t disabled[SLOT_MAX_BYTES];

	if (ctx->our_target == SLOT_TARGET_NONE &&
	    disabled_target(ops, ctx, bytes, &for_target.our_target))
		return false;
	return !slot_build(ops, SLOT_DISABLED, &for_target, disabled, NULL) &&
	       !memcmp(bytes, disabled, ops->layout->slot_bytes);
}

enum slot_state slot_classify(const struct slot_ops *ops, const struct slot_ctx *ctx,
			      const uint8_t *bytes, uint64_t *call_target)
{
	const struct slot_layout *l = ops->layout;
	uint64_t target = 0;
	bool is_call = ops->decode_call(bytes, ctx->slot_pc, &target) == 0;

	if (call_target)
		*call_target = is_call ? target : 0;
	if (l->compiled_call ? is_call && target == ctx->original_target
			     : is_compiled_nops(l, bytes))
		return SLOT_ORIGINAL;
	if (is_call)
		return target == ctx->our_target && ctx->our_target != SLOT_TARGET_NONE ?
		       SLOT_ENABLED : SLOT_ENABLED_ELSEWHERE;
	return is_disabled(ops, ctx, bytes) ? SLOT_DISABLED : SLOT_UNKNOWN;
}

unsigned int slot_entry_pad(const struct slot_ops *ops, const uint8_t *func, size_t avail)
{
	unsigned int n = ops->layout->entry_pad_bytes;

	return n && avail >= n && !memcmp(func, ops->layout->entry_pad, n) ? n : 0;
}

/* Marks in *bounds every offset where an instruction of bytes starts. */
static void mark_boundaries(const struct slot_ops *ops, const uint8_t *bytes,
			    bool bounds[SLOT_MAX_BYTES + 1])
{
	unsigned int n = ops->layout->slot_bytes, off = 0, len;

	memset(bounds, 0, sizeof(bool) * (SLOT_MAX_BYTES + 1));
	while (off < n) {
		bounds[off] = true;
		len = ops->insn_len(bytes + off, n - off);
		off += len ? len : 1;
	}
	bounds[n] = true;
}

int slot_plan_change(const struct slot_ops *ops, uint64_t slot_pc, const uint8_t *cur,
		     const uint8_t *next, struct slot_change *chg)
{
	unsigned int n = ops->layout->slot_bytes, first = n, last = 0, start, end;
	bool old_b[SLOT_MAX_BYTES + 1], new_b[SLOT_MAX_BYTES + 1];

	memset(chg, 0, sizeof(*chg));
	chg->slot_pc = slot_pc;
	chg->slot_bytes = n;
	chg->offset = n;
	memcpy(chg->bytes, next, n);
	for (unsigned int i = 0; i < n; i++) {
		if (cur[i] != next[i]) {
			first = first < i ? first : i;
			last = i;
		}
	}
	if (first == n)
		return 0;
	/* Write whole new instructions: widen to the new content's boundaries. */
	mark_boundaries(ops, next, new_b);
	for (start = first; !new_b[start]; start--)
		;
	for (end = last + 1; !new_b[end]; end++)
		;
	for (unsigned int i = start; i < end; i++)
		chg->insns += new_b[i];
	chg->offset = start;
	chg->len = end - start;
	/* A context stopped at an old boundary past the write start has run
	 * old instructions that the new ones after it may depend on. */
	mark_boundaries(ops, cur, old_b);
	for (unsigned int i = start + 1; i < n; i++)
		chg->needs_quiet_guest |= old_b[i];
	return 0;
}

bool slot_change_pc_unsafe(const struct slot_change *chg, uint64_t pc)
{
	uint64_t d = pc - chg->slot_pc;

	/* At or before the first written byte the vCPU runs only new bytes
	 * (or unchanged ones that precede them); past it, a mix. */
	return chg->len && d > chg->offset && d < chg->slot_bytes;
}

int slot_change_check_pcs(const struct slot_change *chg, const uint64_t *pcs, size_t n,
			  struct slot_err *err)
{
	for (size_t i = 0; i < n; i++)
		if (slot_change_pc_unsafe(chg, pcs[i]))
			return slot_err_set(err, EBUSY, "vCPU %zu is stopped at 0x%" PRIx64
					    ", inside the slot at 0x%" PRIx64 " past byte %u being rewritten",
					    i, pcs[i], chg->slot_pc, chg->offset);
	return 0;
}
