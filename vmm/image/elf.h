/* SPDX-License-Identifier: GPL-2.0 */
/* Read-only view of an ELF64 image held in memory; every offset validated. */
#ifndef VMM_ELF_H
#define VMM_ELF_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/util/error.h"

struct elf_image {
	const uint8_t *data;
	size_t size;
	const Elf64_Ehdr *ehdr;
	const Elf64_Phdr *phdr;		/* ehdr->e_phnum entries, in bounds */
	const Elf64_Shdr *shdr;		/* NULL when there are no section headers */
	const char *shstrtab;		/* NULL when absent */
	size_t shstrtab_size;
};

/*
 * Checks that data is a little-endian ELF64 executable for `machine`
 * (EM_X86_64, ...; 0 accepts any) and that its headers lie in bounds.
 */
int elf_parse(const uint8_t *data, size_t size, uint16_t machine,
	      struct elf_image *elf, struct errbuf *err);

/* The name of an e_machine value, as error messages print it ("aarch64"). */
const char *elf_machine_name(uint16_t machine);

/* Section header by name, or NULL. */
const Elf64_Shdr *elf_section(const struct elf_image *elf, const char *name);

/* Bytes of a section in the file, or NULL (NOBITS, out of bounds). */
const uint8_t *elf_section_data(const struct elf_image *elf, const Elf64_Shdr *sh);

/*
 * Pointer to len bytes at virtual address vaddr, if they lie in the file
 * part of one PT_LOAD segment; NULL otherwise.
 */
const uint8_t *elf_vaddr_ptr(const struct elf_image *elf, uint64_t vaddr, size_t len);

/*
 * The ELF's symbol table (the first SHT_SYMTAB section), checked: its
 * entries aligned and in the file, its string table NUL-terminated. 0,
 * -ENOENT (none: a stripped vmlinux) or -ENOEXEC (malformed).
 */
struct elf_symbols {
	const Elf64_Sym *syms;		/* n entries, the first the null symbol */
	size_t n;
	const char *strs;		/* strs_size bytes, the last a NUL */
	size_t strs_size;
};
int elf_symtab(const struct elf_image *elf, struct elf_symbols *out);

/*
 * The value of the symbol `name` (the first of that name) into *value: 0,
 * or -ENOENT (no such symbol, no or a malformed symbol table).
 */
int elf_symbol(const struct elf_image *elf, const char *name, uint64_t *value);

/* Physical address of a virtual one through the PT_LOAD segments, or -ENOENT. */
int elf_vaddr_to_paddr(const struct elf_image *elf, uint64_t vaddr, uint64_t *paddr);

#endif
