/* SPDX-License-Identifier: GPL-2.0 */
/* x86_64 paging-structure entries of 4- and 5-level paging (SDM vol. 3 §4.5). */
#ifndef ARCH_X86_64_PAGING_H
#define ARCH_X86_64_PAGING_H

#define X86_PTE_P           (1ULL << 0)
#define X86_PTE_W           (1ULL << 1)
#define X86_PTE_A           (1ULL << 5)
#define X86_PTE_D           (1ULL << 6)
#define X86_PTE_PS          (1ULL << 7)	/* in a PDE or PDPTE: a 2 MiB or 1 GiB page */
#define X86_PTE_G           (1ULL << 8)
#define X86_PTE_NX          (1ULL << 63)
#define X86_PTE_ADDR        0x000ffffffffff000ULL	/* also CR3's table address */
#define X86_PT_ENTRIES      512
#define X86_PAGE_SIZE       0x1000ULL
#define X86_PAGE_SIZE_2M    0x200000ULL

#endif
