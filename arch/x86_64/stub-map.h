/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where the x86_64 stub lives in the guest kernel's address space, whoever
 * hosts the guest (docs/STUB-PLACEMENT.md, DESIGN.md §3): guest memory the
 * kernel never allocates, mapped through level3_kernel_pgt[509], the
 * unused 1 GiB just below the kernel image that every guest page table
 * shares. A page directory and a page table of its own map the code at
 * the top of that gigabyte, within call rel32 reach of kernel text and
 * modules, read-only and executable; the rings at its bottom in 2 MiB
 * pages, read-write and no-execute (the kernel's W+X check flags RWX
 * pages). The two tables are a setup_data node of the kernel's boot
 * parameters: the kernel keeps such a node as RAM it never allocates
 * (E820_TYPE_RESERVED_KERN) and in its direct map, where a walk of its
 * page tables (the W+X check of CONFIG_DEBUG_WX) reads them. Each host
 * chooses the places (vmm/guest/x86-stub.h); these are the bytes.
 */
#ifndef ARCH_X86_64_STUB_MAP_H
#define ARCH_X86_64_STUB_MAP_H

#include <stddef.h>
#include <stdint.h>

/* The tables: the page directory, then the page table of the code's 2 MiB. */
#define X86_STUB_TABLES_SIZE  0x2000ULL
/* The code's room. */
#define X86_STUB_CODE_MAX     0x10000ULL
/* The guest's view. */
#define X86_STUB_L3_INDEX     509
#define X86_STUB_DATA_VA      0xffffffff40000000ULL
#define X86_STUB_CODE_VA      0xffffffff7fe00000ULL
/* The most ring memory the gigabyte maps: 511 2 MiB pages (the last maps the code). */
#define X86_STUB_DATA_MAX     (511 * 0x200000ULL)

/*
 * Fills the page directory and table at tables (host view; guest-physical
 * tables_gpa, page-aligned) for code_size bytes of code at code_gpa
 * (page-aligned) and data_size bytes (a 2 MiB multiple) of rings at
 * data_gpa (2 MiB-aligned), and returns the entry that goes into
 * level3_kernel_pgt[X86_STUB_L3_INDEX]; 0 when they do not fit.
 */
uint64_t x86_stub_map(uint8_t *tables, uint64_t tables_gpa, uint64_t code_gpa, size_t code_size,
		      uint64_t data_gpa, uint64_t data_size);

/*
 * boot_params (Documentation/arch/x86/zero-page.rst): its setup_data
 * chain's head, and a node's 16-byte header (next, type, len) just below
 * its data. vmmtrace's node has a type no kernel parses ("vt").
 */
#define X86_BP_SETUP_DATA     0x250
#define X86_SETUP_HDR         16
#define X86_SETUP_TYPE_VT     0x76740000u

/*
 * Puts the node whose header is at hdr (host view; guest-physical
 * hdr_gpa) and whose data is the len bytes after it at the head of the
 * chain of boot_params (host view, 4 KiB).
 */
void x86_setup_data_link(uint8_t *boot_params, uint8_t *hdr, uint64_t hdr_gpa, uint32_t len);

#endif
