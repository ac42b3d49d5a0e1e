// SPDX-License-Identifier: GPL-2.0
/* arm64's guard page at _end for the one-page stub (a64-guard.h, docs/STUB-PLACEMENT.md). */
#include <errno.h>
#include <string.h>

#include "vmm/guest/a64-guard.h"
#include "vmm/guest/stub-place.h"
#include "vmm/image/elf.h"
#include "vmm/image/symtab.h"

/* PAGE_KERNEL_ROX as 6.1 writes it: a page, inner shareable, accessed, read-only, no EL0 execution (MAIR 0). */
#define A64_PTE_ROX (A64_DESC_TABLE | A64_PTE_SH_INNER | A64_PTE_AF | A64_PTE_RDONLY | A64_PTE_UXN)

/*
 * Since 6.9 the kernel maps itself from C (arch/arm64/kernel/pi/
 * map_kernel.c): init_pg_dir is cleared and filled segment by segment,
 * _end's guard page left out, and its root table is copied over
 * swapper_pg_dir's, so nothing a host pre-seeds survives. But those
 * tables are final: map_kernel runs once, its tables live in
 * init_pg_dir's pages inside the image (reserved for ever), and later only
 * mark_rodata_ro (rodata) and free_initmem (init) change the image's
 * mapping. So the host adds the guard page's entry to them once they
 * exist: at __primary_switched, the first code under them, before any
 * traced call (start_kernel's slot is the first). Any page size and VA
 * size: the walk finds which from the kernel's own mapping of its last
 * page.
 */
static int a64_guard_later(struct a64_guard *g, const struct symtab *syms, const struct elf_image *elf,
			   unsigned page_shift, uint64_t code_va, uint64_t code_pa, uint64_t image_gpa,
			   struct errbuf *err)
{
	uint64_t at = guest_sym(syms, "__primary_switched"), pgd = guest_sym(syms, "swapper_pg_dir"), pgd_pa;

	if (!at)
		at = guest_sym(syms, "start_kernel");
	if (!page_shift)
		return err_set(err, EOPNOTSUPP, "the stub's guard page needs the kernel's page size, which its Image "
			       "header does not give");
	if (!pgd || elf_vaddr_to_paddr(elf, pgd, &pgd_pa) || !at)
		return err_set(err, ENOENT, "the kernel's symbols name no swapper_pg_dir or __primary_switched: the "
			       "stub's guard page cannot be mapped");
	if (code_va & ((1ULL << page_shift) - 1))
		return err_set(err, EINVAL, "_end (%#llx) is not aligned to the kernel's %u KiB pages",
			       (unsigned long long)code_va, 1u << (page_shift - 10));
	*g = (struct a64_guard){ .bp = at, .va = code_va, .pa = image_gpa + code_pa, .root = image_gpa + pgd_pa,
				 .page_shift = page_shift };
	return 0;
}

/*
 * Up to 6.8 (docs/STUB-PLACEMENT.md): the guard page at _end, which
 * init_pg_dir maps RWX in the image's last 2 MiB block
 * (create_kernel_mapping rounds the image up to blocks) and which
 * swapper_pg_dir leaves unmapped for ever (map_kernel gives vmlinux_data a
 * guard page, so vmalloc never hands it out). Before the kernel's first
 * instruction the host pre-seeds swapper_pg_dir's slot for the image,
 * which the image holds as zeros and nothing clears, with a chain of
 * tables of its own in the region reserved past _end, whose last table
 * maps code_va to the stub read-only and executable. map_kernel then finds
 * those tables (p4d_none, pud_none and pmd_none say no) and fills in its
 * own entries around the stub's: the chain becomes the kernel's for the
 * rest of its life.
 */
int a64_guard_plan(struct a64_guard *g, const struct symtab *syms, const struct elf_image *elf, unsigned page_shift,
		   unsigned va_bits, uint64_t code_va, uint64_t code_pa, uint64_t tables_pa, uint64_t image_gpa,
		   a64_table_fn table, void *opaque, struct errbuf *err)
{
	uint64_t pgd_va = guest_sym(syms, "swapper_pg_dir"), pgd_pa, *t;
	unsigned shift, levels;

	memset(g, 0, sizeof(*g));
	if (guest_sym(syms, "__pi_early_map_kernel"))
		return a64_guard_later(g, syms, elf, page_shift, code_va, code_pa, image_gpa, err);
	if (page_shift != 12)
		return err_set(err, EOPNOTSUPP, "the stub's guard page needs a kernel with 4 KiB pages (its Image header "
			       "says otherwise)");
	if (va_bits != 39 && va_bits != 48)
		return err_set(err, EOPNOTSUPP, "the stub's guard page needs 39- or 48-bit kernel VAs (this kernel: %u)",
			       va_bits);
	if (!pgd_va || elf_vaddr_to_paddr(elf, pgd_va, &pgd_pa))
		return err_set(err, ENOENT, "the kernel's symbols name no swapper_pg_dir: the stub's guard page "
			       "cannot be mapped");
	levels = va_bits == 48 ? 4 : 3;
	shift = 12 + 9 * (levels - 1);
	t = table(opaque, image_gpa + pgd_pa, 4096);
	if (!t || !table(opaque, image_gpa + tables_pa, 4096ULL * (levels - 1)))
		return err_set(err, ERANGE, "swapper_pg_dir or the stub's tables are outside guest RAM");
	if (t[(code_va >> shift) & 511])
		return err_set(err, EEXIST, "swapper_pg_dir's entry for the kernel image is not empty in the image: "
			       "the stub's guard page cannot be mapped");
	for (; shift > 12; shift -= 9, tables_pa += 4096) {
		uint64_t *next = table(opaque, image_gpa + tables_pa, 4096);

		memset(next, 0, 4096);
		t[(code_va >> shift) & 511] = (image_gpa + tables_pa) | A64_DESC_TABLE;
		t = next;
	}
	t[(code_va >> 12) & 511] = (image_gpa + code_pa) | A64_PTE_ROX;
	return 0;
}

int a64_guard_map_now(struct a64_guard *g, a64_table_fn table, void *opaque, unsigned *bits, struct errbuf *err)
{
	unsigned shift = g->page_shift;
	uint64_t page = 1ULL << shift, *prev, *pte, entry;

	g->bp = 0;
	*bits = a64_find_va_bits(table, opaque, g->root, shift, g->va - page, g->pa - page);
	if (!*bits || a64_walk_pte(table, opaque, g->root, shift, *bits, g->va - page, &prev))
		return err_set(err, ENOENT, "the kernel's tables at swapper_pg_dir do not map its last page to where "
			       "it was loaded: the stub's guard page at _end cannot be mapped");
	if (a64_walk_pte(table, opaque, g->root, shift, *bits, g->va, &pte))
		return err_set(err, ENOENT, "the kernel's last page table ends at _end (%#llx): the stub's guard page "
			       "has no entry to take", (unsigned long long)g->va);
	if (*pte & A64_DESC_VALID)
		return err_set(err, EEXIST, "the kernel maps the page at _end itself: it is not a guard page");
	if (!(entry = a64_pte_rox_like(*prev, g->pa, shift)))
		return err_set(err, EINVAL, "the kernel's entry for its last page (%#llx) is not a page entry",
			       (unsigned long long)*prev);
	*pte = entry;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return 0;
}
