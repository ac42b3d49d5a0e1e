/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Builds kallsyms tables the way scripts/kallsyms lays them out in each
 * kernel generation, from a list of symbols, so the decoder can be tested
 * on layouts we have no kernel image for (and the fuzzer gets seeds). Test
 * code: written from the format as docs/SYMBOLS.md describes it.
 */
#ifndef TESTS_FUZZ_KALLSYMS_GEN_H
#define TESTS_FUZZ_KALLSYMS_GEN_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/image/kallsyms.h"

#define KGEN_VA    0xffffffff82000000ULL	/* where the generated section lives */
#define KGEN_STEXT 0xffffffff81000000ULL	/* _stext, the decoder's anchor */

struct kgen_sym {
	uint64_t addr;
	char type;
	char name[400];
};

struct kgen_opts {
	int names_first;			/* 6.4+ order */
	enum kallsyms_addressing mode;
	int uleb;				/* ULEB128 lengths (6.1+) */
	unsigned markers_width;			/* 4 or 8 */
	unsigned seqs_width;			/* 0, 3 or 4 */
	int plain;				/* single-character tokens only */
	size_t lead;				/* filler bytes before the tables */
};

struct kgen_out {
	uint8_t *data;
	size_t size, cap;
	/* offsets of what was written, for tests that corrupt one table */
	size_t addrs, relbase, num, names, markers, seqs, table, index;
};

static inline void kgen_put(struct kgen_out *o, const void *p, size_t n)
{
	if (o->size + n > o->cap) {
		o->cap = (o->size + n) * 2 + 4096;
		o->data = realloc(o->data, o->cap);
	}
	memcpy(o->data + o->size, p, n);
	o->size += n;
}

static inline void kgen_le(struct kgen_out *o, uint64_t v, unsigned n)
{
	uint8_t b[8];

	for (unsigned i = 0; i < n; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	kgen_put(o, b, n);
}

static inline size_t kgen_align(struct kgen_out *o)
{
	while (o->size % 8)
		kgen_le(o, 0, 1);
	return o->size;
}

/* Token strings: used characters stand for themselves, free bytes get pairs. */
static inline void kgen_tokens(const struct kgen_sym *s, size_t n, int plain, char tok[256][4])
{
	int used[256] = { 0 };
	char chars[256];
	unsigned nchars = 0, k = 0;

	for (size_t i = 0; i < n; i++) {
		used[(uint8_t)s[i].type] = 1;
		for (const char *p = s[i].name; *p; p++)
			used[(uint8_t)*p] = 1;
	}
	for (unsigned c = 0; c < 256; c++)
		if (used[c])
			chars[nchars++] = (char)c;
	for (unsigned c = 0; c < 256; c++) {
		memset(tok[c], 0, 4);
		if (used[c]) {
			tok[c][0] = (char)c;
		} else if (plain) {
			tok[c][0] = '#';	/* never matched: names hold no '#' */
			tok[c][1] = (char)('0' + c % 10);
		} else {
			tok[c][0] = chars[k % nchars];
			tok[c][1] = chars[(k / nchars + 1) % nchars];
			k++;
		}
	}
}

/* Greedy compression with the tokens; returns the token count. */
static inline size_t kgen_compress(const char *s, char tok[256][4], uint8_t *out)
{
	size_t n = 0;

	while (*s) {
		int best = -1;
		size_t blen = 0;

		for (int c = 0; c < 256; c++) {
			size_t l = strlen(tok[c]);

			if (l > blen && !strncmp(s, tok[c], l)) {
				best = c;
				blen = l;
			}
		}
		out[n++] = (uint8_t)best;
		s += blen;
	}
	return n;
}

static inline void kgen_names(struct kgen_out *o, const struct kgen_sym *s, size_t n,
			      const struct kgen_opts *opt, char tok[256][4], uint32_t *markers)
{
	char full[512];
	uint8_t buf[512];

	o->names = kgen_align(o);
	for (size_t i = 0; i < n; i++) {
		size_t len;

		if (!(i & 0xff))
			markers[i >> 8] = (uint32_t)(o->size - o->names);
		full[0] = s[i].type;
		strcpy(full + 1, s[i].name);
		len = kgen_compress(full, tok, buf);
		if (opt->uleb && len > 0x7f) {
			kgen_le(o, (len & 0x7f) | 0x80, 1);
			kgen_le(o, len >> 7, 1);
		} else {
			kgen_le(o, len, 1);
		}
		kgen_put(o, buf, len);
	}
	o->markers = kgen_align(o);
	for (size_t i = 0; i < (n + 255) / 256; i++)
		kgen_le(o, markers[i], opt->markers_width);
}

static const struct kgen_sym *kgen_sort_base;

static inline int kgen_by_name(const void *a, const void *b)
{
	const struct kgen_sym *x = &kgen_sort_base[*(const uint32_t *)a];
	const struct kgen_sym *y = &kgen_sort_base[*(const uint32_t *)b];
	int c = strcmp(x->name, y->name);

	return c ? c : *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static inline void kgen_seqs(struct kgen_out *o, const struct kgen_sym *s, size_t n, unsigned w)
{
	uint32_t *seq = malloc(n * sizeof(*seq));

	for (uint32_t i = 0; i < n; i++)
		seq[i] = i;
	kgen_sort_base = s;
	qsort(seq, n, sizeof(*seq), kgen_by_name);
	o->seqs = kgen_align(o);
	for (size_t i = 0; i < n; i++) {
		if (w == 3) {
			uint8_t b[3] = { (uint8_t)(seq[i] >> 16), (uint8_t)(seq[i] >> 8), (uint8_t)seq[i] };

			kgen_put(o, b, 3);
		} else {
			kgen_le(o, seq[i], 4);
		}
	}
	free(seq);
}

static inline void kgen_token_tables(struct kgen_out *o, char tok[256][4])
{
	uint16_t idx[256];

	o->table = kgen_align(o);
	for (int c = 0; c < 256; c++) {
		idx[c] = (uint16_t)(o->size - o->table);
		kgen_put(o, tok[c], strlen(tok[c]) + 1);
	}
	o->index = kgen_align(o);
	for (int c = 0; c < 256; c++)
		kgen_le(o, idx[c], 2);
}

/* Offsets or addresses, then relative_base when the form has one. */
static inline void kgen_addresses(struct kgen_out *o, const struct kgen_sym *s, size_t n,
				  const struct kgen_opts *opt)
{
	uint64_t base = UINT64_MAX;

	for (size_t i = 0; i < n; i++)
		if (s[i].type != 'A' || opt->mode != KALLSYMS_ABSOLUTE_PERCPU)
			base = s[i].addr < base ? s[i].addr : base;
	o->addrs = kgen_align(o);
	for (size_t i = 0; i < n; i++) {
		uint64_t at = KGEN_VA + o->size;

		switch (opt->mode) {
		case KALLSYMS_ABSOLUTE: kgen_le(o, s[i].addr, 8); break;
		case KALLSYMS_BASE_RELATIVE: kgen_le(o, s[i].addr - base, 4); break;
		case KALLSYMS_ABSOLUTE_PERCPU:
			kgen_le(o, s[i].type == 'A' ? s[i].addr : base - s[i].addr - 1, 4);
			break;
		case KALLSYMS_PLACE_RELATIVE: kgen_le(o, s[i].addr - at, 4); break;
		}
	}
	if (opt->mode == KALLSYMS_BASE_RELATIVE || opt->mode == KALLSYMS_ABSOLUTE_PERCPU) {
		o->relbase = kgen_align(o);
		kgen_le(o, base, 8);
	}
}

/* The whole section; symbols must be sorted by address. Free out->data. */
static inline void kgen_build(const struct kgen_sym *s, size_t n, const struct kgen_opts *opt,
			      struct kgen_out *o)
{
	static char tok[256][4];
	uint32_t *markers = calloc((n + 255) / 256 + 1, sizeof(*markers));

	memset(o, 0, sizeof(*o));
	kgen_tokens(s, n, opt->plain, tok);
	for (size_t i = 0; i < opt->lead; i++)
		kgen_le(o, (i * 2654435761u) >> 13, 1);
	if (!opt->names_first)
		kgen_addresses(o, s, n, opt);
	o->num = kgen_align(o);
	kgen_le(o, n, 4);
	kgen_names(o, s, n, opt, tok, markers);
	if (!opt->names_first && opt->seqs_width)
		kgen_seqs(o, s, n, opt->seqs_width);
	kgen_token_tables(o, tok);
	if (opt->names_first) {
		kgen_addresses(o, s, n, opt);
		if (opt->seqs_width)
			kgen_seqs(o, s, n, opt->seqs_width);
	}
	kgen_align(o);
	for (size_t i = 0; i < 64; i++)
		kgen_le(o, 0xa5, 1);
	free(markers);
}

/*
 * A plausible kernel: per-cpu symbols near 0 (typed 'A', as kallsyms types
 * them on x86_64; only for the absolute per-cpu form), _stext, functions,
 * data and an alias; long_name > 0 makes one name that many characters long
 * (below sizeof(name)). Returns the count.
 */
static inline size_t kgen_kernel(struct kgen_sym *s, size_t max, size_t nfuncs, int percpu,
				 int long_name)
{
	size_t n = 0;
	uint64_t a = KGEN_STEXT;

	for (unsigned i = 0; percpu && i < 40 && n < max; i++, n++) {
		s[n].addr = (uint64_t)i * 0x40;
		s[n].type = 'A';
		snprintf(s[n].name, sizeof(s[n].name), i ? "percpu_var_%u" : "__per_cpu_start", i);
	}
	s[n] = (struct kgen_sym){ a, 'T', "_stext" };
	s[n + 1] = (struct kgen_sym){ a, 'T', "startup_64" };
	n += 2;
	for (size_t i = 0; i < nfuncs && n < max; i++, n++) {
		static const char *const stems[] = { "do_sys_", "__x64_sys_", "ext4_", "vfs_", "kmalloc_", "sched_" };

		a += 0x10 + (i * 7919) % 0x300;
		s[n].addr = a;
		s[n].type = i % 3 ? 'T' : 't';
		snprintf(s[n].name, sizeof(s[n].name), "%s%zu", stems[i % 6], i);
		if (long_name && i == nfuncs / 2)
			memset(s[n].name, 'q', (size_t)long_name), s[n].name[long_name] = 0;
	}
	s[n++] = (struct kgen_sym){ a + 0x100, 'D', "level3_kernel_pgt" };
	s[n++] = (struct kgen_sym){ a + 0x200, 'b', "some_bss" };
	return n;
}

#endif
