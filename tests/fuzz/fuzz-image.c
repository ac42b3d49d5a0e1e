// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the kernel-image loader (vmm/image/image.c through
 * image_open_buffer: bzImage setup header, payload codec detection and
 * decompression, ELF headers, raw arm64/riscv64 Images and their synthetic
 * ELF (image-raw.c), the .BTF section's task_struct members as
 * vmm/trace/task.c finds them) and for decompress_buffer on its own, with
 * the input as a payload of the codec it looks like. Checked: an opened
 * image's ELF and payload lie in memory the image owns; a raw Image's view
 * is one segment at a page-aligned upper-half address holding the file's
 * bytes (relocated, for a relocatable arm64 one); decompression never returns more than the limit it was given;
 * every lookup of an opened image stays in bounds (ASan).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/image/image.h"
#include "vmm/image/kallsyms.h"
#include "vmm/image/sysmap.h"
#include "vmm/trace/task.h"

/* Small, so that a bomb costs the fuzzer little: the limit is what is tested. */
#define FUZZ_MAX_OUT (4u << 20)

/* A raw Image's synthetic ELF (image-raw.c), and its kallsyms through it. */
static void use_raw(const struct kernel_image *img)
{
	const struct elf_image *e = &img->elf;
	const Elf64_Phdr *ph = e->phdr;
	struct kallsyms_layout layout;
	struct symtab tab;
	struct errbuf err;
	const uint8_t *p;

	if (e->ehdr->e_phnum != 1 || ph->p_vaddr < (1ull << 63) || ph->p_vaddr % 4096 ||
	    e->ehdr->e_entry != ph->p_vaddr || ph->p_memsz < ph->p_filesz || img->is_bzimage)
		abort();
	/* The file's bytes, unless relocated (a relocatable arm64 Image: image-reloc.c). */
	p = elf_vaddr_ptr(e, ph->p_vaddr, ph->p_filesz);
	if (!p || (img->codec == CODEC_NONE && (ph->p_filesz != img->file_size ||
						(!img->relocations && memcmp(p, img->file, img->file_size)))))
		abort();
	symtab_init(&tab);
	kallsyms_recover(e, &tab, &layout, &err);
	symtab_destroy(&tab);
}

static void use_image(const struct kernel_image *img)
{
	const struct elf_image *e = &img->elf;
	struct symtab tab;
	struct task_layout tl;
	struct errbuf err;

	if (!img->vmlinux || e->data != img->vmlinux || e->size != img->vmlinux_size)
		abort();
	if (img->is_bzimage && (img->setup != img->file || img->setup_size >= img->file_size))
		abort();
	if (img->is_raw)
		use_raw(img);
	for (unsigned i = 0; i < e->ehdr->e_phnum; i++) {
		const Elf64_Phdr *ph = &e->phdr[i];
		size_t len = ph->p_filesz ? 1 : 0;
		const uint8_t *p = elf_vaddr_ptr(e, ph->p_vaddr, len);
		uint64_t pa;

		/* A zero-length lookup may point just past the file's end. */
		if (p && (p < e->data || p + len > e->data + e->size))
			abort();
		elf_vaddr_to_paddr(e, ph->p_vaddr + ph->p_memsz / 2, &pa);
	}
	if (e->shdr) {
		const Elf64_Shdr *sh = elf_section(e, ".text");

		if (sh)
			elf_section_data(e, sh);
	}
	symtab_init(&tab);
	if (!sysmap_read_elf(e, &tab, &err))
		symtab_finish(&tab);
	/* The image's .BTF (libbpf checks it) and the members the stub would read. */
	if (!task_layout_find(img, &tab, NULL, &tl, NULL, &err) && tl.comm_off != TASK_UNKNOWN &&
	    (tl.comm_off + 16 > tl.task_size || tl.pid_off + 4 > tl.task_size))
		abort();
	symtab_destroy(&tab);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kernel_image img;
	struct errbuf err;
	enum codec c;
	uint8_t *copy, *out = NULL;
	size_t out_len = 0;

	/* The loader takes the buffer over (and frees it, also on failure). */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (!image_open_buffer("fuzz", copy, size, &img, &err)) {
		use_image(&img);
		image_close(&img);
	}

	c = decompress_detect(data, size);
	if (c != CODEC_NONE && c != CODEC_UNKNOWN && size >= 4) {
		/* The hint as a bzImage would give it: the payload's last 4 bytes. */
		uint32_t hint = data[size - 4] | data[size - 3] << 8 | data[size - 2] << 16 |
				(uint32_t)data[size - 1] << 24;

		if (!decompress_buffer(c, data, size, hint, FUZZ_MAX_OUT, &out, &out_len, &err) &&
		    (out_len > FUZZ_MAX_OUT || (!out && out_len)))
			abort();
		free(out);
	}
	return 0;
}
