/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guest kernel's own type information (BTF), read with libbpf: where
 * the members the tracer reads from guest memory lie (task_struct's pid,
 * comm, ...). From the .BTF section of the vmlinux inside the image, or
 * from a file the user names (a raw BTF blob or an ELF with .BTF).
 * libbpf validates the blob before anything here uses it.
 */
#ifndef VMM_IMAGE_BTF_H
#define VMM_IMAGE_BTF_H

#include <stdint.h>

#include "vmm/image/elf.h"
#include "vmm/util/error.h"

struct btf;

struct kernel_btf {
	struct btf *btf;
	char source[256];		/* where it came from, for messages */
};

/* From the image's .BTF section; -ENOENT when it has none. */
int kbtf_from_elf(const struct elf_image *elf, const char *name, struct kernel_btf *kb,
		  struct errbuf *err);
/* From a file: raw BTF, or an ELF holding .BTF (a vmlinux). */
int kbtf_from_file(const char *path, struct kernel_btf *kb, struct errbuf *err);
void kbtf_close(struct kernel_btf *kb);

/*
 * Byte offset and size of a member of struct (or union) `type`, named by a
 * dotted path ("thread_info.flags"); members of anonymous structs and unions
 * are found as the compiler finds them. -ENOENT when the type or a member is
 * missing, -EINVAL for a bit field.
 */
int kbtf_member(const struct kernel_btf *kb, const char *type, const char *path,
		uint32_t *offset, uint32_t *size);
/* Size of struct `type`, or 0 when unknown. */
uint32_t kbtf_struct_size(const struct kernel_btf *kb, const char *type);

#endif
