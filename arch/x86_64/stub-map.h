/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where the x86_64 stub lives in the guest kernel's address space, whoever
 * hosts the guest (docs/TRACING.md, DESIGN.md §3): a region of guest
 * physical memory the kernel never allocates, mapped through
 * level3_kernel_pgt[509], the unused 1 GiB just below the kernel image
 * that every guest page table shares. The region carries its own page
 * directory and page table: the code at the top of that gigabyte, within
 * call rel32 reach of kernel text and modules, read-only and executable;
 * the rings at its bottom in 2 MiB pages, read-write and no-execute (the
 * kernel's W+X check flags RWX pages). The KVM host puts the region in
 * the 32-bit hole, outside RAM; the QEMU host in RAM kept from the kernel
 * with memmap=.
 */
#ifndef ARCH_X86_64_STUB_MAP_H
#define ARCH_X86_64_STUB_MAP_H

#include <stddef.h>
#include <stdint.h>

/* Offsets in the region (its start 2 MiB aligned). */
#define X86_STUB_PD           0x0000ULL
#define X86_STUB_PT           0x1000ULL
#define X86_STUB_CODE         0x10000ULL
#define X86_STUB_CODE_MAX     0x10000ULL
#define X86_STUB_DATA         0x200000ULL
/* The guest's view. */
#define X86_STUB_L3_INDEX     509
#define X86_STUB_DATA_VA      0xffffffff40000000ULL
#define X86_STUB_CODE_VA      0xffffffff7fe00000ULL
/* The most ring memory the gigabyte maps: 511 2 MiB pages (the last maps the code). */
#define X86_STUB_DATA_MAX     (511 * 0x200000ULL)

/*
 * Fills the page directory and table at the start of region (its host
 * view; guest-physical gpa, 2 MiB aligned) for code_size bytes of code and
 * data_size (2 MiB multiple) of rings, and returns the entry that goes
 * into level3_kernel_pgt[X86_STUB_L3_INDEX]; 0 when they do not fit.
 */
uint64_t x86_stub_map(uint8_t *region, uint64_t gpa, size_t code_size, uint64_t data_size);

#endif
