// SPDX-License-Identifier: GPL-2.0
/*
 * kallsyms recovery, part one: find the token tables and decode the names.
 *
 * scripts/kallsyms compresses the names with a 256-entry token table (every
 * byte of a compressed name stands for a token string) and emits, among
 * other tables, kallsyms_token_table (256 NUL-terminated strings) directly
 * followed by kallsyms_token_index (256 u16 offsets into it). That pair is
 * the same in every version from 2.6 to 7.0, has a rigid shape and is easy to
 * verify, so the search starts there; kallsyms-layout.c works out the rest.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/image/kallsyms-layout.h"

#define TOKEN_MAX_LEN		255
/* Fake token tables are rare; a hostile image must not make us try many. */
#define MAX_TOKEN_CANDIDATES	16
/* Generous: the real search on a 94,000-symbol kernel takes ~1M steps. */
#define SEARCH_BUDGET		(400ULL << 20)

int kallsyms_refuse(struct kallsyms_region *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
	return -EPROTO;
}

static int token_chars_ok(const uint8_t *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] < 0x21 || s[i] > 0x7e)
			return 0;
	return 1;
}

/* Is there a token index at pos, preceded by the token table it indexes? */
static int tokens_at(const struct kallsyms_region *r, size_t pos, struct kallsyms_tokens *tk)
{
	uint16_t idx[256];
	size_t nul, start, table;
	uint64_t v;

	for (unsigned i = 0; i < 256; i++) {
		if (kallsyms_read(r, pos + 2 * i, 2, &v))
			return 0;
		idx[i] = (uint16_t)v;
		if (i ? (idx[i] < idx[i - 1] + 2 || idx[i] > idx[i - 1] + TOKEN_MAX_LEN + 1) : idx[0])
			return 0;
	}
	/* The last token's NUL starts the run of zeros (NUL + ALGN padding). */
	nul = pos;
	while (nul > 0 && pos - nul <= KALLSYMS_ALIGN && r->data[nul - 1] == 0)
		nul--;
	if (nul == pos || pos - nul > KALLSYMS_ALIGN)
		return 0;
	start = nul;
	while (start > 0 && nul - start <= TOKEN_MAX_LEN && r->data[start - 1])
		start--;
	if (start == nul || start < idx[255])
		return 0;
	table = start - idx[255];
	for (unsigned i = 0; i < 256; i++) {
		size_t end = i < 255 ? table + idx[i + 1] - 1 : nul;
		const uint8_t *s = r->data + table + idx[i];

		if (r->data[end] || !token_chars_ok(s, end - table - idx[i]))
			return 0;
		tk->str[i] = (const char *)s;
		tk->len[i] = (uint8_t)(end - table - idx[i]);
	}
	tk->table = table;
	tk->index = pos;
	return 1;
}

static int pool_reserve(struct kallsyms_names *n, size_t more)
{
	size_t cap = n->pool_cap ? n->pool_cap : 1 << 20;
	char *p;

	if (n->pool_size + more <= n->pool_cap)
		return 0;
	while (cap < n->pool_size + more)
		cap *= 2;
	p = realloc(n->pool, cap);
	if (!p)
		return -ENOMEM;
	n->pool = p;
	n->pool_cap = cap;
	return 0;
}

/* Length of the name at *p (advanced past the length), or 0 if malformed. */
static unsigned name_length(const struct kallsyms_region *r, size_t *p, int uleb, int *long_seen)
{
	unsigned len;

	if (*p >= r->size)
		return 0;
	len = r->data[(*p)++];
	if (len & 0x80) {
		*long_seen = 1;
		if (uleb) {
			/* Two-byte ULEB128 at most: scripts/kallsyms caps at 0x3fff. */
			if (*p >= r->size || (r->data[*p] & 0x80))
				return 0;
			len = (len & 0x7f) | (unsigned)r->data[(*p)++] << 7;
		}
	}
	return len;
}

size_t kallsyms_names_skip(struct kallsyms_region *r, size_t start, uint32_t count, int uleb)
{
	size_t p = start;
	int long_seen = 0;

	if (kallsyms_spend(r, count))
		return 0;
	for (uint32_t i = 0; i < count; i++) {
		unsigned len = name_length(r, &p, uleb, &long_seen);

		if (!len || len > KALLSYMS_MAX_NAME || len > r->size - p)
			return 0;
		p += len;
	}
	return p;
}

/* Expands one name at *p into the pool; 0 or -errno. */
static int name_expand(struct kallsyms_region *r, const struct kallsyms_tokens *tk,
		       size_t *p, unsigned len, struct kallsyms_names *n)
{
	size_t at = n->pool_size, total = 0;
	char *out;

	if (len > r->size - *p || pool_reserve(n, KALLSYMS_MAX_NAME + 1))
		return len > r->size - *p ? -EPROTO : -ENOMEM;
	out = n->pool + at;
	for (unsigned k = 0; k < len; k++) {
		uint8_t t = r->data[*p + k];

		if (total + tk->len[t] > KALLSYMS_MAX_NAME)
			return kallsyms_refuse(r, "symbol %u is longer than %d characters",
					       n->count, KALLSYMS_MAX_NAME);
		memcpy(out + total, tk->str[t], tk->len[t]);
		total += tk->len[t];
	}
	/* First character: nm's type letter (or '?'); a name must follow it. */
	if (total < 2)
		return kallsyms_refuse(r, "symbol %u has no type letter or no name", n->count);
	out[total] = 0;
	n->off[n->count++] = (uint32_t)at;
	n->pool_size += total + 1;
	*p += len;
	return 0;
}

void kallsyms_names_free(struct kallsyms_names *n)
{
	free(n->pool);
	free(n->off);
	memset(n, 0, sizeof(*n));
}

int kallsyms_names_decode(struct kallsyms_region *r, const struct kallsyms_tokens *tk,
			  size_t start, uint32_t count, size_t markers, unsigned width,
			  int uleb, struct kallsyms_names *n)
{
	size_t p = start;
	uint64_t mark;
	int rc;

	memset(n, 0, sizeof(*n));
	if (kallsyms_spend(r, count))
		return kallsyms_refuse(r, "search budget exhausted");
	n->off = malloc((size_t)count * sizeof(*n->off));
	if (!n->off)
		return -ENOMEM;
	for (uint32_t i = 0; i < count; i++) {
		unsigned len;

		if (!(i & 0xff) && (kallsyms_read(r, markers + (size_t)(i >> 8) * width, width, &mark) ||
				    mark != p - start)) {
			rc = kallsyms_refuse(r, "kallsyms_markers[%u] does not match the names", i >> 8);
			goto fail;
		}
		len = name_length(r, &p, uleb, &n->long_seen);
		if (!len) {
			rc = kallsyms_refuse(r, "symbol %u has a malformed length", i);
			goto fail;
		}
		rc = name_expand(r, tk, &p, len, n);
		if (rc)
			goto fail;
	}
	if (kallsyms_align_up(r, p) != markers) {
		rc = kallsyms_refuse(r, "kallsyms_names does not end at kallsyms_markers");
		goto fail;
	}
	n->start = start;
	n->end = p;
	n->uleb = uleb;
	return 0;
fail:
	kallsyms_names_free(n);
	return rc;
}

static int fill_symtab(const struct kallsyms_names *n, const uint64_t *addrs, struct symtab *tab)
{
	for (uint32_t i = 0; i < n->count; i++) {
		const char *s = n->pool + n->off[i];
		int rc = symtab_add(tab, addrs[i], s[0], s + 1, strlen(s + 1));

		if (rc)
			return rc;
	}
	return 0;
}

/* Tries the token tables at pos; 0 with tab filled, else -errno. */
static int decode_at(struct kallsyms_region *r, const struct kallsyms_tokens *tk, uint64_t stext,
		     struct symtab *tab, struct kallsyms_layout *lay)
{
	struct kallsyms_found f;
	uint64_t *addrs;
	int rc;

	memset(&f, 0, sizeof(f));
	rc = kallsyms_layout_find_names(r, tk, &f);
	if (rc)
		return rc;
	addrs = malloc((size_t)f.names.count * sizeof(*addrs));
	if (!addrs) {
		kallsyms_names_free(&f.names);
		return -ENOMEM;
	}
	rc = kallsyms_layout_find_addresses(r, tk, &f, stext, addrs, lay);
	if (!rc)
		rc = fill_symtab(&f.names, addrs, tab);
	free(addrs);
	kallsyms_names_free(&f.names);
	return rc;
}

/* Scans r for the token tables and decodes the first set that checks out. */
static int decode_region(struct kallsyms_region *r, uint64_t stext, struct symtab *tab,
			 struct kallsyms_layout *lay, struct errbuf *err)
{
	struct kallsyms_tokens tk;
	unsigned tried = 0;
	uint64_t first = 0;
	int rc = -ENOENT;

	memset(lay, 0, sizeof(*lay));
	for (size_t pos = (4 - r->va % 4) % 4; pos + 512 <= r->size; pos += 4) {
		const uint8_t *p = r->data + pos;

		/* Cheap pre-check: index[0] == 0, index[1] small, index[2] above it. */
		if (p[0] | p[1] || p[3] || p[2] < 2 || p[5] > 1 || !tokens_at(r, pos, &tk))
			continue;
		if (!tried++)
			first = r->va + tk.table;
		rc = decode_at(r, &tk, stext, tab, lay);
		if (rc != -EPROTO || tried >= MAX_TOKEN_CANDIDATES)
			break;
	}
	if (rc == -ENOENT)
		return err_set(err, ENOENT, "no kallsyms tables found (kernel built without CONFIG_KALLSYMS, or the tables are damaged)");
	if (rc == -EPROTO)
		return err_set(err, EPROTO, "kallsyms token table at %#llx, but the tables around it do not check out (%s)",
			       (unsigned long long)first, r->why[0] ? r->why : "layout not understood");
	if (rc)
		return err_set(err, -rc, "decoding kallsyms: %s", strerror(-rc));
	return 0;
}

int kallsyms_decode(const uint8_t *data, size_t size, uint64_t va, uint64_t stext,
		    struct symtab *tab, struct kallsyms_layout *lay, struct errbuf *err)
{
	struct kallsyms_region r = { .data = data, .size = size, .va = va, .budget = SEARCH_BUDGET };

	return decode_region(&r, stext, tab, lay, err);
}

/*
 * No _stext to check against, so one ambiguity is settled by a fact of the
 * arches instead: only x86_64 SMP kernels make per-cpu addresses absolute
 * (CONFIG_KALLSYMS_ABSOLUTE_PERCPU), and without a negative offset that form
 * reads base-relative offsets as small absolute addresses.
 */
int kallsyms_decode_raw(const uint8_t *data, size_t size, struct symtab *tab,
			struct kallsyms_layout *lay, struct errbuf *err)
{
	struct kallsyms_region r = {
		.data = data, .size = size, .va = 0, .budget = SEARCH_BUDGET, .no_percpu = 1,
	};

	return decode_region(&r, 0, tab, lay, err);
}

/* Where _stext must land: the start of .text (or of the first code segment). */
static uint64_t elf_text_start(const struct elf_image *elf)
{
	const Elf64_Shdr *text = elf_section(elf, ".text");
	uint64_t lo = 0;

	if (text)
		return text->sh_addr;
	for (unsigned i = 0; i < elf->ehdr->e_phnum; i++) {
		const Elf64_Phdr *ph = &elf->phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && (!lo || ph->p_vaddr < lo))
			lo = ph->p_vaddr;
	}
	return lo;
}

int kallsyms_recover(const struct elf_image *elf, struct symtab *tab,
		     struct kallsyms_layout *lay, struct errbuf *err)
{
	const Elf64_Shdr *ro = elf_section(elf, ".rodata");
	const uint8_t *data = elf_section_data(elf, ro);
	uint64_t stext = elf_text_start(elf);
	int rc = -ENOENT;

	if (data)
		return kallsyms_decode(data, ro->sh_size, ro->sh_addr, stext, tab, lay, err);
	/* No section headers: the tables are in one of the loaded segments. */
	for (unsigned i = 0; i < elf->ehdr->e_phnum && rc == -ENOENT; i++) {
		const Elf64_Phdr *ph = &elf->phdr[i];

		if (ph->p_type != PT_LOAD || (ph->p_flags & PF_X))
			continue;
		rc = kallsyms_decode(elf->data + ph->p_offset, ph->p_filesz, ph->p_vaddr,
				     stext, tab, lay, err);
	}
	if (rc == -ENOENT)
		return err_set(err, ENOENT, "no kallsyms tables found (kernel built without CONFIG_KALLSYMS, or the tables are damaged)");
	return rc;
}

void kallsyms_layout_describe(const struct kallsyms_layout *l, char *buf, size_t size)
{
	static const char *const addressing[] = {
		[KALLSYMS_ABSOLUTE] = "absolute addresses",
		[KALLSYMS_BASE_RELATIVE] = "base-relative offsets",
		[KALLSYMS_ABSOLUTE_PERCPU] = "base-relative offsets with absolute per-cpu",
		[KALLSYMS_PLACE_RELATIVE] = "place-relative offsets (7.0+)",
	};
	static const char *const lengths[] = {
		[KALLSYMS_LEN_EITHER] = "name lengths all below 128 (one byte in either form)",
		[KALLSYMS_LEN_ONE_BYTE] = "one-byte name lengths (before 6.1)",
		[KALLSYMS_LEN_ULEB128] = "ULEB128 name lengths (6.1+)",
	};
	char seqs[48];

	if (l->seqs_width)
		snprintf(seqs, sizeof(seqs), "kallsyms_seqs_of_names (%u-byte)", l->seqs_width);
	else
		snprintf(seqs, sizeof(seqs), "no kallsyms_seqs_of_names");
	snprintf(buf, size, "%s, %s, %s, %s, %u-bit markers",
		 l->order == KALLSYMS_NAMES_FIRST ? "names-first order (6.4+)"
						  : "offsets-first order (up to 6.3)",
		 addressing[l->addressing], lengths[l->lengths], seqs, l->markers_width * 8);
}
