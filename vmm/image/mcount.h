/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The patchable function-entry slots: the kernel's __mcount_loc table
 * (__start_mcount_loc .. __stop_mcount_loc) lists one address per traceable
 * function, where the compiler put its slot (x86_64: `call __fentry__`). Each
 * slot is mapped to the function it starts and its bytes are classified.
 */
#ifndef VMM_MCOUNT_H
#define VMM_MCOUNT_H

#include <stddef.h>
#include <stdint.h>

#include "arch/slot.h"
#include "vmm/image/elf.h"
#include "vmm/util/error.h"
#include "vmm/image/symtab.h"

struct mcount_slot {
	uint64_t addr;
	const struct symbol *func;	/* the function it starts, or NULL */
	const struct symbol *near;	/* else the symbol it falls in (may be NULL) */
	uint8_t bytes[SLOT_MAX_BYTES];
	uint8_t len;			/* bytes valid in bytes[] (0: not in the file) */
	uint8_t state;			/* enum slot_state, no stub known (mcount_classify) */
	uint8_t init;			/* in .init.text */
};

struct mcount_table {
	const struct slot_ops *ops;	/* the guest arch's slots */
	struct mcount_slot *slots;	/* sorted by address */
	size_t count;
	size_t no_symbol;		/* slots that start no symbol (overridden __weak bodies) */
	size_t zero;			/* zero entries in __mcount_loc (linker padding) */
	size_t init;			/* slots in .init.text */
	size_t states[SLOT_STATE_COUNT];
	uint64_t fentry;		/* address of __fentry__, 0 if unknown */
	uint64_t table_va;		/* __start_mcount_loc */
	unsigned pre;			/* bytes from each record to its function (arm64 CALL_OPS: 8), 0 */
	/*
	 * The build left every slot in the guest's disabled form (x86_64
	 * clang builds: objtool --mnop, CC_USING_NOP_MCOUNT, whose ftrace_init
	 * leaves the slots alone): that is their fresh state, not the
	 * compiler's call.
	 */
	int nop_compiled;
};

/*
 * Reads __mcount_loc of the image through tab (finished), which must hold
 * __start_mcount_loc and __stop_mcount_loc, for a guest whose slots are ops'.
 * Bytes are those in the file.
 */
int mcount_read(const struct elf_image *elf, const struct symtab *tab,
		const struct slot_ops *ops, struct mcount_table *mt, struct errbuf *err);
void mcount_destroy(struct mcount_table *mt);

/*
 * What the len bytes at slot_pc hold, judged from the image alone: no stub is
 * known, so no slot is ENABLED (whose call it is, is the tracer's business)
 * and every call other than the compiler's is ENABLED_ELSEWHERE. On arches
 * whose compiler emits a call, fentry is its target; 0 (not found) makes
 * every call UNKNOWN.
 */
enum slot_state mcount_classify(const struct slot_ops *ops, const uint8_t *bytes, size_t len,
				uint64_t slot_pc, uint64_t fentry);

#endif
