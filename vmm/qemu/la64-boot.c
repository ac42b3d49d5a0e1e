// SPDX-License-Identifier: GPL-2.0
/*
 * loongarch64's boot data under QEMU 7.2 (la64-boot.h). What Linux 6.12
 * reads (docs/LOONGARCH64.md §2.2): init_environ() takes a1 as the command
 * line's physical address and a2 as the EFI system table's; efi_init()
 * parses the table's configuration tables whatever a0 says, and
 * fdt_setup() takes the device tree from DEVICE_TREE_GUID's entry when the
 * kernel has no built-in one (CONFIG_BUILTIN_DTB wins). Whichever tree
 * wins, memblock_init() adds and reserves what the EFI memory map
 * (LINUX_EFI_BOOT_MEMMAP_GUID) says and efi_config_parse_tables() takes the
 * initrd from LINUX_EFI_INITRD_MEDIA_GUID: so the table carries both, and
 * a kernel with its own tree still keeps off the stub's rings and finds
 * its initramfs and all of its RAM. With a0 = 0 the kernel never calls an
 * EFI service, so the table needs none.
 */
#include <errno.h>
#include <libfdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/image/elf.h"
#include "vmm/qemu/la64-boot.h"
#include "vmm/qemu/qemu-vm.h"

/* QEMU 7.2's virt board (hw/loongarch/virt.c, include/hw/loongarch/virt.h, include/hw/pci-host/ls7a.h). */
#define LA64_LOWMEM		(256ULL << 20)	/* RAM at PA 0; the rest at 0x90000000 */
#define LA64_HIGHMEM		0x90000000ULL
#define LA64_UART_PA		0x1fe001e0ULL
#define LA64_UART_SIZE		0x100ULL
#define LA64_UART_CLOCK		100000000u
/* The ACPI GED's byte-wide registers (VIRT_GED_REG_ADDR): SLEEP_CTL at 0, RESET at 2. */
#define LA64_GED_PA		0x100e001cULL
#define LA64_GED_RESET_VALUE	0x42u		/* ACPI_GED_RESET_VALUE */
#define LA64_GED_SLEEP_OFF	(1u << 5 | 5u << 2)	/* SLP_EN | SLP_TYP 5: power off */
/* QEMU's ELF loader (cpu_loongarch_virt_to_phys): an address's low 29 bits. */
#define LA64_LOAD_MASK		0x1fffffffULL
#define LA64_ALIGN		(2ULL << 20)

/* The gdbstub's register numbers (gdb-xml/loongarch-base64.xml). */
#define LA64_REG_A0		4
#define LA64_REG_A1		5
#define LA64_REG_A2		6
#define LA64_REG_PC		33

/*
 * The EFI system table's page at LA64_SYSTAB_PA: efi_system_table_64_t
 * (120 bytes), its configuration tables (efi_config_table_64_t, 24 bytes
 * each), the vendor string, struct linux_efi_initrd, and struct
 * efi_boot_memmap (40 bytes) followed by its efi_memory_desc_t entries.
 */
#define EFI_SYSTAB_SIGNATURE	0x5453595320494249ULL	/* "IBI SYST" */
#define EFI_SYSTAB_REVISION	(2u << 16 | 70u)
#define EFI_SYSTAB_SIZE		120
#define EFI_TABLES_OFF		0x80
#define EFI_TABLE_SIZE		24
#define EFI_VENDOR_OFF		0xe0
#define EFI_INITRD_OFF		0x100
#define EFI_MEMMAP_OFF		0x200
#define EFI_MEMMAP_HDR		40
#define EFI_MD_SIZE		40
#define EFI_MD_VERSION		1
#define EFI_PAGE_SHIFT		12
/* efi_memory_desc_t's types (include/linux/efi.h). */
#define EFI_RESERVED_TYPE	0
#define EFI_CONVENTIONAL_MEMORY	7
/* GUIDs in EFI's mixed-endian byte order: DEVICE_TREE_GUID b1b621d5-f19c-41a5-830b-d9152c69aae0, */
static const uint8_t efi_dt_guid[16] = { 0xd5, 0x21, 0xb6, 0xb1, 0x9c, 0xf1, 0xa5, 0x41,
					 0x83, 0x0b, 0xd9, 0x15, 0x2c, 0x69, 0xaa, 0xe0 };
/* LINUX_EFI_BOOT_MEMMAP_GUID 800f683f-d08b-423a-a293-965c3c6fe2b4, */
static const uint8_t efi_memmap_guid[16] = { 0x3f, 0x68, 0x0f, 0x80, 0x8b, 0xd0, 0x3a, 0x42,
					     0xa2, 0x93, 0x96, 0x5c, 0x3c, 0x6f, 0xe2, 0xb4 };
/* LINUX_EFI_INITRD_MEDIA_GUID 5568e427-68fc-4f3d-ac74-ca555231cc68. */
static const uint8_t efi_initrd_guid[16] = { 0x27, 0xe4, 0x68, 0x55, 0xfc, 0x68, 0x3d, 0x4f,
					     0xac, 0x74, 0xca, 0x55, 0x52, 0x31, 0xcc, 0x68 };

/*
 * Where CPUs 1..N-1 wait: the loop loongson_boot_secondary()
 * (arch/loongarch/kernel/smp.c) expects of firmware. It enables every IPI
 * (IOCSR IPI_EN 0x1004) and ECFG.LIE's IPI line, so that an IPI ends
 * `idle 0` while CRMD.IE stays 0; then clears the IPI (0x100c), reads
 * mailbox 0 (0x1020) and jumps to its value, smpboot_entry's physical
 * address (the CPU is in direct-address mode), once non-zero. Assembled
 * by clang-19 --target=loongarch64:
 *      li.w t0, -1; li.w t1, 0x1004; iocsrwr.w t0, t1
 *      li.w t0, 0x1000; csrwr t0, 0x4
 *      li.w t1, 0x1020; li.w t2, 0x100c; li.w t3, -1
 *   1: iocsrwr.w t3, t2; iocsrrd.d t0, t1; bnez t0, 2f
 *      idle 0; b 1b
 *   2: iocsrwr.w t3, t2; jr t0
 */
static const uint32_t la64_park[] = {
	0x02bffc0c, 0x1400002d, 0x038011ad, 0x064819ac, 0x1400002c, 0x0400102c,
	0x1400002d, 0x038081ad, 0x1400002e, 0x038031ce, 0x02bffc0f, 0x064819cf,
	0x06480dac, 0x44000d80, 0x06488000, 0x53fff3ff, 0x064819cf, 0x4c000180,
};

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* One reg entry's cell (1 or 2 cells, big-endian) at p. */
static uint64_t fdt_cells(const fdt32_t *p, int cells)
{
	return cells == 2 ? (uint64_t)fdt32_to_cpu(p[0]) << 32 | fdt32_to_cpu(p[1]) : fdt32_to_cpu(p[0]);
}

/*
 * A kernel with a device tree of its own (CONFIG_BUILTIN_DTB, between
 * __dtb_start and __dtb_end): fdt_setup() prefers it to the host's when its
 * header checks. Its RAM must be this guest's RAM (the kernel would use
 * what is not there), and the kernel starts the CPUs it names: their
 * number goes to b->builtin_cpus for the caller to compare with --cpus.
 */
static int la64_builtin_dtb(struct la64_boot *b, const struct elf_image *elf, uint64_t low, struct errbuf *err)
{
	uint64_t start, stop;
	const void *fdt;
	int node, ac, sc;

	b->builtin_dtb = 0;
	b->builtin_cpus = 0;
	if (elf_symbol(elf, "__dtb_start", &start) || elf_symbol(elf, "__dtb_end", &stop) || stop <= start ||
	    stop - start < FDT_V1_SIZE || !(fdt = elf_vaddr_ptr(elf, start, stop - start)) || fdt_check_header(fdt))
		return 0;
	if (fdt_totalsize(fdt) > stop - start || fdt_check_full(fdt, stop - start))
		return err_set(err, ENOEXEC, "loongarch64: the kernel's own device tree (CONFIG_BUILTIN_DTB), which it "
			       "prefers to vmmtrace's, is malformed");
	b->builtin_dtb = 1;
	ac = fdt_address_cells(fdt, 0);
	sc = fdt_size_cells(fdt, 0);
	if (ac < 1 || ac > 2 || sc < 1 || sc > 2)
		return err_set(err, ENOEXEC, "loongarch64: the kernel's own device tree has %d address and %d size "
			       "cells: vmmtrace reads 1 or 2", ac, sc);
	for (node = fdt_node_offset_by_prop_value(fdt, -1, "device_type", "memory", sizeof("memory")); node >= 0;
	     node = fdt_node_offset_by_prop_value(fdt, node, "device_type", "memory", sizeof("memory"))) {
		int len;
		const fdt32_t *reg = fdt_getprop(fdt, node, "reg", &len);

		for (int i = 0; reg && i + (ac + sc) * 4 <= len; i += (ac + sc) * 4) {
			uint64_t base = fdt_cells(reg + i / 4, ac), size = fdt_cells(reg + i / 4 + ac, sc);
			int inside = size <= low && base <= low - size;

			if (!inside && b->mem > LA64_LOWMEM)
				inside = base >= LA64_HIGHMEM && size <= b->mem - LA64_LOWMEM &&
					 base - LA64_HIGHMEM <= b->mem - LA64_LOWMEM - size;
			if (size && !inside)
				return err_set(err, E2BIG, "loongarch64: the kernel's own device tree (CONFIG_BUILTIN_DTB), "
					       "which it prefers to vmmtrace's, puts RAM at [%#llx, %#llx): not in this "
					       "guest's %llu MiB (--mem)", (unsigned long long)base,
					       (unsigned long long)(base + size), (unsigned long long)(b->mem >> 20));
		}
	}
	fdt_for_each_subnode(node, fdt, fdt_path_offset(fdt, "/cpus")) {
		const char *type = fdt_getprop(fdt, node, "device_type", NULL);

		if (type && !strcmp(type, "cpu"))
			b->builtin_cpus++;
	}
	return 0;
}

int la64_boot_plan(struct la64_boot *b, const struct elf_image *elf, struct errbuf *err)
{
	uint64_t low = b->mem < LA64_LOWMEM ? b->mem : LA64_LOWMEM, end = 0, next;
	size_t n = b->cmdline ? strlen(b->cmdline) : 0;
	int rc;

	if (n >= LA64_CMDLINE_SIZE)
		return err_set(err, EINVAL, "the command line is %zu bytes: a LoongArch kernel takes at most %d "
			       "(COMMAND_LINE_SIZE)", n, LA64_CMDLINE_SIZE - 1);
	if (b->ncpus < 1 || b->ncpus > QVM_MAX_CPUS)
		return err_set(err, EINVAL, "%u CPUs: the loongarch64 guest takes 1 to %d", b->ncpus, QVM_MAX_CPUS);
	for (unsigned i = 0; i < elf->ehdr->e_phnum; i++) {
		const Elf64_Phdr *ph = &elf->phdr[i];

		if (ph->p_type == PT_LOAD && ph->p_memsz && (ph->p_paddr & LA64_LOAD_MASK) + ph->p_memsz > end)
			end = (ph->p_paddr & LA64_LOAD_MASK) + ph->p_memsz;
	}
	if (end <= LA64_LOW_RESERVED || end > LA64_LOWMEM)
		return err_set(err, ENOEXEC, "the kernel would load at physical [.., %#llx): not above the first 2 MiB "
			       "and inside the first 256 MiB of RAM, where QEMU's loongarch64 board puts it",
			       (unsigned long long)end);
	b->kernel_end = end;
	if ((rc = la64_builtin_dtb(b, elf, low, err)))
		return rc;
	/* Above the image: nothing the kernel allocates before memblock_init() reads the EFI memory map is there. */
	next = align_up(end, LA64_ALIGN);
	b->region_pa = 0;
	if (b->region_size) {
		b->region_pa = next;
		next = align_up(next + b->region_size, LA64_ALIGN);
	}
	b->initrd_pa = b->initrd_size ? next : 0;
	next += b->initrd_size;
	if (next > low)
		return err_set(err, E2BIG, "the kernel (to %#llx), %s%s%s do not fit the first %llu MiB of RAM: more "
			       "--mem, or less --buffer-size", (unsigned long long)end,
			       b->region_size ? "the stub's rings" : "", b->region_size && b->initrd_size ? " and " : "",
			       b->initrd_size ? "the initrd" : "", (unsigned long long)(low >> 20));
	return 0;
}

/* fdt_* calls in a row: the first failure is kept. */
#define FDT(call) do { if (rc >= 0) rc = (call); } while (0)

static int fdt_reg(void *fdt, uint64_t base, uint64_t size)
{
	fdt64_t reg[2] = { cpu_to_fdt64(base), cpu_to_fdt64(size) };

	return fdt_property(fdt, "reg", reg, sizeof(reg));
}

int la64_boot_fdt(const struct la64_boot *b, void *buf, size_t cap, struct errbuf *err)
{
	uint64_t low = b->mem < LA64_LOWMEM ? b->mem : LA64_LOWMEM;
	char name[64];
	int rc = 0;

	FDT(fdt_create(buf, (int)cap));
	FDT(fdt_finish_reservemap(buf));
	FDT(fdt_begin_node(buf, ""));
	FDT(fdt_property_u32(buf, "#address-cells", 2));
	FDT(fdt_property_u32(buf, "#size-cells", 2));
	FDT(fdt_property_string(buf, "compatible", "vmmtrace,loongarch64-virt"));
	FDT(fdt_property_string(buf, "model", "vmmtrace loongarch64 virt (QEMU)"));

	FDT(fdt_begin_node(buf, "chosen"));
	FDT(fdt_property_string(buf, "bootargs", b->cmdline ? b->cmdline : ""));
	snprintf(name, sizeof(name), "/serial@%llx", (unsigned long long)LA64_UART_PA);
	FDT(fdt_property_string(buf, "stdout-path", name));
	if (b->initrd_size) {
		FDT(fdt_property_u64(buf, "linux,initrd-start", b->initrd_pa));
		FDT(fdt_property_u64(buf, "linux,initrd-end", b->initrd_pa + b->initrd_size));
	}
	FDT(fdt_end_node(buf));

	FDT(fdt_begin_node(buf, "memory@0"));
	FDT(fdt_property_string(buf, "device_type", "memory"));
	FDT(fdt_reg(buf, 0, low));
	FDT(fdt_end_node(buf));
	if (b->mem > LA64_LOWMEM) {
		snprintf(name, sizeof(name), "memory@%llx", (unsigned long long)LA64_HIGHMEM);
		FDT(fdt_begin_node(buf, name));
		FDT(fdt_property_string(buf, "device_type", "memory"));
		FDT(fdt_reg(buf, LA64_HIGHMEM, b->mem - LA64_LOWMEM));
		FDT(fdt_end_node(buf));
	}

	/*
	 * No /reserved-memory: the EFI memory map reserves the stub data's
	 * region for every kernel, a built-in tree or not (a second, no-map
	 * reservation of the same range would fail, and say so on the console).
	 */
	FDT(fdt_begin_node(buf, "cpus"));
	FDT(fdt_property_u32(buf, "#address-cells", 1));
	FDT(fdt_property_u32(buf, "#size-cells", 0));
	for (unsigned c = 0; c < b->ncpus; c++) {
		snprintf(name, sizeof(name), "cpu@%u", c);
		FDT(fdt_begin_node(buf, name));
		FDT(fdt_property_string(buf, "device_type", "cpu"));
		FDT(fdt_property_string(buf, "compatible", "loongson,la464"));
		FDT(fdt_property_u32(buf, "reg", c));
		FDT(fdt_end_node(buf));
	}
	FDT(fdt_end_node(buf));

	FDT(fdt_begin_node(buf, "cpuic"));
	FDT(fdt_property_string(buf, "compatible", "loongson,cpu-interrupt-controller"));
	FDT(fdt_property(buf, "interrupt-controller", NULL, 0));
	FDT(fdt_property_u32(buf, "#interrupt-cells", 1));
	FDT(fdt_property_u32(buf, "phandle", 1));
	FDT(fdt_end_node(buf));

	/* Reboot and power-off: Linux's syscon-reboot and syscon-poweroff write the GED's registers. */
	snprintf(name, sizeof(name), "ged@%llx", (unsigned long long)LA64_GED_PA);
	FDT(fdt_begin_node(buf, name));
	FDT(fdt_property_string(buf, "compatible", "syscon"));
	FDT(fdt_reg(buf, LA64_GED_PA, 3));
	FDT(fdt_property_u32(buf, "reg-io-width", 1));
	FDT(fdt_property_u32(buf, "phandle", 2));
	FDT(fdt_end_node(buf));
	FDT(fdt_begin_node(buf, "reboot"));
	FDT(fdt_property_string(buf, "compatible", "syscon-reboot"));
	FDT(fdt_property_u32(buf, "regmap", 2));
	FDT(fdt_property_u32(buf, "offset", 2));
	FDT(fdt_property_u32(buf, "value", LA64_GED_RESET_VALUE));
	FDT(fdt_end_node(buf));
	FDT(fdt_begin_node(buf, "poweroff"));
	FDT(fdt_property_string(buf, "compatible", "syscon-poweroff"));
	FDT(fdt_property_u32(buf, "regmap", 2));
	FDT(fdt_property_u32(buf, "offset", 0));
	FDT(fdt_property_u32(buf, "value", LA64_GED_SLEEP_OFF));
	FDT(fdt_end_node(buf));

	/* The UART, polled (QEMU's board wires its interrupt to a controller this tree leaves out). */
	snprintf(name, sizeof(name), "serial@%llx", (unsigned long long)LA64_UART_PA);
	FDT(fdt_begin_node(buf, name));
	FDT(fdt_property_string(buf, "compatible", "ns16550a"));
	FDT(fdt_reg(buf, LA64_UART_PA, LA64_UART_SIZE));
	FDT(fdt_property_u32(buf, "clock-frequency", LA64_UART_CLOCK));
	FDT(fdt_end_node(buf));

	FDT(fdt_end_node(buf));
	FDT(fdt_finish(buf));
	if (rc < 0)
		return err_set(err, ENOSPC, "loongarch64: the device tree: %s", fdt_strerror(rc));
	return (int)fdt_totalsize(buf);
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);	/* guest and host are little-endian */
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static uint8_t *efi_table(uint8_t *t, unsigned n, const uint8_t guid[16], uint64_t pa)
{
	uint8_t *e = t + EFI_TABLES_OFF + n * EFI_TABLE_SIZE;

	memcpy(e, guid, 16);
	put64(e + 16, pa);
	return e;
}

static unsigned efi_md(uint8_t *map, unsigned n, uint32_t type, uint64_t pa, uint64_t size)
{
	uint8_t *d = map + n * EFI_MD_SIZE;

	if (!size)
		return n;
	memset(d, 0, EFI_MD_SIZE);
	put32(d, type);
	put64(d + 8, pa);				/* phys_addr; virt_addr and attribute 0 */
	put64(d + 24, size >> EFI_PAGE_SHIFT);		/* num_pages */
	return n + 1;
}

int la64_boot_memmap(const struct la64_boot *b, uint8_t *map)
{
	uint64_t low = b->mem < LA64_LOWMEM ? b->mem : LA64_LOWMEM;
	uint64_t rend = b->region_pa + b->region_size;
	unsigned n = 0;

	if (b->region_size) {
		n = efi_md(map, n, EFI_CONVENTIONAL_MEMORY, 0, b->region_pa);
		n = efi_md(map, n, EFI_RESERVED_TYPE, b->region_pa, b->region_size);
		n = efi_md(map, n, EFI_CONVENTIONAL_MEMORY, rend, low - rend);
	} else {
		n = efi_md(map, n, EFI_CONVENTIONAL_MEMORY, 0, low);
	}
	if (b->mem > LA64_LOWMEM)
		n = efi_md(map, n, EFI_CONVENTIONAL_MEMORY, LA64_HIGHMEM, b->mem - LA64_LOWMEM);
	return (int)n;
}

/*
 * efi_system_table_64_t (include/linux/efi.h) at LA64_SYSTAB_PA, a vendor
 * name and the configuration tables: the device tree, the memory map
 * (the stub data's region as EFI_RESERVED_TYPE: memblock_reserve), the
 * initrd.
 */
static void la64_systab(uint8_t *t, const struct la64_boot *b)
{
	static const char vendor[] = "vmmtrace";
	uint8_t *memmap = t + EFI_MEMMAP_OFF;
	unsigned ntables = 0;
	int nmd;

	memset(t, 0, LA64_SYSTAB_SIZE);
	put64(t + 0, EFI_SYSTAB_SIGNATURE);
	put32(t + 8, EFI_SYSTAB_REVISION);
	put32(t + 12, EFI_SYSTAB_SIZE);
	put64(t + 24, LA64_SYSTAB_PA + EFI_VENDOR_OFF);	/* fw_vendor, UTF-16 */
	/* fw_revision, the console handles, runtime and boot services: 0 */
	for (size_t i = 0; i < sizeof(vendor); i++)
		t[EFI_VENDOR_OFF + 2 * i] = (uint8_t)vendor[i];
	efi_table(t, ntables++, efi_dt_guid, LA64_FDT_PA);
	nmd = la64_boot_memmap(b, memmap + EFI_MEMMAP_HDR);
	put64(memmap + 0, (uint64_t)nmd * EFI_MD_SIZE);		/* map_size */
	put64(memmap + 8, EFI_MD_SIZE);				/* desc_size */
	put32(memmap + 16, EFI_MD_VERSION);			/* desc_ver; map_key 0 */
	put64(memmap + 32, (uint64_t)nmd * EFI_MD_SIZE);	/* buff_size */
	efi_table(t, ntables++, efi_memmap_guid, LA64_SYSTAB_PA + EFI_MEMMAP_OFF);
	if (b->initrd_size) {
		put64(t + EFI_INITRD_OFF, b->initrd_pa);
		put64(t + EFI_INITRD_OFF + 8, b->initrd_size);
		efi_table(t, ntables++, efi_initrd_guid, LA64_SYSTAB_PA + EFI_INITRD_OFF);
	}
	put32(t + 104, ntables);				/* nr_tables */
	put64(t + 112, LA64_SYSTAB_PA + EFI_TABLES_OFF);	/* tables */
}

int la64_boot_write(struct qvm *q, const struct la64_boot *b, struct errbuf *err)
{
	uint8_t *systab = qvm_gpa_ptr(q, LA64_SYSTAB_PA, LA64_SYSTAB_SIZE);
	uint8_t *cmdline = qvm_gpa_ptr(q, LA64_CMDLINE_PA, LA64_CMDLINE_SIZE);
	uint8_t *fdt = qvm_gpa_ptr(q, LA64_FDT_PA, LA64_FDT_MAX);
	uint8_t *park = qvm_gpa_ptr(q, LA64_PARK_PA, sizeof(la64_park));
	uint8_t *initrd = b->initrd_size ? qvm_gpa_ptr(q, b->initrd_pa, b->initrd_size) : NULL;
	int rc;

	if (!systab || !cmdline || !fdt || !park || (b->initrd_size && !initrd))
		return err_set(err, ERANGE, "loongarch64: the boot data's place is outside guest RAM");
	/* Before the first instruction QEMU runs nothing: guest RAM is written as memory. */
	la64_systab(systab, b);
	memset(cmdline, 0, LA64_CMDLINE_SIZE);
	if (b->cmdline)
		memcpy(cmdline, b->cmdline, strlen(b->cmdline));
	if ((rc = la64_boot_fdt(b, fdt, LA64_FDT_MAX, err)) < 0)
		return rc;
	for (size_t i = 0; i < sizeof(la64_park) / sizeof(la64_park[0]); i++)
		put32(park + 4 * i, la64_park[i]);
	if (initrd)
		memcpy(initrd, b->initrd, b->initrd_size);
	/* Every CPU starts at kernel_entry: the others wait in the park loop (their PC is a PA: DA mode). */
	for (unsigned c = 1; c < q->ncpus; c++)
		if ((rc = qvm_set_reg(q, c, LA64_REG_PC, LA64_PARK_PA, err)))
			return rc;
	if ((rc = qvm_set_reg(q, 0, LA64_REG_A0, 0, err)) || (rc = qvm_set_reg(q, 0, LA64_REG_A1, LA64_CMDLINE_PA, err)) ||
	    (rc = qvm_set_reg(q, 0, LA64_REG_A2, LA64_SYSTAB_PA, err)))
		return rc;
	return 0;
}
