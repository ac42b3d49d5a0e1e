/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arm64's guard page at _end as the home of the one-page stub, for a
 * kernel with no padding below _etext (docs/STUB-PLACEMENT.md, "When the
 * image has no padding"): what goes into the kernel's own page tables so
 * that the page maps the stub read-only and executable for the rest of the
 * kernel's life. Every host that boots such a kernel does it this way; how
 * it reads guest memory and where it stops the guest is its own.
 */
#ifndef VMM_GUEST_A64_GUARD_H
#define VMM_GUEST_A64_GUARD_H

#include <stdint.h>

#include "arch/arm64/paging.h"
#include "vmm/util/error.h"

struct elf_image;
struct symtab;

struct a64_guard {
	/* 6.9 on: the host maps the page when a vCPU first reaches bp (__primary_switched); 0: nothing left to do. */
	uint64_t bp;
	uint64_t va;			/* the guard page: _end */
	uint64_t pa, root;		/* the stub's page and swapper_pg_dir, guest-physical */
	unsigned page_shift;
};

/*
 * Before the kernel's first instruction: the guard page at code_va (the
 * stub's page, at image-relative code_pa) for a kernel with Image-header
 * page size 1 << page_shift and va_bits of VA (from _stext). Up to 6.8
 * the kernel's tables are pre-seeded now, through table(), with a chain
 * of tables of the host's own at image-relative tables_pa (three pages);
 * from 6.9 on g->bp says where to call a64_guard_map_now. image_gpa: where
 * the image's physical address 0 lies in guest-physical memory.
 */
int a64_guard_plan(struct a64_guard *g, const struct symtab *syms, const struct elf_image *elf, unsigned page_shift,
		   unsigned va_bits, uint64_t code_va, uint64_t code_pa, uint64_t tables_pa, uint64_t image_gpa,
		   a64_table_fn table, void *opaque, struct errbuf *err);

/*
 * 6.9 on, at g->bp (the kernel's tables built, no traced call made yet):
 * the guard page's entry added beside the kernel's own for its last page.
 * *bits: the VA size the walk found. The host then checks, its own way,
 * that the stub reads back at g->va through the vCPU's translation.
 */
int a64_guard_map_now(struct a64_guard *g, a64_table_fn table, void *opaque, unsigned *bits, struct errbuf *err);

#endif
