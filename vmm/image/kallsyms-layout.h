/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared between kallsyms.c (token table, names) and kallsyms-layout.c
 * (where the other tables sit and how addresses are encoded). The bytes may
 * be hostile: every read goes through kallsyms_read() and every search
 * spends from a step budget, so damaged tables end in an error, not a hang.
 */
#ifndef VMM_KALLSYMS_LAYOUT_H
#define VMM_KALLSYMS_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/image/kallsyms.h"

#define KALLSYMS_MAX_SYMS	(1u << 24)	/* seqs_of_names holds 24-bit indices */
#define KALLSYMS_MAX_NAME	1024		/* KSYM_NAME_LEN is 512 since 6.1 */
#define KALLSYMS_ALIGN		8		/* the tables' ALGN on 64-bit kernels */

struct kallsyms_region {
	const uint8_t *data;
	size_t size;
	uint64_t va;
	uint64_t budget;	/* search steps left */
	int no_percpu;		/* not x86_64: no KALLSYMS_ABSOLUTE_PERCPU form */
	char why[160];		/* the last reason a candidate layout was refused */
};

struct kallsyms_tokens {
	size_t table, index;	/* offsets of kallsyms_token_table / _index */
	const char *str[256];
	uint8_t len[256];
};

/* Decoded kallsyms_names: per symbol, type letter + name + NUL in pool. */
struct kallsyms_names {
	char *pool;
	size_t pool_size, pool_cap;
	uint32_t *off;
	uint32_t count;
	size_t start, end;	/* region offsets of the names stream */
	int uleb;		/* decoded with ULEB128 lengths */
	int long_seen;		/* some length was 128 or more */
};

/* The layout settled on so far, as region offsets. */
struct kallsyms_found {
	struct kallsyms_names names;
	size_t markers;
	uint32_t nmarkers;
	unsigned markers_width, seqs_width;
	size_t seqs;		/* valid when seqs_width */
};

static inline int kallsyms_read(const struct kallsyms_region *r, size_t off,
				unsigned width, uint64_t *v)
{
	uint64_t x = 0;

	if (off > r->size || width > r->size - off)
		return -1;
	for (unsigned i = width; i-- > 0;)
		x = x << 8 | r->data[off + i];
	*v = x;
	return 0;
}

static inline size_t kallsyms_align_up(const struct kallsyms_region *r, size_t off)
{
	uint64_t mis = (r->va + off) % KALLSYMS_ALIGN;

	return mis ? off + (KALLSYMS_ALIGN - mis) : off;
}

static inline int kallsyms_aligned(const struct kallsyms_region *r, size_t off)
{
	return (r->va + off) % KALLSYMS_ALIGN == 0;
}

static inline int kallsyms_spend(struct kallsyms_region *r, uint64_t steps)
{
	if (r->budget < steps) {
		r->budget = 0;
		return -1;
	}
	r->budget -= steps;
	return 0;
}

int kallsyms_refuse(struct kallsyms_region *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Decodes count names starting at region offset start, checking them
 * against the markers table at markers (width bytes each); the stream must
 * end where the markers begin. Fills names (freed by the caller).
 */
int kallsyms_names_decode(struct kallsyms_region *r, const struct kallsyms_tokens *tk,
			  size_t start, uint32_t count, size_t markers, unsigned width,
			  int uleb, struct kallsyms_names *names);
/* Offset just past count names from start, or 0 if they do not parse. */
size_t kallsyms_names_skip(struct kallsyms_region *r, size_t start, uint32_t count, int uleb);
void kallsyms_names_free(struct kallsyms_names *names);

/* From the token tables at tk, finds names and markers (and seqs before 6.4). */
int kallsyms_layout_find_names(struct kallsyms_region *r, const struct kallsyms_tokens *tk,
			       struct kallsyms_found *f);
/* Then the addresses: fills addrs[count] and the layout. */
int kallsyms_layout_find_addresses(struct kallsyms_region *r, const struct kallsyms_tokens *tk,
				   struct kallsyms_found *f, uint64_t stext, uint64_t *addrs,
				   struct kallsyms_layout *layout);

#endif
