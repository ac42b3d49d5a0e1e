// SPDX-License-Identifier: GPL-2.0
/*
 * The QEMU host's loongarch64 boot data without QEMU (vmm/qemu/la64-boot.h):
 * where the stub data's region and the initrd go above the image, what is
 * refused in one line, the device tree Linux reads (memory in QEMU's two
 * pieces, /chosen, the CPUs), the EFI memory
 * map every kernel reads, its own built-in tree or not (the same RAM, the
 * stub data's region EFI_RESERVED_TYPE), and the guest RAM view across the board's hole
 * (qvm_gpa_ptr).
 */
#include <errno.h>
#include <libfdt.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check.h"
#include "vmm/image/elf.h"
#include "vmm/image/image.h"
#include "vmm/qemu/la64-boot.h"
#include "vmm/qemu/qemu-vm.h"

/* An ELF image of one PT_LOAD at the lean kernel's link address, memsz bytes. */
struct fake_elf {
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	struct elf_image elf;
};

static void fake_elf(struct fake_elf *f, uint64_t paddr, uint64_t memsz)
{
	memset(f, 0, sizeof(*f));
	f->eh.e_phnum = 1;
	f->ph.p_type = PT_LOAD;
	f->ph.p_vaddr = f->ph.p_paddr = paddr;
	f->ph.p_memsz = memsz;
	f->elf.ehdr = &f->eh;
	f->elf.phdr = &f->ph;
}

static void test_plan(void)
{
	struct fake_elf f;
	struct errbuf err = { "" };
	static uint8_t initrd[3 << 20];
	struct la64_boot b = { .mem = 512ULL << 20, .ncpus = 2, .cmdline = "console=ttyS0,115200 -- 1 2",
			       .initrd = initrd, .initrd_size = sizeof(initrd), .region_size = 6ULL << 20 };
	char long_line[600];

	/* The lean kernel: linked at 0x9000000000200000, QEMU loads it at PA 0x200000, bss to 0x7770e8. */
	fake_elf(&f, 0x9000000000200000ULL, 0x5770e8);
	CHECK(la64_boot_plan(&b, &f.elf, &err) == 0 && b.kernel_end == 0x7770e8 && b.region_pa == 0x800000 &&
	      b.initrd_pa == 0xe00000, "plan: the image ends at %#llx, the region at %#llx, the initrd at %#llx (%s)",
	      (unsigned long long)b.kernel_end, (unsigned long long)b.region_pa, (unsigned long long)b.initrd_pa,
	      err.msg);
	b.region_size = 0;
	CHECK(la64_boot_plan(&b, &f.elf, &err) == 0 && b.region_pa == 0 && b.initrd_pa == 0x800000,
	      "plan, untraced: no region, the initrd right above the image (%#llx)", (unsigned long long)b.initrd_pa);
	b.region_size = 300ULL << 20;
	CHECK(la64_boot_plan(&b, &f.elf, &err) == -E2BIG && strstr(err.msg, "256 MiB"),
	      "plan: rings beyond the first 256 MiB of RAM: -E2BIG (%s)", err.msg);
	b.region_size = 6ULL << 20;
	b.mem = 8ULL << 20;
	CHECK(la64_boot_plan(&b, &f.elf, &err) == -E2BIG, "plan: --mem 8M holds no room above the image: -E2BIG (%s)",
	      err.msg);
	b.mem = 512ULL << 20;
	memset(long_line, 'x', sizeof(long_line) - 1);
	long_line[sizeof(long_line) - 1] = 0;
	b.cmdline = long_line;
	CHECK(la64_boot_plan(&b, &f.elf, &err) == -EINVAL && strstr(err.msg, "511"),
	      "plan: a command line of 599 bytes: -EINVAL, one line (%s)", err.msg);
	b.cmdline = "";
	fake_elf(&f, 0x9000000000000000ULL, 0x100000);
	CHECK(la64_boot_plan(&b, &f.elf, &err) == -ENOEXEC,
	      "plan: an image inside the reserved first 2 MiB: -ENOEXEC (%s)", err.msg);
	fake_elf(&f, 0x9000000000200000ULL, 0x5770e8);
	b.ncpus = 9;
	CHECK(la64_boot_plan(&b, &f.elf, &err) == -EINVAL, "plan: 9 CPUs: -EINVAL (%s)", err.msg);
}

/* A property's value is only 4-byte aligned in the blob. */
static uint64_t be64_at(const void *p)
{
	fdt64_t v;

	memcpy(&v, p, sizeof(v));
	return fdt64_to_cpu(v);
}

static void test_fdt(void)
{
	struct la64_boot b = { .mem = 1ULL << 30, .ncpus = 3, .cmdline = "console=ttyS0,115200 -- 5 1",
			       .initrd_size = 0x2ac4, .region_size = 0x600000, .kernel_end = 0x7770e8,
			       .region_pa = 0x800000, .initrd_pa = 0xe00000 };
	static uint8_t buf[LA64_FDT_MAX];
	struct errbuf err = { "" };
	int len = la64_boot_fdt(&b, buf, sizeof(buf), &err), node, plen, cpus = 0;
	const void *p;

	CHECK(len > 0 && !fdt_check_full(buf, (size_t)len), "fdt: a valid tree of %d bytes (%s)", len, err.msg);
	if (len <= 0)
		return;
	p = fdt_getprop(buf, fdt_path_offset(buf, "/chosen"), "bootargs", &plen);
	CHECK(p && !strcmp(p, b.cmdline), "fdt: /chosen/bootargs is the command line");
	p = fdt_getprop(buf, fdt_path_offset(buf, "/chosen"), "linux,initrd-start", &plen);
	CHECK(p && plen == 8 && be64_at(p) == 0xe00000, "fdt: linux,initrd-start");
	p = fdt_getprop(buf, fdt_path_offset(buf, "/chosen"), "linux,initrd-end", &plen);
	CHECK(p && plen == 8 && be64_at(p) == 0xe02ac4, "fdt: linux,initrd-end");
	p = fdt_getprop(buf, fdt_path_offset(buf, "/memory@0"), "reg", &plen);
	CHECK(p && plen == 16 && be64_at(p) == 0 && be64_at((const uint8_t *)p + 8) == 256ULL << 20,
	      "fdt: /memory@0 is the first 256 MiB");
	p = fdt_getprop(buf, fdt_path_offset(buf, "/memory@90000000"), "reg", &plen);
	CHECK(p && plen == 16 && be64_at(p) == 0x90000000ULL && be64_at((const uint8_t *)p + 8) == 768ULL << 20,
	      "fdt: /memory@90000000 holds the other 768 MiB");
	CHECK(fdt_path_offset(buf, "/reserved-memory") < 0,
	      "fdt: no /reserved-memory: the EFI memory map reserves the region (a second reservation would fail)");
	fdt_for_each_subnode(node, buf, fdt_path_offset(buf, "/cpus"))
		cpus++;
	CHECK(cpus == 3, "fdt: one cpu node per CPU (%d)", cpus);
	CHECK(fdt_path_offset(buf, "/reboot") >= 0 && fdt_path_offset(buf, "/poweroff") >= 0 &&
	      fdt_path_offset(buf, "/serial@1fe001e0") >= 0, "fdt: reboot, power-off and the UART");
	b.mem = 512ULL << 20;
	b.region_size = 0;
	len = la64_boot_fdt(&b, buf, sizeof(buf), &err);
	CHECK(len > 0 && fdt_path_offset(buf, "/reserved-memory") < 0 &&
	      (p = fdt_getprop(buf, fdt_path_offset(buf, "/memory@90000000"), "reg", &plen)) &&
	      be64_at((const uint8_t *)p + 8) == 256ULL << 20, "fdt, untraced, 512 MiB: no region, 256 MiB high");
	CHECK(la64_boot_fdt(&b, buf, 256, &err) == -ENOSPC, "fdt: too little room: -ENOSPC (%s)", err.msg);
}

/* One efi_memory_desc_t: type, phys_addr, num_pages (4 KiB pages). */
static int md_is(const uint8_t *map, int i, uint32_t type, uint64_t pa, uint64_t size)
{
	const uint8_t *d = map + i * 40;
	uint32_t t;
	uint64_t a, pages;

	memcpy(&t, d, 4);
	memcpy(&a, d + 8, 8);
	memcpy(&pages, d + 24, 8);
	return t == type && a == pa && pages == size >> 12;
}

static void test_memmap(void)
{
	struct la64_boot b = { .mem = 1ULL << 30, .ncpus = 1, .region_size = 0x600000, .region_pa = 0x800000 };
	uint8_t map[LA64_MEMMAP_MAX * 40];
	int n;

	memset(map, 0xa5, sizeof(map));
	n = la64_boot_memmap(&b, map);
	CHECK(n == 4 && md_is(map, 0, 7, 0, 0x800000) && md_is(map, 1, 0, 0x800000, 0x600000) &&
	      md_is(map, 2, 7, 0xe00000, (256ULL << 20) - 0xe00000) && md_is(map, 3, 7, 0x90000000ULL, 768ULL << 20),
	      "memmap: RAM below the region, the region reserved (EFI_RESERVED_TYPE), the rest of low RAM, high RAM");
	CHECK(!map[4] && !map[16] && !map[32], "memmap: no padding, virt_addr or attribute bits");
	b.region_size = 0;
	b.mem = 256ULL << 20;
	n = la64_boot_memmap(&b, map);
	CHECK(n == 1 && md_is(map, 0, 7, 0, 256ULL << 20), "memmap, untraced, 256 MiB: one conventional range");
	b.mem = 128ULL << 20;
	b.region_size = (128ULL << 20) - 0x800000;
	n = la64_boot_memmap(&b, map);
	CHECK(n == 2 && md_is(map, 1, 0, 0x800000, b.region_size), "memmap: a region up to RAM's end leaves no empty range");
}

static void test_gpa(void)
{
	struct qvm q;
	uint8_t *base = (uint8_t *)0x100000;

	memset(&q, 0, sizeof(q));
	q.arch = *qvm_arch_for(IMAGE_ARCH_LOONGARCH64);
	q.q.ram = base;
	q.q.ram_size = 1ULL << 30;
	CHECK(qvm_gpa_ptr(&q, 0x40000, 0x4000) == base + 0x40000, "ram: low RAM is the memfd's start");
	CHECK(qvm_gpa_ptr(&q, (256ULL << 20) - 8, 8) == base + (256ULL << 20) - 8, "ram: low RAM's last bytes");
	CHECK(!qvm_gpa_ptr(&q, (256ULL << 20) - 8, 16), "ram: a range running into the hole is not RAM");
	CHECK(!qvm_gpa_ptr(&q, 256ULL << 20, 8) && !qvm_gpa_ptr(&q, 0x8fffffffULL, 1), "ram: the hole is not RAM");
	CHECK(qvm_gpa_ptr(&q, 0x90000000ULL, 8) == base + (256ULL << 20), "ram: high RAM follows in the memfd");
	CHECK(qvm_gpa_ptr(&q, 0x90000000ULL + (768ULL << 20) - 8, 8) == base + (1ULL << 30) - 8 &&
	      !qvm_gpa_ptr(&q, 0x90000000ULL + (768ULL << 20) - 4, 8), "ram: high RAM ends with the memfd");
	CHECK(q.arch.min_mem == 1ULL << 30 && !strcmp(q.arch.cpu, "la464") && q.arch.pc_off == 33 * 8,
	      "arch: QEMU's la464 on virt, at least 1 GiB, pc at 'g' offset 264");
}

int main(void)
{
	test_plan();
	test_fdt();
	test_memmap();
	test_gpa();
	return check_exit();
}
