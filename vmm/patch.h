/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The slots vmmtrace holds in a guest and the writes that move them between
 * the compiler's original, the guest's disabled form and the call into the
 * stub (DESIGN.md §3, "Phases of a slot"). Writes are made only while every
 * vCPU is outside KVM_RUN; a slot in any state not expected is left alone
 * and counted.
 */
#ifndef VMM_PATCH_H
#define VMM_PATCH_H

#include <stddef.h>
#include <stdint.h>

#include "arch/slot.h"
#include "vmm/error.h"

struct elf_image;
struct filter;
struct mcount_table;
struct symtab;
struct vm;

struct held_slot {
	uint64_t va;
	uint8_t *hva;			/* the slot's bytes in guest memory */
	uint8_t orig[SLOT_MAX_BYTES];	/* as loaded: the compiler's bytes */
	const char *name;		/* function name (in the symtab) */
	uint8_t init;			/* in .init.text: freed after boot */
};

struct patch_set {
	const struct slot_ops *ops;
	struct slot_ctx ctx;		/* slot_pc set per slot */
	struct held_slot *slots;
	size_t count;
};

struct patch_result {
	size_t written;			/* slots whose bytes changed */
	size_t already;			/* already in the wanted state */
	size_t foreign;			/* in a state not ours to change */
};

/*
 * Selects the slots whose function matches the filter (fresh image: each
 * must hold the compiler's bytes). fentry and stub_entry are the addresses
 * the slots are judged against.
 */
int patch_select(struct patch_set *ps, struct vm *vm, const struct elf_image *elf,
		 const struct mcount_table *mt, const struct symtab *syms,
		 const struct filter *filter, const struct slot_ops *ops,
		 uint64_t fentry, uint64_t stub_entry, struct errbuf *err);
void patch_destroy(struct patch_set *ps);
/* Original or disabled -> call into the stub. */
void patch_enable(struct patch_set *ps, struct patch_result *res);
/* Call into the stub -> the compiler's original bytes. */
void patch_restore(struct patch_set *ps, struct patch_result *res);
/* Finds a held slot by the function address a record carries; NULL if none. */
const struct held_slot *patch_find(const struct patch_set *ps, uint64_t va);

#endif
