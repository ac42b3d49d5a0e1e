/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arm64 stage-1 translation tables of a kernel's upper range (TTBR1): the
 * walk to a page's last-level entry for 4, 16 and 64 KiB granules and
 * every VA size Linux builds (36 to 52 bits, LPA2's extra level with 4
 * KiB pages), and the entry that maps one more page as the kernel maps
 * its text (Arm ARM D8.3; arch/arm64/include/asm/pgtable-hwdef.h).
 * Pure code over a reader of guest-physical memory; nothing is trusted:
 * every table address is checked by the reader.
 */
#ifndef ARCH_ARM64_PAGING_H
#define ARCH_ARM64_PAGING_H

#include <stdint.h>

#define A64_DESC_VALID      (1ULL << 0)
#define A64_DESC_TABLE      (3ULL)		/* bits 1:0 of a table (levels < 3) or page (level 3) entry */
#define A64_PTE_RDONLY      (1ULL << 7)		/* AP[2] */
#define A64_PTE_SH_INNER    (3ULL << 8)		/* SH[1:0]: inner shareable */
#define A64_PTE_AF          (1ULL << 10)	/* the access flag */
#define A64_PTE_CONT        (1ULL << 52)
#define A64_PTE_DBM         (1ULL << 51)	/* Linux's PTE_WRITE */
#define A64_PTE_PXN         (1ULL << 53)
#define A64_PTE_UXN         (1ULL << 54)
#define A64_PTE_SW_DIRTY    (1ULL << 55)	/* Linux's PTE_DIRTY (software) */
/* Output address bits below 2^48; with LPA2 (TCR.DS) bits 9:8 hold OA[51:50], zero for RAM below 2^48. */
#define A64_DESC_OA_48      0x0000fffffffff000ULL

/* A table of 8 << bits bytes at guest-physical pa, or NULL when it is not all in guest RAM. */
typedef uint64_t *(*a64_table_fn)(void *opaque, uint64_t pa, uint64_t bytes);

/*
 * The last-level (page) entry for va, walking from the root table at
 * root_pa with granule 1 << page_shift (12, 14 or 16) and va_bits of VA.
 * 0 and *pte; -ENOENT when a table entry on the way is not a table
 * (invalid, or a block: then there is no page entry); -EFAULT when a
 * table is outside guest RAM; -EINVAL for a geometry Linux never builds.
 */
int a64_walk_pte(a64_table_fn table, void *opaque, uint64_t root_pa, unsigned page_shift, unsigned va_bits,
		 uint64_t va, uint64_t **pte);

/*
 * The guest-physical address va maps to (*pa), through blocks or pages,
 * in the same geometry: 0; -ENOENT when va is not mapped; -EFAULT when a
 * table is outside guest RAM; -EINVAL for a geometry Linux never builds.
 */
int a64_translate(a64_table_fn table, void *opaque, uint64_t root_pa, unsigned page_shift, unsigned va_bits,
		  uint64_t va, uint64_t *pa);
/*
 * The VA size the tables at root_pa were built for: the one of those
 * Linux builds with this granule whose walk takes known_va to a valid
 * page entry for known_pa (a page of the kernel's own mapping). 0 when
 * none does.
 */
unsigned a64_find_va_bits(a64_table_fn table, void *opaque, uint64_t root_pa, unsigned page_shift,
			  uint64_t known_va, uint64_t known_pa);

/*
 * The page entry mapping pa read-only and executable at EL1 (the
 * kernel's PAGE_KERNEL_ROX), with the memory type, shareability and
 * nG of like, an entry of the kernel's own mapping; 0 when like is not a
 * valid page entry or pa is not a granule-aligned address below 2^48.
 */
uint64_t a64_pte_rox_like(uint64_t like, uint64_t pa, unsigned page_shift);

#endif
