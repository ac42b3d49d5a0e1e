// SPDX-License-Identifier: GPL-2.0
/* The x86_64 stub's page tables and their setup_data node (arch/x86_64/stub-map.h). */
#include <string.h>

#include "arch/x86_64/paging.h"
#include "arch/x86_64/stub-map.h"

uint64_t x86_stub_map(uint8_t *tables, uint64_t tables_gpa, uint64_t code_gpa, size_t code_size,
		      uint64_t data_gpa, uint64_t data_size)
{
	uint64_t *pd = (uint64_t *)(void *)tables;
	uint64_t *pt = (uint64_t *)(void *)(tables + X86_PAGE_SIZE);
	uint64_t code_pages = (code_size + X86_PAGE_SIZE - 1) / X86_PAGE_SIZE;

	if ((tables_gpa & (X86_PAGE_SIZE - 1)) || (code_gpa & (X86_PAGE_SIZE - 1)) ||
	    (data_gpa & (X86_PAGE_SIZE_2M - 1)) || (data_size & (X86_PAGE_SIZE_2M - 1)) ||
	    data_size > X86_STUB_DATA_MAX || !code_size || code_size > X86_STUB_CODE_MAX)
		return 0;
	for (unsigned i = 0; i < X86_PT_ENTRIES; i++)
		pd[i] = pt[i] = 0;
	for (uint64_t off = 0, i = 0; off < data_size; off += X86_PAGE_SIZE_2M, i++)
		pd[i] = (data_gpa + off) | X86_PTE_P | X86_PTE_W | X86_PTE_A | X86_PTE_D | X86_PTE_PS | X86_PTE_G |
			X86_PTE_NX;
	pd[X86_PT_ENTRIES - 1] = (tables_gpa + X86_PAGE_SIZE) | X86_PTE_P | X86_PTE_W | X86_PTE_A;
	for (uint64_t i = 0; i < code_pages; i++)
		pt[i] = (code_gpa + i * X86_PAGE_SIZE) | X86_PTE_P | X86_PTE_A | X86_PTE_G;
	return tables_gpa | X86_PTE_P | X86_PTE_W | X86_PTE_A;
}

void x86_setup_data_link(uint8_t *boot_params, uint8_t *hdr, uint64_t hdr_gpa, uint32_t len)
{
	uint32_t type = X86_SETUP_TYPE_VT;

	memcpy(hdr, boot_params + X86_BP_SETUP_DATA, 8);
	memcpy(hdr + 8, &type, 4);
	memcpy(hdr + 12, &len, 4);
	memcpy(boot_params + X86_BP_SETUP_DATA, &hdr_gpa, 8);
}
