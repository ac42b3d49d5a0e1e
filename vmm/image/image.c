// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel files: a bzImage (boot sector + setup + compressed vmlinux payload,
 * Documentation/arch/x86/boot.rst) or a plain ELF vmlinux. The payload is
 * decompressed here so the guest's own decompressor never runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/image/image.h"
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
	if (rc) {
		char msg[sizeof(err->msg)];

		if (err) {
			memcpy(msg, err->msg, sizeof(msg));
			err_set(err, rc, "%s: %s", img->path, msg);
		}
		return rc;
	}
	return 0;
}

int image_open_buffer(const char *name, uint8_t *data, size_t size,
		      struct kernel_image *img, struct errbuf *err)
{
	int rc;

	memset(img, 0, sizeof(*img));
	img->path = name;
	img->file = data;
	img->file_size = size;
	if (is_bzimage(data, size)) {
		rc = image_open_bzimage(img, err);
	} else if (size >= 4 && !memcmp(data, ELFMAG, SELFMAG)) {
		img->codec = CODEC_NONE;
		img->vmlinux = data;
		img->vmlinux_size = size;
		rc = 0;
	} else {
		rc = err_set(err, ENOEXEC, "%s: not a kernel image (neither a bzImage nor an ELF vmlinux)", name);
	}
	if (!rc) {
		char msg[sizeof(err->msg)];

		rc = elf_parse(img->vmlinux, img->vmlinux_size, EM_X86_64, &img->elf, err);
		if (rc && err) {
			memcpy(msg, err->msg, sizeof(msg));
			err_set(err, rc, "%s: %s%s", name, img->is_bzimage ? "payload: " : "", msg);
		}
	}
	if (rc)
		image_close(img);
	return rc;
}

int image_open(const char *path, struct kernel_image *img, struct errbuf *err)
{
	uint8_t *data = NULL;
	size_t size = 0;
	int rc;

	memset(img, 0, sizeof(*img));
	rc = read_file(path, &data, &size, err);
	if (rc)
		return rc;
	return image_open_buffer(path, data, size, img, err);
}

void image_close(struct kernel_image *img)
{
	if (img->vmlinux && img->vmlinux != img->file)
		free(img->vmlinux);
	free(img->file);
	memset(img, 0, sizeof(*img));
}
