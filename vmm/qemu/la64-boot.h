/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A loongarch64 guest's boot under QEMU 7.2 (docs/LOONGARCH64.md §2).
 * QEMU's direct ELF boot starts every CPU at kernel_entry with a0 = a1 =
 * a2 = 0 and hands the kernel neither a command line, nor a device tree,
 * nor the initrd (-append and -initrd only go to fw_cfg for a firmware).
 * So the QEMU host writes them into guest RAM itself before the first
 * instruction, and the registers Linux reads at kernel_entry:
 *
 *   PA 0x10000   an EFI system table (no services) whose configuration
 *                tables are DEVICE_TREE_GUID -> the device tree,
 *                LINUX_EFI_BOOT_MEMMAP_GUID -> the memory map (RAM, and
 *                the stub data's region reserved), and
 *                LINUX_EFI_INITRD_MEDIA_GUID -> the initrd       (a2)
 *   PA 0x11000   the command line, NUL-terminated                (a1)
 *   PA 0x20000   the device tree: memory, CPUs, the CPU interrupt
 *                controller, the UART, the GED's reset and power-off
 *                registers, /chosen
 *   PA 0x30000   where CPUs 1..N-1 wait for Linux's IPI and mailbox
 *   PA 0x40000   the stub (16 KiB aligned; host-qemu-stub.c)
 *   after the image: the stub data's region (traced), reserved in the
 *                EFI memory map, then the initrd (/chosen/linux,initrd-
 *                start/end and the EFI table): memblock_init() reads the
 *                memory map and efi_init() the initrd's table whichever
 *                device tree wins, the kernel's built-in one or this
 *   a0 = 0       not an EFI boot: Linux calls no EFI service
 *
 * Everything up to the stub lies in [0, 2 MiB), which Linux/LoongArch
 * reserves for ever (memblock_init), below the device tree QEMU puts as a
 * ROM at 1 MiB and tells the kernel nothing of.
 */
#ifndef VMM_QEMU_LA64_BOOT_H
#define VMM_QEMU_LA64_BOOT_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/util/error.h"

struct elf_image;
struct qvm;

/* The kernel's cached direct-mapped window (DMW1): VA = LA64_DMW1 | PA, at PLV0, from kernel_entry on. */
#define LA64_DMW1		0x9000000000000000ULL
#define LA64_SYSTAB_PA		0x10000ULL
#define LA64_SYSTAB_SIZE	0x1000ULL
#define LA64_CMDLINE_PA		0x11000ULL
#define LA64_FDT_PA		0x20000ULL
#define LA64_FDT_MAX		0x10000ULL
#define LA64_PARK_PA		0x30000ULL
/* The stub: its code page and its doorbell's (QEMU's TARGET_PAGE_BITS is 14 for LoongArch). */
#define LA64_STUB_PA		0x40000ULL
#define LA64_STUB_ROOM		0x10000ULL
/* COMMAND_LINE_SIZE (asm-generic): init_environ() copies at most this much, NUL included. */
#define LA64_CMDLINE_SIZE	512
/* The always-reserved low RAM's end (memblock_init: [0, 2 MiB)). */
#define LA64_LOW_RESERVED	(2ULL << 20)

struct la64_boot {
	uint64_t mem;			/* the guest's RAM, as its device tree says */
	unsigned ncpus;
	const char *cmdline;
	const uint8_t *initrd;		/* or NULL */
	size_t initrd_size;
	uint64_t region_size;		/* a reserved region for the stub's data, 0: none */
	/* From la64_boot_plan: where the image ends, the region and the initrd go (PAs). */
	uint64_t kernel_end, region_pa, initrd_pa;
	/* The kernel has a device tree of its own, which it prefers (CONFIG_BUILTIN_DTB), naming this many CPUs. */
	int builtin_dtb;
	unsigned builtin_cpus;
};

/*
 * Where the region and the initrd go, above the image elf as QEMU loads it
 * (PA = address & 0x1fffffff), inside the first 256 MiB of RAM, with the
 * command line's length checked, and the kernel's own device tree, if it
 * has one: its RAM must be the guest's. -E2BIG, -EINVAL or -ENOEXEC with a
 * line saying why.
 */
int la64_boot_plan(struct la64_boot *b, const struct elf_image *elf, struct errbuf *err);

/*
 * While QEMU stands before the first instruction: writes the plan's boot
 * data into guest RAM, parks vCPUs 1..ncpus-1 and sets vCPU 0's a0-a2.
 */
int la64_boot_write(struct qvm *q, const struct la64_boot *b, struct errbuf *err);

/*
 * The EFI memory map the plan describes, as efi_memory_desc_t entries (40
 * bytes each, at most LA64_MEMMAP_MAX) into map: their number.
 */
#define LA64_MEMMAP_MAX		4
int la64_boot_memmap(const struct la64_boot *b, uint8_t *map);

/* The device tree the plan describes, into buf (cap bytes): its length, or -errno with err set. */
int la64_boot_fdt(const struct la64_boot *b, void *buf, size_t cap, struct errbuf *err);

#endif
