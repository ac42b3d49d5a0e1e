// SPDX-License-Identifier: GPL-2.0
/*
 * The guest page-table walker (vmm/kvm-x86_64/pagewalk.c) over page tables a
 * hostile guest could build: 4- and 5-level walks, 2 MiB and 1 GiB pages,
 * entries not present at each level, read-only pages under CR0.WP, entries
 * and tables outside guest RAM, accesses that cross into a missing page, a
 * table that maps itself, non-canonical addresses and paging off. Guest RAM
 * is two host buffers behind a struct vm's regions (no KVM); every table
 * is written here by hand and every expected address, fault address and
 * error code is worked out from the SDM (vol. 3 §4.5, §4.7), not taken
 * from the program.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/kvm-x86_64/pagewalk.h"
#include "vmm/kvm-x86_64/regs.h"
#include "tests/unit/check.h"
#include "vmm/kvm/vm.h"

/* Guest RAM: 4 MiB at 0 and 1 MiB at 4 GiB, nothing in between. */
#define LOW_SIZE   0x400000ULL
#define HIGH_GPA   0x100000000ULL
#define HIGH_SIZE  0x100000ULL
#define HOLE_GPA   0x80000000ULL	/* in no region */

/* Tables (guest-physical) */
#define PML5 0x5000ULL
#define PML4 0x1000ULL
#define PDPT 0x2000ULL
#define PD   0x3000ULL
#define PT   0x4000ULL

#define PW   (X86_PTE_P | X86_PTE_W)

static struct vm vm;
static uint8_t *low, *high;

static uint64_t *entry(uint64_t table, unsigned i)
{
	return (uint64_t *)(low + table) + i;
}

static struct kvm_sregs paging4(void)
{
	struct kvm_sregs s = { 0 };

	s.cr0 = X86_CR0_PE | X86_CR0_PG | X86_CR0_WP;
	s.cr3 = PML4;
	s.cr4 = X86_CR4_PAE;
	s.efer = X86_EFER_LME | X86_EFER_LMA;
	return s;
}

/*
 * The tables every test starts from. PML4[273] covers 0xffff888000000000;
 * below it PDPT[2], PD[3], PT[4] (4 KiB pages) map
 * 0xffff888080604000 -> 0x10000. PD[5] is a 2 MiB page at 0x200000,
 * PDPT[7] a 1 GiB page at 0 and PDPT[8] one at 4 GiB.
 */
#define VA_4K   0xffff888080604000ULL	/* 273<<39 | 2<<30 | 3<<21 | 4<<12, sign-extended */
#define VA_2M   0xffff888080a00000ULL	/* PD[5]: 5<<21 */
#define VA_1G   0xffff8881c0000000ULL	/* PDPT[7]: 7<<30 */
#define VA_1G_HIGH 0xffff888200000000ULL	/* PDPT[8] */

static void tables_reset(void)
{
	memset(low, 0, LOW_SIZE);
	memset(high, 0, HIGH_SIZE);
	*entry(PML4, 273) = PDPT | PW;
	*entry(PDPT, 2) = PD | PW;
	*entry(PD, 3) = PT | PW;
	*entry(PT, 4) = 0x10000 | PW;
	*entry(PD, 5) = 0x200000 | PW | X86_PTE_PS;
	*entry(PDPT, 7) = 0x0 | PW | X86_PTE_PS;
	*entry(PDPT, 8) = HIGH_GPA | PW | X86_PTE_PS;
	for (unsigned i = 0; i < 16; i++) {
		low[0x10567 + i] = (uint8_t)(0xa0 + i);
		high[0x345 + i] = (uint8_t)(0xc0 + i);
	}
}

static int translates(const struct kvm_sregs *s, uint64_t va, int write, uint64_t want)
{
	uint64_t gpa = ~0ULL;
	int rc = pagewalk_translate(&vm, s, va, write, &gpa);

	return CHECK_QUIET(!rc && gpa == want, "0x%llx (%s) -> rc %d gpa 0x%llx, want 0x%llx",
			   (unsigned long long)va, write ? "write" : "read", rc,
			   (unsigned long long)gpa, (unsigned long long)want);
}

static void test_four_level(void)
{
	struct kvm_sregs s = paging4();
	uint8_t b[4];

	tables_reset();
	CHECK(translates(&s, VA_4K + 0x567, 0, 0x10567), "4 KiB page: 0xffff888080604567 -> 0x10567");
	CHECK(!pagewalk_read(&vm, &s, VA_4K + 0x567, b, 4) && b[0] == 0xa0 && b[3] == 0xa3,
	      "4 KiB page: read through it");
	CHECK(translates(&s, VA_2M + 0x12345, 0, 0x212345), "2 MiB page: offset 0x12345 -> 0x212345");
	*entry(PD, 6) = 0x200000 | PW | X86_PTE_PS | (1ULL << 12);
	CHECK(translates(&s, VA_2M + 0x200000 + 0x345, 0, 0x200345),
	      "2 MiB page: bit 12 is PAT, not address");
	CHECK(translates(&s, VA_1G + 0x10567, 0, 0x10567), "1 GiB page at 0: offset 0x10567 -> 0x10567");
	CHECK(translates(&s, VA_1G + 0x3fffffff, 0, 0x3fffffff), "1 GiB page: last byte");
	CHECK(!pagewalk_read(&vm, &s, VA_1G_HIGH + 0x345, b, 4) && b[0] == 0xc0 && b[3] == 0xc3,
	      "1 GiB page at 4 GiB: read from the high region");
	*entry(PT, 5) = 0x11000 | PW | X86_PTE_NX | (0x7ffULL << 52);
	CHECK(translates(&s, VA_4K + 0x1000 + 0x10, 0, 0x11010),
	      "NX and bits 62:52 are not part of the address");
}

/* Takes P away at one level: no translation, #PF error code P=0 (SDM vol. 3 §4.7). */
static void test_not_present(void)
{
	static const struct { uint64_t table; unsigned i; const char *name; } lv[] = {
		{ PML4, 273, "PML4E" }, { PDPT, 2, "PDPTE" }, { PD, 3, "PDE" }, { PT, 4, "PTE" },
	};
	struct kvm_sregs s = paging4();

	for (unsigned k = 0; k < 4; k++) {
		uint64_t gpa, rfault = 0, wfault = 0;
		uint8_t b[4];
		int rrc, wrc;

		tables_reset();
		*entry(lv[k].table, lv[k].i) &= ~X86_PTE_P;
		CHECK(pagewalk_translate(&vm, &s, VA_4K + 0x567, 0, &gpa) == -EFAULT &&
		      pagewalk_translate(&vm, &s, VA_4K + 0x567, 1, &gpa) == -EFAULT,
		      "%s not present: -EFAULT", lv[k].name);
		rrc = pagewalk_check(&vm, &s, VA_4K + 0x567, 4, 0, &rfault);
		wrc = pagewalk_check(&vm, &s, VA_4K + 0x567, 4, 1, &wfault);
		CHECK(rrc == -EFAULT && wrc == -EFAULT && rfault == VA_4K + 0x567 && wfault == rfault,
		      "%s not present: check faults at the address", lv[k].name);
		CHECK(pagewalk_pf_error(rrc, 0) == 0 && pagewalk_pf_error(wrc, 1) == X86_PF_W,
		      "%s not present: #PF error 0 (read), 2 (write)", lv[k].name);
		CHECK(pagewalk_read(&vm, &s, VA_4K + 0x567, b, 4) == -EFAULT &&
		      pagewalk_write(&vm, &s, VA_4K + 0x567, b, 4) == -EFAULT,
		      "%s not present: read and write fail", lv[k].name);
	}
	tables_reset();
	*entry(PD, 5) &= ~X86_PTE_P;
	CHECK(pagewalk_translate(&vm, &s, VA_2M, 0, &(uint64_t){ 0 }) == -EFAULT,
	      "2 MiB PDE not present: -EFAULT");
	tables_reset();
	*entry(PDPT, 7) &= ~X86_PTE_P;
	CHECK(pagewalk_translate(&vm, &s, VA_1G, 0, &(uint64_t){ 0 }) == -EFAULT,
	      "1 GiB PDPTE not present: -EFAULT");
}

/* Supervisor writes: R/W must be 1 at every level when CR0.WP is set. */
static void test_read_only(void)
{
	struct kvm_sregs s = paging4();
	uint32_t v = 0x11223344;
	uint64_t gpa, fault = 0;
	int rc;

	tables_reset();
	*entry(PT, 4) = 0x10000 | X86_PTE_P;
	CHECK(translates(&s, VA_4K + 0x567, 0, 0x10567), "read-only PTE: reads work");
	CHECK(pagewalk_translate(&vm, &s, VA_4K + 0x567, 1, &gpa) == -EACCES,
	      "read-only PTE, CR0.WP: write is -EACCES");
	rc = pagewalk_check(&vm, &s, VA_4K + 0x567, 4, 1, &fault);
	CHECK(rc == -EACCES && fault == VA_4K + 0x567 && pagewalk_pf_error(rc, 1) == (X86_PF_P | X86_PF_W),
	      "read-only PTE, CR0.WP: #PF error 3 at the address");
	CHECK(pagewalk_write(&vm, &s, VA_4K + 0x567, &v, 4) == -EFAULT && low[0x10567] == 0xa0,
	      "read-only PTE, CR0.WP: write fails, memory unchanged");
	CHECK(!(*entry(PT, 4) & X86_PTE_D), "read-only PTE: a refused write sets no dirty bit");
	s.cr0 &= ~X86_CR0_WP;
	CHECK(!pagewalk_write(&vm, &s, VA_4K + 0x567, &v, 4) && !memcmp(low + 0x10567, &v, 4),
	      "read-only PTE, CR0.WP clear: supervisor write goes through");
	s = paging4();
	tables_reset();
	*entry(PML4, 273) = PDPT | X86_PTE_P;
	CHECK(pagewalk_translate(&vm, &s, VA_4K, 1, &gpa) == -EACCES &&
	      pagewalk_translate(&vm, &s, VA_2M, 1, &gpa) == -EACCES,
	      "read-only PML4E: writes below it are -EACCES");
	tables_reset();
	*entry(PDPT, 2) = PD | X86_PTE_P;
	*entry(PD, 5) = 0x200000 | PW | X86_PTE_PS;
	CHECK(pagewalk_translate(&vm, &s, VA_2M, 1, &gpa) == -EACCES, "read-only PDPTE over a 2 MiB page");
	/* No translation at all outranks the write protection above it: P=0. */
	tables_reset();
	*entry(PML4, 273) = PDPT | X86_PTE_P;
	*entry(PT, 4) = 0;
	rc = pagewalk_check(&vm, &s, VA_4K, 8, 1, &fault);
	CHECK(pagewalk_translate(&vm, &s, VA_4K, 1, &gpa) == -EFAULT && rc == -EFAULT &&
	      pagewalk_pf_error(rc, 1) == X86_PF_W,
	      "read-only PML4E over a missing PTE: not present (#PF error 2), not -EACCES");
}

/* The CPU sets A and D in the leaf entry on a write (SDM vol. 3 §4.8). */
static void test_accessed_dirty(void)
{
	struct kvm_sregs s = paging4();
	uint64_t v = 0x1122334455667788ULL;

	tables_reset();
	CHECK(!pagewalk_write(&vm, &s, VA_4K + 0x100, &v, 8) &&
	      *entry(PT, 4) == (0x10000 | PW | X86_PTE_A | X86_PTE_D) && !memcmp(low + 0x10100, &v, 8),
	      "write through a PTE: A and D set, nothing else changed");
	CHECK(!pagewalk_write(&vm, &s, VA_2M + 0x100, &v, 8) &&
	      *entry(PD, 5) == (0x200000 | PW | X86_PTE_PS | X86_PTE_A | X86_PTE_D),
	      "write through a 2 MiB PDE: A and D set in it");
	CHECK(!pagewalk_write(&vm, &s, VA_1G + 0x20000, &v, 8) &&
	      *entry(PDPT, 7) == (PW | X86_PTE_PS | X86_PTE_A | X86_PTE_D),
	      "write through a 1 GiB PDPTE: A and D set in it");
	CHECK(!(*entry(PML4, 273) & X86_PTE_D) && !(*entry(PD, 3) & X86_PTE_D),
	      "no dirty bit in non-leaf entries");
}

/* Guest RAM ends where the regions do; no table or page beyond them is touched. */
static void test_outside_ram(void)
{
	struct kvm_sregs s = paging4();
	uint64_t gpa, fault = 0;
	uint8_t b[8];

	tables_reset();
	*entry(PDPT, 2) = HOLE_GPA | PW;
	CHECK(pagewalk_translate(&vm, &s, VA_4K, 0, &gpa) == -EFAULT, "page directory in the hole: -EFAULT");
	*entry(PDPT, 2) = 0x000ffffffffff000ULL | PW;
	CHECK(pagewalk_translate(&vm, &s, VA_4K, 0, &gpa) == -EFAULT,
	      "page directory at the top of the 52-bit space: -EFAULT");
	*entry(PDPT, 2) = (LOW_SIZE - 0x1000) | PW;	/* the last page of RAM: all zero, not present */
	CHECK(pagewalk_translate(&vm, &s, VA_4K, 0, &gpa) == -EFAULT, "an empty table: -EFAULT");
	tables_reset();
	*entry(PT, 4) = HOLE_GPA | PW;
	CHECK(translates(&s, VA_4K + 0x10, 0, HOLE_GPA + 0x10), "page in the hole: it translates");
	CHECK(pagewalk_read(&vm, &s, VA_4K + 0x10, b, 8) == -EFAULT &&
	      pagewalk_check(&vm, &s, VA_4K + 0x10, 8, 0, &fault) == -EFAULT && fault == VA_4K + 0x10,
	      "page in the hole: read and check fail at the address");
	*entry(PT, 4) = (HIGH_GPA + HIGH_SIZE - 0x1000) | PW;
	CHECK(!pagewalk_read(&vm, &s, VA_4K + 0xff8, b, 8), "last page of the high region: readable");
	*entry(PT, 4) = (HIGH_GPA + HIGH_SIZE) | PW;
	CHECK(pagewalk_read(&vm, &s, VA_4K, b, 1) == -EFAULT, "the page after the high region: -EFAULT");
	tables_reset();
	s.cr3 = HOLE_GPA;
	CHECK(pagewalk_translate(&vm, &s, VA_4K, 0, &gpa) == -EFAULT, "CR3 in the hole: -EFAULT");
	s.cr3 = PML4 | 0xfff;	/* PCID, PWT, PCD: bits 11:0 are not part of the address */
	CHECK(translates(&s, VA_4K + 0x567, 0, 0x10567), "CR3 with bits 11:0 set: only 51:12 count");
}

/* PT[10] -> 0x12000, PT[11] missing, PT[12] -> 0x13000, PT[13] -> 0x17000. */
static void test_page_crossing(void)
{
	struct kvm_sregs s = paging4();
	const uint64_t p10 = VA_4K + 6 * 0x1000, p11 = p10 + 0x1000, p12 = p11 + 0x1000;
	uint8_t b[16], w[16];
	uint64_t fault = 0;

	tables_reset();
	*entry(PT, 10) = 0x12000 | PW;
	*entry(PT, 12) = 0x13000 | PW;
	*entry(PT, 13) = 0x17000 | PW;
	memset(low + 0x13ff8, 0x31, 8);
	memset(low + 0x17000, 0x42, 8);
	memset(w, 0x77, sizeof(w));
	CHECK(!pagewalk_read(&vm, &s, p12 + 0xff8, b, 16) && b[0] == 0x31 && b[7] == 0x31 &&
	      b[8] == 0x42 && b[15] == 0x42, "read across two pages far apart in RAM");
	CHECK(pagewalk_check(&vm, &s, p10 + 0xffe, 4, 0, &fault) == -EFAULT && fault == p11,
	      "4 bytes at the end of a page, next page missing: fault at the next page's start");
	CHECK(pagewalk_read(&vm, &s, p10 + 0xffe, b, 4) == -EFAULT, "that read fails");
	CHECK(pagewalk_write(&vm, &s, p10 + 0xffe, w, 4) == -EFAULT && low[0x12ffe] == 0 &&
	      low[0x12fff] == 0, "that write fails and writes nothing");
	CHECK(!pagewalk_check(&vm, &s, p10 + 0xffe, 2, 1, &fault), "2 bytes up to the boundary: fine");
	CHECK(!pagewalk_check(&vm, &s, p10, 0, 1, &fault), "length 0: nothing to check");
}

/* A recursive entry: PML4[510] points at the PML4 itself. */
static void test_self_map(void)
{
	struct kvm_sregs s = paging4();
	uint64_t v = 0;

	tables_reset();
	*entry(PML4, 510) = PML4 | PW;
	/* 510 at every level: 0xffffff7fbfdfe000 is the PML4 page itself */
	CHECK(translates(&s, 0xffffff7fbfdfe000ULL + 510 * 8, 0, PML4 + 510 * 8),
	      "PML4 mapped through itself: the walk ends after 4 levels");
	CHECK(!pagewalk_read(&vm, &s, 0xffffff7fbfdfe000ULL + 510 * 8, &v, 8) && v == (PML4 | PW),
	      "reads its own entry back");
	/* 510, 510, 510, 273: the PML4 as a PT; its entry 273 leads to the PDPT page */
	CHECK(translates(&s, 0xffffff7fbfd11000ULL, 0, PDPT), "three loops then PML4[273]: the PDPT page");
	/* CR3 = a table whose every entry points at itself: any address, four steps. */
	for (unsigned i = 0; i < X86_PT_ENTRIES; i++)
		*entry(PT, i) = PT | PW;
	s.cr3 = PT;
	CHECK(translates(&s, 0x1000, 1, PT), "a table of self-pointers: 0x1000 is that table");
	CHECK(translates(&s, 0x00007ffffffff000ULL, 0, PT) &&
	      translates(&s, 0xfffffffffffff008ULL, 0, PT + 8), "... and so is every page");
	s.cr4 |= X86_CR4_LA57;
	CHECK(translates(&s, 0xff00000000000010ULL, 0, PT + 0x10), "... in 5 steps with LA57");
}

/* 4-level: bits 63:47 all equal; otherwise #GP, not a walk (SDM vol. 1 §3.3.7.1). */
static void test_non_canonical(void)
{
	struct kvm_sregs s = paging4();
	uint64_t gpa, fault = 0;
	uint8_t b[8];

	tables_reset();
	*entry(PML4, 256) = PDPT | PW;	/* would map 0x0000800000000000 ... */
	*entry(PDPT, 0) = PW | X86_PTE_PS;	/* ... to physical 0 */
	*entry(PML4, 255) = PDPT | PW;
	*entry(PDPT, 511) = PD | PW;
	*entry(PD, 511) = PT | PW;
	*entry(PT, 511) = 0x15000 | PW;
	CHECK(pagewalk_translate(&vm, &s, 0x0000800000000000ULL, 0, &gpa) == -EINVAL,
	      "0x0000800000000000: non-canonical, -EINVAL");
	CHECK(pagewalk_translate(&vm, &s, 0xffff7fffffffffffULL, 0, &gpa) == -EINVAL,
	      "0xffff7fffffffffff: non-canonical, -EINVAL");
	CHECK(pagewalk_translate(&vm, &s, 0x8000000000000000ULL, 0, &gpa) == -EINVAL,
	      "0x8000000000000000: non-canonical, -EINVAL");
	CHECK(translates(&s, 0x00007ffffffffff8ULL, 0, 0x15ff8), "0x00007ffffffffff8: canonical");
	CHECK(pagewalk_check(&vm, &s, 0x00007ffffffffffcULL, 8, 0, &fault) == -EINVAL &&
	      fault == 0x0000800000000000ULL, "8 bytes across the canonical edge: -EINVAL at 2^47");
	CHECK(pagewalk_read(&vm, &s, 0x00007ffffffffffcULL, b, 8) == -EFAULT, "... and reading them fails");
}

/* CR4.LA57: PML5 at 0x5000; PML5[511] and PML5[0] lead to the same PML4. */
static void test_five_level(void)
{
	struct kvm_sregs s = paging4();
	uint64_t gpa;

	tables_reset();
	s.cr4 |= X86_CR4_LA57;
	s.cr3 = PML5;
	*entry(PML5, 511) = PML4 | PW;
	*entry(PML5, 0) = PML4 | PW;
	CHECK(translates(&s, VA_4K + 0x567, 0, 0x10567), "5-level: 0xffff888080604567 via PML5[511]");
	CHECK(translates(&s, 0x0000888080604567ULL, 0, 0x10567),
	      "5-level: 0x0000888080604567 is canonical, via PML5[0]");
	CHECK(translates(&s, 0x0000888080a12345ULL, 0, 0x212345),
	      "5-level: a 2 MiB page via PML5[0]");
	*entry(PML5, 511) = PML4;
	CHECK(pagewalk_translate(&vm, &s, VA_4K, 0, &gpa) == -EFAULT, "5-level: PML5E not present");
	CHECK(pagewalk_translate(&vm, &s, 0x0100000000000000ULL, 0, &gpa) == -EINVAL,
	      "5-level: 0x0100000000000000 non-canonical (bit 56 set, 63:57 clear)");
	CHECK(pagewalk_translate(&vm, &s, 0xfeff888080604567ULL, 0, &gpa) == -EINVAL,
	      "5-level: 0xfeff888080604567 non-canonical");
}

static void test_paging_off(void)
{
	struct kvm_sregs s = { 0 };
	uint8_t b[4];

	tables_reset();
	s.cr0 = X86_CR0_PE;
	s.cr3 = HOLE_GPA;	/* not looked at */
	CHECK(translates(&s, 0x10567, 1, 0x10567), "paging off: linear is physical");
	CHECK(!pagewalk_read(&vm, &s, 0x10567, b, 4) && b[0] == 0xa0, "paging off: read");
	CHECK(pagewalk_read(&vm, &s, HOLE_GPA, b, 4) == -EFAULT, "paging off: hole is -EFAULT");
	CHECK(pagewalk_read(&vm, &s, LOW_SIZE - 2, b, 4) == -EFAULT, "paging off: read past RAM's end");
}

int main(void)
{
	low = aligned_alloc(0x1000, LOW_SIZE);
	high = aligned_alloc(0x1000, HIGH_SIZE);
	if (!low || !high)
		return 1;
	vm.regions[0] = (struct mem_region){ 0, LOW_SIZE, low };
	vm.regions[1] = (struct mem_region){ HIGH_GPA, HIGH_SIZE, high };
	vm.nregions = 2;
	test_four_level();
	test_not_present();
	test_read_only();
	test_accessed_dirty();
	test_outside_ram();
	test_page_crossing();
	test_self_map();
	test_non_canonical();
	test_five_level();
	test_paging_off();
	free(low);
	free(high);
	return check_exit();
}
