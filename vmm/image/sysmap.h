/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Symbols the user supplies: a System.map (or a copy of /proc/kallsyms), or
 * the .symtab of an unstripped vmlinux read the way `nm -n | mksysmap`
 * builds System.map, so that either gives the same table.
 */
#ifndef VMM_SYSMAP_H
#define VMM_SYSMAP_H

#include <stddef.h>

#include "vmm/image/elf.h"
#include "vmm/util/error.h"
#include "vmm/image/symtab.h"

/* Reads "ADDR TYPE NAME" lines; module symbols ("NAME\t[mod]") are skipped. */
int sysmap_read_file(const char *path, struct symtab *tab, struct errbuf *err);
/* The same on text in memory; name is used in error messages. */
int sysmap_parse(const char *name, const char *text, size_t size,
		 struct symtab *tab, struct errbuf *err);

/* Symbols of an ELF .symtab, typed as nm types them; -ENOENT without one. */
int sysmap_read_elf(const struct elf_image *elf, struct symtab *tab, struct errbuf *err);

#endif
