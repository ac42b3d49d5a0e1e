/* SPDX-License-Identifier: GPL-2.0 */
/* The x86_64 guest's physical memory map and device addresses. */
#ifndef ARCH_X86_64_LAYOUT_H
#define ARCH_X86_64_LAYOUT_H

/* Boot-time structures in low memory, below the EBDA. */
#define LAYOUT_GDT           0x0500ULL
#define LAYOUT_IDT           0x0520ULL
#define LAYOUT_BOOT_STACK    0x8ff0ULL
#define LAYOUT_ZERO_PAGE     0x7000ULL
#define LAYOUT_PML4          0x9000ULL
#define LAYOUT_PDPT          0xa000ULL
#define LAYOUT_PD            0xb000ULL	/* 4 pages: identity map of 4 GiB */
#define LAYOUT_IDENTITY_GIB  4
#define LAYOUT_CMDLINE       0x20000ULL
#define LAYOUT_CMDLINE_MAX   0x10000ULL	/* bytes including the NUL */

/* The boot GDT's selectors: boot.rst wants __BOOT_CS 0x10 and __BOOT_DS 0x18. */
#define LAYOUT_GDT_ENTRIES   5
#define LAYOUT_SEL_CODE      0x10
#define LAYOUT_SEL_DATA      0x18
#define LAYOUT_SEL_TSS       0x20

/* The EBDA holds the MP table; it and the BIOS area are reserved in E820. */
#define LAYOUT_EBDA          0x9fc00ULL
#define LAYOUT_EBDA_END      0xa0000ULL
#define LAYOUT_BIOS          0xf0000ULL
#define LAYOUT_HIGH_MEM      0x100000ULL

/* RAM above this goes above 4 GiB, leaving the 32-bit device hole. */
#define LAYOUT_MMIO_HOLE     0xc0000000ULL
#define LAYOUT_4G            0x100000000ULL

#define LAYOUT_IOAPIC        0xfec00000ULL
#define LAYOUT_LAPIC         0xfee00000ULL
#define LAYOUT_TSS           0xfffbd000ULL
#define LAYOUT_IDENTITY_PAGE 0xfffbc000ULL

/*
 * vmmtrace's guest stub (DESIGN.md §3, vmm/kvm-x86_64/stub-map.c): its code and
 * rings in VMM memory in the 32-bit hole, never in the E820 map; its page
 * tables a setup_data node in low RAM (the node's 16-byte header below
 * them), clear of the zero page, the boot page tables and the command line.
 */
#define LAYOUT_STUB_TABLES    0x31000ULL
#define LAYOUT_STUB_GPA       0xe0000000ULL
#define LAYOUT_STUB_GPA_END   0xfec00000ULL	/* the I/O APIC */

/* The smallest guest that makes sense: the kernel plus room to run. */
#define LAYOUT_MIN_MEM       (64ULL << 20)

/* Legacy PC devices. */
#define LAYOUT_COM1          0x3f8
#define LAYOUT_COM1_IRQ      4
#define LAYOUT_I8042_DATA    0x60
#define LAYOUT_I8042_CMD     0x64
#define LAYOUT_RTC           0x70

#endif
