/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where the stub and its rings go inside an arm64 or riscv64 kernel's own
 * image (docs/STUB-PLACEMENT.md): read from the image and its symbols
 * alone, so that every host that boots such a kernel places them alike.
 * x86_64 and loongarch64 place theirs in a region of their own instead.
 */
#ifndef VMM_GUEST_STUB_PLACE_H
#define VMM_GUEST_STUB_PLACE_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/util/error.h"

struct elf_image;
struct symtab;

/* The stub's page and its doorbell's (guest-stub/<arch>/stub.S). */
#define STUB_CODE_ROOM 8192

/* The symbols that bound the places of an arch's stub. */
struct guest_place_syms {
	const char *code_end;		/* the stub fills the STUB_CODE_ROOM bytes below this symbol */
	const char *data_start, *data_end;
	/*
	 * Where the rings go when [data_start, data_end) is not known or
	 * empty (NULL: nowhere): memory the guest frees after the hand-over,
	 * so the rings must move then.
	 */
	const char *early_start, *early_end;
	uint64_t data_end_align;
	/*
	 * Without padding below code_end, the stub may take the start of
	 * [data_start, data_end) when code_past_end names a symbol that is not
	 * 2 MiB-aligned (riscv64: __init_data_begin, which STRICT_KERNEL_RWX
	 * aligns; without it the image's last block is executable throughout).
	 */
	const char *code_past_end;
	/*
	 * Without padding below code_end, nor code_past_end: the page at this
	 * symbol, the guard page the kernel leaves unmapped after its image
	 * (arm64: _end), when the early page tables map it (not 2 MiB-aligned)
	 * and the host can map it in the final ones.
	 */
	const char *code_guard;
};

/* By IMAGE_ARCH_*; NULL for an arch whose stub does not live in its image. */
const struct guest_place_syms *guest_place_syms(int image_arch);

/* Where guest_stub_place puts the stub's code. */
enum guest_code_place {
	GUEST_CODE_PADDING,		/* the STUB_CODE_ROOM bytes of padding below code_end */
	GUEST_CODE_PAST_END,		/* riscv64 without STRICT_KERNEL_RWX: past _end, in the image's last 2 MiB block */
	GUEST_CODE_GUARD,		/* arm64 without padding: the guard page at _end, one page (guest_arch_one_page) */
	GUEST_CODE_PADDING_PAGE,	/* arm64 with one page of padding below code_end: the one-page stub there */
};

struct guest_place {
	uint64_t code;			/* [code, code + STUB_CODE_ROOM), or one page (GUEST_CODE_GUARD, _PADDING_PAGE) */
	uint64_t data, data_end;	/* the rings' place, aligned to a record */
	int early;			/* the guest frees the rings' place after the hand-over */
	enum guest_code_place where;
};

/*
 * The places of image_arch's stub in elf. What the host offers: can_move,
 * a region the rings can move to at the hand-over; past_end, the bytes it
 * reserved past the image's end (for GUEST_CODE_PAST_END and _GUARD).
 * -ENOENT or -ENOSPC with a line saying what is missing.
 */
int guest_stub_place(int image_arch, const struct elf_image *elf, const struct symtab *syms, int can_move,
		     uint64_t past_end, struct guest_place *p, struct errbuf *err);

/*
 * The stub image for p (g: the one-page build for GUEST_CODE_GUARD and
 * _PADDING_PAGE; *size its bytes) and what every host checks of p: the
 * image fits its place, data_size bytes of rings fit theirs, and rings in
 * memory the guest frees have a region to move to (can_move). -EINVAL,
 * -ENOSPC or -E2BIG with a line.
 */
struct guest_arch;
int guest_stub_image(int image_arch, const struct guest_place *p, uint64_t data_size, int can_move,
		     const struct guest_arch **g, size_t *size, struct errbuf *err);

/* [va, va + len) is padding: the image holds zeros there and no symbol starts inside. */
int guest_is_padding(const struct elf_image *elf, const struct symtab *syms, uint64_t va, uint64_t len);

/* A symbol's address, 0 when the kernel has none of that name. */
uint64_t guest_sym(const struct symtab *syms, const char *name);

#endif
