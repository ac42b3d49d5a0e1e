// SPDX-License-Identifier: GPL-2.0
/* ELF64 parsing. The file may be hostile: check every offset before use. */
#include <errno.h>
#include <string.h>

#include "vmm/image/elf.h"

static int in_bounds(size_t size, uint64_t off, uint64_t len)
{
	return off <= size && len <= size - off;
}

const char *elf_machine_name(uint16_t m)
{
	switch (m) {
	case EM_X86_64: return "x86_64";
	case EM_386: return "i386";
	case EM_AARCH64: return "aarch64";
	case EM_ARM: return "arm";
	case EM_RISCV: return "riscv";
	case 258: return "loongarch";
	case EM_PPC64: return "ppc64";
	case EM_S390: return "s390";
	default: return "unknown";
	}
}

static int elf_parse_sections(struct elf_image *elf)
{
	const Elf64_Ehdr *eh = elf->ehdr;
	const Elf64_Shdr *str;

	if (!eh->e_shoff || !eh->e_shnum || eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    !in_bounds(elf->size, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr)) ||
	    eh->e_shoff % 8)
		return 0;	/* sections are optional: a loader needs only segments */
	elf->shdr = (const Elf64_Shdr *)(elf->data + eh->e_shoff);
	if (eh->e_shstrndx >= eh->e_shnum)
		return 0;
	str = &elf->shdr[eh->e_shstrndx];
	if (str->sh_type != SHT_STRTAB || !in_bounds(elf->size, str->sh_offset, str->sh_size) ||
	    !str->sh_size || elf->data[str->sh_offset + str->sh_size - 1])
		return 0;
	elf->shstrtab = (const char *)elf->data + str->sh_offset;
	elf->shstrtab_size = str->sh_size;
	return 0;
}

int elf_parse(const uint8_t *data, size_t size, uint16_t machine,
	      struct elf_image *elf, struct errbuf *err)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)data;

	memset(elf, 0, sizeof(*elf));
	if (size < EI_NIDENT || memcmp(data, ELFMAG, SELFMAG))
		return err_set(err, ENOEXEC, "not an ELF file");
	if (data[EI_CLASS] != ELFCLASS64)
		return err_set(err, ENOEXEC, "not a 64-bit ELF file (class %u)", data[EI_CLASS]);
	if (data[EI_DATA] != ELFDATA2LSB)
		return err_set(err, ENOEXEC, "not a little-endian ELF file");
	if (size < sizeof(*eh))
		return err_set(err, ENOEXEC, "ELF header is truncated");
	if ((uintptr_t)data % 8)
		return err_set(err, EINVAL, "ELF buffer is misaligned");
	if (machine && eh->e_machine != machine)
		return err_set(err, ENOEXEC, "ELF is for %s (e_machine %u), not %s",
			       elf_machine_name(eh->e_machine), eh->e_machine, elf_machine_name(machine));
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN)
		return err_set(err, ENOEXEC, "ELF is not an executable (e_type %u)", eh->e_type);
	if (!eh->e_phnum || eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff % 8 ||
	    !in_bounds(size, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr)))
		return err_set(err, ENOEXEC, "ELF program headers are missing or truncated");
	elf->data = data;
	elf->size = size;
	elf->ehdr = eh;
	elf->phdr = (const Elf64_Phdr *)(data + eh->e_phoff);
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = &elf->phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (!in_bounds(size, ph->p_offset, ph->p_filesz))
			return err_set(err, ENOEXEC, "ELF segment %u lies outside the file (truncated?)", i);
		if (ph->p_filesz > ph->p_memsz)
			return err_set(err, ENOEXEC, "ELF segment %u has filesz > memsz", i);
	}
	return elf_parse_sections(elf);
}

const Elf64_Shdr *elf_section(const struct elf_image *elf, const char *name)
{
	if (!elf->shdr || !elf->shstrtab)
		return NULL;
	for (unsigned i = 0; i < elf->ehdr->e_shnum; i++) {
		uint32_t n = elf->shdr[i].sh_name;

		if (n < elf->shstrtab_size && !strcmp(elf->shstrtab + n, name))
			return &elf->shdr[i];
	}
	return NULL;
}

const uint8_t *elf_section_data(const struct elf_image *elf, const Elf64_Shdr *sh)
{
	if (!sh || sh->sh_type == SHT_NOBITS || !in_bounds(elf->size, sh->sh_offset, sh->sh_size))
		return NULL;
	return elf->data + sh->sh_offset;
}

int elf_symtab(const struct elf_image *elf, struct elf_symbols *out)
{
	const Elf64_Shdr *sh = NULL, *strsh;
	const uint8_t *syms, *strs;

	for (unsigned i = 0; elf->shdr && i < elf->ehdr->e_shnum && !sh; i++)
		if (elf->shdr[i].sh_type == SHT_SYMTAB && elf->shdr[i].sh_link < elf->ehdr->e_shnum)
			sh = &elf->shdr[i];
	if (!sh)
		return -ENOENT;
	strsh = &elf->shdr[sh->sh_link];
	syms = elf_section_data(elf, sh);
	strs = elf_section_data(elf, strsh);
	if (!syms || !strs || strsh->sh_type != SHT_STRTAB || !strsh->sh_size ||
	    sh->sh_entsize != sizeof(Elf64_Sym) || sh->sh_offset % 8 || strs[strsh->sh_size - 1])
		return -ENOEXEC;
	out->syms = (const Elf64_Sym *)syms;
	out->n = sh->sh_size / sizeof(Elf64_Sym);
	out->strs = (const char *)strs;
	out->strs_size = strsh->sh_size;
	return 0;
}

int elf_symbol(const struct elf_image *elf, const char *name, uint64_t *value)
{
	struct elf_symbols t;

	if (elf_symtab(elf, &t))
		return -ENOENT;
	for (size_t i = 1; i < t.n; i++)
		if (t.syms[i].st_name < t.strs_size && !strcmp(t.strs + t.syms[i].st_name, name)) {
			*value = t.syms[i].st_value;
			return 0;
		}
	return -ENOENT;
}

const uint8_t *elf_vaddr_ptr(const struct elf_image *elf, uint64_t vaddr, size_t len)
{
	for (unsigned i = 0; i < elf->ehdr->e_phnum; i++) {
		const Elf64_Phdr *ph = &elf->phdr[i];

		if (ph->p_type != PT_LOAD || vaddr < ph->p_vaddr)
			continue;
		if (vaddr - ph->p_vaddr > ph->p_filesz || len > ph->p_filesz - (vaddr - ph->p_vaddr))
			continue;
		return elf->data + ph->p_offset + (vaddr - ph->p_vaddr);
	}
	return NULL;
}

int elf_vaddr_to_paddr(const struct elf_image *elf, uint64_t vaddr, uint64_t *paddr)
{
	for (unsigned i = 0; i < elf->ehdr->e_phnum; i++) {
		const Elf64_Phdr *ph = &elf->phdr[i];

		if (ph->p_type == PT_LOAD && vaddr >= ph->p_vaddr && vaddr - ph->p_vaddr < ph->p_memsz) {
			*paddr = ph->p_paddr + (vaddr - ph->p_vaddr);
			return 0;
		}
	}
	return -ENOENT;
}
