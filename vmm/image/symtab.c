// SPDX-License-Identifier: GPL-2.0
/*
 * Symbol table with O(1)-ish lookups both ways: a hash on names and, for
 * addresses, buckets over the kernel image's span that narrow the binary
 * search to a handful of symbols. The tracer symbolises every event through
 * symtab_find_addr(), so that path must stay cheap.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/image/symtab.h"

#define SYMTAB_MAX_SYMS   (1u << 26)
#define SYMTAB_MAX_NAMES  (1u << 30)
/* Buckets cover at most this span below the highest symbol (the image). */
#define SYMTAB_BUCKET_SPAN (1ULL << 32)

void symtab_init(struct symtab *tab)
{
	memset(tab, 0, sizeof(*tab));
}

void symtab_destroy(struct symtab *tab)
{
	free(tab->syms);
	free(tab->names);
	free(tab->hash);
	free(tab->next_same);
	free(tab->bucket);
	memset(tab, 0, sizeof(*tab));
}

static int grow(void **buf, size_t *cap, size_t need, size_t elem, size_t first)
{
	size_t n = *cap ? *cap : first;
	void *p;

	while (n < need)
		n *= 2;
	if (n == *cap)
		return 0;
	p = realloc(*buf, n * elem);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = n;
	return 0;
}

int symtab_add(struct symtab *tab, uint64_t addr, char type, const char *name, size_t len)
{
	struct symbol *s;

	if (tab->finished || !len || memchr(name, 0, len))
		return -EINVAL;
	if (tab->count >= SYMTAB_MAX_SYMS || tab->names_size + len + 1 > SYMTAB_MAX_NAMES)
		return -E2BIG;
	if (grow((void **)&tab->syms, &tab->cap, tab->count + 1, sizeof(*tab->syms), 4096) ||
	    grow((void **)&tab->names, &tab->names_cap, tab->names_size + len + 1, 1, 65536))
		return -ENOMEM;
	s = &tab->syms[tab->count++];
	memset(s, 0, sizeof(*s));
	s->addr = addr;
	s->type = type;
	s->name = (uint32_t)tab->names_size;
	memcpy(tab->names + tab->names_size, name, len);
	tab->names[tab->names_size + len] = 0;
	tab->names_size += len + 1;
	return 0;
}

static int cmp_order(const void *a, const void *b, void *arg)
{
	const struct symbol *syms = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;

	if (syms[i].addr != syms[j].addr)
		return syms[i].addr < syms[j].addr ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* Stable sort by address; kallsyms and System.map arrive sorted already. */
static int symtab_sort(struct symtab *tab)
{
	struct symbol *sorted;
	uint32_t *order;
	size_t i;

	for (i = 1; i < tab->count; i++)
		if (tab->syms[i - 1].addr > tab->syms[i].addr)
			break;
	if (i >= tab->count)
		return 0;
	order = malloc(tab->count * sizeof(*order));
	sorted = malloc(tab->count * sizeof(*sorted));
	if (!order || !sorted) {
		free(order);
		free(sorted);
		return -ENOMEM;
	}
	for (i = 0; i < tab->count; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, tab->count, sizeof(*order), cmp_order, tab->syms);
	for (i = 0; i < tab->count; i++)
		sorted[i] = tab->syms[order[i]];
	free(order);
	free(tab->syms);
	tab->syms = sorted;
	tab->cap = tab->count;
	return 0;
}

static uint32_t hash_name(const char *s)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

static int symtab_build_hash(struct symtab *tab)
{
	size_t size = 16;

	while (size < tab->count * 2)
		size *= 2;
	tab->hash = malloc(size * sizeof(*tab->hash));
	tab->next_same = malloc((tab->count ? tab->count : 1) * sizeof(*tab->next_same));
	if (!tab->hash || !tab->next_same)
		return -ENOMEM;
	memset(tab->hash, 0xff, size * sizeof(*tab->hash));
	tab->hash_mask = (uint32_t)size - 1;
	/* Backwards, so each name's chain runs in address order. */
	for (size_t i = tab->count; i-- > 0;) {
		const char *name = tab->names + tab->syms[i].name;
		uint32_t h = hash_name(name) & tab->hash_mask;

		tab->next_same[i] = SYMTAB_NONE;
		for (;; h = (h + 1) & tab->hash_mask) {
			uint32_t j = tab->hash[h];

			if (j == SYMTAB_NONE) {
				tab->hash[h] = (uint32_t)i;
				break;
			}
			if (!strcmp(tab->names + tab->syms[j].name, name)) {
				tab->next_same[i] = j;
				tab->hash[h] = (uint32_t)i;
				break;
			}
		}
	}
	return 0;
}

/* First index in [lo, hi) whose address is > addr. */
static size_t upper_bound(const struct symbol *syms, size_t lo, size_t hi, uint64_t addr)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t lower_bound(const struct symbol *syms, size_t lo, size_t hi, uint64_t addr)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (syms[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Per-cpu symbols sit near address 0 on x86_64, far below the image, so the
 * buckets cover only the 4 GiB below the highest symbol; anything lower
 * falls back to a plain binary search.
 */
static int symtab_build_buckets(struct symtab *tab)
{
	uint64_t top, span;
	size_t first = 0;
	uint32_t shift = 0;

	if (!tab->count)
		return 0;
	top = tab->syms[tab->count - 1].addr;
	if (top >= SYMTAB_BUCKET_SPAN)
		first = lower_bound(tab->syms, 0, tab->count, top - SYMTAB_BUCKET_SPAN + 1);
	span = top - tab->syms[first].addr;
	while ((span >> shift) >= 2 * (uint64_t)tab->count)
		shift++;
	tab->bucket_lo = tab->syms[first].addr;
	tab->bucket_first = (uint32_t)first;
	tab->bucket_shift = shift;
	tab->nbuckets = (uint32_t)(span >> shift) + 1;
	tab->bucket = malloc(((size_t)tab->nbuckets + 1) * sizeof(*tab->bucket));
	if (!tab->bucket)
		return -ENOMEM;
	for (size_t b = 0, i = first; b <= tab->nbuckets; b++) {
		uint64_t start = tab->bucket_lo + ((uint64_t)b << shift);

		while (i < tab->count && tab->syms[i].addr < start &&
		       b < tab->nbuckets)
			i++;
		tab->bucket[b] = b == tab->nbuckets ? (uint32_t)tab->count : (uint32_t)i;
	}
	return 0;
}

/* A label where something before it ends ("kernel_entry_end"): it names no function that starts there. */
static int end_marker(const struct symtab *tab, const struct symbol *s)
{
	const char *name = tab->names + s->name;
	size_t n = strlen(name);

	return n > 4 && !strcmp(name + n - 4, "_end");
}

/*
 * Among the symbols at one address, an end marker goes after the others
 * (stable otherwise): symtab_find_addr() names an address by the first, and
 * on loongarch64 head.S's kernel_entry_end, which kallsyms lists first,
 * sits at rest_init's first instruction. The kernel's kallsyms prefers
 * names without a leading underscore only, so __*_text_end markers already
 * come after the function they alias.
 */
static void symtab_order_aliases(struct symtab *tab)
{
	for (size_t i = 0, j; i < tab->count; i = j) {
		size_t markers = 0;

		for (j = i; j < tab->count && tab->syms[j].addr == tab->syms[i].addr; j++)
			markers += end_marker(tab, &tab->syms[j]);
		if (j - i < 2 || !markers || markers == j - i)
			continue;
		/* Few aliases (two or three): bubble each marker past the non-markers after it. */
		for (size_t k = j - 1; k > i; k--)
			for (size_t m = i; m < k; m++)
				if (end_marker(tab, &tab->syms[m]) && !end_marker(tab, &tab->syms[m + 1])) {
					struct symbol t = tab->syms[m];

					tab->syms[m] = tab->syms[m + 1];
					tab->syms[m + 1] = t;
				}
	}
}

static void symtab_mark_padding(struct symtab *tab)
{
	for (size_t i = 0; i < tab->count; i++) {
		const char *n = tab->names + tab->syms[i].name;

		if (symtab_is_text(tab->syms[i].type) && (!strncmp(n, "__pfx_", 6) || !strncmp(n, "__cfi_", 6)))
			tab->syms[i].flags |= SYMBOL_PADDING;
	}
}

int symtab_finish(struct symtab *tab)
{
	int rc;

	if (tab->finished)
		return 0;
	rc = symtab_sort(tab);
	if (!rc) {
		symtab_order_aliases(tab);
		symtab_mark_padding(tab);
	}
	if (!rc)
		rc = symtab_build_hash(tab);
	if (!rc)
		rc = symtab_build_buckets(tab);
	if (rc)
		return rc;
	tab->finished = 1;
	return 0;
}

const struct symbol *symtab_find_name(const struct symtab *tab, const char *name)
{
	uint32_t h;

	if (!tab->finished)
		return NULL;
	for (h = hash_name(name) & tab->hash_mask;; h = (h + 1) & tab->hash_mask) {
		uint32_t j = tab->hash[h];

		if (j == SYMTAB_NONE)
			return NULL;
		if (!strcmp(tab->names + tab->syms[j].name, name))
			return &tab->syms[j];
	}
}

const struct symbol *symtab_next_same_name(const struct symtab *tab, const struct symbol *sym)
{
	uint32_t j = tab->next_same[sym - tab->syms];

	return j == SYMTAB_NONE ? NULL : &tab->syms[j];
}

const struct symbol *symtab_find_addr(const struct symtab *tab, uint64_t addr, uint64_t *offset)
{
	size_t lo = 0, hi, ub;

	if (!tab->finished || !tab->count || addr < tab->syms[0].addr)
		return NULL;
	hi = tab->count;
	if (addr >= tab->bucket_lo) {
		uint64_t b = (addr - tab->bucket_lo) >> tab->bucket_shift;

		if (b < tab->nbuckets) {
			lo = tab->bucket[b];
			hi = tab->bucket[b + 1];
		} else {
			lo = tab->bucket[tab->nbuckets - 1];
		}
	} else {
		hi = tab->bucket_first;
	}
	ub = upper_bound(tab->syms, lo, hi, addr);
	if (!ub)
		return NULL;
	ub--;
	/* ub is the last of its aliases: take the first of them that is not padding. */
	for (;;) {
		size_t first = ub, k;

		while (first > 0 && tab->syms[first - 1].addr == tab->syms[ub].addr)
			first--;
		for (k = first; k <= ub && (tab->syms[k].flags & SYMBOL_PADDING); k++)
			;
		if (k <= ub) {
			ub = k;
			break;
		}
		if (!first)
			return NULL;	/* padding before the first symbol: nothing covers addr */
		ub = first - 1;		/* the function before the padding */
	}
	if (offset)
		*offset = addr - tab->syms[ub].addr;
	return &tab->syms[ub];
}

uint64_t symtab_extent(const struct symtab *tab, const struct symbol *sym)
{
	for (size_t i = (size_t)(sym - tab->syms) + 1; i < tab->count; i++)
		if (tab->syms[i].addr != sym->addr)
			return tab->syms[i].addr - sym->addr;
	return 0;
}

static void diff_example(struct symtab_diff *d, const char *what, const char *name,
			 const struct symbol *g, const struct symbol *r)
{
	char *ex;

	if (d->nexamples >= SYMTAB_DIFF_EXAMPLES)
		return;
	ex = d->examples[d->nexamples++];
	if (r)
		snprintf(ex, sizeof(d->examples[0]), "%s: %016llx %c %.60s vs %016llx %c",
			 what, (unsigned long long)g->addr, g->type, name,
			 (unsigned long long)r->addr, r->type);
	else
		snprintf(ex, sizeof(d->examples[0]), "%s: %016llx %c %.80s",
			 what, (unsigned long long)g->addr, g->type, name);
}

static void percpu_range(const struct symtab *tab, uint64_t *lo, uint64_t *hi)
{
	const struct symbol *a = symtab_find_name(tab, "__per_cpu_start");
	const struct symbol *b = symtab_find_name(tab, "__per_cpu_end");

	*lo = a ? a->addr : 1;
	*hi = b ? b->addr : 0;
}

/*
 * Matches one symbol of got against ref; returns the ref index or NONE.
 * scripts/kallsyms types every symbol in [__per_cpu_start, __per_cpu_end]
 * (both ends included) 'A' when it makes per-cpu addresses absolute.
 */
static uint32_t diff_one(const struct symtab *ref, const struct symtab *got,
			 const struct symbol *g, const uint8_t *used,
			 uint64_t pcpu_lo, uint64_t pcpu_hi, struct symtab_diff *d)
{
	const char *name = symtab_name(got, g);
	const struct symbol *r = symtab_find_name(ref, name), *at = NULL;
	int best = -1;

	if (!r) {
		d->missing++;
		diff_example(d, "not in reference", name, g, NULL);
		return SYMTAB_NONE;
	}
	/* Duplicate names at one address: prefer an unmatched one of the same type. */
	for (const struct symbol *p = r; p; p = symtab_next_same_name(ref, p)) {
		int score = 2 * !used[p - ref->syms] + (p->type == g->type);

		if (p->addr == g->addr && score > best) {
			best = score;
			at = p;
		}
	}
	if (!at) {
		d->addr_differs++;
		diff_example(d, "address differs", name, g, r);
		return SYMTAB_NONE;
	}
	if (at->type == g->type)
		d->same++;
	else if (g->type == 'A' && g->addr >= pcpu_lo && g->addr <= pcpu_hi)
		d->percpu_abs++;
	else {
		d->type_differs++;
		diff_example(d, "type differs", name, g, at);
	}
	return (uint32_t)(at - ref->syms);
}

int symtab_compare(const struct symtab *ref, const struct symtab *got, struct symtab_diff *d)
{
	uint64_t pcpu_lo, pcpu_hi;
	uint8_t *used;

	memset(d, 0, sizeof(*d));
	if (!ref->finished || !got->finished)
		return -EINVAL;
	used = calloc(ref->count ? ref->count : 1, 1);
	if (!used)
		return -ENOMEM;
	percpu_range(ref, &pcpu_lo, &pcpu_hi);
	for (size_t i = 0; i < got->count; i++) {
		uint32_t j = diff_one(ref, got, &got->syms[i], used, pcpu_lo, pcpu_hi, d);

		if (j != SYMTAB_NONE)
			used[j] = 1;
	}
	for (size_t i = 0; i < ref->count; i++)
		d->ref_only += !used[i];
	free(used);
	return 0;
}
