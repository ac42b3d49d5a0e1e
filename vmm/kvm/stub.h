/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guest stub's home: VMM memory outside guest RAM holding the stub code
 * (read-only, executable for the guest) and its rings (read-write, not
 * executable), mapped into the guest kernel's address space by the arch.
 */
#ifndef VMM_STUB_H
#define VMM_STUB_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/host/host.h"
#include "vmm/util/error.h"

struct elf_image;
struct symtab;
struct vm;

/*
 * Places the stub image and data_size bytes of ring memory in guest
 * physical memory and maps them into the kernel's address space; needs the
 * kernel loaded (it links into the kernel's own page tables).
 */
int arch_stub_install(struct vm *vm, const struct elf_image *elf, const struct symtab *syms,
		      uint64_t data_size, struct stub_region *r, struct errbuf *err);
void stub_region_free(struct stub_region *r);

#endif
