// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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
	free(kb->funcs);
	kb->funcs = NULL;
	kb->nfuncs = 0;
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

/* FUNC type ids sorted by name, for kbtf_func_proto (qsort_r's order). */
static int kbtf_func_cmp(const void *a, const void *b, void *arg)
{
	const struct btf *btf = arg;
	uint32_t ia = *(const uint32_t *)a, ib = *(const uint32_t *)b;
	int c = strcmp(btf__name_by_offset(btf, btf__type_by_id(btf, ia)->name_off),
		       btf__name_by_offset(btf, btf__type_by_id(btf, ib)->name_off));

	return c ? c : (ia > ib) - (ia < ib);	/* the first of a name stays first, as the kernel finds it */
}

static int kbtf_index_funcs(struct kernel_btf *kb)
{
	uint32_t n = btf__type_cnt(kb->btf), count = 0;

	for (uint32_t id = 1; id < n; id++)
		count += btf_is_func(btf__type_by_id(kb->btf, id));
	kb->funcs = malloc((count ? count : 1) * sizeof(*kb->funcs));
	if (!kb->funcs)
		return -ENOMEM;
	for (uint32_t id = 1; id < n; id++)
		if (btf_is_func(btf__type_by_id(kb->btf, id)))
			kb->funcs[kb->nfuncs++] = id;
	qsort_r(kb->funcs, kb->nfuncs, sizeof(*kb->funcs), kbtf_func_cmp, kb->btf);
	return 0;
}

static int kbtf_func_find(const struct kernel_btf *kb, const char *name)
{
	size_t lo = 0, hi = kb->nfuncs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct btf_type *t = btf__type_by_id(kb->btf, kb->funcs[mid]);

		if (strcmp(btf__name_by_offset(kb->btf, t->name_off), name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < kb->nfuncs &&
	    !strcmp(btf__name_by_offset(kb->btf, btf__type_by_id(kb->btf, kb->funcs[lo])->name_off), name))
		return (int)kb->funcs[lo];
	return -ENOENT;
}

/* BTF's names of the kinds ftrace prints for an argument it cannot show (btf_type_str). */
static const char *const kbtf_kind_names[] = {
	"UNKNOWN", "INT", "PTR", "ARRAY", "STRUCT", "UNION", "ENUM", "FWD", "TYPEDEF", "VOLATILE",
	"CONST", "RESTRICT", "FUNC", "FUNC_PROTO", "VAR", "DATASEC", "FLOAT", "DECL_TAG", "TYPE_TAG",
	"ENUM64",
};

/* Fills p for a parameter of type id; returns the registers it takes. */
static unsigned kbtf_param_type(const struct btf *btf, uint32_t id, struct kbtf_param *p)
{
	int rid = btf__resolve_type(btf, id);
	const struct btf_type *t = rid < 0 ? NULL : btf__type_by_id(btf, (uint32_t)rid);
	unsigned kind = t ? btf_kind(t) : 0;

	p->size = 8;
	if (!t) {
		p->kind = KBTF_ARG_UNKNOWN;
	} else if (kind == BTF_KIND_PTR) {
		p->kind = KBTF_ARG_PTR;
	} else if (kind == BTF_KIND_INT && t->size >= 1 && t->size <= 8) {
		p->kind = (btf_int_encoding(t) & BTF_INT_SIGNED) ? KBTF_ARG_SINT : KBTF_ARG_UINT;
		p->size = (uint8_t)t->size;
	} else if (kind == BTF_KIND_ENUM && t->size >= 1 && t->size <= 8) {
		p->kind = KBTF_ARG_ENUM;
		p->size = (uint8_t)t->size;
		p->is_signed = btf_kflag(t);
	} else {
		long sz = btf__resolve_size(btf, (uint32_t)rid);

		p->kind = KBTF_ARG_OTHER;
		p->size = sz <= 0 ? 8 : sz > 255 ? 255 : (uint8_t)sz;
		snprintf(p->type, sizeof(p->type), "%s",
			 kind < sizeof(kbtf_kind_names) / sizeof(*kbtf_kind_names) ? kbtf_kind_names[kind] : "?");
		return (p->size + 7u) / 8u;
	}
	return 1;
}

int kbtf_func_proto(struct kernel_btf *kb, const char *name, struct kbtf_proto *out)
{
	const struct btf_type *fn, *proto;
	const struct btf_param *bp;
	unsigned regs = 0, n;
	int id;

	memset(out, 0, sizeof(*out));
	if (!kb->btf)
		return -ENOENT;
	if (!kb->funcs && kbtf_index_funcs(kb))
		return -ENOMEM;
	if ((id = kbtf_func_find(kb, name)) < 0)
		return id;
	fn = btf__type_by_id(kb->btf, (uint32_t)id);
	proto = btf__type_by_id(kb->btf, fn->type);
	if (!proto || !btf_is_func_proto(proto))
		return -ENOENT;
	bp = btf_params(proto);
	n = btf_vlen(proto);
	if (n && !bp[n - 1].type && !bp[n - 1].name_off) {
		out->variadic = 1;	/* "...": BTF's last parameter without name or type */
		n--;
	}
	out->nparams = n > 255 ? 255 : (uint8_t)n;
	for (unsigned i = 0; i < n && out->kept < KBTF_ARG_REGS && regs < KBTF_ARG_REGS; i++) {
		struct kbtf_param *p = &out->p[out->kept++];
		const char *pn = btf__name_by_offset(kb->btf, bp[i].name_off);

		snprintf(p->name, sizeof(p->name), "%s", pn ? pn : "");
		regs += kbtf_param_type(kb->btf, bp[i].type, p);
	}
	return 0;
}
