// SPDX-License-Identifier: GPL-2.0
/*
 * Slots from __mcount_loc. A slot belongs to a function when it sits at the
 * function's first byte (after the arch's landing pad: ENDBR64 on x86_64 IBT
 * kernels): that is the test
 * ftrace itself applies (FTRACE_MCOUNT_MAX_OFFSET) to tell live functions
 * from the bodies of __weak functions that the linker kept but that a strong
 * definition overrode. Those bodies still have a slot but no symbol; they are
 * counted and listed, never silently dropped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/slot.h"
#include "vmm/image/mcount.h"

#define MCOUNT_MAX_SLOTS (1u << 24)

enum slot_state mcount_classify(const struct slot_ops *ops, const uint8_t *bytes, size_t len,
				uint64_t slot_pc, uint64_t fentry)
{
	const struct slot_ctx ctx = {
		.slot_pc = slot_pc, .original_target = fentry, .our_target = SLOT_TARGET_NONE,
	};
	enum slot_state state;

	if (len < ops->layout->slot_bytes)
		return SLOT_UNKNOWN;
	state = slot_classify(ops, &ctx, bytes, NULL);
	/* Without __fentry__'s address the compiler's call looks like any other. */
	if (ops->layout->compiled_call && !fentry &&
	    (state == SLOT_ORIGINAL || state == SLOT_ENABLED_ELSEWHERE))
		return SLOT_UNKNOWN;
	return state;
}

/* How far past a function's first byte its slot may sit (x86_64 IBT: ENDBR64). */
static uint64_t entry_skip(const struct slot_ops *ops, const struct elf_image *elf, uint64_t func)
{
	unsigned int n = ops->layout->entry_pad_bytes;
	const uint8_t *p = n ? elf_vaddr_ptr(elf, func, n) : NULL;

	return p ? slot_entry_pad(ops, p, n) : 0;
}

/* The function whose entry slot is at addr, or NULL; *near gets the covering symbol. */
static const struct symbol *slot_function(const struct slot_ops *ops, const struct elf_image *elf,
					  const struct symtab *tab, uint64_t addr,
					  const struct symbol **near)
{
	uint64_t off;
	const struct symbol *s = symtab_find_addr(tab, addr, &off), *end;

	*near = s;
	if (!s)
		return NULL;
	/* Among aliases prefer a text symbol: kallsyms may list data ones too. */
	end = tab->syms + tab->count;
	for (const struct symbol *a = s; a < end && a->addr == s->addr; a++) {
		if (symtab_is_text(a->type)) {
			*near = a;
			return off <= entry_skip(ops, elf, a->addr) ? a : NULL;
		}
	}
	return NULL;
}

/*
 * Where a record's slot is, as the kernel's ftrace_call_adjust() finds it:
 * past the pre-function NOPs when this kernel has them (mt->pre), then
 * past the function's landing pad (arm64 `bti c` before the NOPs of a
 * CALL_OPS kernel). On other kernels the record is the slot (the landing
 * pad, if any, already before it).
 */
static uint64_t record_slot(const struct mcount_table *mt, const struct elf_image *elf, uint64_t rec)
{
	uint64_t a = rec + mt->pre;

	return mt->pre ? a + entry_skip(mt->ops, elf, a) : a;
}

/* A text symbol starts at addr, or a landing pad before it (off 0 or the pad). */
static int starts_function(const struct slot_ops *ops, const struct elf_image *elf,
			   const struct symtab *tab, uint64_t addr)
{
	const struct symbol *s;
	uint64_t off;

	s = symtab_find_addr(tab, addr, &off);
	return s && symtab_is_text(s->type) && (off == 0 || off == entry_skip(ops, elf, s->addr));
}

/*
 * Whether the records point ops->layout->pre_bytes before the functions
 * (arm64 CALL_OPS) rather than at them: a property of the whole build, so
 * the majority of records decides. Returns the bytes to skip.
 */
static unsigned record_pre_bytes(const struct slot_ops *ops, const struct elf_image *elf,
				 const struct symtab *tab, const uint8_t *table, size_t n)
{
	unsigned pre = ops->layout->pre_bytes;
	size_t at = 0, before = 0;

	if (!pre)
		return 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t rec;

		memcpy(&rec, table + 8 * i, 8);
		if (!rec)
			continue;
		at += starts_function(ops, elf, tab, rec);
		before += starts_function(ops, elf, tab, rec + pre);
	}
	return before > at ? pre : 0;
}

static void init_text_range(const struct elf_image *elf, const struct symtab *tab,
			    uint64_t *lo, uint64_t *hi)
{
	const Elf64_Shdr *sh = elf_section(elf, ".init.text");
	const struct symbol *a = symtab_find_name(tab, "_sinittext");
	const struct symbol *b = symtab_find_name(tab, "_einittext");

	*lo = sh ? sh->sh_addr : a && b ? a->addr : 1;
	*hi = sh ? sh->sh_addr + sh->sh_size : a && b ? b->addr : 0;
}

static int cmp_slot(const void *a, const void *b)
{
	const struct mcount_slot *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void slot_fill(const struct elf_image *elf, const struct symtab *tab,
		      struct mcount_table *mt, struct mcount_slot *s)
{
	unsigned int n = mt->ops->layout->slot_bytes;
	const uint8_t *p = elf_vaddr_ptr(elf, s->addr, n);

	s->func = slot_function(mt->ops, elf, tab, s->addr, &s->near);
	if (p) {
		memcpy(s->bytes, p, n);
		s->len = (uint8_t)n;
	}
	s->state = (uint8_t)mcount_classify(mt->ops, s->bytes, s->len, s->addr, mt->fentry);
}

static int mcount_table_locate(const struct elf_image *elf, const struct symtab *tab,
			       const uint8_t **table, size_t *n, struct mcount_table *mt,
			       struct errbuf *err)
{
	const struct symbol *start = symtab_find_name(tab, "__start_mcount_loc");
	const struct symbol *stop = symtab_find_name(tab, "__stop_mcount_loc");
	const struct symbol *fentry = symtab_find_name(tab, "__fentry__");

	if (!start || !stop)
		return err_set(err, ENOENT, "no __start_mcount_loc/__stop_mcount_loc symbols (kernel built without CONFIG_DYNAMIC_FTRACE, or its symbols lack data symbols: CONFIG_KALLSYMS_ALL)");
	if (stop->addr < start->addr || (stop->addr - start->addr) % 8 ||
	    (stop->addr - start->addr) / 8 > MCOUNT_MAX_SLOTS)
		return err_set(err, EINVAL, "__mcount_loc bounds %#llx..%#llx make no sense",
			       (unsigned long long)start->addr, (unsigned long long)stop->addr);
	*n = (size_t)(stop->addr - start->addr) / 8;
	*table = elf_vaddr_ptr(elf, start->addr, *n * 8);
	if (!*table && *n)
		return err_set(err, EINVAL, "__mcount_loc (%#llx, %zu entries) is not in the image file",
			       (unsigned long long)start->addr, *n);
	mt->fentry = fentry ? fentry->addr : 0;
	mt->table_va = start->addr;
	return 0;
}

int mcount_read(const struct elf_image *elf, const struct symtab *tab,
		const struct slot_ops *ops, struct mcount_table *mt, struct errbuf *err)
{
	const uint8_t *table;
	uint64_t init_lo, init_hi;
	size_t n = 0;
	int sorted = 1, rc;

	memset(mt, 0, sizeof(*mt));
	mt->ops = ops;
	rc = mcount_table_locate(elf, tab, &table, &n, mt, err);
	if (rc)
		return rc;
	mt->slots = calloc(n ? n : 1, sizeof(*mt->slots));
	if (!mt->slots)
		return err_set(err, ENOMEM, "out of memory for %zu slots", n);
	init_text_range(elf, tab, &init_lo, &init_hi);
	mt->pre = record_pre_bytes(ops, elf, tab, table, n);
	for (size_t i = 0; i < n; i++) {
		struct mcount_slot *s = &mt->slots[mt->count];

		memcpy(&s->addr, table + 8 * i, 8);
		if (!s->addr) {
			mt->zero++;	/* ftrace_process_locs() skips these too */
			continue;
		}
		s->addr = record_slot(mt, elf, s->addr);
		slot_fill(elf, tab, mt, s);
		s->init = s->addr >= init_lo && s->addr < init_hi;
		sorted &= !mt->count || s[-1].addr <= s->addr;
		mt->count++;
	}
	if (!sorted)
		qsort(mt->slots, mt->count, sizeof(*mt->slots), cmp_slot);
	for (size_t i = 0; i < mt->count; i++) {
		mt->states[mt->slots[i].state]++;
		mt->no_symbol += !mt->slots[i].func;
		mt->init += mt->slots[i].init;
	}
	mt->nop_compiled = ops->layout->compiled_call && mt->count && mt->states[SLOT_DISABLED] == mt->count;
	return 0;
}

void mcount_destroy(struct mcount_table *mt)
{
	free(mt->slots);
	memset(mt, 0, sizeof(*mt));
}
