// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "vmm/image/btf.h"
#include "vmm/util/log.h"

/* libbpf's own warnings go to vmmtrace's debug log, not to stderr. */
static int kbtf_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[512];

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = 0;
	log_debug("libbpf: %s", line);
	return 0;
}

static void kbtf_quiet(void)
{
	libbpf_set_print(kbtf_libbpf_print);
}

int kbtf_from_elf(const struct elf_image *elf, const char *name, struct kernel_btf *kb,
		  struct errbuf *err)
{
	const Elf64_Shdr *sh = elf_section(elf, ".BTF");
	const uint8_t *data = sh ? elf_section_data(elf, sh) : NULL;
	long rc;

	memset(kb, 0, sizeof(*kb));
	if (!data || !sh->sh_size)
		return err_set(err, ENOENT, "%s has no .BTF section (type information)", name);
	if (sh->sh_size > UINT32_MAX)
		return err_set(err, EINVAL, "%s: .BTF section too large", name);
	kbtf_quiet();
	kb->btf = btf__new(data, (uint32_t)sh->sh_size);
	rc = libbpf_get_error(kb->btf);
	if (rc) {
		char why[128];

		kb->btf = NULL;
		libbpf_strerror((int)rc, why, sizeof(why));
		return err_set(err, EINVAL, "%s: its .BTF section is not valid BTF (%s)", name, why);
	}
	snprintf(kb->source, sizeof(kb->source), "%s (.BTF)", name);
	return 0;
}

int kbtf_from_file(const char *path, struct kernel_btf *kb, struct errbuf *err)
{
	long rc;

	memset(kb, 0, sizeof(*kb));
	kbtf_quiet();
	kb->btf = btf__parse(path, NULL);
	rc = libbpf_get_error(kb->btf);
	if (rc) {
		char why[128];

		kb->btf = NULL;
		libbpf_strerror((int)rc, why, sizeof(why));
		return err_set(err, rc < -4095 ? EINVAL : (int)-rc, "cannot read BTF from '%s': %s", path, why);
	}
	snprintf(kb->source, sizeof(kb->source), "%s", path);
	return 0;
}

void kbtf_close(struct kernel_btf *kb)
{
	btf__free(kb->btf);
	kb->btf = NULL;
}

static int kbtf_is_composite(const struct btf_type *t)
{
	return t && (btf_is_struct(t) || btf_is_union(t));
}

/*
 * Finds member `name` of composite type `id`, descending into anonymous
 * members; adds its bit offset to *bits and returns its type id, or -ENOENT
 * (-EINVAL for a bit field).
 */
static int kbtf_find(const struct btf *btf, uint32_t id, const char *name, size_t len,
		     uint64_t *bits, int depth)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	const struct btf_member *m;

	if (!kbtf_is_composite(t) || depth > 8)
		return -ENOENT;
	m = btf_members(t);
	for (unsigned i = 0; i < btf_vlen(t); i++, m++) {
		const char *mn = btf__name_by_offset(btf, m->name_off);
		uint64_t here = btf_member_bit_offset(t, i);

		if (mn && *mn) {
			if (strlen(mn) != len || memcmp(mn, name, len))
				continue;
			if (btf_member_bitfield_size(t, i) || here % 8)
				return -EINVAL;
			*bits += here;
			return (int)m->type;
		}
		int r = btf__resolve_type(btf, m->type);
		uint64_t sub = 0;

		if (r < 0)
			continue;
		r = kbtf_find(btf, (uint32_t)r, name, len, &sub, depth + 1);
		if (r == -EINVAL)
			return r;
		if (r >= 0) {
			*bits += here + sub;
			return r;
		}
	}
	return -ENOENT;
}

static int kbtf_struct_id(const struct kernel_btf *kb, const char *type)
{
	int id = btf__find_by_name_kind(kb->btf, type, BTF_KIND_STRUCT);

	if (id < 0)
		id = btf__find_by_name_kind(kb->btf, type, BTF_KIND_UNION);
	return id < 0 ? -ENOENT : id;
}

int kbtf_member(const struct kernel_btf *kb, const char *type, const char *path,
		uint32_t *offset, uint32_t *size)
{
	uint64_t bits = 0;
	long sz;
	int id;

	if (!kb->btf || (id = kbtf_struct_id(kb, type)) < 0)
		return -ENOENT;
	for (const char *p = path; *p;) {
		size_t len = strcspn(p, ".");

		id = btf__resolve_type(kb->btf, (uint32_t)id);
		if (id < 0)
			return -ENOENT;
		id = kbtf_find(kb->btf, (uint32_t)id, p, len, &bits, 0);
		if (id < 0)
			return id;
		p += len;
		if (*p == '.')
			p++;
	}
	sz = btf__resolve_size(kb->btf, (uint32_t)id);
	if (sz < 0 || bits / 8 > UINT32_MAX)
		return -ENOENT;
	*offset = (uint32_t)(bits / 8);
	*size = (uint32_t)sz;
	return 0;
}

uint32_t kbtf_struct_size(const struct kernel_btf *kb, const char *type)
{
	int id = kb->btf ? kbtf_struct_id(kb, type) : -ENOENT;
	long sz = id < 0 ? -1 : btf__resolve_size(kb->btf, (uint32_t)id);

	return sz < 0 || sz > UINT32_MAX ? 0 : (uint32_t)sz;
}
