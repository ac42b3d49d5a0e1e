// SPDX-License-Identifier: GPL-2.0
/*
 * kallsyms recovery, part two: from the token tables, find the other tables
 * and work out how the addresses are encoded. What scripts/kallsyms emits
 * (every table starts 8-aligned on 64-bit kernels):
 *
 *   up to 6.3:  offsets (or addresses), relative_base, num_syms, names,
 *               markers, [seqs_of_names,] token_table, token_index
 *   6.4 on:     num_syms, names, markers, token_table, token_index,
 *               offsets (or addresses), [relative_base,] seqs_of_names
 *
 * seqs_of_names arrived in 6.2 (and in Debian's 6.1); relative_base went
 * away in 7.0 when offsets became relative to their own address. Rather than
 * trust a version number, each hypothesis is checked against the bytes: the
 * markers must index the names stream exactly, num_syms must count it,
 * seqs_of_names must be a permutation, and the decoded addresses must be
 * sorted with _stext at the start of .text.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/image/kallsyms-layout.h"

/* 256 names of at least two bytes (length + one token) per marker step. */
#define MARKER_MIN_STEP 512
/* The names after the last marker: up to 256 of the longest. */
#define TAIL_MAX ((size_t)256 * (2 + KALLSYMS_MAX_NAME))

static size_t align_down(const struct kallsyms_region *r, size_t off)
{
	return off - (r->va + off) % KALLSYMS_ALIGN;
}

/* markers[0] == 0 and each of m entries at least MARKER_MIN_STEP above the last. */
static int markers_ok(struct kallsyms_region *r, size_t ms, uint32_t m, unsigned w)
{
	uint64_t prev = 0, v;

	if (!kallsyms_aligned(r, ms) || kallsyms_spend(r, m))
		return 0;
	for (uint32_t k = 0; k < m; k++) {
		if (kallsyms_read(r, ms + (size_t)k * w, w, &v))
			return 0;
		if (k ? v < prev + MARKER_MIN_STEP : v != 0)
			return 0;
		prev = v;
	}
	return 1;
}

/* Markers ending at end: walk back to markers[0] == 0. */
static int markers_walk_back(struct kallsyms_region *r, size_t end, unsigned w,
			     size_t *ms, uint32_t *m)
{
	uint64_t prev = UINT64_MAX, v;
	uint32_t count = 0;

	while (end >= w && count <= KALLSYMS_MAX_SYMS / 256) {
		end -= w;
		if (kallsyms_spend(r, 1) || kallsyms_read(r, end, w, &v))
			return 0;
		if (!v) {
			*ms = end;
			*m = count + 1;
			return kallsyms_aligned(r, end);
		}
		if (v >= prev || prev - v < MARKER_MIN_STEP)
			return 0;
		prev = v;
		count++;
	}
	return 0;
}

/*
 * The names stream ends just before the markers at ms and starts right
 * after num_syms (8 bytes, a .long plus padding or a pointer-sized value).
 * The last marker bounds where it can start; decoding the tail settles it.
 */
static int names_search(struct kallsyms_region *r, const struct kallsyms_tokens *tk,
			size_t ms, uint32_t m, unsigned w, uint32_t known, struct kallsyms_found *f)
{
	uint64_t last, n;
	size_t hi, lo, s;

	if (kallsyms_read(r, ms + (size_t)(m - 1) * w, w, &last) || last + 2 + 8 > ms)
		return 0;
	hi = align_down(r, ms - last - 2);
	lo = ms - last > TAIL_MAX + 8 ? ms - last - TAIL_MAX - 8 : 8;
	for (s = hi; s >= lo && s >= 8; s -= KALLSYMS_ALIGN) {
		if (kallsyms_spend(r, 1) || kallsyms_read(r, s - 8, 8, &n))
			return 0;
		if (!n || n > KALLSYMS_MAX_SYMS || (n + 255) / 256 != m || (known && n != known))
			continue;
		for (int uleb = 1; uleb >= 0; uleb--) {
			size_t end = kallsyms_names_skip(r, s + last, (uint32_t)(n - 256 * (m - 1)), uleb);
			int rc;

			if (!end || kallsyms_align_up(r, end) != ms)
				continue;
			rc = kallsyms_names_decode(r, tk, s, (uint32_t)n, ms, w, uleb, &f->names);
			if (rc == -EPROTO)
				continue;
			if (rc)
				return rc;
			f->markers = ms;
			f->nmarkers = m;
			f->markers_width = w;
			return 1;
		}
	}
	return 0;
}

/* Is the width-byte array at off a permutation of 0..n-1? */
static int seqs_ok(struct kallsyms_region *r, size_t off, uint32_t n, unsigned width)
{
	uint8_t *seen;
	int ok = 1;

	if (off > r->size || (uint64_t)n * width > r->size - off || kallsyms_spend(r, n))
		return 0;
	seen = calloc((n + 7) / 8, 1);
	if (!seen)
		return 0;
	for (uint32_t i = 0; i < n && ok; i++) {
		const uint8_t *p = r->data + off + (size_t)i * width;
		/* 3-byte entries are big-endian (scripts/kallsyms), 4-byte ones .long. */
		uint32_t v = width == 3 ? (uint32_t)p[0] << 16 | p[1] << 8 | p[2]
					: (uint32_t)p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;

		ok = v < n && !(seen[v / 8] & (1 << v % 8));
		if (ok)
			seen[v / 8] |= (uint8_t)(1 << v % 8);
	}
	free(seen);
	return ok;
}

/* 6.2-6.3 (and Debian 6.1): markers, seqs_of_names, token_table. */
static int seqs_search(struct kallsyms_region *r, const struct kallsyms_tokens *tk,
		       unsigned sw, unsigned w, struct kallsyms_found *f)
{
	size_t t = tk->table;

	if (t < sw + 8)
		return 0;
	for (size_t q = align_down(r, t - sw); q >= 8 && t - q <= (size_t)sw * KALLSYMS_MAX_SYMS + 8;
	     q -= KALLSYMS_ALIGN) {
		size_t gap = t - q;
		uint64_t n = gap > 8 ? (gap - 8) / sw + 1 : 1;

		if (kallsyms_spend(r, 1))
			return 0;
		for (; n <= gap / sw; n++) {
			uint32_t m = (uint32_t)((n + 255) / 256);
			size_t wm = ((size_t)w * m + 7) & ~(size_t)7, ms = q - wm;
			uint64_t v0, v1 = MARKER_MIN_STEP;
			int rc;

			if (kallsyms_align_up(r, q + sw * n) != t || q < wm ||
			    kallsyms_read(r, ms, w, &v0) || v0 ||
			    (m > 1 && kallsyms_read(r, ms + w, w, &v1)) || v1 < MARKER_MIN_STEP ||
			    !markers_ok(r, ms, m, w) || !seqs_ok(r, q, (uint32_t)n, sw))
				continue;
			rc = names_search(r, tk, ms, m, w, (uint32_t)n, f);
			if (rc < 0)
				return rc;
			if (rc) {
				f->seqs = q;
				f->seqs_width = sw;
				return 1;
			}
		}
	}
	return 0;
}

int kallsyms_layout_find_names(struct kallsyms_region *r, const struct kallsyms_tokens *tk,
			       struct kallsyms_found *f)
{
	static const unsigned widths[] = { 4, 8 };
	size_t ms;
	uint32_t m;
	int rc;

	/* Markers right before the token table: up to 6.1, and 6.4 on. */
	for (unsigned i = 0; i < 2; i++) {
		for (size_t pad = 0; pad <= 4 && pad < tk->table; pad += 4) {
			if (!markers_walk_back(r, tk->table - pad, widths[i], &ms, &m))
				continue;
			rc = names_search(r, tk, ms, m, widths[i], 0, f);
			if (rc)
				return rc < 0 ? rc : 0;
		}
	}
	/* seqs_of_names between them: 3-byte entries, or 4 in early 6.2 trees. */
	for (unsigned sw = 3; sw <= 4; sw++) {
		for (unsigned i = 0; i < 2; i++) {
			rc = seqs_search(r, tk, sw, widths[i], f);
			if (rc)
				return rc < 0 ? rc : 0;
		}
	}
	if (!r->budget)
		return kallsyms_refuse(r, "search budget exhausted");
	return kallsyms_refuse(r, "no kallsyms_markers/kallsyms_names that index each other before %#llx",
			       (unsigned long long)(r->va + tk->table));
}

/* One way the addresses could be stored; kallsyms_layout_find_addresses tries each. */
struct addr_form {
	enum kallsyms_order order;
	enum kallsyms_addressing mode;
	size_t table;		/* offsets or addresses */
	size_t relbase;		/* SIZE_MAX when there is none */
	size_t seqs;		/* where seqs_of_names would follow (6.4 on), or SIZE_MAX */
};

static int addr_decode(struct kallsyms_region *r, const struct addr_form *a, uint32_t n,
		       uint64_t *addrs, uint64_t *relbase)
{
	unsigned w = a->mode == KALLSYMS_ABSOLUTE ? 8 : 4;
	uint64_t v = 0, base = 0;

	if (a->table > r->size || (uint64_t)n * w > r->size - a->table || kallsyms_spend(r, n))
		return 0;
	if (a->relbase != SIZE_MAX && kallsyms_read(r, a->relbase, 8, &base))
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		size_t at = a->table + (size_t)i * w;
		int32_t off;

		kallsyms_read(r, at, w, &v);
		off = (int32_t)(uint32_t)v;
		switch (a->mode) {
		case KALLSYMS_ABSOLUTE: addrs[i] = v; break;
		case KALLSYMS_BASE_RELATIVE: addrs[i] = base + (uint32_t)v; break;
		case KALLSYMS_ABSOLUTE_PERCPU:
			addrs[i] = off >= 0 ? (uint64_t)off : base - 1 - (int64_t)off;
			break;
		case KALLSYMS_PLACE_RELATIVE: addrs[i] = r->va + at + (int64_t)off; break;
		}
		if (i && addrs[i] < addrs[i - 1])
			return 0;	/* kallsyms is sorted by address */
	}
	*relbase = base;
	return 1;
}

static uint32_t seq_at(const struct kallsyms_region *r, const struct kallsyms_found *f, uint32_t i)
{
	const uint8_t *p = r->data + f->seqs + (size_t)i * f->seqs_width;

	return f->seqs_width == 3 ? (uint32_t)p[0] << 16 | p[1] << 8 | p[2]
				  : (uint32_t)p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* strcmp, or with clang LTO's ".llvm.NNN" suffixes cut (scripts/kallsyms sorts so). */
static int name_cmp(const char *a, const char *b, int cut)
{
	size_t la = cut ? strcspn(a, ".") : strlen(a), lb = cut ? strcspn(b, ".") : strlen(b);
	int c = memcmp(a, b, la < lb ? la : lb);

	return c ? c : (la > lb) - (la < lb);
}

/*
 * seqs_of_names lists the symbols sorted by name: a check on the names
 * themselves, which the markers cannot catch when a damaged byte keeps its
 * token count.
 */
static int seqs_sorted(const struct kallsyms_region *r, const struct kallsyms_found *f)
{
	const struct kallsyms_names *n = &f->names;

	for (int cut = 0; cut <= 1; cut++) {
		uint32_t i;

		for (i = 1; i < n->count; i++)
			if (name_cmp(n->pool + n->off[seq_at(r, f, i - 1)] + 1,
				     n->pool + n->off[seq_at(r, f, i)] + 1, cut) > 0)
				break;
		if (i >= n->count)
			return 1;
	}
	return 0;
}

static uint32_t find_stext(const struct kallsyms_names *n)
{
	for (uint32_t i = 0; i < n->count; i++)
		if (!strcmp(n->pool + n->off[i] + 1, "_stext"))
			return i;
	return UINT32_MAX;
}

static unsigned addr_forms(struct kallsyms_region *r, const struct kallsyms_tokens *tk,
			   const struct kallsyms_found *f, struct addr_form *a)
{
	size_t s = f->names.start, n = f->names.count, n4 = (4 * n + 7) & ~(size_t)7;
	size_t p0 = kallsyms_align_up(r, tk->index + 512), rb;
	unsigned k = 0;

	if (s >= 16 + n4) {
		if (!r->no_percpu)
			a[k++] = (struct addr_form){ KALLSYMS_OFFSETS_FIRST, KALLSYMS_ABSOLUTE_PERCPU, s - 16 - n4, s - 16, SIZE_MAX };
		a[k++] = (struct addr_form){ KALLSYMS_OFFSETS_FIRST, KALLSYMS_BASE_RELATIVE, s - 16 - n4, s - 16, SIZE_MAX };
	}
	if (s >= 8 + 8 * n)
		a[k++] = (struct addr_form){ KALLSYMS_OFFSETS_FIRST, KALLSYMS_ABSOLUTE, s - 8 - 8 * n, SIZE_MAX, SIZE_MAX };
	if (f->seqs_width)
		return k;	/* seqs_of_names before the token table: offsets-first */
	rb = kallsyms_align_up(r, p0 + 4 * n);
	if (!r->no_percpu)
		a[k++] = (struct addr_form){ KALLSYMS_NAMES_FIRST, KALLSYMS_ABSOLUTE_PERCPU, p0, rb, rb + 8 };
	a[k++] = (struct addr_form){ KALLSYMS_NAMES_FIRST, KALLSYMS_BASE_RELATIVE, p0, rb, rb + 8 };
	a[k++] = (struct addr_form){ KALLSYMS_NAMES_FIRST, KALLSYMS_PLACE_RELATIVE, p0, SIZE_MAX, rb };
	a[k++] = (struct addr_form){ KALLSYMS_NAMES_FIRST, KALLSYMS_ABSOLUTE, p0, SIZE_MAX, p0 + 8 * n };
	return k;
}

static void layout_fill(const struct kallsyms_region *r, const struct kallsyms_tokens *tk,
			const struct kallsyms_found *f, const struct addr_form *a,
			uint64_t relbase, struct kallsyms_layout *l)
{
	const struct kallsyms_names *n = &f->names;

	memset(l, 0, sizeof(*l));
	l->order = a->order;
	l->addressing = a->mode;
	l->lengths = !n->long_seen ? KALLSYMS_LEN_EITHER
		     : n->uleb ? KALLSYMS_LEN_ULEB128 : KALLSYMS_LEN_ONE_BYTE;
	l->markers_width = f->markers_width;
	l->seqs_width = f->seqs_width;
	l->num_syms = n->count;
	l->addresses_va = r->va + a->table;
	if (a->relbase != SIZE_MAX) {
		l->relative_base = relbase;
		l->relative_base_va = r->va + a->relbase;
	}
	l->num_syms_va = r->va + n->start - 8;
	l->names_va = r->va + n->start;
	l->markers_va = r->va + f->markers;
	l->seqs_va = f->seqs_width ? r->va + f->seqs : 0;
	l->token_table_va = r->va + tk->table;
	l->token_index_va = r->va + tk->index;
}

int kallsyms_layout_find_addresses(struct kallsyms_region *r, const struct kallsyms_tokens *tk,
				   struct kallsyms_found *f, uint64_t stext, uint64_t *addrs,
				   struct kallsyms_layout *l)
{
	struct addr_form forms[8];
	unsigned nforms = addr_forms(r, tk, f, forms);
	uint32_t n = f->names.count, at = find_stext(&f->names);
	uint64_t relbase;

	if (stext && at == UINT32_MAX)
		return kallsyms_refuse(r, "no _stext symbol to check the addresses against");
	for (unsigned i = 0; i < nforms; i++) {
		const struct addr_form *a = &forms[i];

		if (!addr_decode(r, a, n, addrs, &relbase) || (stext && addrs[at] != stext))
			continue;
		/* Unanchored (raw Images), zeros before num_syms would pass as sorted. */
		if (!stext && n > 1 && addrs[n - 1] == addrs[0])
			continue;
		if (a->seqs != SIZE_MAX) {
			/* 6.4 on: seqs_of_names follows the addresses. */
			size_t q = kallsyms_align_up(r, a->seqs);

			f->seqs_width = seqs_ok(r, q, n, 3) ? 3 : seqs_ok(r, q, n, 4) ? 4 : 0;
			f->seqs = q;
		}
		if (f->seqs_width && !seqs_sorted(r, f))
			return kallsyms_refuse(r, "the names are not in kallsyms_seqs_of_names order (damaged names?)");
		layout_fill(r, tk, f, a, relbase, l);
		return 0;
	}
	if (!r->budget)
		return kallsyms_refuse(r, "search budget exhausted");
	if (!stext)
		return kallsyms_refuse(r, "%u names decoded, but no address encoding gives sorted addresses", n);
	return kallsyms_refuse(r, "%u names decoded, but no address encoding puts _stext at %#llx",
			       n, (unsigned long long)stext);
}
