// SPDX-License-Identifier: GPL-2.0
/*
 * The QEMU host's loongarch64 boot data without QEMU (vmm/qemu/la64-boot.h):
 * where the stub data's region and the initrd go above the image, what is
 * refused in one line, the device tree Linux reads (memory in QEMU's two
 * pieces, /chosen, the CPUs), the EFI memory
 * map every kernel reads, its own built-in tree or not (the same RAM, the
 * stub data's region EFI_RESERVED_TYPE), and the guest RAM view across the board's hole
 * (qvm_gpa_ptr); and a kernel's own device tree (__dtb_start..__dtb_end in
 * its ELF): its CPUs counted, RAM the guest has not and a malformed tree
 * refused in one line.
 */
#include <errno.h>
#include <libfdt.h>
#include <stdio.h>
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

/*
 * An ELF vmlinux with a .symtab naming __dtb_start and __dtb_end around a
 * device tree in its one PT_LOAD: the tree's memory at [mem_base,
 * +mem_size), ncpus CPUs, its root's #address-cells; short cuts the
 * range that many bytes short of the tree.
 */
static struct {
	uint8_t file[0x2000];
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	Elf64_Shdr sh[3];
	struct elf_image elf;
} dtb_elf;

/* fdt_* calls in a row: the first failure is kept. */
#define FDT(call) do { if (rc >= 0) rc = (call); } while (0)
#define DTB_VA	0x9000000000200000ULL
#define DTB_OFF	0x1000

static void dtb_elf_make(uint64_t mem_base, uint64_t mem_size, unsigned ncpus, uint32_t acells, size_t short_by)
{
	static const char strs[] = "\0__dtb_start\0__dtb_end";
	uint8_t *fdt = dtb_elf.file + DTB_OFF;
	Elf64_Sym *sym = (Elf64_Sym *)(dtb_elf.file + 0x100);
	fdt32_t reg[4] = { cpu_to_fdt32(mem_base >> 32), cpu_to_fdt32(mem_base), cpu_to_fdt32(mem_size >> 32),
			   cpu_to_fdt32(mem_size) };
	int rc = 0;

	memset(&dtb_elf, 0, sizeof(dtb_elf));
	FDT(fdt_create(fdt, 0x1000));
	FDT(fdt_finish_reservemap(fdt));
	FDT(fdt_begin_node(fdt, ""));
	FDT(fdt_property_u32(fdt, "#address-cells", acells));
	FDT(fdt_property_u32(fdt, "#size-cells", 2));
	FDT(fdt_begin_node(fdt, "memory@0"));
	FDT(fdt_property_string(fdt, "device_type", "memory"));
	FDT(fdt_property(fdt, "reg", reg, sizeof(reg)));
	FDT(fdt_end_node(fdt));
	FDT(fdt_begin_node(fdt, "cpus"));
	for (unsigned c = 0; c < ncpus; c++) {
		char name[16];

		snprintf(name, sizeof(name), "cpu@%u", c);
		FDT(fdt_begin_node(fdt, name));
		FDT(fdt_property_string(fdt, "device_type", "cpu"));
		FDT(fdt_end_node(fdt));
	}
	FDT(fdt_end_node(fdt));
	FDT(fdt_end_node(fdt));
	FDT(fdt_finish(fdt));
	CHECK(rc == 0, "dtb: the test's tree is built (%d)", rc);
	sym[1].st_name = 1;
	sym[1].st_value = DTB_VA + DTB_OFF;
	sym[2].st_name = 13;
	sym[2].st_value = DTB_VA + DTB_OFF + fdt_totalsize(fdt) - short_by;
	memcpy(dtb_elf.file + 0x200, strs, sizeof(strs));
	dtb_elf.sh[1] = (Elf64_Shdr){ .sh_type = SHT_SYMTAB, .sh_offset = 0x100, .sh_size = 3 * sizeof(Elf64_Sym),
				      .sh_link = 2, .sh_entsize = sizeof(Elf64_Sym) };
	dtb_elf.sh[2] = (Elf64_Shdr){ .sh_type = SHT_STRTAB, .sh_offset = 0x200, .sh_size = sizeof(strs) };
	dtb_elf.eh.e_phnum = 1;
	dtb_elf.eh.e_shnum = 3;
	dtb_elf.ph = (Elf64_Phdr){ .p_type = PT_LOAD, .p_vaddr = DTB_VA, .p_paddr = DTB_VA, .p_filesz = sizeof(dtb_elf.file),
				   .p_memsz = 0x5770e8 };
	dtb_elf.elf = (struct elf_image){ .data = dtb_elf.file, .size = sizeof(dtb_elf.file), .ehdr = &dtb_elf.eh,
					  .phdr = &dtb_elf.ph, .shdr = dtb_elf.sh };
}

static void test_builtin_dtb(void)
{
	struct la64_boot b = { .mem = 512ULL << 20, .ncpus = 2, .region_size = 6ULL << 20 };
	struct errbuf err = { "" };
	int rc;

	dtb_elf_make(0, 256ULL << 20, 3, 2, 0);
	rc = la64_boot_plan(&b, &dtb_elf.elf, &err);
	CHECK(rc == 0 && b.builtin_dtb && b.builtin_cpus == 3 && b.region_pa == 0x800000,
	      "dtb: a built-in tree of the first 256 MiB and 3 CPUs: planned, its CPUs counted (%d, %u; %s)", rc,
	      b.builtin_cpus, err.msg);
	dtb_elf_make(0x90000000ULL, 256ULL << 20, 1, 2, 0);
	CHECK(la64_boot_plan(&b, &dtb_elf.elf, &err) == 0 && b.builtin_cpus == 1,
	      "dtb: RAM above the board's hole, within --mem 512M: planned (%s)", err.msg);
	dtb_elf_make(0x90000000ULL, 1ULL << 30, 1, 2, 0);
	CHECK(la64_boot_plan(&b, &dtb_elf.elf, &err) == -E2BIG && strstr(err.msg, "[0x90000000, 0xd0000000)") &&
	      strstr(err.msg, "512 MiB"), "dtb: RAM beyond --mem 512M: -E2BIG, one line (%s)", err.msg);
	dtb_elf_make(0, 256ULL << 20, 1, 2, 16);
	CHECK(la64_boot_plan(&b, &dtb_elf.elf, &err) == -ENOEXEC && strstr(err.msg, "malformed"),
	      "dtb: a tree longer than __dtb_start..__dtb_end: -ENOEXEC (%s)", err.msg);
	dtb_elf_make(0, 256ULL << 20, 1, 3, 0);
	CHECK(la64_boot_plan(&b, &dtb_elf.elf, &err) == -ENOEXEC && strstr(err.msg, "3 address"),
	      "dtb: 3 address cells: -ENOEXEC (%s)", err.msg);
	dtb_elf_make(0, 256ULL << 20, 1, 2, 0);
	dtb_elf.file[DTB_OFF] ^= 0xff;	/* no FDT magic: the kernel takes the host's tree */
	CHECK(la64_boot_plan(&b, &dtb_elf.elf, &err) == 0 && !b.builtin_dtb,
	      "dtb: no valid header between the symbols: the kernel takes the host's tree (%s)", err.msg);
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
	test_builtin_dtb();
	test_gpa();
	return check_exit();
}
