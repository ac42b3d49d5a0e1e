// SPDX-License-Identifier: GPL-2.0
/* The symbol table: address and name lookups, aliases, comparison. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check.h"
#include "vmm/image/symtab.h"

static void add(struct symtab *t, uint64_t addr, char type, const char *name)
{
	if (symtab_add(t, addr, type, name, strlen(name)))
		CHECK(0, "symtab_add %s", name);
}

/* The plain binary search symtab_find_addr's buckets must agree with. */
static const struct symbol *plain_find(const struct symtab *t, uint64_t addr)
{
	size_t lo = 0, hi = t->count;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (t->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &t->syms[lo - 1] : NULL;
}

static void check_small_table(void)
{
	struct symtab t;
	const struct symbol *s;
	uint64_t off = 0;

	symtab_init(&t);
	/* Out of order, with per-cpu symbols near 0, aliases and a duplicate name. */
	add(&t, 0xffffffff81000100, 'T', "start_kernel");
	add(&t, 0xffffffff81000000, 'T', "_stext");
	add(&t, 0xffffffff81000000, 'T', "_text");
	add(&t, 0x0, 'A', "fixed_percpu_data");
	add(&t, 0x1000, 'A', "cpu_debug_store");
	add(&t, 0xffffffff81000200, 't', "helper");
	add(&t, 0xffffffff81000300, 't', "helper");
	add(&t, 0xffffffff82000000, 'D', "level3_kernel_pgt");
	CHECK(symtab_add(&t, 1, 'T', "", 0) == -EINVAL, "empty names are refused");
	CHECK(symtab_finish(&t) == 0 && t.count == 8, "finish sorts 8 symbols");
	CHECK(symtab_add(&t, 1, 'T', "late", 4) == -EINVAL, "a finished table takes no more symbols");
	for (size_t i = 1; i < t.count; i++)
		CHECK_QUIET(t.syms[i - 1].addr <= t.syms[i].addr, "sorted at %zu", i);
	s = symtab_find_addr(&t, 0xffffffff81000000, &off);
	CHECK(s && !strcmp(symtab_name(&t, s), "_stext") && off == 0,
	      "an alias group resolves to its first member in insertion order");
	s = symtab_find_addr(&t, 0xffffffff81000150, &off);
	CHECK(s && !strcmp(symtab_name(&t, s), "start_kernel") && off == 0x50, "start_kernel+0x50");
	s = symtab_find_addr(&t, 0x1800, &off);
	CHECK(s && !strcmp(symtab_name(&t, s), "cpu_debug_store") && off == 0x800, "per-cpu addresses resolve");
	CHECK(symtab_find_addr(&t, 0xffffffffffffffff, &off) && off == 0xffffffffffffffff - 0xffffffff82000000,
	      "above the last symbol: the last symbol");
	s = symtab_find_name(&t, "helper");
	CHECK(s && s->addr == 0xffffffff81000200, "name lookup gives the lowest address");
	s = s ? symtab_next_same_name(&t, s) : NULL;
	CHECK(s && s->addr == 0xffffffff81000300 && !symtab_next_same_name(&t, s), "then the next one, then none");
	CHECK(!symtab_find_name(&t, "nope") && !symtab_find_name(&t, "helpe"), "unknown names are not found");
	s = symtab_find_name(&t, "_stext");
	CHECK(s && symtab_extent(&t, s) == 0x100, "extent runs to the next address, past aliases");
	symtab_destroy(&t);
}

static void check_many(void)
{
	struct symtab t;
	unsigned seed = 99;
	uint64_t a = 0xffffffff81000000;
	size_t bad = 0;
	char name[32];

	symtab_init(&t);
	for (unsigned i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "pcpu%u", i);
		add(&t, i * 64, 'A', name);
	}
	for (unsigned i = 0; i < 50000; i++) {
		a += (uint64_t)(rand_r(&seed) % 512) * ((rand_r(&seed) % 8) != 0);
		snprintf(name, sizeof(name), "f%u", i);
		add(&t, a, 't', name);
	}
	CHECK(symtab_finish(&t) == 0, "50,200 symbols");
	for (unsigned i = 0; i < 200000; i++) {
		uint64_t x = i % 7 == 0 ? (uint64_t)rand_r(&seed) % 20000
			     : 0xffffffff81000000 + (uint64_t)rand_r(&seed) % (a - 0xffffffff81000000 + 4096);
		const struct symbol *s = symtab_find_addr(&t, x, NULL), *n = plain_find(&t, x);

		/* Both must land in the same alias group; ours must be its first member. */
		bad += !((!s && !n) || (s && n && s->addr == n->addr &&
					(s == t.syms || s[-1].addr != s->addr)));
	}
	CHECK(bad == 0, "200,000 address lookups agree with a plain binary search (%zu differ)", bad);
	for (unsigned i = 0; i < 50000; i += 7) {
		snprintf(name, sizeof(name), "f%u", i);
		const struct symbol *s = symtab_find_name(&t, name);

		bad += !s || strcmp(symtab_name(&t, s), name);
	}
	CHECK(bad == 0, "name lookups find every symbol");
	symtab_destroy(&t);
}

static void check_compare(void)
{
	struct symtab ref, got;
	struct symtab_diff d;

	symtab_init(&ref);
	symtab_init(&got);
	add(&ref, 0x0, 'D', "__per_cpu_start");
	add(&ref, 0x40, 'D', "pcpu_var");
	add(&ref, 0x80, 'D', "__per_cpu_end");
	add(&ref, 0x1000, 'T', "same");
	add(&ref, 0x2000, 'T', "moved");
	add(&ref, 0x3000, 'T', "retyped");
	add(&ref, 0x4000, 'D', "kallsyms_names");
	add(&got, 0x0, 'A', "__per_cpu_start");
	add(&got, 0x40, 'A', "pcpu_var");
	add(&got, 0x80, 'A', "__per_cpu_end");
	add(&got, 0x1000, 'T', "same");
	add(&got, 0x2008, 'T', "moved");
	add(&got, 0x3000, 't', "retyped");
	add(&got, 0x5000, 'T', "absent");
	symtab_finish(&ref);
	symtab_finish(&got);
	CHECK(symtab_compare(&ref, &got, &d) == 0, "compare runs");
	CHECK(d.same == 1 && d.percpu_abs == 3 && d.addr_differs == 1 && d.type_differs == 1 &&
	      d.missing == 1 && d.ref_only == 2 && symtab_diff_disagreements(&d) == 3 && d.nexamples == 3,
	      "same %zu, per-cpu A %zu, moved %zu, retyped %zu, absent %zu, ref only %zu",
	      d.same, d.percpu_abs, d.addr_differs, d.type_differs, d.missing, d.ref_only);
	CHECK(strstr(d.examples[0], "moved") && strstr(d.examples[1], "retyped"), "examples name them: %s; %s",
	      d.examples[0], d.examples[1]);
	symtab_destroy(&ref);
	symtab_destroy(&got);
}

/* An end marker at a function's address names the address last (loongarch64: kernel_entry_end, rest_init). */
static void check_end_marker(void)
{
	struct symtab t;
	const struct symbol *s;
	uint64_t off;

	symtab_init(&t);
	add(&t, 0x1000, 'T', "kernel_entry");
	add(&t, 0x1138, 'T', "kernel_entry_end");
	add(&t, 0x1138, 't', "rest_init");
	add(&t, 0x1208, 't', "kernel_init");
	add(&t, 0x2000, 'T', "_etext_end");
	CHECK(symtab_finish(&t) == 0, "end markers: finish");
	s = symtab_find_addr(&t, 0x1138, &off);
	CHECK(s && !strcmp(symtab_name(&t, s), "rest_init") && off == 0,
	      "an address with a function and an end marker is the function's (%s)", s ? symtab_name(&t, s) : "none");
	s = symtab_find_addr(&t, 0x1140, &off);
	CHECK(s && !strcmp(symtab_name(&t, s), "rest_init") && off == 8, "inside it too");
	s = symtab_find_name(&t, "kernel_entry_end");
	CHECK(s && s->addr == 0x1138, "the marker keeps its name and address");
	s = symtab_find_addr(&t, 0x2000, &off);
	CHECK(s && !strcmp(symtab_name(&t, s), "_etext_end"), "a marker alone still names its address");
	symtab_destroy(&t);
}

/* x86_64 6.12's call padding: __pfx_ (and kCFI's __cfi_) symbols are never a function or a caller. */
static void check_padding(void)
{
	struct symtab t;
	const struct symbol *s;
	uint64_t off;

	symtab_init(&t);
	add(&t, 0xffffffff8333aa70, 'T', "__pfx_start_kernel");
	add(&t, 0xffffffff8333aa80, 'T', "start_kernel");
	add(&t, 0xffffffff8333b1e0, 't', "__cfi_next_fn");
	add(&t, 0xffffffff8333b1f0, 't', "next_fn");
	add(&t, 0xffffffff8333b300, 'd', "__pfx_data_is_not_padding");
	add(&t, 0xffffffff8333b400, 't', "__pfx_odd_alias");
	add(&t, 0xffffffff8333b400, 't', "real_fn");
	CHECK(symtab_finish(&t) == 0, "padding: finish");
	s = symtab_find_addr(&t, 0xffffffff8333aa84, &off);
	CHECK(s && !strcmp(symtab_name(&t, s), "start_kernel") && off == 4, "start_kernel+4 (its slot after ENDBR64)");
	s = symtab_find_addr(&t, 0xffffffff8333b1e0, &off);
	CHECK(s && !strcmp(symtab_name(&t, s), "start_kernel") && off == 0x760,
	      "an address in __cfi_next_fn is the end of start_kernel (a noreturn call's return address): %s+%#llx",
	      s ? symtab_name(&t, s) : "none", (unsigned long long)off);
	s = symtab_find_addr(&t, 0xffffffff8333aa70, &off);
	CHECK(!s, "the first symbol's padding names nothing before it (%s)", s ? symtab_name(&t, s) : "none");
	s = symtab_find_addr(&t, 0xffffffff8333b1f0, &off);
	CHECK(s && !strcmp(symtab_name(&t, s), "next_fn") && off == 0, "the function after the padding is itself");
	s = symtab_find_addr(&t, 0xffffffff8333b308, &off);
	CHECK(s && !strcmp(symtab_name(&t, s), "__pfx_data_is_not_padding") && off == 8,
	      "only text symbols are padding");
	s = symtab_find_name(&t, "__pfx_start_kernel");
	CHECK(s && (s->flags & SYMBOL_PADDING), "the padding symbol keeps its name, marked as padding");
	s = symtab_find_addr(&t, 0xffffffff8333b404, &off);
	CHECK(s && !strcmp(symtab_name(&t, s), "real_fn") && off == 4,
	      "a function that shares its address with a padding symbol is itself (%s)", s ? symtab_name(&t, s) : "none");
	symtab_destroy(&t);
}

int main(void)
{
	check_padding();
	check_small_table();
	check_many();
	check_compare();
	check_end_marker();
	return check_exit();
}
