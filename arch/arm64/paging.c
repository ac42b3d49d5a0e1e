// SPDX-License-Identifier: GPL-2.0
/* arm64 translation-table walks of the kernel's range (arch/arm64/paging.h). */
#include <errno.h>

#include "arch/arm64/paging.h"

static int geometry_ok(unsigned page_shift, unsigned va_bits)
{
	return (page_shift == 12 || page_shift == 14 || page_shift == 16) && va_bits > page_shift &&
	       va_bits <= 52 && va_bits >= 36;
}

/*
 * The entry for va at the last level or, with blocks, at the first level
 * whose entry is a block (bits 1:0 = 01); *shift: the VA bits below it.
 */
static int a64_walk(a64_table_fn table, void *opaque, uint64_t root_pa, unsigned page_shift, unsigned va_bits,
		    uint64_t va, int blocks, uint64_t **entry, unsigned *shift)
{
	unsigned bits = page_shift - 3, levels, root_bits;
	uint64_t pa = root_pa;

	if (!geometry_ok(page_shift, va_bits))
		return -EINVAL;
	/* Each level resolves `bits` bits; the root the rest (1 to `bits`). */
	levels = (va_bits - page_shift + bits - 1) / bits;
	root_bits = va_bits - page_shift - bits * (levels - 1);
	for (unsigned l = 0; l < levels; l++) {
		unsigned width = l ? bits : root_bits, at = page_shift + bits * (levels - 1 - l);
		uint64_t *t = table(opaque, pa, 8ULL << width);
		uint64_t *e;

		if (!t)
			return -EFAULT;
		e = &t[(va >> at) & ((1ULL << width) - 1)];
		if (l == levels - 1 || (blocks && (*e & 3) == A64_DESC_VALID)) {
			*entry = e;
			*shift = at;
			return 0;
		}
		if ((*e & 3) != A64_DESC_TABLE)
			return -ENOENT;
		pa = *e & A64_DESC_OA_48 & ~((1ULL << page_shift) - 1);
	}
	return -EINVAL;
}

int a64_walk_pte(a64_table_fn table, void *opaque, uint64_t root_pa, unsigned page_shift, unsigned va_bits,
		 uint64_t va, uint64_t **pte)
{
	unsigned shift;

	return a64_walk(table, opaque, root_pa, page_shift, va_bits, va, 0, pte, &shift);
}

unsigned a64_find_va_bits(a64_table_fn table, void *opaque, uint64_t root_pa, unsigned page_shift,
			  uint64_t known_va, uint64_t known_pa)
{
	/* What Linux's ARM64_VA_BITS_* and LPA2 give: 4K 39/48/52, 16K 36/47/48/52, 64K 42/48/52. */
	static const unsigned sizes[] = { 39, 48, 52, 47, 36, 42 };
	uint64_t mask = A64_DESC_OA_48 & ~((1ULL << page_shift) - 1);

	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t *e;

		if ((page_shift == 12 && (sizes[i] == 36 || sizes[i] == 42 || sizes[i] == 47)) ||
		    (page_shift == 14 && (sizes[i] == 39 || sizes[i] == 42)) ||
		    (page_shift == 16 && sizes[i] != 42 && sizes[i] != 48 && sizes[i] != 52))
			continue;
		if (!a64_walk_pte(table, opaque, root_pa, page_shift, sizes[i], known_va, &e) &&
		    (*e & 3) == A64_DESC_TABLE && (*e & mask) == (known_pa & mask))
			return sizes[i];
	}
	return 0;
}

uint64_t a64_pte_rox_like(uint64_t like, uint64_t pa, unsigned page_shift)
{
	uint64_t mask = A64_DESC_OA_48 & ~((1ULL << page_shift) - 1);

	if ((like & 3) != A64_DESC_TABLE || (pa & ~mask))
		return 0;
	like &= ~(mask | A64_PTE_CONT | A64_PTE_DBM | A64_PTE_PXN | A64_PTE_SW_DIRTY);
	return like | pa | A64_PTE_RDONLY | A64_PTE_UXN;
}

int a64_translate(a64_table_fn table, void *opaque, uint64_t root_pa, unsigned page_shift, unsigned va_bits,
		  uint64_t va, uint64_t *pa)
{
	uint64_t *e, v;
	unsigned shift;
	int rc = a64_walk(table, opaque, root_pa, page_shift, va_bits, va, 1, &e, &shift);

	if (rc)
		return rc;
	v = *e;		/* read once: the guest's memory */
	/* A page at the last level (bits 1:0 = 11), a block above it (01). */
	if ((v & 3) != (shift == page_shift ? A64_DESC_TABLE : A64_DESC_VALID))
		return -ENOENT;
	*pa = (v & A64_DESC_OA_48 & ~((1ULL << shift) - 1)) | (va & ((1ULL << shift) - 1));
	return 0;
}
