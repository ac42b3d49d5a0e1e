// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel files: an x86_64 bzImage (boot sector + setup + compressed vmlinux
 * payload, Documentation/arch/x86/boot.rst), a plain ELF vmlinux (x86_64,
 * arm64, riscv64, loongarch64), or a raw arm64/riscv64 Image, plain or gzip'ed
 * (image-raw.c). Payloads are decompressed here so the guest's own
 * decompressor never runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/image/image.h"
#include "vmm/image/image-raw.h"
#include "vmm/util/util.h"

#define IMAGE_MAX_FILE     (512u << 20)
#define IMAGE_MAX_VMLINUX  (1u << 30)

static uint32_t le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static int read_file(const char *path, uint8_t **data, size_t *size, struct errbuf *err)
{
	int rc = util_read_file(path, IMAGE_MAX_FILE, data, size);

	switch (rc) {
	case 0:
		break;
	case -EINVAL:
		return err_set(err, rc, "kernel '%s' is not a regular file", path);
	case -EFBIG:
		return err_set(err, rc, "kernel '%s' is larger than %u MiB", path, IMAGE_MAX_FILE >> 20);
	case -ENOMEM:
		return err_set(err, rc, "out of memory reading '%s'", path);
	default:
		return err_set(err, rc, "cannot open kernel '%s': %s", path, strerror(-rc));
	}
	if (!*size) {
		free(*data);
		return err_set(err, EINVAL, "kernel '%s' is empty", path);
	}
	return 0;
}

/* Prefixes err's message with the file's name and what it was taken for. */
static int image_err_prefix(struct errbuf *err, int rc, const char *name, const char *what)
{
	char msg[sizeof(err->msg)];

	if (err) {
		memcpy(msg, err->msg, sizeof(msg));
		err_set(err, rc, "%s: %s%s", name, what, msg);
	}
	return rc;
}

static int is_bzimage(const uint8_t *d, size_t size)
{
	return size >= 0x264 && !memcmp(d + 0x202, "HdrS", 4);
}

static int image_open_bzimage(struct kernel_image *img, struct errbuf *err)
{
	const uint8_t *d = img->file;
	size_t setup_sects = d[0x1f1] ? d[0x1f1] : 4;
	size_t pm_start = (setup_sects + 1) * 512;
	uint32_t off, len, hint;
	int rc;

	img->is_bzimage = 1;
	img->boot_version = d[0x206] | d[0x207] << 8;
	if (img->boot_version < 0x208)
		return err_set(err, ENOEXEC, "%s: boot protocol %x.%02x is too old (payload fields need 2.08)",
			       img->path, img->boot_version >> 8, img->boot_version & 0xff);
	if (!(d[0x211] & 0x01))
		return err_set(err, ENOEXEC, "%s: not a bzImage (LOADED_HIGH not set)", img->path);
	if (pm_start >= img->file_size)
		return err_set(err, ENOEXEC, "%s: truncated bzImage (setup is %zu bytes, file %zu)",
			       img->path, pm_start, img->file_size);
	img->setup = d;
	img->setup_size = pm_start;
	off = le32(d + 0x248);
	len = le32(d + 0x24c);
	if (len < 4 || off > img->file_size - pm_start || len > img->file_size - pm_start - off)
		return err_set(err, ENOEXEC, "%s: truncated bzImage (payload at %u+%u, file has %zu bytes)",
			       img->path, off, len, img->file_size - pm_start);
	const uint8_t *payload = d + pm_start + off;
	img->codec = decompress_detect(payload, len);
	if (img->codec == CODEC_UNKNOWN)
		return err_set(err, ENOEXEC, "%s: bzImage payload compression not recognised", img->path);
	if (img->codec == CODEC_NONE) {
		/* An uncompressed payload: copy it so the ELF is 8-byte aligned. */
		img->vmlinux = aligned_alloc(8, ((size_t)len + 7) & ~(size_t)7);
		if (!img->vmlinux)
			return err_set(err, ENOMEM, "out of memory");
		memcpy(img->vmlinux, payload, len);
		img->vmlinux_size = len;
		return 0;
	}
	/* mkpiggy appends the decompressed size as the payload's last 4 bytes. */
	hint = le32(payload + len - 4);
	rc = decompress_buffer(img->codec, payload, len, hint, IMAGE_MAX_VMLINUX,
			       &img->vmlinux, &img->vmlinux_size, err);
	if (rc)
		return image_err_prefix(err, rc, img->path, "");
	return 0;
}

/* LoongArch's e_machine (glibc's <elf.h> names it EM_LOONGARCH from 2.35 on). */
#define IMAGE_EM_LOONGARCH 258

/*
 * e_machine of a plain vmlinux: arm64, riscv64 and loongarch64 ones are
 * read as such; anything else is checked as x86_64, which names what it
 * is instead.
 */
static uint16_t vmlinux_machine(const uint8_t *d, size_t size)
{
	uint16_t m;

	if (size < sizeof(Elf64_Ehdr) || d[EI_CLASS] != ELFCLASS64 || d[EI_DATA] != ELFDATA2LSB)
		return EM_X86_64;
	m = (uint16_t)(d[18] | d[19] << 8);	/* e_machine */
	return m == EM_AARCH64 || m == EM_RISCV || m == IMAGE_EM_LOONGARCH ? m : EM_X86_64;
}

static int image_open_elf(struct kernel_image *img, struct errbuf *err)
{
	uint16_t m = img->is_bzimage ? EM_X86_64 : vmlinux_machine(img->vmlinux, img->vmlinux_size);
	int rc = elf_parse(img->vmlinux, img->vmlinux_size, m, &img->elf, err);

	if (rc)
		return image_err_prefix(err, rc, img->path, img->is_bzimage ? "payload: " : "");
	img->arch = m == EM_AARCH64 ? IMAGE_ARCH_ARM64 : m == EM_RISCV ? IMAGE_ARCH_RISCV64
		    : m == IMAGE_EM_LOONGARCH ? IMAGE_ARCH_LOONGARCH64 : IMAGE_ARCH_X86_64;
	return 0;
}

/* Image.gz: gzip around a raw Image, as arm64 and riscv64 kernels ship. */
static int image_open_gzip(struct kernel_image *img, unsigned flags, struct errbuf *err)
{
	const uint8_t *d = img->file;
	size_t n = img->file_size, raw_size = 0;
	uint8_t *raw = NULL;
	int rc, arch;

	img->codec = CODEC_GZIP;
	/* gzip's trailer ends with the data's size modulo 2^32. */
	rc = decompress_buffer(CODEC_GZIP, d, n, n >= 4 ? le32(d + n - 4) : 0, IMAGE_RAW_MAX_SIZE,
			       &raw, &raw_size, err);
	if (rc)
		return image_err_prefix(err, rc, img->path, "");
	arch = image_raw_detect(raw, raw_size);
	if (arch < 0)
		rc = err_set(err, ENOEXEC, "%s: gzip data, but not an arm64 or riscv64 Image (no boot header magic at 0x38)",
			     img->path);
	else if ((rc = image_raw_open(img, raw, raw_size, flags, err)))
		image_err_prefix(err, rc, img->path,
				 arch == IMAGE_ARCH_ARM64 ? "gzip'ed arm64 Image: " : "gzip'ed riscv64 Image: ");
	free(raw);
	return rc;
}

static int image_open_buffer_as(const char *name, uint8_t *data, size_t size, unsigned flags,
				struct kernel_image *img, struct errbuf *err)
{
	int rc, arch;

	memset(img, 0, sizeof(*img));
	img->path = name;
	img->file = data;
	img->file_size = size;
	if (is_bzimage(data, size)) {
		rc = image_open_bzimage(img, err);
		if (!rc)
			rc = image_open_elf(img, err);
	} else if (size >= 4 && !memcmp(data, ELFMAG, SELFMAG)) {
		img->codec = CODEC_NONE;
		img->vmlinux = data;
		img->vmlinux_size = size;
		rc = image_open_elf(img, err);
	} else if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
		rc = image_open_gzip(img, flags, err);
	} else if ((arch = image_raw_detect(data, size)) >= 0) {
		img->codec = CODEC_NONE;
		rc = image_raw_open(img, data, size, flags, err);
		if (rc)
			image_err_prefix(err, rc, name, arch == IMAGE_ARCH_ARM64 ? "arm64 Image: " : "riscv64 Image: ");
	} else {
		rc = err_set(err, ENOEXEC, "%s: not a kernel image (neither an x86_64 bzImage, an ELF vmlinux, nor an arm64 or riscv64 Image, plain or gzip'ed)",
			     name);
	}
	if (rc)
		image_close(img);
	return rc;
}

int image_open_buffer(const char *name, uint8_t *data, size_t size,
		      struct kernel_image *img, struct errbuf *err)
{
	return image_open_buffer_as(name, data, size, 0, img, err);
}

int image_open_as(const char *path, unsigned flags, struct kernel_image *img, struct errbuf *err)
{
	uint8_t *data = NULL;
	size_t size = 0;
	int rc;

	memset(img, 0, sizeof(*img));
	rc = read_file(path, &data, &size, err);
	if (rc)
		return rc;
	return image_open_buffer_as(path, data, size, flags, img, err);
}

int image_open(const char *path, struct kernel_image *img, struct errbuf *err)
{
	return image_open_as(path, 0, img, err);
}

void image_close(struct kernel_image *img)
{
	if (img->vmlinux && img->vmlinux != img->file)
		free(img->vmlinux);
	free(img->file);
	memset(img, 0, sizeof(*img));
}

const char *image_arch_name(enum image_arch arch)
{
	switch (arch) {
	case IMAGE_ARCH_X86_64: return "x86_64";
	case IMAGE_ARCH_ARM64: return "arm64";
	case IMAGE_ARCH_RISCV64: return "riscv64";
	case IMAGE_ARCH_LOONGARCH64: return "loongarch64";
	}
	return "unknown";
}

int image_require_arch(const struct kernel_image *img, enum image_arch arch, struct errbuf *err)
{
	static const uint16_t machine[] = {
		[IMAGE_ARCH_X86_64] = EM_X86_64, [IMAGE_ARCH_ARM64] = EM_AARCH64,
		[IMAGE_ARCH_RISCV64] = EM_RISCV, [IMAGE_ARCH_LOONGARCH64] = IMAGE_EM_LOONGARCH,
	};

	if (img->arch == arch)
		return 0;
	if (img->is_raw)
		return err_set(err, ENOEXEC, "%s: a raw %s Image, not %s", img->path,
			       image_arch_name(img->arch), image_arch_name(arch));
	/* The words elf_parse used before arm64 and riscv64 were read too. */
	return err_set(err, ENOEXEC, "%s: ELF is for %s (e_machine %u), not %s", img->path,
		       elf_machine_name(img->elf.ehdr->e_machine), img->elf.ehdr->e_machine,
		       elf_machine_name(machine[arch]));
}
