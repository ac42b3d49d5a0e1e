// SPDX-License-Identifier: GPL-2.0
/* The x86_64 stub's page tables (arch/x86_64/stub-map.h). */
#include "arch/x86_64/paging.h"
#include "arch/x86_64/stub-map.h"

uint64_t x86_stub_map(uint8_t *region, uint64_t gpa, size_t code_size, uint64_t data_size)
{
	uint64_t *pd = (uint64_t *)(void *)(region + X86_STUB_PD);
	uint64_t *pt = (uint64_t *)(void *)(region + X86_STUB_PT);
	uint64_t code_pages = (code_size + X86_PAGE_SIZE - 1) / X86_PAGE_SIZE;

	if ((gpa & (X86_PAGE_SIZE_2M - 1)) || (data_size & (X86_PAGE_SIZE_2M - 1)) ||
	    data_size > X86_STUB_DATA_MAX || !code_size || code_size > X86_STUB_CODE_MAX)
		return 0;
	for (unsigned i = 0; i < X86_PT_ENTRIES; i++)
		pd[i] = pt[i] = 0;
	for (uint64_t off = 0, i = 0; off < data_size; off += X86_PAGE_SIZE_2M, i++)
		pd[i] = (gpa + X86_STUB_DATA + off) | X86_PTE_P | X86_PTE_W | X86_PTE_A | X86_PTE_D |
			X86_PTE_PS | X86_PTE_G | X86_PTE_NX;
	pd[X86_PT_ENTRIES - 1] = (gpa + X86_STUB_PT) | X86_PTE_P | X86_PTE_W | X86_PTE_A;
	for (uint64_t i = 0; i < code_pages; i++)
		pt[i] = (gpa + X86_STUB_CODE + i * X86_PAGE_SIZE) | X86_PTE_P | X86_PTE_A | X86_PTE_G;
	return (gpa + X86_STUB_PD) | X86_PTE_P | X86_PTE_W | X86_PTE_A;
}
