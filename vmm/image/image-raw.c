// SPDX-License-Identifier: GPL-2.0
/*
 * Raw kernel Images: arm64's `Image` (Documentation/arm64/booting.rst) and
 * riscv64's (Documentation/riscv/boot-image-header.rst). Each is vmlinux
 * through `objcopy -O binary`: its loaded bytes from the first to _edata,
 * starting with a 64-byte boot header, with no ELF headers and no symbols
 * but the kernel's own kallsyms tables. Nothing in the header says at which
 * virtual address the image is linked, so that is worked out from kallsyms
 * (raw_anchor_base; a relocatable arm64 Image is first relocated as its boot
 * code would: image-reloc.c), and the image is then presented to the rest
 * of the reader as a synthetic ELF: one PT_LOAD of its bytes at that
 * address, a .text section where _stext.._etext are and a .rodata section
 * holding the kallsyms tables. kallsyms_recover(), the symbol tables and
 * elf_vaddr_ptr() then work on it as on any vmlinux, unaware it was raw.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/image/image-raw.h"
#include "vmm/image/kallsyms.h"
#include "vmm/image/symtab.h"

/* The synthetic ELF's headers, then the image at a page-aligned offset. */
#define SYNTH_HDR	4096
#define PAGE		4096ull
/* 64-bit kernels are linked in the upper half of the address space. */
#define KERNEL_HALF	(1ull << 63)

enum { SH_NULL, SH_TEXT, SH_RODATA, SH_STRTAB, SH_BTF, SH_COUNT };
static const char synth_strtab[] = "\0.text\0.rodata\0.shstrtab\0.BTF";
static const uint32_t synth_name[SH_COUNT] = { 0, 1, 7, 15, 25 };

struct raw_header {
	enum image_arch arch;
	uint64_t text_offset;	/* load offset from the start of RAM */
	uint64_t image_size;	/* _end - first byte, bss included; 0: unknown */
	uint64_t flags;
	uint64_t entry;		/* file offset the header's jump lands on, or UINT64_MAX */
};

/* Where the synthetic ELF puts things, as virtual addresses. */
struct raw_view {
	uint64_t base;		/* the image's first byte */
	uint64_t text_lo, text_hi, ro_lo, ro_hi;
	size_t relocations;	/* applied by image_reloc_arm64 */
	struct image_reloc_found found;
	uint64_t btf_off, btf_size;	/* the kernel's BTF in the file (btf_size 0: none) */
	int no_kallsyms;		/* raw_place found no kallsyms tables at all */
};

static uint32_t le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return le32(p) | (uint64_t)le32(p + 4) << 32;
}

int image_raw_detect(const uint8_t *d, size_t size)
{
	if (size >= 0x3c && !memcmp(d + 0x38, "ARM\x64", 4))
		return IMAGE_ARCH_ARM64;
	/* magic2 since header version 0.2; the older magic is deprecated but kept. */
	if ((size >= 0x3c && !memcmp(d + 0x38, "RSC\x05", 4)) ||
	    (size >= 0x38 && !memcmp(d + 0x30, "RISCV\0\0\0", 8)))
		return IMAGE_ARCH_RISCV64;
	return -1;
}

static uint64_t jump_target(size_t at, int64_t imm, size_t size)
{
	return imm < -(int64_t)at || (uint64_t)((int64_t)at + imm) >= size
	       ? UINT64_MAX : (uint64_t)((int64_t)at + imm);
}

/* arm64: code1 (offset 4, after a nop or EFI's "MZ") is `b primary_entry`. */
static uint64_t arm64_entry(const uint8_t *d, size_t size)
{
	uint32_t insn = le32(d + 4);

	if ((insn & 0xfc000000) != 0x14000000)
		return UINT64_MAX;
	return jump_target(4, (int64_t)((int32_t)(insn << 6) >> 6) * 4, size);
}

/*
 * riscv: `j _start_kernel` (jal x0, or c.j if the assembler compressed it),
 * first or after EFI's "MZ" (c.li s4,-13).
 */
static uint64_t riscv_entry(const uint8_t *d, size_t size)
{
	size_t at = 0;

	for (int n = 0; n < 2; n++) {
		uint32_t insn = le32(d + at), h = insn & 0xffff;
		int32_t imm;

		if ((h & 3) != 3) {
			if ((h & 0xe003) != 0xa001) {	/* not c.j: skip it */
				at += 2;
				continue;
			}
			imm = (int32_t)((h >> 12 & 1) << 11 | (h >> 11 & 1) << 4 | (h >> 9 & 3) << 8 |
					(h >> 8 & 1) << 10 | (h >> 7 & 1) << 6 | (h >> 6 & 1) << 7 |
					(h >> 3 & 7) << 1 | (h >> 2 & 1) << 5);
			return jump_target(at, (int32_t)((uint32_t)imm << 20) >> 20, size);
		}
		if ((insn & 0xfff) != 0x06f) {		/* not jal x0: skip it */
			at += 4;
			continue;
		}
		imm = (int32_t)((insn >> 31 & 1) << 20 | (insn >> 21 & 0x3ff) << 1 |
				(insn >> 20 & 1) << 11 | (insn >> 12 & 0xff) << 12);
		return jump_target(at, (int32_t)((uint32_t)imm << 11) >> 11, size);
	}
	return UINT64_MAX;
}

/* Messages leave out what the file is: image.c prefixes "arm64 Image: " and the like. */
static int raw_header_parse(const uint8_t *d, size_t size, struct raw_header *h,
			    struct errbuf *err)
{
	h->arch = (enum image_arch)image_raw_detect(d, size);
	if (size < IMAGE_RAW_HEADER_SIZE)
		return err_set(err, ENOEXEC, "truncated (%zu bytes; the boot header alone is %d)",
			       size, IMAGE_RAW_HEADER_SIZE);
	h->text_offset = le64(d + 8);
	h->image_size = le64(d + 16);
	h->flags = le64(d + 24);
	/* Bit 0 of flags is the kernel's endianness on both arches. */
	if (h->flags & 1)
		return err_set(err, ENOEXEC, "big-endian (flags %#llx): not supported",
			       (unsigned long long)h->flags);
	if (h->image_size && h->image_size < size)
		return err_set(err, ENOEXEC, "the header's image_size %#llx is smaller than the file (%zu bytes)",
			       (unsigned long long)h->image_size, size);
	if (h->image_size > IMAGE_RAW_MAX_SIZE || h->text_offset > IMAGE_RAW_MAX_SIZE)
		return err_set(err, ENOEXEC, "the header's image_size %#llx or text_offset %#llx is beyond %llu MiB",
			       (unsigned long long)h->image_size, (unsigned long long)h->text_offset,
			       IMAGE_RAW_MAX_SIZE >> 20);
	h->entry = h->arch == IMAGE_ARCH_ARM64 ? arm64_entry(d, size) : riscv_entry(d, size);
	return 0;
}

/*
 * Where the image is linked. Base-relative kallsyms (every 6.1 arm64 and
 * riscv64 kernel: KALLSYMS_BASE_RELATIVE) stores kallsyms_relative_base as
 * a link-time address, so the decoded addresses are absolute even in a raw
 * image; what is missing is which of them is the image's first byte. Two
 * symbols whose place in the file is known say it:
 *  - the one the linker script puts at the first byte: arm64's _text
 *    (vmlinux.lds.S: ASSERT(_text == KIMAGE_VADDR)), riscv's _start;
 *  - the target of the jump the header starts with: arm64's
 *    `b primary_entry` at offset 4, riscv's `j _start_kernel`.
 * Kernels without CONFIG_KALLSYMS_ALL keep only text symbols, so not the
 * first kind nor riscv's _start_kernel (.head.text); arm64's primary_entry
 * is init text, always kept. Those found must agree, on a page-aligned
 * upper-half address (kernel_address). A relocatable arm64 kernel holds 0
 * as its relative base until its boot code relocates it, so its addresses
 * count from its lowest symbol: raw_place then applies its relocations
 * (image-reloc.c) and decodes again.
 */
static int raw_anchor_base(const struct raw_header *h, const struct symtab *tab,
			   uint64_t *base, const char **by, struct errbuf *err)
{
	int arm = h->arch == IMAGE_ARCH_ARM64;
	const char *name[2] = { arm ? "_text" : "_start", arm ? "primary_entry" : "_start_kernel" };
	uint64_t off[2] = { 0, h->entry };

	*by = NULL;
	for (int i = 0; i < 2; i++) {
		const struct symbol *s = off[i] == UINT64_MAX ? NULL : symtab_find_name(tab, name[i]);

		if (!s)
			continue;
		if (*by && s->addr - off[i] != *base)
			return err_set(err, ENOEXEC, "kallsyms puts the image at %#llx by %s but at %#llx by %s (at +%#llx)",
				       (unsigned long long)*base, *by,
				       (unsigned long long)(s->addr - off[i]), name[i],
				       (unsigned long long)off[i]);
		*base = s->addr - off[i];
		*by = name[i];
	}
	if (!*by)
		return err_set(err, ENOEXEC, "cannot tell where the image is linked: its kallsyms has neither %s nor %s%s",
			       name[0], name[1], h->entry == UINT64_MAX ? " (and the header's first jump is not one)"
			       : " (the header's jump target)");
	return 0;
}

static int kernel_address(uint64_t base)
{
	return base % PAGE == 0 && base >= KERNEL_HALF && base <= UINT64_MAX - IMAGE_RAW_MAX_SIZE;
}

/* The header's image_size must be _end's distance from the first byte. */
static int raw_check_end(const struct raw_header *h, const struct symtab *tab, uint64_t base,
			 struct errbuf *err)
{
	const struct symbol *end = symtab_find_name(tab, "_end");

	if (!h->image_size || !end || end->addr - base == h->image_size)
		return 0;
	return err_set(err, ENOEXEC, "the header's image_size %#llx disagrees with kallsyms (_end is %#llx past the first byte)",
		       (unsigned long long)h->image_size, (unsigned long long)(end->addr - base));
}

/* File offsets [lo, hi) spanned by the kallsyms tables (decoded at address 0). */
static void table_span(const struct kallsyms_layout *l, uint64_t *lo, uint64_t *hi)
{
	uint64_t n = l->num_syms, w = l->addressing == KALLSYMS_ABSOLUTE ? 8 : 4;
	const uint64_t t[][2] = {
		{ l->addresses_va, n * w }, { l->relative_base_va, 8 }, { l->num_syms_va, 8 },
		{ l->names_va, 1 }, { l->markers_va, l->markers_width }, { l->seqs_va, n * l->seqs_width },
		{ l->token_table_va, 1 }, { l->token_index_va, 512 },
	};

	*lo = UINT64_MAX;
	*hi = 0;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (!t[i][0])
			continue;	/* absent (a table cannot sit at offset 0: the header does) */
		*lo = t[i][0] < *lo ? t[i][0] : *lo;
		*hi = t[i][0] + t[i][1] > *hi ? t[i][0] + t[i][1] : *hi;
	}
}

static uint64_t sym_addr(const struct symtab *tab, const char *name)
{
	const struct symbol *s = symtab_find_name(tab, name);

	return s ? s->addr : 0;
}

/*
 * .text is _stext.._etext (kallsyms_recover checks _stext against its
 * start). .rodata is __start_rodata..__end_rodata when kallsyms has them
 * (CONFIG_KALLSYMS_ALL), else from _etext, else the whole image: the first
 * of these that holds the kallsyms tables, where kallsyms_recover looks.
 */
static int raw_sections(const struct symtab *tab, const struct kallsyms_layout *lay,
			size_t size, struct raw_view *v, struct errbuf *err)
{
	uint64_t end = v->base + size, etext = sym_addr(tab, "_etext"), lo, hi;
	const uint64_t ro[3][2] = {
		{ sym_addr(tab, "__start_rodata"), sym_addr(tab, "__end_rodata") },
		{ etext, end }, { v->base, end },
	};

	v->text_lo = sym_addr(tab, "_stext");
	if (v->text_lo < v->base || v->text_lo >= end)
		return err_set(err, ENOEXEC, "kallsyms' _stext (%#llx) is not in the image (%#llx..%#llx)",
			       (unsigned long long)v->text_lo, (unsigned long long)v->base,
			       (unsigned long long)end);
	v->text_hi = etext > v->text_lo && etext <= end ? etext : end;
	table_span(lay, &lo, &hi);
	for (int i = 0; i < 3; i++) {
		if (ro[i][0] < v->base || ro[i][1] > end || ro[i][0] > v->base + lo ||
		    ro[i][1] < v->base + hi)
			continue;
		v->ro_lo = ro[i][0];
		v->ro_hi = ro[i][1];
		return 0;
	}
	return err_set(err, ENOEXEC, "the kallsyms tables (+%#llx..+%#llx) are not in the image",
		       (unsigned long long)lo, (unsigned long long)hi);
}

static void synth_section(Elf64_Shdr *sh, unsigned i, uint32_t type, uint64_t flags,
			  uint64_t addr, uint64_t off, uint64_t size)
{
	sh[i] = (Elf64_Shdr){ .sh_name = synth_name[i], .sh_type = type, .sh_flags = flags,
			      .sh_addr = addr, .sh_offset = off, .sh_size = size, .sh_addralign = 1 };
}

/* The ELF headers of the view, into the first SYNTH_HDR bytes of buf. */
static void synth_headers(uint8_t *buf, const struct raw_header *h, const struct raw_view *v,
			  size_t size)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
	Elf64_Phdr *ph = (Elf64_Phdr *)(eh + 1);
	Elf64_Shdr *sh = (Elf64_Shdr *)(ph + 1);
	char *str = (char *)(sh + SH_COUNT);

	_Static_assert(sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr) + SH_COUNT * sizeof(Elf64_Shdr) +
		       sizeof(synth_strtab) <= SYNTH_HDR, "synthetic ELF headers fit");
	memset(buf, 0, SYNTH_HDR);
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_EXEC;
	eh->e_machine = h->arch == IMAGE_ARCH_ARM64 ? EM_AARCH64 : EM_RISCV;
	eh->e_version = EV_CURRENT;
	eh->e_entry = v->base;		/* both boot protocols enter at the first byte */
	eh->e_phoff = sizeof(*eh);
	eh->e_shoff = sizeof(*eh) + sizeof(*ph);
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 1;
	eh->e_shentsize = sizeof(*sh);
	eh->e_shnum = SH_COUNT;
	eh->e_shstrndx = SH_STRTAB;
	*ph = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_W | PF_X, .p_offset = SYNTH_HDR,
			    .p_vaddr = v->base, .p_paddr = h->text_offset, .p_filesz = size,
			    .p_memsz = h->image_size ? h->image_size : size, .p_align = PAGE };
	synth_section(sh, SH_TEXT, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, v->text_lo,
		      SYNTH_HDR + (v->text_lo - v->base), v->text_hi - v->text_lo);
	synth_section(sh, SH_RODATA, SHT_PROGBITS, SHF_ALLOC, v->ro_lo,
		      SYNTH_HDR + (v->ro_lo - v->base), v->ro_hi - v->ro_lo);
	synth_section(sh, SH_STRTAB, SHT_STRTAB, 0, 0, (uint64_t)(str - (char *)buf), sizeof(synth_strtab));
	memcpy(str, synth_strtab, sizeof(synth_strtab));
	if (v->btf_size)
		synth_section(sh, SH_BTF, SHT_PROGBITS, 0, v->base + v->btf_off, SYNTH_HDR + v->btf_off, v->btf_size);
	else
		eh->e_shnum = SH_BTF;	/* no .BTF section */
}

/*
 * The kernel's BTF (CONFIG_DEBUG_INFO_BTF: .BTF, 4-byte aligned, between
 * __start_BTF and __stop_BTF, which kallsyms does not name): a header
 * with BTF's magic, version 1, 24 bytes, its types at 0 and its strings
 * right after them, within the file; the largest such blob, over 64 KiB
 * (Debian 6.1.0-56 arm64: one, 4.8 MB). libbpf checks it when it is read.
 */
static void raw_find_btf(const uint8_t *d, size_t size, struct raw_view *v)
{
	static const uint8_t magic[8] = { 0x9f, 0xeb, 1, 0, 24, 0, 0, 0 };

	v->btf_off = v->btf_size = 0;
	for (size_t off = 0; off + 24 <= size; off += 4) {
		uint64_t type_off, type_len, str_off, str_len, total;

		if (memcmp(d + off, magic, sizeof(magic)))
			continue;
		type_off = le32(d + off + 8);
		type_len = le32(d + off + 12);
		str_off = le32(d + off + 16);
		str_len = le32(d + off + 20);
		total = 24 + str_off + str_len;
		if (type_off || str_off != type_len || total > size - off || total < 65536 || total <= v->btf_size)
			continue;
		v->btf_off = off;
		v->btf_size = total;
	}
}

/* kallsyms of the raw bytes, decoded at address 0; tab is finished. */
static int raw_decode(const uint8_t *d, size_t size, struct symtab *tab,
		      struct kallsyms_layout *lay, struct errbuf *err)
{
	int rc;

	symtab_init(tab);
	rc = kallsyms_decode_raw(d, size, tab, lay, err);
	if ((rc == -ENOENT || rc == -EPROTO) && err) {
		char msg[sizeof(err->msg)];

		memcpy(msg, err->msg, sizeof(msg));
		err_set(err, -rc, "%s; without them a raw Image cannot be placed (give its vmlinux instead)", msg);
	}
	if (!rc && lay->addressing == KALLSYMS_PLACE_RELATIVE)
		rc = err_set(err, ENOEXEC, "its kallsyms offsets are place-relative (7.0+): no absolute address to place a raw Image by");
	if (!rc && symtab_finish(tab))
		rc = err_set(err, ENOMEM, "out of memory for the kallsyms symbols");
	return rc;
}

/* A relocatable arm64 Image: relocate d, decode again, check the anchors agree. */
static int raw_relocate(uint8_t *d, size_t size, const struct raw_header *h, struct symtab *tab,
			struct kallsyms_layout *lay, struct raw_view *v, struct errbuf *err)
{
	uint64_t lowest = -v->base, linked = 0;	/* the anchors' offsets count from the lowest */
	const char *by;
	int rc;

	symtab_destroy(tab);
	rc = image_reloc_arm64(d, size, lay->relative_base_va, lowest, &linked, &v->relocations, &v->found, err);
	if (!rc)
		rc = raw_decode(d, size, tab, lay, err);
	if (!rc)
		rc = raw_anchor_base(h, tab, &v->base, &by, err);
	if (!rc && v->base != linked)
		rc = err_set(err, ENOEXEC, "relocated for %#llx, its kallsyms puts the image at %#llx by %s",
			     (unsigned long long)linked, (unsigned long long)v->base, by);
	return rc;
}

/* What a relocatable Image's relocations and header say of its data symbols (image.h). */
static void raw_recovered(struct kernel_image *img, const struct raw_header *h, const struct raw_view *v,
			  const uint8_t *d, size_t size)
{
	const uint64_t segment_align = 64 << 10;
	uint64_t init_end, at;

	memset(&img->recovered, 0, sizeof(img->recovered));
	/* Per-CPU data lies in the image after its text (arm64: in the init data). */
	if (h->arch == IMAGE_ARCH_ARM64 && v->text_hi <= v->base + size)
		img->recovered.cpu_number = image_a64_cpu_number(d + (v->text_lo - v->base), v->text_hi - v->text_lo,
								 v->text_lo, v->text_hi, v->base + size);
	if (!v->relocations)
		return;
	img->recovered.rela_start = v->found.rela_start;
	img->recovered.rela_end = v->found.rela_end;
	img->recovered.start_mcount_loc = v->found.mcount_start;
	img->recovered.stop_mcount_loc = v->found.mcount_stop;
	if (h->image_size)
		img->recovered.end = v->base + h->image_size;
	init_end = (v->found.rela_end + segment_align - 1) & ~(segment_align - 1);
	for (at = v->found.rela_end - v->base; at < init_end - v->base && at < size && !d[at]; at++)
		;
	if (at == init_end - v->base)
		img->recovered.init_end = init_end;
}

/* Decodes kallsyms from the image's bytes d (relocated if need be) and works out the view. */
static int raw_place(uint8_t *d, size_t size, const struct raw_header *h,
		     struct raw_view *v, struct errbuf *err)
{
	struct kallsyms_layout lay;
	struct symtab tab;
	const char *by = NULL;
	int rc;

	rc = raw_decode(d, size, &tab, &lay, err);
	v->no_kallsyms = rc == -ENOENT;
	if (!rc)
		rc = raw_anchor_base(h, &tab, &v->base, &by, err);
	if (!rc && !kernel_address(v->base) && h->arch == IMAGE_ARCH_ARM64 &&
	    lay.relative_base_va && !lay.relative_base)
		rc = raw_relocate(d, size, h, &tab, &lay, v, err);
	if (!rc && !kernel_address(v->base))
		rc = err_set(err, ENOEXEC, "kallsyms puts the image at %#llx (by %s), not a page-aligned kernel address",
			     (unsigned long long)v->base, by);
	if (!rc)
		rc = raw_check_end(h, &tab, v->base, err);
	if (!rc)
		rc = raw_sections(&tab, &lay, size, v, err);
	symtab_destroy(&tab);
	return rc;
}

int image_raw_open(struct kernel_image *img, const uint8_t *raw, size_t size, unsigned flags,
		   struct errbuf *err)
{
	struct raw_header h = { 0 };
	struct raw_view v = { 0 };
	uint8_t *buf;
	int rc;

	rc = raw_header_parse(raw, size, &h, err);
	if (rc)
		return rc;
	/* The copy is what gets placed: a relocatable Image is relocated in it. */
	buf = aligned_alloc(8, (SYNTH_HDR + size + 7) & ~(size_t)7);
	if (!buf)
		return err_set(err, ENOMEM, "out of memory for a %zu-byte Image", size);
	memcpy(buf + SYNTH_HDR, raw, size);
	rc = raw_place(buf + SYNTH_HDR, size, &h, &v, err);
	if (rc && v.no_kallsyms && (flags & IMAGE_OPEN_UNPLACED)) {
		/* Unplaced: its first byte at 0, all of it text, no symbol (image.h). */
		img->unplaced = "it has no kallsyms tables (a kernel built without CONFIG_KALLSYMS) to place it by";
		memset(&v, 0, sizeof(v));
		v.text_hi = v.ro_hi = size;
		rc = 0;
	}
	if (!rc) {
		raw_find_btf(buf + SYNTH_HDR, size, &v);
		synth_headers(buf, &h, &v, size);
		rc = elf_parse(buf, SYNTH_HDR + size, h.arch == IMAGE_ARCH_ARM64 ? EM_AARCH64 : EM_RISCV,
			       &img->elf, err);
	}
	if (rc) {
		free(buf);
		return rc;
	}
	img->vmlinux = buf;
	img->vmlinux_size = SYNTH_HDR + size;
	img->arch = h.arch;
	img->is_raw = 1;
	img->relocations = v.relocations;
	raw_recovered(img, &h, &v, buf + SYNTH_HDR, size);
	return 0;
}

/* The address of the symbol called name in tab (not finished: searched in turn), or 0. */
static uint64_t raw_tab_find(const struct symtab *tab, const char *name)
{
	for (size_t j = 0; j < tab->count; j++)
		if (!strcmp(tab->names + tab->syms[j].name, name))
			return tab->syms[j].addr;
	return 0;
}

/* arm64: swapper_pg_dir from head.S's code when kallsyms has no data symbols (a64-percpu.c). */
static uint64_t raw_swapper_pg_dir(const struct kernel_image *img, const struct symtab *tab)
{
	uint64_t sec = raw_tab_find(tab, "secondary_startup"), pri = raw_tab_find(tab, "__primary_switch");
	const size_t len = 32 * 4;

	if (img->arch != IMAGE_ARCH_ARM64 || !img->is_raw || !sec || !pri)
		return 0;
	return image_a64_swapper_pg_dir(elf_vaddr_ptr(&img->elf, sec, len), len, sec,
					elf_vaddr_ptr(&img->elf, pri, len), len, pri);
}

int image_add_recovered(const struct kernel_image *img, struct symtab *tab)
{
	const struct { const char *name; uint64_t addr; } want[] = {
		{ "__start_mcount_loc", img->recovered.start_mcount_loc },
		{ "__stop_mcount_loc", img->recovered.stop_mcount_loc },
		{ "__rela_start", img->recovered.rela_start }, { "__rela_end", img->recovered.rela_end },
		{ "__init_end", img->recovered.init_end }, { "_end", img->recovered.end },
		{ "cpu_number", img->recovered.cpu_number },
		{ "swapper_pg_dir", raw_tab_find(tab, "swapper_pg_dir") ? 0 : raw_swapper_pg_dir(img, tab) },
	};
	int added = 0;

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		if (!want[i].addr)
			continue;
		if (raw_tab_find(tab, want[i].name))
			continue;
		if (symtab_add(tab, want[i].addr, 'D', want[i].name, strlen(want[i].name)))
			return -ENOMEM;
		added++;
	}
	return added;
}
