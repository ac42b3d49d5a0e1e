/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Recovery of the kernel's own symbol table (kallsyms) from the decompressed
 * image: no System.map, no debug package. The tables' layout changed over
 * the kernel versions, so it is detected from the bytes and reported, and a
 * layout that does not check out is refused rather than guessed.
 * docs/SYMBOLS.md describes the formats.
 */
#ifndef VMM_KALLSYMS_H
#define VMM_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/image/elf.h"
#include "vmm/util/error.h"
#include "vmm/image/symtab.h"

enum kallsyms_order {
	KALLSYMS_OFFSETS_FIRST,	/* addresses, num_syms, names, ...: up to 6.3 */
	KALLSYMS_NAMES_FIRST,	/* num_syms, names, ..., addresses: 6.4 on */
};

enum kallsyms_addressing {
	KALLSYMS_ABSOLUTE,		/* unsigned long kallsyms_addresses[]: before 6.11 */
	KALLSYMS_BASE_RELATIVE,		/* relative_base + (u32)offset: 4.6 to 6.x */
	KALLSYMS_ABSOLUTE_PERCPU,	/* same, but offsets >= 0 are absolute: 4.6 to 6.14 */
	KALLSYMS_PLACE_RELATIVE,	/* &offsets[i] + offsets[i]: 7.0 on */
};

enum kallsyms_lengths {
	KALLSYMS_LEN_EITHER,	/* no name is long enough to tell the two apart */
	KALLSYMS_LEN_ONE_BYTE,	/* one byte even at 128 and above: before 6.1 */
	KALLSYMS_LEN_ULEB128,	/* one or two bytes: 6.1 on */
};

struct kallsyms_layout {
	enum kallsyms_order order;
	enum kallsyms_addressing addressing;
	enum kallsyms_lengths lengths;
	unsigned markers_width;		/* bytes per kallsyms_markers entry: 4 or 8 */
	unsigned seqs_width;		/* kallsyms_seqs_of_names: 0 (absent), 3 or 4 */
	uint32_t num_syms;
	uint64_t relative_base;		/* base-relative forms only */
	/* Virtual addresses of the tables found; 0 for those absent. */
	uint64_t addresses_va, relative_base_va, num_syms_va, names_va;
	uint64_t markers_va, seqs_va, token_table_va, token_index_va;
};

/*
 * Finds and decodes the kallsyms tables in the image's .rodata and adds
 * every symbol to tab (not finished). -ENOENT when the image holds no
 * kallsyms tables, -EPROTO when it holds some whose layout does not check
 * out; err says which.
 */
int kallsyms_recover(const struct elf_image *elf, struct symtab *tab,
		     struct kallsyms_layout *layout, struct errbuf *err);

/*
 * The same on raw bytes: data is the section holding the tables, loaded at
 * virtual address va; stext, if not 0, is where the _stext symbol must land
 * (the start of .text), which settles how the addresses are encoded.
 */
int kallsyms_decode(const uint8_t *data, size_t size, uint64_t va, uint64_t stext,
		    struct symtab *tab, struct kallsyms_layout *layout, struct errbuf *err);

/*
 * The same on a raw kernel Image (arm64, riscv64: no ELF headers, link
 * address not known yet): data is the whole image, decoded as if loaded at
 * address 0, so the layout's table addresses are file offsets. The symbols'
 * addresses are what the tables hold (base-relative ones are absolute: the
 * base is a link-time address, or 0 in a relocatable arm64 kernel until it
 * is relocated); image-raw.c works out where that puts the image.
 */
int kallsyms_decode_raw(const uint8_t *data, size_t size, struct symtab *tab,
			struct kallsyms_layout *layout, struct errbuf *err);

/* One line describing the layout, e.g. for the command's summary. */
void kallsyms_layout_describe(const struct kallsyms_layout *layout, char *buf, size_t size);

#endif
