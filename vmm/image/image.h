/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A kernel image as given by the user: an x86_64 bzImage (setup + compressed
 * ELF payload), a plain ELF vmlinux (x86_64, arm64, riscv64 or loongarch64), or a raw
 * arm64/riscv64 `Image`, plain or gzip'ed. Opening it yields a vmlinux ELF:
 * for a raw Image, a synthetic one around its bytes (image-raw.c).
 */
#ifndef VMM_IMAGE_H
#define VMM_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/image/decompress.h"
#include "vmm/image/elf.h"
#include "vmm/util/error.h"

enum image_arch {
	IMAGE_ARCH_X86_64,
	IMAGE_ARCH_ARM64,
	IMAGE_ARCH_RISCV64,
	IMAGE_ARCH_LOONGARCH64,
};

struct kernel_image {
	const char *path;
	uint8_t *file;			/* the whole file */
	size_t file_size;
	enum image_arch arch;		/* the guest kernel's architecture */
	int is_bzimage;
	/*
	 * A raw Image (arm64, riscv64): elf is synthetic, one PT_LOAD of the
	 * image's bytes at the link address derived from its kallsyms, p_paddr
	 * the header's text_offset (from the start of RAM), p_memsz its
	 * image_size (bss included), e_entry its first byte; sections .text
	 * (_stext.._etext) and .rodata (where the kallsyms tables are).
	 */
	int is_raw;
	/*
	 * A raw Image without kallsyms, opened by image_open_as() with
	 * IMAGE_OPEN_UNPLACED: why it cannot be placed (NULL when it was).
	 * Its synthetic ELF puts its first byte at address 0 and names no
	 * symbol: it boots, untraced.
	 */
	const char *unplaced;
	size_t relocations;		/* raw relocatable arm64 Image: relocations applied (image-reloc.c) */
	/*
	 * A raw relocatable arm64 Image's data symbols, which kallsyms lacks
	 * without KALLSYMS_ALL, recovered from its relocations and header
	 * (image-raw.c; 0: not found): __mcount_loc's bounds, the relocation
	 * table's (__rela_start, __rela_end), __init_end (__rela_end rounded
	 * up to the 64 KiB SEGMENT_ALIGN, where 6.1's linker script puts it,
	 * if the file holds zeros up to there) and _end (the header's
	 * image_size); and from its code, cpu_number (a64-percpu.c; any
	 * arm64 Image).
	 */
	struct {
		uint64_t start_mcount_loc, stop_mcount_loc, rela_start, rela_end, init_end, end;
		uint64_t cpu_number;
	} recovered;
	const uint8_t *setup;		/* bzImage: boot sector + setup, else NULL */
	size_t setup_size;
	uint16_t boot_version;		/* bzImage boot protocol version */
	enum codec codec;		/* payload codec (gzip for Image.gz); CODEC_NONE for a vmlinux or Image */
	uint8_t *vmlinux;		/* the ELF: points into file or is malloc'ed */
	size_t vmlinux_size;
	struct elf_image elf;
};

struct symtab;
/*
 * Adds to tab (not finished yet) each of img->recovered's symbols that it
 * does not name, as type 'D'; how many, or -ENOMEM.
 */
int image_add_recovered(const struct kernel_image *img, struct symtab *tab);

/* Reads and decodes a kernel file. Errors name the file and the problem. */
int image_open(const char *path, struct kernel_image *img, struct errbuf *err);
/* image_open_as's flags: a raw Image without kallsyms opens all the same (kernel_image.unplaced). */
#define IMAGE_OPEN_UNPLACED 1u
/* image_open with flags. */
int image_open_as(const char *path, unsigned flags, struct kernel_image *img, struct errbuf *err);
/* Same, on bytes already in memory (taken over by img; fuzzing, tests). */
int image_open_buffer(const char *name, uint8_t *data, size_t size,
		      struct kernel_image *img, struct errbuf *err);
void image_close(struct kernel_image *img);

/* "x86_64", "arm64", "riscv64", "loongarch64". */
const char *image_arch_name(enum image_arch arch);

/*
 * For a caller that handles one architecture (vmmtrace boot: x86_64 only):
 * 0, or -ENOEXEC with a line naming the file and what it is, e.g.
 * "vmlinux: ELF is for aarch64 (e_machine 183), not x86_64".
 */
int image_require_arch(const struct kernel_image *img, enum image_arch arch, struct errbuf *err);

#endif
