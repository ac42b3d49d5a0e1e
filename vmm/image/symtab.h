/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's symbols as one table: (address, type, name) triples sorted by
 * address, with fast lookups both ways. Filled from kallsyms, a System.map or
 * an ELF .symtab, then frozen with symtab_finish(); the tracer symbolises
 * events with symtab_find_addr().
 */
#ifndef VMM_SYMTAB_H
#define VMM_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/util/error.h"

#define SYMTAB_NONE UINT32_MAX

struct symbol {
	uint64_t addr;
	uint32_t name;		/* offset of the NUL-terminated name in symtab.names */
	char type;		/* nm letter: T t D d R r B b A W w V v ... */
	uint8_t flags;		/* SYMBOL_PADDING (set by symtab_finish) */
	uint8_t pad[2];
};

/*
 * The padding before a function, not a function: x86_64's __pfx_ (call
 * padding, CONFIG_CALL_PADDING) and __cfi_ (clang's kCFI preamble) symbols.
 */
#define SYMBOL_PADDING 0x01

struct symtab {
	struct symbol *syms;	/* sorted by address; aliases keep insertion order */
	size_t count, cap;
	char *names;
	size_t names_size, names_cap;
	/* built by symtab_finish() */
	uint32_t *hash;		/* open addressing: first symbol (by address) per name */
	uint32_t hash_mask;
	uint32_t *next_same;	/* next symbol with the same name, or SYMTAB_NONE */
	uint32_t *bucket;	/* first symbol at or above each bucket's start */
	uint64_t bucket_lo;
	uint32_t bucket_shift, nbuckets, bucket_first;
	int finished;
};

void symtab_init(struct symtab *tab);
void symtab_destroy(struct symtab *tab);

/* Appends a symbol; name need not be NUL-terminated. -ENOMEM, -EINVAL. */
int symtab_add(struct symtab *tab, uint64_t addr, char type, const char *name, size_t len);
/* Sorts by address (stable) and builds the lookup indices. */
int symtab_finish(struct symtab *tab);

static inline const char *symtab_name(const struct symtab *tab, const struct symbol *sym)
{
	return tab->names + sym->name;
}

/* The lowest-addressed symbol called name, or NULL. */
const struct symbol *symtab_find_name(const struct symtab *tab, const char *name);
/* The next symbol with the same name as sym (higher address), or NULL. */
const struct symbol *symtab_next_same_name(const struct symtab *tab, const struct symbol *sym);
/*
 * The symbol covering addr: the one with the greatest address <= addr (the
 * first of its aliases, as the kernel's kallsyms_lookup() picks), passing
 * over padding symbols (SYMBOL_PADDING: an address there is the end of the
 * function before, e.g. the return address of its last call, to a noreturn
 * function). NULL below the first symbol. *offset (if not NULL) gets addr -
 * symbol address.
 */
const struct symbol *symtab_find_addr(const struct symtab *tab, uint64_t addr, uint64_t *offset);
/* Bytes from sym to the next higher-addressed symbol; 0 for the last one. */
uint64_t symtab_extent(const struct symtab *tab, const struct symbol *sym);

/* nm's text types: the symbols that can be functions. */
static inline int symtab_is_text(char type)
{
	return type == 'T' || type == 't' || type == 'W' || type == 'w';
}

/* How two symbol tables of one kernel compare (symtab_compare). */
#define SYMTAB_DIFF_EXAMPLES 4
struct symtab_diff {
	size_t same;		/* name, address and type agree */
	size_t percpu_abs;	/* agree, but kallsyms typed a per-cpu symbol 'A' */
	size_t type_differs;	/* same name and address, other type */
	size_t addr_differs;	/* the name exists in ref only at other addresses */
	size_t missing;		/* the name is absent from ref */
	size_t ref_only;	/* ref symbols that nothing in got matched */
	size_t nexamples;
	char examples[SYMTAB_DIFF_EXAMPLES][160];
};

/*
 * Compares got (e.g. recovered kallsyms) with ref (e.g. System.map). Per-cpu
 * symbols that kallsyms types 'A' count as agreeing when ref puts them
 * within [__per_cpu_start, __per_cpu_end]. Both must be finished.
 */
int symtab_compare(const struct symtab *ref, const struct symtab *got, struct symtab_diff *diff);
static inline size_t symtab_diff_disagreements(const struct symtab_diff *d)
{
	return d->type_differs + d->addr_differs + d->missing;
}

#endif
