// SPDX-License-Identifier: GPL-2.0
/*
 * Symbols from a System.map or from an unstripped vmlinux. For the ELF case
 * the types follow nm (binutils' bfd_decode_symclass) and the filter follows
 * scripts/mksysmap of 6.1, so `vmmtrace symbols vmlinux` prints what the
 * build's System.map holds.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/image/sysmap.h"
#include "vmm/util/util.h"

#define SYSMAP_MAX_FILE (256u << 20)

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* One "ADDR TYPE NAME[\t[module]]" line; 1 = symbol, 0 = skip, -1 = malformed. */
static int parse_line(const char *p, const char *end, uint64_t *addr, char *type,
		      const char **name, size_t *len)
{
	unsigned digits = 0;
	int v;

	*addr = 0;
	for (; p < end && (v = util_hex_digit(*p)) >= 0; p++, digits++)
		*addr = *addr << 4 | (uint64_t)v;
	if (!digits || digits > 16 || p >= end || !is_space(*p))
		return -1;
	while (p < end && is_space(*p))
		p++;
	if (p + 1 >= end || is_space(*p) || !is_space(p[1]))
		return -1;
	*type = *p;
	for (p += 2; p < end && is_space(*p); p++)
		;
	*name = p;
	while (p < end && !is_space(*p))
		p++;
	*len = (size_t)(p - *name);
	while (p < end && is_space(*p))
		p++;
	if (!*len)
		return -1;
	if (p < end)
		return *p == '[' && end[-1] == ']' ? 0 : -1;	/* a module's symbol */
	return 1;
}

int sysmap_parse(const char *name, const char *text, size_t size,
		 struct symtab *tab, struct errbuf *err)
{
	const char *p = text, *end = text + size;
	size_t line = 0, nonzero = 0, added = 0;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *sym;
		uint64_t addr;
		size_t len;
		char type;
		int rc;

		eol = eol ? eol : end;
		line++;
		rc = eol == p ? 0 : parse_line(p, eol, &addr, &type, &sym, &len);
		if (rc < 0 && memmem(p, (size_t)(eol - p), "real System.map", 15))
			return err_set(err, EINVAL, "%s is a placeholder, not a System.map (Debian ships the real one in the linux-image-*-dbg package)", name);
		if (rc < 0 || (rc > 0 && memchr(sym, 0, len)))
			return err_set(err, EINVAL, "%s:%zu: not a System.map line (expected 'ADDRESS TYPE NAME')", name, line);
		if (rc > 0) {
			rc = symtab_add(tab, addr, type, sym, len);
			if (rc)
				return err_set(err, -rc, "%s: too many symbols or out of memory", name);
			nonzero += addr != 0;
			added++;
		}
		p = eol + 1;
	}
	if (!added)
		return err_set(err, EINVAL, "%s holds no symbols", name);
	if (!nonzero)
		return err_set(err, EINVAL, "%s: every address is zero (a /proc/kallsyms read without privilege?)", name);
	return 0;
}

int sysmap_read_file(const char *path, struct symtab *tab, struct errbuf *err)
{
	uint8_t *buf = NULL;
	size_t size = 0;
	int rc = util_read_file(path, SYSMAP_MAX_FILE, &buf, &size);

	if (rc == -EINVAL || rc == -EFBIG)
		return err_set(err, EINVAL, "System.map '%s' is not a regular file of at most 256 MiB", path);
	if (rc == -ENOMEM)
		return err_set(err, rc, "out of memory reading '%s'", path);
	if (rc)
		return err_set(err, rc, "cannot open System.map '%s': %s", path, strerror(-rc));
	rc = sysmap_parse(path, (char *)buf, size, tab, err);
	free(buf);
	return rc;
}

static int is_debug_section(const char *name)
{
	return !strncmp(name, ".debug", 6) || !strncmp(name, ".zdebug", 7) ||
	       !strncmp(name, ".gnu.linkonce.wi.", 17) || !strcmp(name, ".line") ||
	       !strncmp(name, ".stab", 5);
}

/* bfd's decode_section_type() on the ELF section flags. */
static char section_letter(const struct elf_image *elf, const Elf64_Shdr *sh)
{
	int contents = sh->sh_type != SHT_NOBITS;
	int load = (sh->sh_flags & SHF_ALLOC) && contents;
	int readonly = !(sh->sh_flags & SHF_WRITE);
	const char *name = elf->shstrtab && sh->sh_name < elf->shstrtab_size
			   ? elf->shstrtab + sh->sh_name : "";

	if (sh->sh_flags & SHF_EXECINSTR)
		return 't';
	if (load)
		return readonly ? 'r' : 'd';
	if (!contents)
		return 'b';
	if (is_debug_section(name))
		return 'N';
	return readonly ? 'n' : '?';
}

/* The letter `nm` prints for sym (binutils' bfd_decode_symclass). */
static char nm_letter(const struct elf_image *elf, const Elf64_Sym *sym)
{
	unsigned bind = ELF64_ST_BIND(sym->st_info), type = ELF64_ST_TYPE(sym->st_info);
	char c;

	if (sym->st_shndx == SHN_UNDEF)
		return bind == STB_WEAK ? (type == STT_OBJECT ? 'v' : 'w') : 'U';
	if (sym->st_shndx == SHN_COMMON)
		return 'C';
	if (type == STT_GNU_IFUNC)
		return 'i';
	if (bind == STB_WEAK)
		return type == STT_OBJECT ? 'V' : 'W';
	if (bind == STB_GNU_UNIQUE)
		return 'u';
	if (sym->st_shndx == SHN_ABS)
		c = 'a';
	else if (sym->st_shndx < elf->ehdr->e_shnum)
		c = section_letter(elf, &elf->shdr[sym->st_shndx]);
	else
		return '?';
	return bind == STB_GLOBAL && c != '?' ? (char)(c - 'a' + 'A') : c;
}

/* What scripts/mksysmap (6.1) leaves out of System.map. */
static int mksysmap_drops(char type, const char *name)
{
	static const char *const prefixes[] = { "$", ".L", "__crc_", "__kstrtab_", "__kstrtabns_" };

	if (type == 'a' || type == 'N' || type == 'U' || type == 'w' || !strcmp(name, "L0"))
		return 1;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return 1;
	return 0;
}

int sysmap_read_elf(const struct elf_image *elf, struct symtab *tab, struct errbuf *err)
{
	struct elf_symbols t;
	size_t added = 0;
	int rc = elf_symtab(elf, &t);

	if (rc == -ENOENT)
		return err_set(err, ENOENT, "no .symtab (the vmlinux is stripped)");
	if (rc)
		return err_set(err, ENOEXEC, "the ELF .symtab or its string table is malformed");
	for (size_t i = 1; i < t.n; i++) {
		const Elf64_Sym *s = &t.syms[i];
		unsigned type = ELF64_ST_TYPE(s->st_info);
		const char *name;
		char letter;

		if (type == STT_SECTION || type == STT_FILE || s->st_name >= t.strs_size)
			continue;
		name = t.strs + s->st_name;
		letter = nm_letter(elf, s);
		if (!*name || mksysmap_drops(letter, name))
			continue;
		rc = symtab_add(tab, s->st_value, letter, name, strlen(name));
		if (rc)
			return err_set(err, -rc, "too many symbols in .symtab or out of memory");
		added++;
	}
	if (!added)
		return err_set(err, ENOENT, "the ELF .symtab holds no symbols");
	return 0;
}
