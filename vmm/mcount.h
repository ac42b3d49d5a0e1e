/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The patchable function-entry slots: the kernel's __mcount_loc table
 * (__start_mcount_loc .. __stop_mcount_loc) lists one address per traceable
 * function, where the compiler put `call __fentry__`. Each slot is mapped to
 * the function it starts and its current bytes are classified.
 */
#ifndef VMM_MCOUNT_H
#define VMM_MCOUNT_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/elf.h"
#include "vmm/error.h"
#include "vmm/symtab.h"

#define MCOUNT_SLOT_MAX 8	/* bytes kept per slot (x86_64 uses 5) */

enum mcount_state {
	MCOUNT_FENTRY,		/* the compiler's call __fentry__ (a fresh image) */
	MCOUNT_NOP,		/* the NOP ftrace_init() writes over it */
	MCOUNT_STUB,		/* a call into vmmtrace's guest stub */
	MCOUNT_UNKNOWN,		/* anything else: never patch it */
	MCOUNT_NSTATES
};

struct mcount_slot {
	uint64_t addr;
	const struct symbol *func;	/* the function it starts, or NULL */
	const struct symbol *near;	/* else the symbol it falls in (may be NULL) */
	uint8_t bytes[MCOUNT_SLOT_MAX];
	uint8_t len;			/* bytes valid in bytes[] (0: not in the file) */
	uint8_t state;			/* enum mcount_state */
	uint8_t init;			/* in .init.text */
};

struct mcount_table {
	struct mcount_slot *slots;	/* sorted by address */
	size_t count;
	size_t no_symbol;		/* slots that start no symbol (overridden __weak bodies) */
	size_t zero;			/* zero entries in __mcount_loc (linker padding) */
	size_t init;			/* slots in .init.text */
	size_t states[MCOUNT_NSTATES];
	uint64_t fentry;		/* address of __fentry__, 0 if unknown */
	uint64_t table_va;		/* __start_mcount_loc */
};

/*
 * Reads __mcount_loc of the image through tab (finished), which must hold
 * __start_mcount_loc and __stop_mcount_loc. Bytes are those in the file.
 */
int mcount_read(const struct elf_image *elf, const struct symtab *tab,
		struct mcount_table *mt, struct errbuf *err);
void mcount_destroy(struct mcount_table *mt);

const char *mcount_state_name(enum mcount_state state);

/*
 * x86_64 slot classification from the 5 bytes at slot: call rel32 to fentry,
 * the 5-byte NOP, or call rel32 into [stub_lo, stub_hi). To be replaced by
 * the generic classifier in arch/slot.h.
 */
enum mcount_state mcount_classify_x86(const uint8_t *bytes, size_t len, uint64_t slot,
				      uint64_t fentry, uint64_t stub_lo, uint64_t stub_hi);

#endif
