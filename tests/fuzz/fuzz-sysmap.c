// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the symbol readers the image path uses with
 * untrusted input (vmm/image/sysmap.c, vmm/image/mcount.c): a System.map's
 * text, an ELF's .symtab, and the __mcount_loc table found through either.
 * Input: le16 length of the System.map text, one byte choosing the slot
 * arch, the text, then the vmlinux ELF (copied to an aligned buffer, as the
 * loader's are). Checked: a finished table is sorted and lookups hold; the
 * mcount table is sorted, its slots lie in the table's bounds and its
 * counts add up.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arch/slot.h"
#include "vmm/image/mcount.h"
#include "vmm/image/sysmap.h"

static void check_table(const struct symtab *tab)
{
	for (size_t i = 1; i < tab->count; i++)
		if (tab->syms[i - 1].addr > tab->syms[i].addr)
			abort();
	if (tab->count) {
		const struct symbol *s = &tab->syms[tab->count / 2];
		uint64_t off = ~0ull;
		const struct symbol *f = symtab_find_addr(tab, s->addr, &off);

		/*
		 * A padding symbol (__pfx_, __cfi_) names a function that shares
		 * its address, else the end of the function before it, if any.
		 */
		if (s->flags & SYMBOL_PADDING) {
			if (f && (f->addr > s->addr || off != s->addr - f->addr || (f->flags & SYMBOL_PADDING)))
				abort();
		} else if (!f || f->addr != s->addr || off != 0) {
			abort();
		}
		if (!symtab_find_name(tab, symtab_name(tab, s)))
			abort();
	}
}

static void check_mcount(const struct elf_image *elf, const struct symtab *tab,
			 const struct slot_ops *ops)
{
	struct mcount_table mt;
	struct errbuf err;
	size_t sum = 0;

	if (mcount_read(elf, tab, ops, &mt, &err))
		return;
	for (size_t i = 0; i < mt.count; i++) {
		const struct mcount_slot *s = &mt.slots[i];

		if (i && mt.slots[i - 1].addr > s->addr)
			abort();	/* promised sorted */
		if (s->len > SLOT_MAX_BYTES || s->state >= SLOT_STATE_COUNT)
			abort();
		if (s->func && (s->func < tab->syms || s->func >= tab->syms + tab->count))
			abort();
	}
	for (unsigned k = 0; k < SLOT_STATE_COUNT; k++)
		sum += mt.states[k];
	if (sum != mt.count || mt.no_symbol > mt.count || mt.init > mt.count)
		abort();
	mcount_destroy(&mt);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct slot_ops *ops;
	struct symtab map, syms;
	struct elf_image elf;
	struct errbuf err;
	size_t tlen, elen;
	uint8_t *e;
	int have_map;

	if (size < 3)
		return 0;
	tlen = (size_t)(data[0] | data[1] << 8);
	ops = slot_ops_for((enum slot_arch)(data[2] % SLOT_ARCH_COUNT));
	data += 3, size -= 3;
	if (tlen > size)
		tlen = size;

	symtab_init(&map);
	have_map = !sysmap_parse("fuzz", (const char *)data, tlen, &map, &err) &&
		   !symtab_finish(&map);
	if (have_map)
		check_table(&map);

	elen = size - tlen;
	e = aligned_alloc(8, (elen + 7) & ~(size_t)7 ? (elen + 7) & ~(size_t)7 : 8);
	memcpy(e, data + tlen, elen);
	if (!elf_parse(e, elen, 0, &elf, &err)) {
		symtab_init(&syms);
		if (!sysmap_read_elf(&elf, &syms, &err) && !symtab_finish(&syms)) {
			check_table(&syms);
			check_mcount(&elf, &syms, ops);
		}
		symtab_destroy(&syms);
		if (have_map)
			check_mcount(&elf, &map, ops);
	}
	free(e);
	symtab_destroy(&map);
	return 0;
}
