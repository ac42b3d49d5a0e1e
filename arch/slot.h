/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Function-entry slots, one interface for every arch vmmtrace can patch.
 *
 * A slot is the few bytes the compiler reserves at a traced function's entry
 * (x86_64: -mfentry's `call __fentry__`; the others: -fpatchable-function-entry
 * NOPs). vmmtrace prepares the slot once, before any guest context can run it,
 * and from then on flips one instruction (the "toggle") between a NOP and a
 * call to its stub, so a guest task preempted anywhere in the slot always
 * resumes into a consistent sequence. docs/ARCH-SLOTS.md says why, per arch.
 *
 * Everything here is pure: no guest memory, no KVM. The tracer reads the slot
 * bytes, asks slot_classify() what they are, builds the bytes it wants with
 * slot_build(), asks slot_plan_change() which bytes to write and checks the
 * paused vCPUs' PCs with slot_change_pc_unsafe() before writing them.
 */
#ifndef ARCH_SLOT_H
#define ARCH_SLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * What went wrong, in one line naming the arch and the input. Its own type
 * because arch/ depends on nothing of the project: callers copy msg into
 * theirs. Every err parameter may be NULL.
 */
struct slot_err {
	char msg[256];
};

enum slot_arch {
	SLOT_ARCH_X86_64,
	SLOT_ARCH_ARM64,
	SLOT_ARCH_RISCV64,
	SLOT_ARCH_LOONGARCH64,
	SLOT_ARCH_COUNT,
};

/* Largest slot (arm64, riscv64, loongarch64: 8 bytes) and largest encoding
 * one slot_encode() produces (riscv64's auipc+jalr call: 8 bytes). */
#define SLOT_MAX_BYTES 8
#define SLOT_INSN_MAX_BYTES 8
#define SLOT_MAX_COMPILED 2

enum slot_state {
	SLOT_ORIGINAL,		/* as the compiler emitted it (x86_64: call original_target) */
	SLOT_DISABLED,		/* makes no call; one toggle write enables it towards our_target */
	SLOT_ENABLED,		/* calls our_target */
	SLOT_ENABLED_ELSEWHERE,	/* a well-formed call to another target (e.g. guest ftrace) */
	SLOT_UNKNOWN,		/* anything else: not ours to touch */
	SLOT_STATE_COUNT,
};

enum slot_insn {
	SLOT_INSN_CALL,		/* call / branch-with-link at pc to target (riscv64: auipc+jalr) */
	SLOT_INSN_NOP,		/* what the toggle holds while disabled (x86_64: 5-byte NOP) */
	SLOT_INSN_SAVE_RA,	/* return-address save written at load time (arm64, loongarch64) */
	SLOT_INSN_COUNT,
};

/*
 * Where things sit in a slot. Offsets are from the slot's first byte.
 * The enabled slot is [save-ra at 0] + call at call_offset; the disabled slot
 * is the enabled one with [toggle_offset, +toggle_bytes) replaced by a NOP.
 * What lies outside the toggle is written at load time only.
 */
struct slot_layout {
	unsigned int slot_bytes;	/* bytes the compiler reserves */
	unsigned int insn_align;	/* instruction addresses are multiples of this */
	unsigned int target_align;	/* call targets must be multiples of this */
	unsigned int save_ra_bytes;	/* 0, or the size of the save at offset 0 */
	unsigned int call_offset;	/* where the call sequence starts */
	unsigned int toggle_offset;	/* the one instruction rewritten at run time */
	unsigned int toggle_bytes;
	int64_t reach_min;		/* target - call pc, inclusive bounds */
	int64_t reach_max;
	const char *reach_text;		/* the range for error messages, e.g. "±128 MiB" */
	bool byte_stream;		/* x86_64: print bytes in memory order, not words */
	bool compiled_call;		/* the compiler emitted call original_target (x86_64) */
	unsigned int n_compiled;	/* otherwise: the compiler's NOP forms */
	uint8_t compiled[SLOT_MAX_COMPILED][SLOT_MAX_BYTES];
	/* A landing pad a function may start with, its slot right after it
	 * (x86_64 IBT: ENDBR64); entry_pad_bytes 0 if the slot is always at
	 * the function's first byte. */
	unsigned int entry_pad_bytes;
	uint8_t entry_pad[SLOT_MAX_BYTES];
	/* Bytes of NOPs a kernel may put before every function, to which its
	 * slot records then point (arm64 DYNAMIC_FTRACE_WITH_CALL_OPS: the
	 * 8-byte literal its ftrace keeps each function's ops in); 0: never. */
	unsigned int pre_bytes;
};

/*
 * our_target when no stub is known, e.g. reading an image on disk: no call
 * is then ENABLED, and DISABLED means prepared for any target. No stub can
 * sit at the last byte of the address space.
 */
#define SLOT_TARGET_NONE UINT64_MAX

/* The addresses a slot's bytes are judged against. */
struct slot_ctx {
	uint64_t slot_pc;		/* guest address of the slot's first byte */
	uint64_t original_target;	/* x86_64: __fentry__; unused elsewhere */
	uint64_t our_target;		/* vmmtrace's stub entry, or SLOT_TARGET_NONE */
};

/* Implemented by arch/<arch>/slot.c. Callers use the slot_* functions. */
struct slot_ops {
	enum slot_arch arch;
	const char *name;
	const struct slot_layout *layout;
	/* Encodes insn at pc; CALL arrives already range-checked. Returns 0,
	 * or -EOPNOTSUPP for an instruction the arch's slot does not use. */
	int (*encode)(enum slot_insn insn, uint64_t pc, uint64_t target,
		      uint8_t *buf, size_t *len, struct slot_err *err);
	/* 0 and *target if bytes hold the whole enabled call sequence (with
	 * its save-ra) for a slot at slot_pc; -ENOENT otherwise. */
	int (*decode_call)(const uint8_t *bytes, uint64_t slot_pc, uint64_t *target);
	/* Length of the instruction at p, for up to avail bytes; conservative
	 * (1 on x86_64) for bytes it does not recognise. */
	unsigned int (*insn_len)(const uint8_t *p, size_t avail);
};

extern const struct slot_ops slot_ops_x86_64;
extern const struct slot_ops slot_ops_arm64;
extern const struct slot_ops slot_ops_riscv64;
extern const struct slot_ops slot_ops_loongarch64;

/* Which bytes a change writes, and when it is safe to write them. */
struct slot_change {
	uint64_t slot_pc;
	unsigned int slot_bytes;
	unsigned int offset;		/* first byte to write, from slot_pc */
	unsigned int len;		/* bytes to write; 0 if nothing changes */
	unsigned int insns;		/* whole new instructions in those bytes */
	/* A guest context (a preempted task, which the VMM cannot see, not
	 * only a vCPU) could be stopped inside the slot past the first written
	 * byte: write only before the guest runs or while every context's PC
	 * is known (early boot, one CPU, no scheduler). */
	bool needs_quiet_guest;
	uint8_t bytes[SLOT_MAX_BYTES];	/* the whole new slot */
};

/* Formats into err (if not NULL) and returns -errnum. */
int slot_err_set(struct slot_err *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

const struct slot_ops *slot_ops_for(enum slot_arch arch);
/* Accepts the kernel's and Debian's names (arm64/aarch64, loongarch64/loong64, ...). */
int slot_arch_from_name(const char *name, enum slot_arch *arch);
const char *slot_arch_names(void);
const char *slot_state_name(enum slot_state state);
int slot_insn_from_name(const char *name, enum slot_insn *insn);

/* 0, -ERANGE if a call at pc cannot reach target, -EINVAL if misaligned. */
int slot_check_call(const struct slot_ops *ops, uint64_t pc, uint64_t target,
		    struct slot_err *err);
/* Encodes insn at pc into buf (SLOT_INSN_MAX_BYTES); *len gets its size.
 * target is used by SLOT_INSN_CALL only. */
int slot_encode(const struct slot_ops *ops, enum slot_insn insn, uint64_t pc,
		uint64_t target, uint8_t *buf, size_t *len, struct slot_err *err);
/* The slot bytes (layout->slot_bytes) for SLOT_DISABLED or SLOT_ENABLED,
 * prepared for ctx->our_target. ORIGINAL is not built: keep the bytes read. */
int slot_build(const struct slot_ops *ops, enum slot_state state,
	       const struct slot_ctx *ctx, uint8_t *buf, struct slot_err *err);
/* What bytes (layout->slot_bytes of them) hold; *call_target (may be NULL)
 * gets the call's target for ORIGINAL on x86_64, ENABLED and ELSEWHERE. */
enum slot_state slot_classify(const struct slot_ops *ops, const struct slot_ctx *ctx,
			      const uint8_t *bytes, uint64_t *call_target);
/* How far past a function's first byte its slot sits: the layout's entry
 * pad if func (avail bytes of the function's start) begins with it, else 0. */
unsigned int slot_entry_pad(const struct slot_ops *ops, const uint8_t *func, size_t avail);
/* The whole instructions that turn cur into next (both slot_bytes long). */
int slot_plan_change(const struct slot_ops *ops, uint64_t slot_pc, const uint8_t *cur,
		     const uint8_t *next, struct slot_change *chg);
/* True if a vCPU stopped at pc would run a mix of old and new bytes. */
bool slot_change_pc_unsafe(const struct slot_change *chg, uint64_t pc);
/* 0, or -EBUSY naming the first of n vCPU PCs that makes chg unsafe. */
int slot_change_check_pcs(const struct slot_change *chg, const uint64_t *pcs, size_t n,
			  struct slot_err *err);

/* Instruction words are little-endian in memory on all four arches. */
static inline uint32_t slot_get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline void slot_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

#endif
