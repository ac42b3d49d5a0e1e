// SPDX-License-Identifier: GPL-2.0
/*
 * Raw arm64 and riscv64 Images through image_open (vmm/image/image-raw.c):
 * small fake Images, a boot header in front of kallsyms tables built by
 * tests/fuzz/kallsyms-gen.h, opened plain and gzip'ed, with the link address
 * found by each of its two anchors; then hostile ones (truncated headers, a
 * lying image_size, anchors that disagree, no kallsyms, gzip of garbage),
 * each a one-line error naming the file, never a crash. The lean kernels'
 * Images: test-image-raw-lean.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/kallsyms-gen.h"
#include "tests/unit/check.h"
#include "tests/unit/fixtures.h"
#include "tests/unit/image-files.h"
#include "vmm/image/image.h"
#include "vmm/image/kallsyms.h"

#define BASE_ARM64	0xffffffc008000000ull
#define BASE_RISCV	0xffffffff80000000ull
#define STEXT_OFF	0x1000u
#define ETEXT_OFF	0x3000u
#define TABLES_OFF	0x4000u
#define BSS_SIZE	0x10000u
#define NFUNCS		400
#define RISCV_TEXT_OFFSET 0x200000u
#define HEADER_SIZE	64u	/* both boot headers */

#define PTRS_OFF	0x3c00u	/* pointers to functions, relocated (rela) */
#define NPTRS		20
#define RELA_SIZE	24

static struct kgen_sym syms[NFUNCS + 16];
static size_t nsyms;		/* in syms, for the fake Image made last */
static struct fx_buf linked;	/* its bytes as linked (relocated), for check_view */

/* How to make one fake Image. */
struct fake {
	enum image_arch arch;
	int no_first;		/* no _text/_start symbol (no CONFIG_KALLSYMS_ALL) */
	int no_jump;		/* the header does not start with a jump */
	uint32_t entry;		/* where the jump lands; 0: where the entry symbol is */
	int riscv_form;		/* 0: EFI "MZ" then jal, 1: jal first, 2: c.j first */
	int relocatable;	/* symbols linked at 0: a relative base of 0, nothing to fill it in */
	int64_t size_delta;	/* added to the header's image_size */
	int place_relative;	/* 7.0's kallsyms: names first, place-relative offsets */
	/*
	 * Relocatable (arm64 CONFIG_RELOCATABLE): absolute words are 0 in the
	 * file, an R_AARCH64_RELATIVE table fills them in. 2: the table lacks
	 * kallsyms_relative_base's entry; 3: two entries could be it.
	 */
	int rela;
};

static uint32_t entry_off(enum image_arch arch)
{
	/* arm64's primary_entry is init text; riscv's _start_kernel head text. */
	return arch == IMAGE_ARCH_ARM64 ? 0x3800 : 0x400;
}

static uint64_t fake_base(const struct fake *f)
{
	/* kallsyms-gen.h makes place-relative offsets for tables at KGEN_VA. */
	if (f->place_relative)
		return KGEN_VA - TABLES_OFF;
	return f->relocatable ? 0 : f->arch == IMAGE_ARCH_ARM64 ? BASE_ARM64 : BASE_RISCV;
}

/* The symbols, sorted by address; end is the file's size + bss. */
static size_t fake_symbols(const struct fake *f, uint64_t tables_end, uint64_t end)
{
	int arm = f->arch == IMAGE_ARCH_ARM64;
	uint64_t b = fake_base(f);
	size_t n = 0;

	if (!f->no_first)
		syms[n++] = (struct kgen_sym){ b, 'T', "_text" };
	if (!f->no_first && !arm)
		strcpy(syms[n - 1].name, "_start");
	if (!arm)
		syms[n++] = (struct kgen_sym){ b + entry_off(f->arch), 'T', "_start_kernel" };
	syms[n++] = (struct kgen_sym){ b + STEXT_OFF, 'T', "_stext" };
	for (int i = 0; i < NFUNCS; i++) {
		syms[n] = (struct kgen_sym){ b + STEXT_OFF + 0x10 * (uint64_t)i, i % 3 ? 'T' : 't', "" };
		snprintf(syms[n++].name, sizeof(syms[0].name), "raw_func_%d", i);
	}
	syms[n++] = (struct kgen_sym){ b + ETEXT_OFF, 'T', "_etext" };
	if (arm)
		syms[n++] = (struct kgen_sym){ b + entry_off(f->arch), 'T', "primary_entry" };
	syms[n++] = (struct kgen_sym){ b + TABLES_OFF, 'D', "__start_rodata" };
	syms[n++] = (struct kgen_sym){ b + tables_end, 'D', "__end_rodata" };
	syms[n++] = (struct kgen_sym){ b + end, 'B', "_end" };
	return n;
}

static void put_le64(uint8_t *p, uint64_t v)
{
	fx_put_le32(p, (uint32_t)v);
	fx_put_le32(p + 4, (uint32_t)(v >> 32));
}

static uint64_t le64_of(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint32_t jal(int32_t imm)
{
	uint32_t u = (uint32_t)imm;

	return 0x6f | (u >> 20 & 1) << 31 | (u >> 1 & 0x3ff) << 21 | (u >> 11 & 1) << 20 |
	       (u >> 12 & 0xff) << 12;
}

static uint16_t c_j(int32_t imm)
{
	uint32_t u = (uint32_t)imm;

	return (uint16_t)(0xa001 | (u >> 11 & 1) << 12 | (u >> 4 & 1) << 11 | (u >> 8 & 3) << 9 |
			  (u >> 10 & 1) << 8 | (u >> 6 & 1) << 7 | (u >> 7 & 1) << 6 |
			  (u >> 1 & 7) << 3 | (u >> 5 & 1) << 2);
}

static void fake_header(const struct fake *f, uint8_t *d, uint64_t image_size)
{
	uint32_t to = f->entry ? f->entry : entry_off(f->arch);

	if (f->arch == IMAGE_ARCH_ARM64) {
		fx_put_le32(d, 0xd503201f);	/* nop */
		fx_put_le32(d + 4, f->no_jump ? 0xd503201f : 0x14000000 | ((to - 4) / 4 & 0x3ffffff));
		put_le64(d + 24, 0xa);		/* little-endian, 4K pages, anywhere */
		memcpy(d + 0x38, "ARM\x64", 4);
	} else {
		if (f->riscv_form == 0) {
			fx_put_le16(d, 0x5a4d);	/* "MZ": c.li s4,-13 */
			fx_put_le32(d + 2, f->no_jump ? 0x13 : jal((int32_t)to - 2));
		} else if (f->riscv_form == 1) {
			fx_put_le32(d, f->no_jump ? 0x13 : jal((int32_t)to));
		} else {
			fx_put_le16(d, c_j((int32_t)to));
		}
		put_le64(d + 8, RISCV_TEXT_OFFSET);
		fx_put_le32(d + 32, 2);		/* header version 0.2 */
		memcpy(d + 0x30, "RISCV\0\0\0", 8);
		memcpy(d + 0x38, "RSC\x05", 4);
	}
	put_le64(d + 16, image_size);
}

static void put_rela(uint8_t *p, uint64_t where, uint64_t value)
{
	put_le64(p, where);
	put_le64(p + 8, 1027);		/* R_AARCH64_RELATIVE */
	put_le64(p + 16, value);
}

/*
 * A relocatable Image's file from its linked bytes: the relocated words
 * (kallsyms_relative_base and NPTRS pointers) zeroed, the table after the
 * kallsyms tables at rela.
 */
static void fake_relocatable(const struct fake *f, uint8_t *d, size_t relbase, size_t rela)
{
	uint64_t b = fake_base(f);
	uint8_t *t = d + rela;

	if (f->rela != 2) {
		put_rela(t, b + relbase, le64_of(d + relbase));
		t += RELA_SIZE;
	}
	if (f->rela == 3) {
		put_rela(t, b + relbase + 0x1000, le64_of(d + relbase) + 0x1000);
		t += RELA_SIZE;
	}
	memset(d + relbase, 0, 8);
	for (unsigned i = 0; i < NPTRS; i++, t += RELA_SIZE) {
		put_rela(t, b + PTRS_OFF + 8 * i, le64_of(d + PTRS_OFF + 8 * i));
		memset(d + PTRS_OFF + 8 * i, 0, 8);
	}
}

/* A fake Image; out->len is the file's size, `linked` its bytes as linked. */
static void fake_image(const struct fake *f, struct fx_buf *out)
{
	struct kgen_opts opts = { .mode = KALLSYMS_BASE_RELATIVE, .uleb = 1, .markers_width = 4,
				  .seqs_width = 3 };
	size_t n, len, tables;
	struct kgen_out o;

	if (f->place_relative) {
		opts.names_first = 1;
		opts.mode = KALLSYMS_PLACE_RELATIVE;
	}
	/* The tables' size does not depend on the addresses: measure, then build. */
	n = fake_symbols(f, 0, 0);
	kgen_build(syms, n, &opts, &o);
	tables = TABLES_OFF + ((o.size + 7) & ~(size_t)7);
	len = tables + (f->rela ? (NPTRS + 2) * RELA_SIZE : 0);
	free(o.data);
	n = fake_symbols(f, len, len + BSS_SIZE);
	kgen_build(syms, n, &opts, &o);
	nsyms = n;
	out->len = len;
	out->data = calloc(1, len);
	fake_header(f, out->data, (uint64_t)((int64_t)(len + BSS_SIZE) + f->size_delta));
	memcpy(out->data + STEXT_OFF, "STEXT!!!", 8);
	for (unsigned i = 0; i < NPTRS; i++)
		put_le64(out->data + PTRS_OFF + 8 * i, syms[2 + i].addr);
	memcpy(out->data + TABLES_OFF, o.data, o.size);
	fx_free(&linked);
	linked = fx_dup(out);
	if (f->rela) {
		fake_relocatable(f, out->data, TABLES_OFF + o.relbase, tables);
		memcpy(linked.data + tables, out->data + tables, len - tables);	/* the table */
	}
	free(o.data);
}

static int same_as_built(const struct symtab *tab)
{
	if (!CHECK_QUIET(tab->count == nsyms, "decoded %zu symbols, built %zu", tab->count, nsyms))
		return 0;
	for (size_t i = 0; i < nsyms; i++) {
		const struct symbol *g = &tab->syms[i];

		if (!CHECK_QUIET(g->addr == syms[i].addr && g->type == syms[i].type &&
				 !strcmp(symtab_name(tab, g), syms[i].name),
				 "symbol %zu: got %llx %c %s, want %llx %c %s", i,
				 (unsigned long long)g->addr, g->type, symtab_name(tab, g),
				 (unsigned long long)syms[i].addr, syms[i].type, syms[i].name))
			return 0;
	}
	return 1;
}

/* The synthetic ELF of an opened fake: header, segment, sections, bytes, kallsyms. */
static void check_view(const char *name, const struct kernel_image *img, const struct fake *f,
		       const struct fx_buf *file)
{
	const struct elf_image *e = &img->elf;
	const Elf64_Phdr *ph = e->phdr;
	const Elf64_Shdr *text = elf_section(e, ".text"), *ro = elf_section(e, ".rodata");
	int arm = f->arch == IMAGE_ARCH_ARM64, ok = 1;
	uint64_t b = fake_base(f), pa = 0, toff = arm ? 0 : RISCV_TEXT_OFFSET;
	const uint8_t *p = elf_vaddr_ptr(e, b + STEXT_OFF, 8);
	struct kallsyms_layout l;
	struct symtab tab;
	struct errbuf err = { "" };

	ok &= CHECK_QUIET(img->arch == f->arch && img->is_raw && !img->is_bzimage &&
			  e->ehdr->e_machine == (arm ? EM_AARCH64 : EM_RISCV) &&
			  e->ehdr->e_entry == b && e->ehdr->e_phnum == 1, "%s: ELF header", name);
	ok &= CHECK_QUIET(ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && ph->p_vaddr == b &&
			  ph->p_paddr == toff && ph->p_filesz == file->len &&
			  ph->p_memsz == file->len + BSS_SIZE, "%s: the PT_LOAD", name);
	ok &= CHECK_QUIET(p && !memcmp(p, "STEXT!!!", 8), "%s: the bytes at _stext", name);
	p = elf_vaddr_ptr(e, b, file->len);
	ok &= CHECK_QUIET(p && linked.len == file->len && !memcmp(p, linked.data, file->len) &&
			  !elf_vaddr_ptr(e, b + file->len, 1),
			  "%s: the image's bytes as linked at its link address, and no more", name);
	ok &= CHECK_QUIET(img->relocations == (f->rela ? NPTRS + 1u : 0), "%s: %zu relocations applied",
			  name, img->relocations);
	ok &= CHECK_QUIET(!elf_vaddr_to_paddr(e, b + file->len + 0x10, &pa) &&
			  pa == toff + file->len + 0x10, "%s: bss maps to text_offset + offset", name);
	ok &= CHECK_QUIET(text && text->sh_addr == b + STEXT_OFF &&
			  text->sh_size == ETEXT_OFF - STEXT_OFF, "%s: .text is _stext.._etext", name);
	ok &= CHECK_QUIET(ro && ro->sh_addr == b + TABLES_OFF && ro->sh_size == file->len - TABLES_OFF,
			  "%s: .rodata is __start_rodata..__end_rodata", name);
	symtab_init(&tab);
	ok &= CHECK_QUIET(!kallsyms_recover(e, &tab, &l, &err), "%s: kallsyms_recover (%s)", name, err.msg) &&
	      !symtab_finish(&tab) && same_as_built(&tab);
	symtab_destroy(&tab);
	CHECK(ok, "%s: %s view at %#llx: segment, sections, bytes, kallsyms", name,
	      image_arch_name(f->arch), (unsigned long long)b);
}

static void expect_good(const char *name, const struct fake *f)
{
	struct fx_buf file = { 0 };
	struct kernel_image img;
	struct errbuf err = { "" };
	int rc;

	fake_image(f, &file);
	rc = open_file(name, &file, &img, &err);
	CHECK(rc == 0 && img.codec == CODEC_NONE, "%s opens (%s)", name, rc ? err.msg : "ok");
	if (!rc) {
		check_view(name, &img, f, &file);
		image_close(&img);
	}
	fx_free(&file);
}

/* Plain Images: either anchor alone places them; every riscv jump form decodes. */
static void test_good(void)
{
	const struct fake a = { .arch = IMAGE_ARCH_ARM64 };
	struct fake r = { .arch = IMAGE_ARCH_RISCV64 };
	struct kernel_image img;
	struct errbuf err = { "" };
	struct fx_buf file = { 0 };
	char name[64];

	expect_good("arm64-Image", &a);
	expect_good("arm64-Image-no-_text", &(struct fake){ .arch = IMAGE_ARCH_ARM64, .no_first = 1 });
	expect_good("arm64-Image-no-branch", &(struct fake){ .arch = IMAGE_ARCH_ARM64, .no_jump = 1 });
	expect_good("arm64-Image-relocatable", &(struct fake){ .arch = IMAGE_ARCH_ARM64, .rela = 1 });
	expect_good("arm64-Image-relocatable-no-_text",
		    &(struct fake){ .arch = IMAGE_ARCH_ARM64, .rela = 1, .no_first = 1 });
	for (r.riscv_form = 0; r.riscv_form < 3; r.riscv_form++) {
		r.no_first = 0;
		snprintf(name, sizeof(name), "riscv64-Image-form%d", r.riscv_form);
		expect_good(name, &r);
		r.no_first = 1;
		snprintf(name, sizeof(name), "riscv64-Image-form%d-no-_start", r.riscv_form);
		expect_good(name, &r);
	}
	expect_good("riscv64-Image-no-jump", &(struct fake){ .arch = IMAGE_ARCH_RISCV64, .no_jump = 1 });

	/* Only the deprecated magic (riscv header before version 0.2). */
	fake_image(&(struct fake){ .arch = IMAGE_ARCH_RISCV64 }, &file);
	memset(file.data + 0x38, 0, 4);
	CHECK(!open_file("riscv64-Image-old-magic", &file, &img, &err) && img.arch == IMAGE_ARCH_RISCV64,
	      "a riscv64 Image with only the deprecated magic opens (%s)", err.msg);
	if (img.file)
		image_close(&img);
	fx_free(&file);

	fake_image(&a, &file);
	CHECK(!open_file("arm64-Image-again", &file, &img, &err) &&
	      image_require_arch(&img, IMAGE_ARCH_X86_64, &err) == -ENOEXEC &&
	      strstr(err.msg, "arm64-Image-again: a raw arm64 Image, not x86_64"),
	      "an x86_64-only caller is told it is an arm64 Image (%s)", err.msg);
	if (img.file)
		image_close(&img);
	fx_free(&file);
	CHECK(!strcmp(image_arch_name(IMAGE_ARCH_X86_64), "x86_64") &&
	      !strcmp(image_arch_name(IMAGE_ARCH_ARM64), "arm64") &&
	      !strcmp(image_arch_name(IMAGE_ARCH_RISCV64), "riscv64"), "image_arch_name");
}

static int gzip(const struct fx_buf *in, struct fx_buf *out)
{
	return fx_compress(image_files_dir, &fx_codecs[0], in, 0, out);
}

/* Image.gz: the same view as the plain Image; gzip around anything else refused. */
static void test_gzip(void)
{
	static const enum image_arch arches[] = { IMAGE_ARCH_ARM64, IMAGE_ARCH_RISCV64 };
	struct fx_buf file = { 0 }, gz = { 0 }, junk = { 0 };
	struct kernel_image img;
	struct errbuf err = { "" };
	char name[64];
	int rc;

	for (int i = 0; i < 2; i++) {
		const struct fake f = { .arch = arches[i] };

		fake_image(&f, &file);
		snprintf(name, sizeof(name), "%s-Image.gz", image_arch_name(f.arch));
		rc = gzip(&file, &gz) ? -EIO : open_file(name, &gz, &img, &err);
		CHECK(rc == 0 && img.codec == CODEC_GZIP, "%s opens (%s)", name, rc ? err.msg : "ok");
		if (!rc) {
			check_view(name, &img, &f, &file);
			image_close(&img);
		}
		/* Cut short, and damaged in the middle: the codec's error, named. */
		junk = fx_dup(&gz);
		junk.len /= 2;
		snprintf(name, sizeof(name), "%s-Image.gz-cut", image_arch_name(f.arch));
		expect_bad(name, &junk, NULL);
		junk.len = gz.len;
		memset(junk.data + gz.len / 3, 0x55, gz.len / 3);
		snprintf(name, sizeof(name), "%s-Image.gz-corrupt", image_arch_name(f.arch));
		expect_bad(name, &junk, NULL);
		fx_free(&junk);
		/* A gzip'ed Image whose header was cut off. */
		file.len = 0x3c;
		fx_free(&gz);
		snprintf(name, sizeof(name), "%s-header.gz", image_arch_name(f.arch));
		if (!gzip(&file, &gz))
			expect_bad(name, &gz, "truncated");
		fx_free(&gz);
		fx_free(&file);
	}
	/* gzip that decompresses to garbage, and to an x86_64 ELF. */
	junk.data = malloc(65536);
	junk.len = 65536;
	fx_fill(junk.data, junk.len, 7);
	if (!gzip(&junk, &gz))
		expect_bad("garbage.gz", &gz, "gzip data, but not an arm64 or riscv64 Image");
	fx_free(&gz);
	fx_free(&junk);
	if (!fx_make_elf(0x4000, EM_X86_64, &junk) && !gzip(&junk, &gz))
		expect_bad("vmlinux.gz", &gz, "not an arm64 or riscv64 Image");
	fx_free(&gz);
	fx_free(&junk);
}

/* Expect name (made from f, then changed by poke at offset at) to fail with msg. */
static void expect_bad_fake(const char *name, const struct fake *f, size_t at, uint64_t poke,
			    const char *msg)
{
	struct fx_buf file = { 0 };

	fake_image(f, &file);
	if (at)
		put_le64(file.data + at, poke);
	expect_bad(name, &file, msg);
	fx_free(&file);
}

/* Where the image is linked: anchors that disagree, none, a relative base of 0. */
static void test_bad_anchors(void)
{
	expect_bad_fake("arm64-Image-branch-elsewhere",
			&(struct fake){ .arch = IMAGE_ARCH_ARM64, .entry = 0x3900 }, 0, 0,
			"by _text but at 0xffffffc007ffff00 by primary_entry");
	expect_bad_fake("riscv64-Image-jump-elsewhere",
			&(struct fake){ .arch = IMAGE_ARCH_RISCV64, .entry = 0x500 }, 0, 0,
			"by _start but at 0xffffffff7fffff00 by _start_kernel");
	expect_bad_fake("arm64-Image-no-anchor",
			&(struct fake){ .arch = IMAGE_ARCH_ARM64, .no_first = 1, .no_jump = 1 }, 0, 0,
			"cannot tell where the image is linked: its kallsyms has neither _text nor primary_entry");
	expect_bad_fake("riscv64-Image-no-anchor",
			&(struct fake){ .arch = IMAGE_ARCH_RISCV64, .no_first = 1, .no_jump = 1 }, 0, 0,
			"neither _start nor _start_kernel");
	expect_bad_fake("arm64-Image-linked-at-0", &(struct fake){ .arch = IMAGE_ARCH_ARM64, .relocatable = 1 },
			0, 0, "kallsyms_relative_base is 0, as in a relocatable kernel, but there is no table");
	expect_bad_fake("riscv64-Image-linked-at-0", &(struct fake){ .arch = IMAGE_ARCH_RISCV64, .relocatable = 1 },
			0, 0, "kallsyms puts the image at 0 (by _start_kernel), not a page-aligned kernel address");
	expect_bad_fake("arm64-Image-rela-without-relbase", &(struct fake){ .arch = IMAGE_ARCH_ARM64, .rela = 2 },
			0, 0, "none of its 20 relocations fills in kallsyms_relative_base");
	expect_bad_fake("arm64-Image-rela-two-relbases", &(struct fake){ .arch = IMAGE_ARCH_ARM64, .rela = 3 },
			0, 0, "two relocations could be kallsyms_relative_base's");
	expect_bad_fake("riscv64-Image-7.0", &(struct fake){ .arch = IMAGE_ARCH_RISCV64, .place_relative = 1 },
			0, 0, "place-relative (7.0+)");
	/* A branch past the end of the file is no anchor: _text alone decides. */
	expect_bad_fake("arm64-Image-branch-out-and-no-_text",
			&(struct fake){ .arch = IMAGE_ARCH_ARM64, .no_first = 1, .entry = 0x100000 }, 0, 0,
			"and the header's first jump is not one");
}

/* image_size lying about the size, and other header fields out of range. */
static void test_bad_header(void)
{
	const struct fake a = { .arch = IMAGE_ARCH_ARM64 }, r = { .arch = IMAGE_ARCH_RISCV64 };
	struct fx_buf file = { 0 };
	struct kernel_image img;
	struct errbuf err = { "" };
	int rc;

	expect_bad_fake("arm64-Image-size-small", &a, 16, 0x1000, "image_size 0x1000 is smaller than the file");
	expect_bad_fake("riscv64-Image-size-huge", &r, 16, 1ull << 40, "beyond 1024 MiB");
	expect_bad_fake("arm64-Image-size-wraps", &a, 16, UINT64_MAX, "beyond 1024 MiB");
	expect_bad_fake("riscv64-Image-text_offset-huge", &r, 8, 1ull << 62, "text_offset");
	expect_bad_fake("arm64-Image-size-off", &(struct fake){ .arch = IMAGE_ARCH_ARM64, .size_delta = 0x1000 },
			0, 0, "disagrees with kallsyms (_end is 0x");
	expect_bad_fake("arm64-Image-big-endian", &a, 24, 0xb, "arm64 Image: big-endian");
	expect_bad_fake("riscv64-Image-big-endian", &r, 24, 1, "riscv64 Image: big-endian");

	/* image_size 0 (arm64 before 3.17): unknown, so no bss beyond the file. */
	fake_image(&a, &file);
	put_le64(file.data + 16, 0);
	rc = open_file("arm64-Image-size-0", &file, &img, &err);
	CHECK(rc == 0 && img.elf.phdr->p_memsz == file.len,
	      "image_size 0: opens, the segment as large as the file (%s)", rc ? err.msg : "ok");
	if (!rc)
		image_close(&img);
	fx_free(&file);
}

/* Every prefix of a header, no kallsyms at all, damaged tables, random damage. */
static void test_truncated(void)
{
	static const enum image_arch arches[] = { IMAGE_ARCH_ARM64, IMAGE_ARCH_RISCV64 };
	struct fx_buf file = { 0 }, b;
	struct kernel_image img;
	struct errbuf err = { "" };
	char name[64];
	int ok = 1;

	for (int i = 0; i < 2; i++) {
		const char *an = image_arch_name(arches[i]);

		fake_image(&(struct fake){ .arch = arches[i] }, &file);
		for (size_t len = 0; len <= 0x200; len++) {
			b = fx_dup(&file);
			b.len = len;
			if (image_open_buffer("cut", b.data, b.len, &img, &err) == 0) {
				image_close(&img);
				ok &= CHECK_QUIET(0, "%s Image cut to %zu bytes opened", an, len);
			}
			ok &= CHECK_QUIET(!strchr(err.msg, '\n') && strstr(err.msg, "cut"),
					  "%s Image cut to %zu bytes: %s", an, len, err.msg);
		}
		CHECK(ok, "%s Image cut to 0..512 bytes: refused each time, in one line", an);
		file.len = 0x3c;
		snprintf(name, sizeof(name), "%s-header-cut", an);
		expect_bad(name, &file, "truncated");
		/* The header intact, then 64 KiB of zeros: no kallsyms. */
		b = (struct fx_buf){ calloc(1, 0x10000), 0x10000 };
		memcpy(b.data, file.data, HEADER_SIZE);
		put_le64(b.data + 16, 0x20000);
		snprintf(name, sizeof(name), "%s-no-kallsyms", an);
		expect_bad(name, &b, "no kallsyms tables found");
		/* Opened for an untraced boot: unplaced, at 0, all of it text, no symbol. */
		err.msg[0] = 0;
		if (image_open_as(path_of(name), IMAGE_OPEN_UNPLACED, &img, &err) == 0) {
			const Elf64_Shdr *text = elf_section(&img.elf, ".text");

			CHECK(img.unplaced && strstr(img.unplaced, "CONFIG_KALLSYMS") && img.arch == arches[i] &&
			      img.is_raw && img.elf.phdr->p_vaddr == 0 && img.elf.phdr->p_memsz == 0x20000 && text &&
			      text->sh_addr == 0 && text->sh_size == 0x10000 && !elf_section(&img.elf, ".symtab"),
			      "%s Image without kallsyms, IMAGE_OPEN_UNPLACED: opens unplaced, at 0, its text all of it", an);
			image_close(&img);
		} else {
			CHECK(0, "%s Image without kallsyms, IMAGE_OPEN_UNPLACED: %s", an, err.msg);
		}
		fx_free(&b);
		fx_free(&file);
	}
	/* The deprecated riscv magic alone, cut inside the header. */
	fake_image(&(struct fake){ .arch = IMAGE_ARCH_RISCV64 }, &file);
	file.len = 0x38;
	expect_bad("riscv64-old-header-cut", &file, "riscv64 Image: truncated (56 bytes");
	fx_free(&file);
}

/* Random bytes over random parts of a fake: opened or refused in one line, never a crash. */
static void test_random(void)
{
	struct fx_buf file = { 0 }, b;
	struct kernel_image img;
	struct errbuf err;
	int opened = 0, ok = 1;

	srand(12);
	for (int i = 0; i < 400; i++) {
		fake_image(&(struct fake){ .arch = i % 2 ? IMAGE_ARCH_RISCV64 : IMAGE_ARCH_ARM64 }, &file);
		b = fx_dup(&file);
		for (int k = 0; k < 1 + rand() % 8; k++) {
			/* Half the hits on the header, the rest anywhere. */
			size_t at = rand() % 2 ? (size_t)rand() % HEADER_SIZE : (size_t)rand() % b.len;

			b.data[at] = (uint8_t)rand();
		}
		err.msg[0] = 0;
		if (!image_open_buffer("random", b.data, b.len, &img, &err)) {
			opened++;
			image_close(&img);
		} else {
			ok &= CHECK_QUIET(err.msg[0] && !strchr(err.msg, '\n'), "damage %d: %s", i, err.msg);
		}
		fx_free(&file);
	}
	CHECK(ok, "400 randomly damaged fake Images: %d opened, the others refused in one line", opened);
}

int main(void)
{
	image_files_dir = fx_tmpdir();
	CHECK(image_files_dir != NULL, "make a temporary directory");
	if (!image_files_dir)
		return 1;
	test_good();
	test_gzip();
	test_bad_anchors();
	test_bad_header();
	test_truncated();
	test_random();
	fx_free(&linked);
	return check_exit();
}
