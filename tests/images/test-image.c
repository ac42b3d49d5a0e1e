// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel files through image_open: fake bzImages around the fixture ELF
 * compressed by each codec's tool, a plain vmlinux, ELF lookups on the
 * result, hostile or damaged files (which must give an error naming the
 * file, never a crash), and the real kernels of the test cache.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/unit/check.h"
#include "tests/unit/fixtures.h"
#include "tests/unit/image-files.h"
#include "vmm/image/elf.h"
#include "vmm/image/image.h"

#define TEXT_SIZE (64u << 10)

static struct fx_buf elf;	/* the fixture vmlinux */

/*
 * An ELF of another supported arch opens as that arch; a caller that boots
 * x86_64 only (vmmtrace boot) is told what it is, in the words it always was.
 */
static void expect_other_arch(const char *name, const struct fx_buf *buf, enum image_arch arch,
			      const char *msg_part)
{
	struct kernel_image img;
	struct errbuf err = { "" };
	int rc = open_file(name, buf, &img, &err);

	CHECK(rc == 0 && img.arch == arch && !img.is_raw && !img.is_bzimage,
	      "%s opens as an ELF for %s (%s)", name, image_arch_name(arch), rc ? err.msg : "ok");
	if (rc)
		return;
	rc = image_require_arch(&img, IMAGE_ARCH_X86_64, &err);
	CHECK(rc == -ENOEXEC && strstr(err.msg, name) && strstr(err.msg, msg_part) &&
	      strstr(err.msg, "not x86_64"), "%s: not for an x86_64 caller (%s)", name, err.msg);
	CHECK(image_require_arch(&img, arch, &err) == 0, "%s: fine for a caller of %s", name,
	      image_arch_name(arch));
	image_close(&img);
}

static void check_lookups(const struct kernel_image *img, const char *what)
{
	const struct elf_image *e = &img->elf;
	uint64_t data_vaddr = fx_data_vaddr(TEXT_SIZE), pa = 0;
	const Elf64_Shdr *text = elf_section(e, ".text"), *bss = elf_section(e, ".bss");
	const uint8_t *p;
	int ok = 1;

	ok &= CHECK_QUIET(e->ehdr && e->ehdr->e_entry == FX_ENTRY && e->ehdr->e_phnum == FX_PHNUM,
			  "%s: ELF header", what);
	if (!ok)
		return;
	p = elf_vaddr_ptr(e, FX_TEXT_VADDR, 16);
	ok &= CHECK_QUIET(p == img->vmlinux + FX_TEXT_OFF, "%s: vaddr_ptr(text start)", what);
	p = elf_vaddr_ptr(e, FX_TEXT_VADDR + TEXT_SIZE - 8, 8);
	ok &= CHECK_QUIET(p && !memcmp(p, elf.data + FX_TEXT_OFF + TEXT_SIZE - 8, 8),
			  "%s: vaddr_ptr(last text bytes)", what);
	/* Contiguous in the file, but two segments: no single one holds it. */
	ok &= CHECK_QUIET(!elf_vaddr_ptr(e, FX_TEXT_VADDR + TEXT_SIZE - 8, 16),
			  "%s: vaddr_ptr across two segments", what);
	p = elf_vaddr_ptr(e, data_vaddr + 0x100, 0x100);
	ok &= CHECK_QUIET(p && !memcmp(p, elf.data + FX_TEXT_OFF + TEXT_SIZE + 0x100, 0x100),
			  "%s: vaddr_ptr(data)", what);
	ok &= CHECK_QUIET(!elf_vaddr_ptr(e, data_vaddr + FX_DATA_SIZE, 1),
			  "%s: vaddr_ptr(bss) has no file bytes", what);
	ok &= CHECK_QUIET(!elf_vaddr_ptr(e, data_vaddr + FX_DATA_SIZE - 4, 8),
			  "%s: vaddr_ptr running past the file part", what);
	ok &= CHECK_QUIET(!elf_vaddr_ptr(e, FX_TEXT_VADDR - 1, 1) && !elf_vaddr_ptr(e, 0, 1) &&
			  !elf_vaddr_ptr(e, UINT64_MAX, 1), "%s: vaddr_ptr outside", what);
	ok &= CHECK_QUIET(!elf_vaddr_to_paddr(e, FX_TEXT_VADDR + 0x123, &pa) &&
			  pa == FX_TEXT_PADDR + 0x123, "%s: vaddr_to_paddr(text)", what);
	ok &= CHECK_QUIET(!elf_vaddr_to_paddr(e, data_vaddr + FX_DATA_SIZE + 0x10, &pa) &&
			  pa == FX_TEXT_PADDR + TEXT_SIZE + FX_DATA_SIZE + 0x10,
			  "%s: vaddr_to_paddr(bss)", what);
	ok &= CHECK_QUIET(elf_vaddr_to_paddr(e, data_vaddr + FX_DATA_SIZE + FX_BSS_SIZE, &pa) == -ENOENT &&
			  elf_vaddr_to_paddr(e, 0x1000, &pa) == -ENOENT,
			  "%s: vaddr_to_paddr outside is -ENOENT", what);
	ok &= CHECK_QUIET(text && text->sh_addr == FX_TEXT_VADDR && text->sh_size == TEXT_SIZE &&
			  elf_section_data(e, text) == img->vmlinux + FX_TEXT_OFF,
			  "%s: section .text", what);
	ok &= CHECK_QUIET(bss && bss->sh_type == SHT_NOBITS && !elf_section_data(e, bss),
			  "%s: section .bss has no data", what);
	ok &= CHECK_QUIET(!elf_section(e, ".nope") && !elf_section(e, ".tex"), "%s: unknown section", what);
	CHECK(ok, "%s: segment and section lookups", what);
}

static void test_codecs(void)
{
	for (size_t i = 0; i < FX_NCODECS; i++) {
		const struct fx_codec *c = &fx_codecs[i];
		struct fx_buf packed = { 0 }, bz = { 0 };
		struct kernel_image img;
		struct errbuf err = { "" };
		char name[64];
		int rc;

		snprintf(name, sizeof(name), "bzImage.%s", c->name);
		if (fx_compress(image_files_dir, c, &elf, 1, &packed) || fx_make_bzimage(&packed, 27, &bz)) {
			CHECK(0, "%s: make the bzImage fixture", c->name);
			continue;
		}
		rc = open_file(name, &bz, &img, &err);
		CHECK(rc == 0, "%s: image_open (%s)", name, rc ? err.msg : "ok");
		if (!rc) {
			CHECK(img.is_bzimage && img.codec == c->codec && img.boot_version == FX_BOOT_VERSION &&
			      img.setup_size == fx_pm_start(27) && img.setup == img.file,
			      "%s: bzImage fields (codec %s, version %#x, setup %zu)", name,
			      decompress_codec_name(img.codec), img.boot_version, img.setup_size);
			CHECK(img.vmlinux_size == elf.len && !memcmp(img.vmlinux, elf.data, elf.len),
			      "%s: payload decompresses to the identical ELF", name);
			check_lookups(&img, name);
			image_close(&img);
			CHECK(!img.file && !img.vmlinux, "%s: image_close clears the image", name);
		}

		/* The payload cut short inside the file. */
		fx_put_le32(bz.data + FX_PAYLOAD_LEN, packed.len / 2);
		snprintf(name, sizeof(name), "bzImage.%s-payload-cut", c->name);
		expect_bad(name, &bz, NULL);
		/* The file cut inside the payload. */
		fx_put_le32(bz.data + FX_PAYLOAD_LEN, packed.len);
		bz.len = fx_pm_start(27) + FX_HEAD_SIZE + packed.len / 2;
		snprintf(name, sizeof(name), "bzImage.%s-file-cut", c->name);
		expect_bad(name, &bz, "truncated");
		/* Damaged in the middle. */
		bz.len = fx_pm_start(27) + FX_HEAD_SIZE + packed.len + FX_TAIL_SIZE;
		memset(bz.data + fx_pm_start(27) + FX_HEAD_SIZE + packed.len / 3, 0xff, packed.len / 3);
		snprintf(name, sizeof(name), "bzImage.%s-corrupt", c->name);
		expect_bad(name, &bz, NULL);
		fx_free(&bz);
		fx_free(&packed);
	}
}

static void test_plain(void)
{
	struct kernel_image img;
	struct errbuf err = { "" };
	struct fx_buf bz = { 0 };
	int rc;

	rc = open_file("vmlinux", &elf, &img, &err);
	CHECK(rc == 0 && !img.is_bzimage && img.codec == CODEC_NONE && img.vmlinux == img.file &&
	      img.vmlinux_size == elf.len && !memcmp(img.vmlinux, elf.data, elf.len) &&
	      img.arch == IMAGE_ARCH_X86_64 && !img.is_raw,
	      "plain vmlinux opens as itself (%s)", rc ? err.msg : "ok");
	if (!rc) {
		check_lookups(&img, "vmlinux");
		image_close(&img);
	}

	/* An uncompressed payload, and setup_sects 0 meaning 4. */
	fx_make_bzimage(&elf, 0, &bz);
	rc = open_file("bzImage.none", &bz, &img, &err);
	CHECK(rc == 0 && img.is_bzimage && img.codec == CODEC_NONE && img.setup_size == 5 * 512 &&
	      img.vmlinux_size == elf.len && !memcmp(img.vmlinux, elf.data, elf.len),
	      "bzImage with an uncompressed payload and setup_sects 0 (%s)", rc ? err.msg : "ok");
	if (!rc) {
		check_lookups(&img, "bzImage.none");
		image_close(&img);
	}
	fx_free(&bz);

	/* image_open_buffer takes the buffer over, on success and on error. */
	bz = fx_dup(&elf);
	rc = image_open_buffer("buffer", bz.data, bz.len, &img, &err);
	CHECK(rc == 0 && img.file == bz.data, "image_open_buffer on a vmlinux (%s)", rc ? err.msg : "ok");
	if (!rc)
		image_close(&img);
	bz = fx_dup(&elf);
	bz.data[EI_CLASS] = ELFCLASS32;
	rc = image_open_buffer("buffer32", bz.data, bz.len, &img, &err);
	CHECK(rc < 0 && strstr(err.msg, "buffer32") && !img.file,
	      "image_open_buffer error frees the buffer (%s)", err.msg);
}

/* Header fields pointing outside the file, and other malformed bzImages. */
static void test_bad_bzimage(void)
{
	struct fx_buf packed = { 0 }, bz = { 0 }, b;
	size_t pm = fx_pm_start(27);

	if (fx_compress(image_files_dir, &fx_codecs[0], &elf, 1, &packed) || fx_make_bzimage(&packed, 27, &bz)) {
		CHECK(0, "make the bzImage fixture");
		return;
	}
	b = fx_dup(&bz);
	fx_put_le32(b.data + FX_PAYLOAD_OFF, b.len);
	expect_bad("bz-offset-past-end", &b, "truncated");
	fx_put_le32(b.data + FX_PAYLOAD_OFF, 0xffffff00);
	fx_put_le32(b.data + FX_PAYLOAD_LEN, 0x200);
	expect_bad("bz-offset-wraps", &b, "truncated");
	fx_put_le32(b.data + FX_PAYLOAD_OFF, FX_HEAD_SIZE);
	fx_put_le32(b.data + FX_PAYLOAD_LEN, 0xffffffff);
	expect_bad("bz-length-huge", &b, "truncated");
	fx_put_le32(b.data + FX_PAYLOAD_LEN, b.len - pm - FX_HEAD_SIZE + 1);
	expect_bad("bz-length-one-past", &b, "truncated");
	fx_put_le32(b.data + FX_PAYLOAD_LEN, 2);
	expect_bad("bz-length-tiny", &b, NULL);
	fx_put_le32(b.data + FX_PAYLOAD_LEN, 0);
	expect_bad("bz-length-zero", &b, NULL);
	fx_free(&b);

	b = fx_dup(&bz);
	b.data[FX_SETUP_SECTS] = 255;	/* setup larger than the file */
	expect_bad("bz-setup-past-end", &b, "truncated");
	fx_free(&b);

	b = fx_dup(&bz);
	b.len = pm;			/* setup only, no protected-mode part */
	expect_bad("bz-setup-only", &b, "truncated");
	b.len = 0x300;
	expect_bad("bz-cut-in-setup", &b, NULL);
	b.len = 0x230;			/* cut inside the setup header */
	expect_bad("bz-cut-in-header", &b, NULL);
	fx_free(&b);

	b = fx_dup(&bz);
	fx_put_le16(b.data + FX_VERSION, 0x0207);
	expect_bad("bz-protocol-2.07", &b, "too old");
	fx_free(&b);

	b = fx_dup(&bz);
	b.data[FX_LOADFLAGS] = 0;
	expect_bad("bz-zImage", &b, "LOADED_HIGH");
	fx_free(&b);

	b = fx_dup(&bz);
	memset(b.data + pm + FX_HEAD_SIZE, 0x42, packed.len);	/* no known magic */
	expect_bad("bz-payload-unknown", &b, "not recognised");
	fx_free(&b);

	b = fx_dup(&bz);
	memcpy(b.data + pm + FX_HEAD_SIZE, "\x89LZO", 4);
	expect_bad("bz-payload-lzo", &b, "lzo");
	fx_free(&b);

	/* A payload that decompresses fine but is no ELF. */
	fx_free(&packed);
	fx_free(&bz);
	{
		struct fx_buf junk = fx_dup(&elf);

		memset(junk.data, 0x5a, 64);
		if (!fx_compress(image_files_dir, &fx_codecs[0], &junk, 1, &packed) && !fx_make_bzimage(&packed, 27, &bz))
			expect_bad("bz-payload-not-elf", &bz, "payload: not an ELF");
		fx_free(&junk);
	}
	fx_free(&packed);
	fx_free(&bz);
}

static void test_bad_files(void)
{
	struct kernel_image img;
	struct errbuf err = { "" };
	struct fx_buf b = { 0 };
	uint8_t rnd[8192];
	int rc;

	rc = image_open(path_of("absent"), &img, &err);
	CHECK(rc == -ENOENT && strstr(err.msg, "absent"), "a missing file is -ENOENT (%s)", err.msg);
	rc = image_open(image_files_dir, &img, &err);
	CHECK(rc < 0 && strstr(err.msg, "regular"), "a directory is rejected (%s)", err.msg);
	expect_bad("empty", &b, "empty");

	srand(3);
	for (size_t i = 0; i < sizeof(rnd); i++)
		rnd[i] = rand() >> 5;
	b = (struct fx_buf){ rnd, sizeof(rnd) };
	expect_bad("random", &b, "not a kernel image");
	b.len = 3;
	expect_bad("three-bytes", &b, "not a kernel image");
	memcpy(rnd, ELFMAG, SELFMAG);
	b.len = 10;
	expect_bad("elf-magic-only", &b, "ELF");
}

/* Malformed ELF files given as a plain vmlinux. */
static void test_bad_elf(void)
{
	struct fx_buf b;
	Elf64_Ehdr *eh;
	Elf64_Phdr *ph;

	b = fx_dup(&elf);
	((Elf64_Ehdr *)b.data)->e_machine = EM_AARCH64;
	expect_other_arch("elf-aarch64-patched", &b, IMAGE_ARCH_ARM64, "ELF is for aarch64 (e_machine 183)");
	((Elf64_Ehdr *)b.data)->e_machine = EM_RISCV;
	expect_other_arch("elf-riscv-patched", &b, IMAGE_ARCH_RISCV64, "ELF is for riscv (e_machine 243)");
	((Elf64_Ehdr *)b.data)->e_machine = EM_PPC64;
	expect_bad("elf-ppc64-patched", &b, "ELF is for ppc64 (e_machine 21), not x86_64");
	fx_free(&b);

	b = fx_dup(&elf);
	b.data[EI_CLASS] = ELFCLASS32;
	expect_bad("elf-class32", &b, "64-bit");
	b.data[EI_CLASS] = ELFCLASS64;
	b.data[EI_DATA] = ELFDATA2MSB;
	expect_bad("elf-big-endian", &b, "little-endian");
	b.data[EI_DATA] = ELFDATA2LSB;
	eh = (Elf64_Ehdr *)b.data;
	eh->e_type = ET_REL;
	expect_bad("elf-relocatable", &b, "not an executable");
	eh->e_type = ET_EXEC;
	eh->e_phoff = b.len - 8;
	expect_bad("elf-phdr-past-end", &b, "program headers");
	eh->e_phoff = sizeof(*eh);
	eh->e_phnum = 0;
	expect_bad("elf-no-phdrs", &b, "program headers");
	eh->e_phnum = FX_PHNUM;
	ph = (Elf64_Phdr *)(b.data + eh->e_phoff);
	ph[1].p_offset = b.len - 16;
	expect_bad("elf-segment-past-end", &b, "outside the file");
	ph[1].p_offset = UINT64_MAX - 8;
	expect_bad("elf-segment-offset-wraps", &b, "outside the file");
	ph[1].p_offset = FX_TEXT_OFF + TEXT_SIZE;
	ph[1].p_memsz = 1;
	expect_bad("elf-filesz-over-memsz", &b, "filesz > memsz");
	fx_free(&b);

	/* A truncated vmlinux: the last segment no longer fits. */
	b = fx_dup(&elf);
	b.len -= 1;
	expect_bad("elf-truncated", &b, "outside the file");
	b.len = sizeof(Elf64_Ehdr) - 1;
	expect_bad("elf-header-cut", &b, "truncated");
	fx_free(&b);

	/* Section headers are optional: bad ones only hide the sections. */
	b = fx_dup(&elf);
	((Elf64_Ehdr *)b.data)->e_shoff = b.len - 64;
	{
		struct kernel_image img;
		struct errbuf err = { "" };
		int rc = open_file("elf-shdr-past-end", &b, &img, &err);

		CHECK(rc == 0 && !img.elf.shdr && !elf_section(&img.elf, ".text") &&
		      elf_vaddr_ptr(&img.elf, FX_TEXT_VADDR, 4),
		      "section headers past the end are ignored (%s)", rc ? err.msg : "ok");
		if (!rc)
			image_close(&img);
	}
	fx_free(&b);

	/* elf_parse refuses a misaligned buffer rather than reading it unaligned. */
	{
		uint8_t *m = malloc(elf.len + 8);
		struct elf_image e;
		struct errbuf err = { "" };

		memcpy(m + 1, elf.data, elf.len);
		CHECK(elf_parse(m + 1, elf.len, EM_X86_64, &e, &err) == -EINVAL,
		      "elf_parse rejects a misaligned buffer (%s)", err.msg);
		CHECK(elf_parse(elf.data, elf.len, 0, &e, &err) == 0, "elf_parse with machine 0 accepts any");
		free(m);
	}
}

/* A real aarch64 executable from the cross compiler, plain and in a bzImage. */
static void test_aarch64(void)
{
	char cmd[8192];
	struct fx_buf a = { 0 }, packed = { 0 }, bz = { 0 };

	if (system("command -v aarch64-linux-gnu-gcc >/dev/null 2>&1") != 0) {
		printf("SKIP: aarch64-linux-gnu-gcc not installed; only the patched e_machine test ran\n");
		return;
	}
	snprintf(cmd, sizeof(cmd),
		 "printf 'void _start(void) { for (;;) ; }\\n' | aarch64-linux-gnu-gcc -x c -O2 "
		 "-nostdlib -static -o '%s' -", path_of("arm64.elf"));
	if (system(cmd) != 0 || fx_read(path_of("arm64.elf"), 0, &a)) {
		CHECK(0, "build an aarch64 ELF with aarch64-linux-gnu-gcc");
		return;
	}
	expect_other_arch("arm64.elf", &a, IMAGE_ARCH_ARM64, "ELF is for aarch64");
	/* A bzImage is x86_64's format: its payload must be x86_64 too. */
	if (!fx_compress(image_files_dir, &fx_codecs[0], &a, 1, &packed) && !fx_make_bzimage(&packed, 27, &bz))
		expect_bad("bzImage.arm64", &bz, "payload: ELF is for aarch64");
	fx_free(&bz);
	fx_free(&packed);
	fx_free(&a);
}

static int count_load(const struct elf_image *e, uint64_t *lowest_paddr)
{
	int n = 0;

	*lowest_paddr = UINT64_MAX;
	for (unsigned i = 0; i < e->ehdr->e_phnum; i++) {
		if (e->phdr[i].p_type != PT_LOAD)
			continue;
		n++;
		if (e->phdr[i].p_paddr < *lowest_paddr)
			*lowest_paddr = e->phdr[i].p_paddr;
	}
	return n;
}

/* Debian's stock kernel (XZ payload), as users run it. */
static void test_stock(void)
{
	char path[4096];
	struct kernel_image img;
	struct errbuf err = { "" };
	uint64_t low;
	int rc, n;

	fx_cache_path(path, sizeof(path), "stock-bzImage");
	rc = image_open(path, &img, &err);
	if (rc == -ENOENT) {
		CHECK(0, "stock kernel %s is missing: run scripts/setup.sh (scripts/fetch-debian-kernel.sh)", path);
		return;
	}
	CHECK(rc == 0, "stock kernel: image_open (%s)", rc ? err.msg : path);
	if (rc)
		return;
	n = count_load(&img.elf, &low);
	CHECK(img.is_bzimage && img.codec == CODEC_XZ, "stock kernel: bzImage with an XZ payload (%s)",
	      decompress_codec_name(img.codec));
	CHECK(img.elf.ehdr->e_entry == 0x1000000, "stock kernel: ELF entry is 0x1000000 (%#llx)",
	      (unsigned long long)img.elf.ehdr->e_entry);
	CHECK(n > 0 && low == 0x1000000, "stock kernel: %d PT_LOAD segments, the lowest at paddr %#llx",
	      n, (unsigned long long)low);
	{
		const Elf64_Shdr *text = elf_section(&img.elf, ".text");
		uint64_t pa = 0;

		CHECK(text && text->sh_addr == 0xffffffff81000000ull && elf_section_data(&img.elf, text) &&
		      !elf_vaddr_to_paddr(&img.elf, text->sh_addr, &pa) && pa == 0x1000000,
		      "stock kernel: .text at 0xffffffff81000000, physical 0x1000000");
	}
	image_close(&img);
}

/*
 * The lean test kernel: its bzImage payload (gzip) must hold the same
 * loadable bytes as the vmlinux the build left next to it.
 */
static void test_lean(void)
{
	char bzpath[4096], vmpath[4096];
	struct kernel_image bz, vm;
	struct errbuf err = { "" };
	int rc, same = 1;

	fx_cache_path(bzpath, sizeof(bzpath), "lean/bzImage");
	fx_cache_path(vmpath, sizeof(vmpath), "lean/vmlinux");
	rc = image_open(bzpath, &bz, &err);
	if (rc == -ENOENT) {
		CHECK(0, "lean kernel %s is missing: run scripts/setup.sh (scripts/build-lean-kernel.sh)", bzpath);
		return;
	}
	CHECK(rc == 0, "lean kernel: image_open bzImage (%s)", rc ? err.msg : bzpath);
	if (rc)
		return;
	rc = image_open(vmpath, &vm, &err);
	CHECK(rc == 0 && vm.codec == CODEC_NONE, "lean kernel: image_open vmlinux (%s)", rc ? err.msg : vmpath);
	if (rc) {
		image_close(&bz);
		return;
	}
	CHECK(bz.codec == CODEC_GZIP && bz.elf.ehdr->e_entry == vm.elf.ehdr->e_entry,
	      "lean kernel: gzip payload, same entry as vmlinux (%#llx)",
	      (unsigned long long)bz.elf.ehdr->e_entry);
	for (unsigned i = 0; i < vm.elf.ehdr->e_phnum; i++) {
		const Elf64_Phdr *ph = &vm.elf.phdr[i];
		const uint8_t *a, *b;
		uint64_t pa = 0;

		if (ph->p_type != PT_LOAD)
			continue;
		a = elf_vaddr_ptr(&vm.elf, ph->p_vaddr, ph->p_filesz);
		b = elf_vaddr_ptr(&bz.elf, ph->p_vaddr, ph->p_filesz);
		same &= CHECK_QUIET(a && b && !memcmp(a, b, ph->p_filesz) &&
				    !elf_vaddr_to_paddr(&bz.elf, ph->p_vaddr, &pa) && pa == ph->p_paddr,
				    "lean kernel: segment %u (vaddr %#llx, %llu bytes) differs", i,
				    (unsigned long long)ph->p_vaddr, (unsigned long long)ph->p_filesz);
	}
	CHECK(same, "lean kernel: the payload's PT_LOAD segments equal vmlinux's");
	image_close(&vm);
	image_close(&bz);
}

int main(void)
{
	image_files_dir = fx_tmpdir();
	CHECK(image_files_dir != NULL, "make a temporary directory");
	CHECK(fx_make_elf(TEXT_SIZE, EM_X86_64, &elf) == 0, "make the fixture ELF (%zu bytes)", elf.len);
	if (!image_files_dir || !elf.data)
		return 1;
	test_codecs();
	test_plain();
	test_bad_bzimage();
	test_bad_files();
	test_bad_elf();
	test_aarch64();
	test_stock();
	test_lean();
	fx_free(&elf);
	return check_exit();
}
