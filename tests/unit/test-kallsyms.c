// SPDX-License-Identifier: GPL-2.0
/*
 * kallsyms decoding on every layout Linux 5.4..7.0 emits, built by
 * tests/fuzz/kallsyms-gen.h from one symbol list, plus damaged tables that
 * must be refused without crashing or hanging.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/fuzz/kallsyms-gen.h"
#include "tests/unit/check.h"
#include "vmm/image/kallsyms.h"

#define MAXSYMS 3000

static struct kgen_sym syms[MAXSYMS];

struct layout_case {
	const char *what;
	struct kgen_opts opts;
	int percpu, long_name;
	enum kallsyms_lengths lengths;
};

static int decode(const struct kgen_out *o, struct symtab *tab, struct kallsyms_layout *l,
		  struct errbuf *err)
{
	symtab_init(tab);
	return kallsyms_decode(o->data, o->size, KGEN_VA, KGEN_STEXT, tab, l, err);
}

static int same_symbols(const struct symtab *tab, const struct kgen_sym *s, size_t n)
{
	if (!CHECK_QUIET(tab->count == n, "decoded %zu symbols, built %zu", tab->count, n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		const struct symbol *g = &tab->syms[i];

		if (!CHECK_QUIET(g->addr == s[i].addr && g->type == s[i].type &&
				 !strcmp(symtab_name(tab, g), s[i].name),
				 "symbol %zu: got %llx %c %.40s, want %llx %c %.40s", i,
				 (unsigned long long)g->addr, g->type, symtab_name(tab, g),
				 (unsigned long long)s[i].addr, s[i].type, s[i].name))
			return 0;
	}
	return 1;
}

static void check_layout_case(const struct layout_case *c)
{
	struct kallsyms_layout l;
	struct symtab tab;
	struct errbuf err = { "" };
	struct kgen_out o;
	size_t n = kgen_kernel(syms, MAXSYMS, 1200, c->percpu, c->long_name);
	int rc;

	kgen_build(syms, n, &c->opts, &o);
	rc = decode(&o, &tab, &l, &err);
	CHECK(rc == 0, "%s: decodes (%s)", c->what, rc ? err.msg : "ok");
	if (!rc) {
		CHECK(same_symbols(&tab, syms, n), "%s: all %zu symbols equal (address, type, name)", c->what, n);
		CHECK(l.order == (c->opts.names_first ? KALLSYMS_NAMES_FIRST : KALLSYMS_OFFSETS_FIRST) &&
		      l.addressing == c->opts.mode && l.lengths == c->lengths &&
		      l.markers_width == c->opts.markers_width && l.seqs_width == c->opts.seqs_width &&
		      l.num_syms == n,
		      "%s: layout detected (order %d mode %d lengths %d markers %u seqs %u)", c->what,
		      l.order, l.addressing, l.lengths, l.markers_width, l.seqs_width);
		CHECK(l.token_table_va == KGEN_VA + o.table && l.token_index_va == KGEN_VA + o.index &&
		      l.names_va == KGEN_VA + o.names && l.markers_va == KGEN_VA + o.markers &&
		      l.addresses_va == KGEN_VA + o.addrs,
		      "%s: tables found where they were written", c->what);
	}
	symtab_destroy(&tab);
	free(o.data);
}

static const struct layout_case cases[] = {
	{ "5.4-6.0 (offsets first, absolute per-cpu, one-byte lengths)",
	  { .mode = KALLSYMS_ABSOLUTE_PERCPU, .markers_width = 4, .lead = 4096 }, 1, 0, KALLSYMS_LEN_EITHER },
	{ "pre-5.x pointer-sized markers",
	  { .mode = KALLSYMS_ABSOLUTE_PERCPU, .markers_width = 8, .lead = 100 }, 1, 0, KALLSYMS_LEN_EITHER },
	{ "!KALLSYMS_BASE_RELATIVE absolute addresses (up to 6.10)",
	  { .mode = KALLSYMS_ABSOLUTE, .markers_width = 4 }, 1, 0, KALLSYMS_LEN_EITHER },
	{ "base-relative without per-cpu (arm64 style)",
	  { .mode = KALLSYMS_BASE_RELATIVE, .markers_width = 4, .lead = 8 }, 0, 0, KALLSYMS_LEN_EITHER },
	{ "6.1 ULEB128 lengths with a 300-character name",
	  { .mode = KALLSYMS_ABSOLUTE_PERCPU, .markers_width = 4, .uleb = 1 }, 1, 300, KALLSYMS_LEN_ULEB128 },
	/* Up to 6.0 a length is one byte, and 128..255 do occur (KSYM_NAME_LEN 128 + type). */
	{ "pre-6.1 one-byte length of 151",
	  { .mode = KALLSYMS_ABSOLUTE_PERCPU, .markers_width = 4, .plain = 1 }, 1, 150, KALLSYMS_LEN_ONE_BYTE },
	{ "6.2-6.3 seqs_of_names (3-byte) before the token table",
	  { .mode = KALLSYMS_ABSOLUTE_PERCPU, .markers_width = 4, .uleb = 1, .seqs_width = 3, .lead = 24 }, 1, 300, KALLSYMS_LEN_ULEB128 },
	{ "early 6.2 seqs_of_names (4-byte)",
	  { .mode = KALLSYMS_ABSOLUTE_PERCPU, .markers_width = 4, .seqs_width = 4 }, 1, 0, KALLSYMS_LEN_EITHER },
	{ "6.4-6.14 names first, absolute per-cpu",
	  { .names_first = 1, .mode = KALLSYMS_ABSOLUTE_PERCPU, .markers_width = 4, .uleb = 1, .seqs_width = 3 }, 1, 300, KALLSYMS_LEN_ULEB128 },
	{ "6.4-6.10 names first, absolute addresses",
	  { .names_first = 1, .mode = KALLSYMS_ABSOLUTE, .markers_width = 4, .uleb = 1, .seqs_width = 3 }, 1, 0, KALLSYMS_LEN_EITHER },
	{ "6.15-6.x names first, base-relative",
	  { .names_first = 1, .mode = KALLSYMS_BASE_RELATIVE, .markers_width = 4, .uleb = 1, .seqs_width = 3 }, 0, 0, KALLSYMS_LEN_EITHER },
	{ "7.0 place-relative offsets",
	  { .names_first = 1, .mode = KALLSYMS_PLACE_RELATIVE, .markers_width = 4, .uleb = 1, .seqs_width = 3, .lead = 16 }, 0, 300, KALLSYMS_LEN_ULEB128 },
};

/* A name of exactly 128 tokens: 0x80 is one byte before 6.1, ULEB128 after. */
static void check_length_0x80(void)
{
	struct kgen_opts opts = { .mode = KALLSYMS_ABSOLUTE_PERCPU, .markers_width = 4, .plain = 1 };
	struct kallsyms_layout l;
	struct symtab tab;
	struct errbuf err = { "" };
	struct kgen_out o;
	size_t n = kgen_kernel(syms, MAXSYMS, 700, 1, 0);
	int rc;

	memset(syms[100].name, 'z', 127);
	syms[100].name[127] = 0;
	for (int uleb = 0; uleb <= 1; uleb++) {
		opts.uleb = uleb;
		kgen_build(syms, n, &opts, &o);
		rc = decode(&o, &tab, &l, &err);
		CHECK(rc == 0 && same_symbols(&tab, syms, n) &&
		      l.lengths == (uleb ? KALLSYMS_LEN_ULEB128 : KALLSYMS_LEN_ONE_BYTE),
		      "length byte 0x80 read as %s (%s)", uleb ? "ULEB128" : "one byte", rc ? err.msg : "ok");
		symtab_destroy(&tab);
		free(o.data);
	}
}

/* Fewer than 256 symbols: one marker, and the smallest tables. */
static void check_small(void)
{
	struct kgen_opts opts = { .names_first = 1, .mode = KALLSYMS_ABSOLUTE_PERCPU, .markers_width = 4,
				  .uleb = 1, .seqs_width = 3 };
	struct kallsyms_layout l;
	struct symtab tab;
	struct errbuf err = { "" };
	struct kgen_out o;
	size_t n = kgen_kernel(syms, MAXSYMS, 30, 1, 0);
	int rc;

	kgen_build(syms, n, &opts, &o);
	rc = decode(&o, &tab, &l, &err);
	CHECK(rc == 0 && same_symbols(&tab, syms, n), "%zu symbols, one marker (%s)", n, rc ? err.msg : "ok");
	symtab_destroy(&tab);
	free(o.data);
}

static int decode_damaged(const struct kgen_out *o, size_t at, uint8_t value, struct errbuf *err)
{
	struct kallsyms_layout l;
	struct symtab tab;
	uint8_t *copy = malloc(o->size);
	int rc;

	memcpy(copy, o->data, o->size);
	copy[at] = value;
	symtab_init(&tab);
	rc = kallsyms_decode(copy, o->size, KGEN_VA, KGEN_STEXT, &tab, &l, err);
	symtab_destroy(&tab);
	free(copy);
	return rc;
}

static void check_damage(void)
{
	struct kgen_opts opts = { .mode = KALLSYMS_ABSOLUTE_PERCPU, .markers_width = 4, .uleb = 1, .seqs_width = 3 };
	struct errbuf err = { "" };
	struct kgen_out o;
	size_t n = kgen_kernel(syms, MAXSYMS, 1200, 1, 0);
	int rc;

	kgen_build(syms, n, &opts, &o);
	rc = decode_damaged(&o, o.index + 2, 0xff, &err);
	CHECK(rc == -ENOENT && strstr(err.msg, "no kallsyms tables"), "broken token index: not found (%s)", err.msg);
	rc = decode_damaged(&o, o.markers + 4, 0x77, &err);
	CHECK(rc == -EPROTO && strstr(err.msg, "do not check out"), "broken marker: refused (%s)", err.msg);
	rc = decode_damaged(&o, o.names, 0, &err);
	CHECK(rc == -EPROTO, "zero name length: refused (%s)", err.msg);
	rc = decode_damaged(&o, o.num, 0x13, &err);
	CHECK(rc == -EPROTO, "wrong kallsyms_num_syms: refused (%s)", err.msg);
	rc = decode_damaged(&o, o.relbase + 3, 0x42, &err);
	CHECK(rc == -EPROTO && strstr(err.msg, "_stext"), "wrong relative_base: refused (%s)", err.msg);
	rc = decode_damaged(&o, o.seqs + 1, 0xee, &err);
	CHECK(rc == -EPROTO, "broken seqs_of_names: refused (%s)", err.msg);
	free(o.data);
}

/* Random damage anywhere: an answer or an error, quickly, never a crash. */
static void check_random_damage(void)
{
	struct kgen_opts opts = { .names_first = 1, .mode = KALLSYMS_ABSOLUTE_PERCPU, .markers_width = 4,
				  .uleb = 1, .seqs_width = 3 };
	struct kgen_out o;
	size_t n = kgen_kernel(syms, MAXSYMS, 600, 1, 300), ok = 0, refused = 0;
	clock_t start = clock();
	unsigned seed = 12345;

	kgen_build(syms, n, &opts, &o);
	for (int i = 0; i < 1500; i++) {
		struct errbuf err;
		size_t at = (size_t)rand_r(&seed) % o.size;
		int rc = decode_damaged(&o, at, (uint8_t)rand_r(&seed), &err);

		ok += rc == 0;
		refused += rc == -ENOENT || rc == -EPROTO;
	}
	CHECK(ok + refused == 1500, "1500 random one-byte corruptions: %zu decoded, %zu refused, none failed otherwise", ok, refused);
	CHECK((double)(clock() - start) / CLOCKS_PER_SEC < 30, "and they took %.1f s", (double)(clock() - start) / CLOCKS_PER_SEC);
	free(o.data);
}

static void check_no_tables(void)
{
	struct kallsyms_layout l;
	struct symtab tab;
	struct errbuf err = { "" };
	size_t size = 1 << 20;
	uint8_t *junk = malloc(size);
	unsigned seed = 7;
	int rc;

	for (size_t i = 0; i < size; i++)
		junk[i] = (uint8_t)rand_r(&seed);
	symtab_init(&tab);
	rc = kallsyms_decode(junk, size, KGEN_VA, KGEN_STEXT, &tab, &l, &err);
	CHECK(rc == -ENOENT && tab.count == 0, "random bytes: no kallsyms (%s)", err.msg);
	memset(junk, 0, size);
	rc = kallsyms_decode(junk, size, KGEN_VA, KGEN_STEXT, &tab, &l, &err);
	CHECK(rc == -ENOENT, "zeros: no kallsyms");
	rc = kallsyms_decode(junk, 0, KGEN_VA, KGEN_STEXT, &tab, &l, &err);
	CHECK(rc == -ENOENT, "empty section: no kallsyms");
	symtab_destroy(&tab);
	free(junk);
}

static void check_describe(void)
{
	struct kallsyms_layout l = { .order = KALLSYMS_NAMES_FIRST, .addressing = KALLSYMS_PLACE_RELATIVE,
				     .lengths = KALLSYMS_LEN_ULEB128, .markers_width = 4, .seqs_width = 3 };
	char buf[300];

	kallsyms_layout_describe(&l, buf, sizeof(buf));
	CHECK(strstr(buf, "names-first") && strstr(buf, "place-relative") && strstr(buf, "ULEB128") &&
	      strstr(buf, "seqs_of_names (3-byte)"), "describe: %s", buf);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_layout_case(&cases[i]);
	check_length_0x80();
	check_small();
	check_damage();
	check_random_damage();
	check_no_tables();
	check_describe();
	return check_exit();
}
