/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A kernel image as given by the user: a bzImage (setup + compressed ELF
 * payload) or a plain ELF vmlinux. Opening it yields the vmlinux ELF.
 */
#ifndef VMM_IMAGE_H
#define VMM_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/image/decompress.h"
#include "vmm/image/elf.h"
#include "vmm/util/error.h"

struct kernel_image {
	const char *path;
	uint8_t *file;			/* the whole file */
	size_t file_size;
	int is_bzimage;
	const uint8_t *setup;		/* bzImage: boot sector + setup, else NULL */
	size_t setup_size;
	uint16_t boot_version;		/* bzImage boot protocol version */
	enum codec codec;		/* payload codec; CODEC_NONE for a vmlinux */
	uint8_t *vmlinux;		/* the ELF: points into file or is malloc'ed */
	size_t vmlinux_size;
	struct elf_image elf;
};

/* Reads and decodes a kernel file. Errors name the file and the problem. */
int image_open(const char *path, struct kernel_image *img, struct errbuf *err);
/* Same, on bytes already in memory (taken over by img; fuzzing, tests). */
int image_open_buffer(const char *name, uint8_t *data, size_t size,
		      struct kernel_image *img, struct errbuf *err);
void image_close(struct kernel_image *img);

#endif
