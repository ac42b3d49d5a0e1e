/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Raw kernel Images (arm64, riscv64): their boot header, where they are
 * linked, and the synthetic ELF the rest of the reader sees them through.
 * image.c calls these; others use image_open().
 */
#ifndef VMM_IMAGE_RAW_H
#define VMM_IMAGE_RAW_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/image/image.h"
#include "vmm/util/error.h"

/* Both headers are 64 bytes, with a magic number at 0x38 (riscv: also 0x30). */
#define IMAGE_RAW_HEADER_SIZE	64
/* Upper bound on image_size (bss included); also the decompressed Image.gz's. */
#define IMAGE_RAW_MAX_SIZE	(1ull << 30)

/* The arch (enum image_arch) of the raw Image whose magic is at d, or -1. */
int image_raw_detect(const uint8_t *d, size_t size);

/*
 * Builds img's synthetic ELF (vmlinux, vmlinux_size, elf, arch, is_raw)
 * around the raw Image raw[size], which is copied: the caller keeps it.
 * Messages do not name the file; image.c adds it. flags: image_open_as's.
 */
int image_raw_open(struct kernel_image *img, const uint8_t *raw, size_t size, unsigned flags,
		   struct errbuf *err);

/*
 * image-reloc.c: applies, to the bytes d of a relocatable arm64 Image, its
 * R_AARCH64_RELATIVE relocations for a KASLR offset of 0. relbase_off is
 * the file offset of kallsyms_relative_base (0 in the file), lowest_off that
 * of the lowest kallsyms symbol, which it points at. *base gets the link
 * address the relocations imply, *applied how many words were written,
 * *found where the table is, and the __mcount_loc table it fills.
 */
struct image_reloc_found {
	uint64_t rela_start, rela_end;		/* the table itself (__rela_start, __rela_end) */
	uint64_t mcount_start, mcount_stop;	/* __mcount_loc, found among them (0: not found) */
};
int image_reloc_arm64(uint8_t *d, size_t size, uint64_t relbase_off, uint64_t lowest_off,
		      uint64_t *base, size_t *applied, struct image_reloc_found *found, struct errbuf *err);

/*
 * arm64 (a64-percpu.c): cpu_number's address, the one most 32-bit loads
 * relative to tpidr_el1 in text (len bytes at text_va) use, within
 * [lo, hi); 0 when none stands out.
 */
uint64_t image_a64_cpu_number(const uint8_t *text, size_t len, uint64_t text_va, uint64_t lo, uint64_t hi);

/*
 * arm64 (a64-percpu.c): swapper_pg_dir's address, from the code of
 * secondary_startup (sec_len bytes at sec_va) and __primary_switch, which
 * load it and reserved_pg_dir below it for __enable_mmu; 0 when they do
 * not agree.
 */
uint64_t image_a64_swapper_pg_dir(const uint8_t *sec, size_t sec_len, uint64_t sec_va, const uint8_t *pri,
				  size_t pri_len, uint64_t pri_va);

#endif
