/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every patchable slot of the guest kernel, and which of them vmmtrace holds
 * for which clients. A slot moves between the compiler's original (call
 * __fentry__), the guest's disabled form (ftrace's NOP) and a call into the
 * stub (DESIGN.md §3, "Phases of a slot"). The bytes change only inside a
 * change set applied while every vCPU is outside KVM_RUN; a slot found in a
 * state that is neither expected nor ours is left alone and counted.
 */
#ifndef VMM_PATCH_H
#define VMM_PATCH_H

#include <stddef.h>
#include <stdint.h>

#include "arch/slot.h"
#include "vmm/util/error.h"

struct elf_image;
struct filter;
struct mcount_table;
struct symtab;

#define PATCH_MAX_CLIENTS 64

struct patch_slot {
	uint64_t va;
	uint64_t func;			/* the function's address: va, or before it (ENDBR64, arm64's BTI or call-ops NOPs) */
	uint64_t gpa;
	uint8_t *hva;			/* the slot's bytes in guest memory (read; written through patch_mem) */
	uint8_t orig[SLOT_MAX_BYTES];	/* as loaded: the compiler's bytes */
	uint8_t saved[SLOT_MAX_BYTES];	/* what our call replaced */
	const char *name;		/* function name (in the symtab) */
	const struct symbol *sym;	/* its symbol: the first of its names, as kallsyms_lookup() picks */
	uint64_t clients;		/* bit per client holding it: held when non-zero (and not dead) */
	uint8_t init;			/* in .init.text */
	uint8_t dead;			/* init text the guest has freed: never write */
	uint8_t enabled;		/* our call is in place */
	uint8_t chain;			/* 0: our call is the stub's entry; k + 1: chained entry k */
	uint8_t given;			/* held, but the guest's ftrace enabled it and vmmtrace cannot chain */
};

/*
 * The stub's chained entries (proto/trace.h VT_CFG_CHAIN, every arch's): a
 * held slot the guest's own ftrace enabled towards target T calls entry k,
 * which records the call and goes on to targets[k] = T. With no entry
 * left (n targets at once) such a slot is given to the guest's ftrace.
 */
struct patch_chain {
	uint64_t va;			/* entry 0's guest VA */
	uint64_t stride;
	unsigned n;
	uint64_t *targets;		/* the stub's table (host view), n entries */
	unsigned used;			/* entries given a target since the guest's last change */
};

/*
 * Where the guest's memory is: a host pointer to len bytes at guest-physical
 * gpa, or NULL if they are not all guest RAM; and how its code is written
 * (NULL: a copy to the host pointer will do). Given by the caller so that
 * patching needs nothing of the host (the tracer passes the host's
 * operations; tests, a buffer).
 */
struct patch_mem {
	void *(*gpa_ptr)(void *opaque, uint64_t gpa, uint64_t len);
	int (*write_code)(void *opaque, uint64_t gpa, uint8_t *hva, const void *bytes, size_t len);
	void *opaque;
};

/* What the slots hold outside vmmtrace's calls, by guest boot phase. */
enum patch_phase {
	PATCH_PHASE_EARLY,		/* before ftrace_init: the compiler's call */
	PATCH_PHASE_FTRACE_INIT,	/* inside ftrace_init: hands off, original bytes */
	PATCH_PHASE_RUNNING,		/* after: the guest's disabled form */
	PATCH_PHASE_GUEST_FTRACE,	/* the guest's ftrace changes slots: hands off, its bytes */
};

struct patch_set {
	const struct slot_ops *ops;
	const struct symtab *syms;	/* the slots' names (filters match each function by all of them) */
	struct patch_mem mem;		/* how slots are written */
	struct slot_ctx ctx;		/* slot_pc set per slot */
	struct patch_slot *slots;	/* sorted by address */
	size_t count;
	size_t held;
	enum patch_phase phase;
	uint64_t stub_entry;		/* the target of our call (ctx.our_target is set per slot) */
	struct patch_chain chain;
	size_t given;			/* held slots given to the guest's ftrace at the last sync */
	/* The paused vCPUs' PCs: a change that one of them would run half of waits. */
	const uint64_t *pcs;
	size_t npcs;
};

struct patch_result {
	size_t written;			/* slots whose bytes changed */
	size_t already;			/* already in the wanted state */
	size_t foreign;			/* in a state not ours to change: left alone */
	size_t deferred;		/* wanted, applied when ftrace_init returns */
	size_t busy;			/* a paused vCPU sits inside the bytes: not written */
	size_t failed;			/* the host could not write them */
	size_t chained;			/* of those written: through a chained entry to the guest's ftrace */
	size_t given;			/* held, left to the guest's ftrace (it enabled them; no chain) */
	const char *foreign_example;
};

/*
 * Every slot with a function name; a fresh image must hold the compiler's
 * bytes. mem is used here only: each slot's host pointer is kept.
 */
int patch_init(struct patch_set *ps, const struct patch_mem *mem, const struct elf_image *elf,
	       const struct mcount_table *mt, const struct symtab *syms,
	       const struct slot_ops *ops, uint64_t fentry, uint64_t stub_entry,
	       struct errbuf *err);
void patch_destroy(struct patch_set *ps);
/*
 * Takes the slots of the functions named out of the set (before any is
 * wanted): never patched, as if they had no slot. Returns how many.
 */
size_t patch_exclude(struct patch_set *ps, const char *const *names);

/*
 * The slots matching f, as a byte per slot (malloc'ed; NULL on ENOMEM).
 * Names never change, so this runs before the pause, keeping it short.
 */
uint8_t *patch_match(const struct patch_set *ps, const struct filter *f, size_t *n);
/* Marks the selected slots as wanted by client (no write yet); returns how many. */
size_t patch_want(struct patch_set *ps, const uint8_t *sel, unsigned client);
/* Drops client's claim on the slots matching f (all of them with f NULL). */
size_t patch_unwant(struct patch_set *ps, const struct filter *f, unsigned client);
/* Drops every client's claim on the selected slots (all with NULL). */
size_t patch_unwant_all(struct patch_set *ps, const uint8_t *sel);
/*
 * Brings every live slot's bytes in line with the claims and the phase:
 * held -> our call; not held -> the phase's form. Call with every vCPU
 * paused. Slots in a foreign state are left alone and counted.
 */
void patch_sync(struct patch_set *ps, struct patch_result *res);
/* Entering ftrace_init: every held slot back to the compiler's bytes. */
void patch_restore_all(struct patch_set *ps, struct patch_result *res);
/*
 * The guest's ftrace is about to change its slots (PATCH_PHASE_GUEST_FTRACE
 * set by the caller): every slot holding our call back to the guest's own
 * bytes, those it checks before it writes. The next patch_sync in
 * PATCH_PHASE_RUNNING takes them again: a NOP as before, the guest's call
 * through a chained entry.
 */
void patch_release_all(struct patch_set *ps, struct patch_result *res);
/*
 * The guest frees its init text: those slots are never written again nor
 * counted as held, but their claims stay, so that a call the freeing code
 * still makes (x86_64's e820__reallocate_tables) reaches its clients.
 */
size_t patch_drop_init(struct patch_set *ps);
/*
 * Reads every live slot's bytes back from guest memory: how many hold our
 * call, and a digest of all of them (equal digests: the guest's text is as
 * it was).
 */
void patch_scan(const struct patch_set *ps, size_t *ours, uint64_t *digest);
/*
 * Slot i in one line for `vmmtrace status SOCKET GLOB`: "slot NAME 0xVA: "
 * and what its bytes are now: the guest's NOP, the guest's call of
 * 0xT (SYMBOL+0xOFF), vmmtrace's call of its stub in place of ..., or of
 * its chained entry k, which goes on to 0xT (...).
 */
void patch_describe(const struct patch_set *ps, size_t i, char *buf, size_t len);
/* The slot at va (a record's function address), or NULL. */
const struct patch_slot *patch_find(const struct patch_set *ps, uint64_t va);

#endif
