// SPDX-License-Identifier: GPL-2.0
/*
 * arm64 translation-table walks of the kernel's range (arch/arm64/paging.c),
 * which the QEMU host uses to map the stub's guard page in the tables a 6.9+
 * kernel builds for itself: 4 KiB granules with 39-, 48- and 52-bit
 * (LPA2: a 16-entry level -1) VAs, 16 KiB with 47 and 52, over tables
 * written here by hand, each index worked out from the VA as the Arm ARM
 * (D8.2) splits it: for 0xffff8000804df000, 4 KiB granule: level 0 index
 * VA[47:39] = 256, level 1 VA[38:30] = 2, level 2 VA[29:21] = 2, level 3
 * VA[20:12] = 223, level -1 VA[51:48] = 15, and with 39 bits level 1
 * VA[38:30] = 2 is the root; 16 KiB: level 1 VA[46:36] = 0, level 2
 * VA[35:25] = 64, level 3 VA[24:14] = 311, level 0 VA[51:47] = 31. The
 * hostile cases: invalid and block entries on the way, tables outside RAM,
 * a table pointing at itself, geometries Linux never builds. And the
 * translation the arm64 KVM host checks the rings' region with: through a
 * page and through a 2 MiB block.
 */
#include <errno.h>
#include <string.h>

#include "arch/arm64/paging.h"
#include "tests/unit/check.h"

#define RAM_PA   0x40000000ULL
#define RAM_SIZE 0x200000ULL
#define VA       0xffff8000804df000ULL	/* the lean 6.12 kernel's last page: _end - 4 KiB */
#define PAGE_PA  0x40100000ULL		/* where that page is */
/* PAGE_KERNEL as Linux writes it: page, AF, inner shareable, nG, PXN, UXN, DBM (PTE_WRITE), PTE_DIRTY. */
#define KERNEL_DATA (3ULL | 1ULL << 10 | 3ULL << 8 | 1ULL << 11 | 1ULL << 53 | 1ULL << 54 | 1ULL << 51 | 1ULL << 55)

static uint64_t ram[RAM_SIZE / 8];
static unsigned reads;

static uint64_t *reader(void *opaque, uint64_t pa, uint64_t bytes)
{
	(void)opaque;
	reads++;
	if (pa < RAM_PA || pa - RAM_PA > RAM_SIZE || bytes > RAM_SIZE - (pa - RAM_PA) || pa & 7)
		return NULL;
	return &ram[(pa - RAM_PA) / 8];
}

static uint64_t *at(uint64_t table_pa, unsigned index)
{
	return &ram[(table_pa - RAM_PA) / 8 + index];
}

static void link_(uint64_t table_pa, unsigned index, uint64_t next_pa)
{
	*at(table_pa, index) = next_pa | A64_DESC_TABLE;
}

/* Tables at RAM_PA + k pages of the granule, in walk order; the last level maps VA to PAGE_PA. */
static uint64_t *build(unsigned page_shift, const unsigned *index, unsigned levels)
{
	uint64_t page = 1ULL << page_shift;

	memset(ram, 0, sizeof(ram));
	for (unsigned l = 0; l + 1 < levels; l++)
		link_(RAM_PA + l * page, index[l], RAM_PA + (l + 1) * page);
	*at(RAM_PA + (levels - 1) * page, index[levels - 1]) = PAGE_PA | KERNEL_DATA;
	return at(RAM_PA + (levels - 1) * page, index[levels - 1]);
}

static void geometry(const char *name, unsigned page_shift, unsigned va_bits, const unsigned *index, unsigned levels)
{
	uint64_t *want = build(page_shift, index, levels), *got = NULL;
	int rc = a64_walk_pte(reader, NULL, RAM_PA, page_shift, va_bits, VA, &got);

	CHECK(rc == 0 && got == want, "%s: the walk ends at the level-3 entry the tables give (rc %d)", name, rc);
	CHECK(a64_find_va_bits(reader, NULL, RAM_PA, page_shift, VA, PAGE_PA) == va_bits,
	      "%s: the VA size found from the kernel's own page is %u", name, va_bits);
	CHECK(a64_find_va_bits(reader, NULL, RAM_PA, page_shift, VA, PAGE_PA + (1ULL << page_shift)) == 0,
	      "%s: a page mapped elsewhere than said gives no VA size", name);
	rc = a64_walk_pte(reader, NULL, RAM_PA, page_shift, va_bits, VA + (1ULL << page_shift), &got);
	CHECK(rc == 0 && got == want + 1, "%s: the next page's entry is the next one in the same table", name);
}

int main(void)
{
	uint64_t *pte = NULL, e;
	int rc;

	geometry("4K, 48-bit", 12, 48, (const unsigned[]){ 256, 2, 2, 223 }, 4);
	geometry("4K, 52-bit (LPA2, level -1)", 12, 52, (const unsigned[]){ 15, 256, 2, 2, 223 }, 5);
	geometry("4K, 39-bit", 12, 39, (const unsigned[]){ 2, 2, 223 }, 3);
	geometry("16K, 47-bit", 14, 47, (const unsigned[]){ 0, 64, 311 }, 3);
	geometry("16K, 52-bit", 14, 52, (const unsigned[]){ 31, 0, 64, 311 }, 4);

	/* Hostile or unusual tables. */
	build(12, (const unsigned[]){ 256, 2, 2, 223 }, 4);
	*at(RAM_PA + 0x2000, 2) = 0x40200000ULL | 1ULL;	/* a 2 MiB block at level 2: no page entry */
	CHECK(a64_walk_pte(reader, NULL, RAM_PA, 12, 48, VA, &pte) == -ENOENT, "a block on the way: -ENOENT");
	*at(RAM_PA + 0x2000, 2) = 0;
	CHECK(a64_walk_pte(reader, NULL, RAM_PA, 12, 48, VA, &pte) == -ENOENT, "an invalid entry on the way: -ENOENT");
	link_(RAM_PA + 0x2000, 2, 0x80000000ULL);
	CHECK(a64_walk_pte(reader, NULL, RAM_PA, 12, 48, VA, &pte) == -EFAULT, "a table outside RAM: -EFAULT");
	CHECK(a64_find_va_bits(reader, NULL, RAM_PA, 12, VA, PAGE_PA) == 0, "no VA size when the walk leaves RAM");
	link_(RAM_PA + 0x2000, 2, RAM_PA + 0x2000);	/* the table points at itself */
	reads = 0;
	rc = a64_walk_pte(reader, NULL, RAM_PA, 12, 48, VA, &pte);
	CHECK(rc == 0 && pte == at(RAM_PA + 0x2000, 223) && reads == 4,
	      "a table pointing at itself: the walk stops after its levels (rc %d, %u reads)", rc, reads);
	CHECK(a64_find_va_bits(reader, NULL, RAM_PA, 12, VA, PAGE_PA) == 0, "... and gives no VA size");
	CHECK(a64_walk_pte(reader, NULL, RAM_PA, 12, 60, VA, &pte) == -EINVAL &&
	      a64_walk_pte(reader, NULL, RAM_PA, 13, 48, VA, &pte) == -EINVAL &&
	      a64_walk_pte(reader, NULL, RAM_PA, 12, 30, VA, &pte) == -EINVAL, "geometries Linux never builds: -EINVAL");
	CHECK(a64_walk_pte(reader, NULL, RAM_PA + RAM_SIZE - 8, 12, 48, VA, &pte) == -EFAULT,
	      "a root table running past RAM: -EFAULT");

	/* Translation: through a page, through a 2 MiB block at level 2, not at all. */
	{
		uint64_t pa = 0;

		build(12, (const unsigned[]){ 256, 2, 2, 223 }, 4);
		rc = a64_translate(reader, NULL, RAM_PA, 12, 48, VA + 0x123, &pa);
		CHECK(rc == 0 && pa == PAGE_PA + 0x123, "translate through a page: %#llx (rc %d)",
		      (unsigned long long)pa, rc);
		/* VA[20:0] = 0xdf123 of the block's 2 MiB. */
		*at(RAM_PA + 0x2000, 2) = 0x40600000ULL | 1ULL | 1ULL << 10;
		rc = a64_translate(reader, NULL, RAM_PA, 12, 48, VA + 0x123, &pa);
		CHECK(rc == 0 && pa == 0x40600000ULL + 0xdf123, "translate through a 2 MiB block: %#llx (rc %d)",
		      (unsigned long long)pa, rc);
		*at(RAM_PA + 0x2000, 2) = 0;
		CHECK(a64_translate(reader, NULL, RAM_PA, 12, 48, VA, &pa) == -ENOENT, "an invalid entry: -ENOENT");
		build(12, (const unsigned[]){ 256, 2, 2, 223 }, 4);
		*at(RAM_PA + 0x3000, 223) = PAGE_PA | 1ULL;	/* a block descriptor at the last level is reserved */
		CHECK(a64_translate(reader, NULL, RAM_PA, 12, 48, VA, &pa) == -ENOENT,
		      "a block encoding at the last level: -ENOENT");
		link_(RAM_PA + 0x2000, 2, 0x80000000ULL);
		CHECK(a64_translate(reader, NULL, RAM_PA, 12, 48, VA, &pa) == -EFAULT, "a table outside RAM: -EFAULT");
		CHECK(a64_translate(reader, NULL, RAM_PA, 12, 60, VA, &pa) == -EINVAL, "a geometry Linux never builds");
	}

	/* The new entry: PAGE_KERNEL_ROX's bits (RDONLY, UXN; no PXN, DBM, dirty, contiguous), like's attributes. */
	e = a64_pte_rox_like(PAGE_PA | KERNEL_DATA | A64_PTE_CONT | 1ULL << 2, 0x40123000ULL, 12);
	CHECK(e == (0x40123000ULL | 3ULL | 1ULL << 10 | 3ULL << 8 | 1ULL << 11 | 1ULL << 2 | A64_PTE_RDONLY | A64_PTE_UXN),
	      "the guard page's entry: read-only, executable at EL1 only, not contiguous, attributes kept (%#llx)",
	      (unsigned long long)e);
	CHECK(a64_pte_rox_like(PAGE_PA | 1ULL, 0x40123000ULL, 12) == 0, "like a block entry: none");
	CHECK(a64_pte_rox_like(0, 0x40123000ULL, 12) == 0, "like an invalid entry: none");
	CHECK(a64_pte_rox_like(PAGE_PA | KERNEL_DATA, 0x40123000ULL, 14) == 0, "an address not aligned to 16 KiB: none");
	CHECK(a64_pte_rox_like(PAGE_PA | KERNEL_DATA, 1ULL << 48, 12) == 0, "an address above 2^48: none");
	return check_exit();
}
