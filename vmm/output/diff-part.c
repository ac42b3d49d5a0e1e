// SPDX-License-Identifier: GPL-2.0
/*
 * Where two boots part (diff.h): per task, the calls alike from the start,
 * then, as diff -u shows a hunk, the calls each side has before the two
 * meet again: the nearest pair of places (fewest calls skipped in all)
 * from which DIFF_MEET calls agree, or where both end, searched within
 * DIFF_WINDOW calls of each side. Sequences that do not meet again within
 * that are shown parted, with the context's worth of each.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/output/diff.h"

#define DIFF_WINDOW	200
#define DIFF_MEET	3

static size_t diff_prefix(const struct diff_task *a, const struct diff_task *b)
{
	size_t na = a ? a->n : 0, nb = b ? b->n : 0, p = 0;

	while (p < na && p < nb && a->seq[p] == b->seq[p])
		p++;
	return p;
}

/* Whether A from p + i and B from p + j meet: DIFF_MEET calls alike, or both at their ends. */
static int diff_meets(const uint32_t *a, size_t na, const uint32_t *b, size_t nb, size_t i, size_t j)
{
	size_t k = 0;

	if (i > na || j > nb)
		return 0;
	while (k < DIFF_MEET && i + k < na && j + k < nb && a[i + k] == b[j + k])
		k++;
	return k == DIFF_MEET || (i + k == na && j + k == nb);
}

static void diff_hunk(struct diff_part *pt, unsigned context)
{
	const uint32_t *a = pt->a ? pt->a->seq : NULL, *b = pt->b ? pt->b->seq : NULL;
	size_t na = pt->a ? pt->a->n : 0, nb = pt->b ? pt->b->n : 0, p = pt->prefix;

	for (size_t d = 1; a && b && d <= 2 * DIFF_WINDOW; d++)
		for (size_t i = d > DIFF_WINDOW ? d - DIFF_WINDOW : 0; i <= d && i <= DIFF_WINDOW; i++)
			if (diff_meets(a, na, b, nb, p + i, p + d - i)) {
				pt->del = i;
				pt->add = d - i;
				pt->met = 1;
				return;
			}
	/* At least the first call where they part, however little context was asked for. */
	context = context ? context : 1;
	pt->del = na - p < context ? na - p : context;
	pt->add = nb - p < context ? nb - p : context;
}

/* The calls a side's hunk shows: context before, its own, context after when the sides meet again. */
static void diff_want(struct diff_task *t, const struct diff_part *pt, size_t own, unsigned context)
{
	size_t hi = pt->prefix + own + (pt->met ? context : 0);

	if (!t)
		return;
	t->want_lo = pt->prefix > context ? pt->prefix - context : 0;
	t->want_hi = hi < t->n ? hi : t->n;
}

static int diff_part_add(struct diff_part **parts, size_t *n, size_t *cap, uint64_t key, struct diff_task *a,
			 struct diff_task *b, unsigned context)
{
	struct diff_part *pt;

	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 64;
		struct diff_part *np = realloc(*parts, c * sizeof(*np));

		if (!np)
			return -ENOMEM;
		*parts = np;
		*cap = c;
	}
	pt = &(*parts)[(*n)++];
	memset(pt, 0, sizeof(*pt));
	pt->key = key;
	pt->a = a;
	pt->b = b;
	pt->prefix = diff_prefix(a, b);
	pt->agree = a && b && pt->prefix == a->n && pt->prefix == b->n;
	if (pt->agree)
		return 0;
	diff_hunk(pt, context);
	diff_want(a, pt, pt->del, context);
	diff_want(b, pt, pt->add, context);
	return 0;
}

int diff_parts(struct diff_side *a, struct diff_side *b, unsigned context, struct diff_part **parts, size_t *n)
{
	size_t cap = 0;
	int rc = 0;

	*parts = NULL;
	*n = 0;
	for (size_t i = 0; !rc && i < a->tasks_cap; i++)
		if (a->tasks[i].key)
			rc = diff_part_add(parts, n, &cap, a->tasks[i].key, &a->tasks[i],
					   diff_side_task(b, a->tasks[i].key), context);
	for (size_t i = 0; !rc && i < b->tasks_cap; i++)
		if (b->tasks[i].key && !diff_side_task(a, b->tasks[i].key))
			rc = diff_part_add(parts, n, &cap, b->tasks[i].key, NULL, &b->tasks[i], context);
	return rc;
}

/* The time of a side's call i, which its hunk shows; 0 when it has none there. */
static uint64_t diff_call_ns(const struct diff_task *t, size_t i)
{
	return t && t->shown && i >= t->want_lo && i < t->want_hi ? t->shown[i - t->want_lo].ns : 0;
}

static int diff_part_cmp(const void *x, const void *y)
{
	const struct diff_part *p = x, *q = y;

	if (p->agree != q->agree)
		return p->agree ? 1 : -1;
	if (!p->agree && p->ns != q->ns)
		return p->ns < q->ns ? -1 : 1;
	return p->key < q->key ? -1 : p->key > q->key;
}

void diff_parts_order(struct diff_part *parts, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct diff_part *pt = &parts[i];

		if (pt->agree)
			continue;
		pt->ns = pt->a && pt->prefix < pt->a->n ? diff_call_ns(pt->a, pt->prefix) : diff_call_ns(pt->b, pt->prefix);
	}
	if (n)
		qsort(parts, n, sizeof(*parts), diff_part_cmp);
}
