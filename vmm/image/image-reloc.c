// SPDX-License-Identifier: GPL-2.0
/*
 * Relocatable arm64 Images (CONFIG_RELOCATABLE, as Debian's kernel is) are
 * linked -pie with --no-apply-dynamic-relocs: every absolute address in the
 * file, kallsyms_relative_base and __mcount_loc's entries included, is 0
 * until the boot code's __relocate_kernel applies the R_AARCH64_RELATIVE
 * entries of .rela.dyn (kept in the image, __rela_start..__rela_end) for
 * the KASLR offset. Applying them here with an offset of 0 gives the bytes
 * a nokaslr boot runs with, which a non-relocatable build has in its file.
 */
#include <errno.h>
#include <string.h>

#include "vmm/image/image-raw.h"

#define R_AARCH64_RELATIVE	1027
#define RELA_SIZE		24	/* Elf64_Rela: r_offset, r_info, r_addend */
/* Fewer entries in a row than this are not taken for the kernel's table. */
#define RELA_MIN_RUN		16
#define PAGE			4096ull
#define KERNEL_HALF		(1ull << 63)

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> 8 * i);
}

/*
 * .rela.dyn: the longest run of R_AARCH64_RELATIVE entries (Debian 6.1.0-56
 * has one of 187,633; other runs are stray words). The kernel applies only
 * that type too.
 */
static size_t rela_find(const uint8_t *d, size_t size, size_t *start)
{
	size_t best = 0;

	for (size_t p = 0; p + RELA_SIZE <= size; p += 8) {
		size_t q = p, n = 0;

		while (q + RELA_SIZE <= size && le64(d + q + 8) == R_AARCH64_RELATIVE) {
			q += RELA_SIZE;
			n++;
		}
		if (n > best) {
			best = n;
			*start = p;
		}
		if (n)
			p = q - 8;
	}
	return best;
}

/*
 * The link address, from the entry that relocates kallsyms_relative_base:
 * that word is at file offset relbase_off and points at the lowest kallsyms
 * symbol, lowest_off bytes into the image, so its r_offset - r_addend is
 * relbase_off - lowest_off whatever the link address, which is then
 * r_offset - relbase_off.
 */
static int rela_link_base(const uint8_t *rela, size_t n, uint64_t relbase_off,
			  uint64_t lowest_off, uint64_t *base, struct errbuf *err)
{
	uint64_t want = relbase_off - lowest_off;
	int found = 0;

	for (size_t i = 0; i < n; i++) {
		const uint8_t *e = rela + i * RELA_SIZE;
		uint64_t b = le64(e) - relbase_off;

		if (le64(e) - le64(e + 16) != want)
			continue;
		if (found && b != *base)
			return err_set(err, ENOEXEC, "relocatable arm64 Image: two relocations could be kallsyms_relative_base's (linked at %#llx or %#llx)",
				       (unsigned long long)*base, (unsigned long long)b);
		*base = b;
		found = 1;
	}
	if (!found)
		return err_set(err, ENOEXEC, "relocatable arm64 Image: none of its %zu relocations fills in kallsyms_relative_base",
			       n);
	if (*base % PAGE || *base < KERNEL_HALF || *base > UINT64_MAX - IMAGE_RAW_MAX_SIZE)
		return err_set(err, ENOEXEC, "relocatable arm64 Image: its relocations link it at %#llx, not a page-aligned kernel address",
			       (unsigned long long)*base);
	return 0;
}

#define A64_NOP			0xd503201fu
/* A table of patchable entries shorter than this is not taken for __mcount_loc. */
#define MCOUNT_MIN_RUN		64

static int a64_nop_pair(const uint8_t *d, size_t size, uint64_t off)
{
	return off <= size - 8 && (uint32_t)le64(d + off) == A64_NOP && (uint32_t)(le64(d + off) >> 32) == A64_NOP;
}

/*
 * __mcount_loc, found among the relocations: its words are filled by
 * consecutive entries (r_offset 8 bytes apart), each pointing at a
 * function's patchable entry, two NOPs as the compiler left them
 * (-fpatchable-function-entry=2). The longest such run (44,279 entries on
 * Debian's 6.1.0-56; the next longest, of other tables, is 451).
 */
static void rela_mcount(const uint8_t *d, size_t size, const uint8_t *rela, size_t n, uint64_t base,
			struct image_reloc_found *f)
{
	size_t best = 0, best_at = 0, run = 0;

	for (size_t i = 0; i < n; i++) {
		const uint8_t *e = rela + i * RELA_SIZE;
		int entry = le64(e + 16) >= base && a64_nop_pair(d, size, le64(e + 16) - base);

		if (entry && run && le64(e) == le64(e - RELA_SIZE) + 8)
			run++;
		else
			run = entry;
		if (run > best) {
			best = run;
			best_at = i + 1 - run;
		}
	}
	if (best >= MCOUNT_MIN_RUN) {
		f->mcount_start = le64(rela + best_at * RELA_SIZE);
		f->mcount_stop = f->mcount_start + best * 8;
	}
}

int image_reloc_arm64(uint8_t *d, size_t size, uint64_t relbase_off, uint64_t lowest_off,
		      uint64_t *base, size_t *applied, struct image_reloc_found *found, struct errbuf *err)
{
	size_t start = 0, n = rela_find(d, size, &start);
	int rc;

	*applied = 0;
	memset(found, 0, sizeof(*found));
	if (n < RELA_MIN_RUN)
		return err_set(err, ENOEXEC, "kallsyms_relative_base is 0, as in a relocatable kernel, but there is no table of R_AARCH64_RELATIVE relocations to fill it in");
	rc = rela_link_base(d + start, n, relbase_off, lowest_off, base, err);
	if (rc)
		return rc;
	/* Words past the file are bss; the table relocating itself is left alone. */
	for (size_t i = 0; i < n; i++) {
		const uint8_t *e = d + start + i * RELA_SIZE;
		uint64_t at = le64(e) - *base;

		if (le64(e) < *base || at > size - 8 ||
		    (at + 8 > start && at < start + n * RELA_SIZE))
			continue;
		put_le64(d + at, le64(e + 16));
		(*applied)++;
	}
	found->rela_start = *base + start;
	found->rela_end = found->rela_start + n * RELA_SIZE;
	rela_mcount(d, size, d + start, n, *base, found);
	return 0;
}
