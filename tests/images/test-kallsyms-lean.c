// SPDX-License-Identifier: GPL-2.0
/*
 * The lean test kernel (scripts/build-lean-kernel.sh): kallsyms recovered
 * from its bzImage must match, symbol for symbol (address, type, name), the
 * System.map of its build and the .symtab of its unstripped vmlinux; and
 * .symtab read as nm + mksysmap read it must give that System.map exactly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check.h"
#include "vmm/image/image.h"
#include "vmm/image/kallsyms.h"
#include "vmm/image/mcount.h"
#include "vmm/image/sysmap.h"

static char lean[4096];

static const char *lean_file(const char *name)
{
	static char path[4200];

	snprintf(path, sizeof(path), "%s/%s", lean, name);
	return path;
}

static int open_kallsyms(const char *name, struct kernel_image *img, struct symtab *t)
{
	struct kallsyms_layout l;
	struct errbuf err;
	char desc[300];
	int rc = image_open(lean_file(name), img, &err);

	symtab_init(t);
	if (!rc)
		rc = kallsyms_recover(&img->elf, t, &l, &err);
	if (!rc)
		rc = symtab_finish(t);
	if (!rc)
		kallsyms_layout_describe(&l, desc, sizeof(desc));
	CHECK(rc == 0, "kallsyms of %s: %zu symbols; %s", name, t->count, rc ? err.msg : desc);
	return rc;
}

static int identical(const struct symtab *a, const struct symtab *b)
{
	if (a->count != b->count)
		return 0;
	for (size_t i = 0; i < a->count; i++)
		if (a->syms[i].addr != b->syms[i].addr || a->syms[i].type != b->syms[i].type ||
		    strcmp(symtab_name(a, &a->syms[i]), symtab_name(b, &b->syms[i])))
			return 0;
	return 1;
}

static int cmp_full(const void *a, const void *b, void *arg)
{
	const struct symtab *t = arg;
	const struct symbol *x = &t->syms[*(const size_t *)a], *y = &t->syms[*(const size_t *)b];
	int c = strcmp(symtab_name(t, x), symtab_name(t, y));

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return c ? c : x->type - y->type;
}

static size_t *sorted_order(const struct symtab *t)
{
	size_t *o = malloc(t->count * sizeof(*o));

	for (size_t i = 0; i < t->count; i++)
		o[i] = i;
	qsort_r(o, t->count, sizeof(*o), cmp_full, (void *)t);
	return o;
}

/* The same (address, type, name) lines, whatever the order among aliases. */
static int same_lines(const struct symtab *a, const struct symtab *b)
{
	size_t *oa, *ob, differ = 0;

	if (a->count != b->count)
		return 0;
	oa = sorted_order(a);
	ob = sorted_order(b);
	for (size_t i = 0; i < a->count; i++) {
		const struct symbol *x = &a->syms[oa[i]], *y = &b->syms[ob[i]];

		differ += x->addr != y->addr || x->type != y->type ||
			  strcmp(symtab_name(a, x), symtab_name(b, y));
	}
	free(oa);
	free(ob);
	return !differ;
}

/* Is ks missing sym for a reason scripts/kallsyms gives? */
static int explained(const struct symtab *map, const struct symbol *sym)
{
	const char *name = symtab_name(map, sym);

	return !strncmp(name, "kallsyms_", 9) || sym->type == 'A';
}

static void check_against_map(const struct symtab *map, const struct symtab *ks)
{
	struct symtab_diff d;
	size_t unexplained = 0, dropped = 0;

	symtab_compare(map, ks, &d);
	CHECK(symtab_diff_disagreements(&d) == 0 && d.same + d.percpu_abs == ks->count,
	      "every recovered symbol is in System.map with its address and type (%zu same, %zu per-cpu typed 'A'; %s)",
	      d.same, d.percpu_abs, d.nexamples ? d.examples[0] : "no difference");
	for (size_t i = 0; i < map->count; i++) {
		const struct symbol *s = &map->syms[i], *k;

		for (k = symtab_find_name(ks, symtab_name(map, s)); k; k = symtab_next_same_name(ks, k))
			if (k->addr == s->addr)
				break;
		if (!k) {
			dropped++;
			unexplained += !CHECK_QUIET(explained(map, s), "%016llx %c %s is missing from kallsyms",
						    (unsigned long long)s->addr, s->type, symtab_name(map, s));
		}
	}
	CHECK(unexplained == 0 && dropped == d.ref_only,
	      "the %zu System.map symbols kallsyms lacks are its own tables and absolute symbols", dropped);
}

static void check_slots(const struct kernel_image *img, const struct symtab *ks, const struct symtab *map)
{
	struct mcount_table mt, mt2;
	struct errbuf err;
	size_t wrong = 0, orphans = 0;

	int rc = mcount_read(&img->elf, ks, &slot_ops_x86_64, &mt, &err);

	CHECK(rc == 0, "slots read through kallsyms (%s)", rc ? err.msg : "ok");
	if (rc)
		return;
	CHECK(mt.count > 1000 && mt.states[SLOT_ORIGINAL] == mt.count,
	      "%zu slots, every one call __fentry__ in the fresh image", mt.count);
	for (size_t i = 0; i < mt.count; i++) {
		const struct mcount_slot *s = &mt.slots[i];
		const struct symbol *m;

		wrong += s->func && s->func->addr != s->addr;
		if (s->func)
			continue;
		/* No text symbol may start there in System.map either. */
		m = symtab_find_addr(map, s->addr, NULL);
		orphans++;
		wrong += m && m->addr == s->addr && symtab_is_text(m->type);
	}
	CHECK(wrong == 0, "every slot sits at its function's address; the %zu without one start no function in System.map", orphans);
	rc = mcount_read(&img->elf, map, &slot_ops_x86_64, &mt2, &err);
	CHECK(rc == 0 && mt2.count == mt.count && mt2.no_symbol == mt.no_symbol,
	      "the same slots through System.map (%s)", rc ? err.msg : "ok");
	mcount_destroy(&mt2);
	mcount_destroy(&mt);
}

static void check_lookups(const struct symtab *map, const struct symtab *ks)
{
	size_t bad = 0;

	for (size_t i = 0; i < ks->count; i++) {
		const struct symbol *s = symtab_find_addr(ks, ks->syms[i].addr, NULL);

		bad += !s || s->addr != ks->syms[i].addr;
	}
	for (size_t i = 0; i < map->count; i++)
		bad += !symtab_find_name(map, symtab_name(map, &map->syms[i]));
	CHECK(bad == 0, "every symbol is found by address and by name");
}

int main(void)
{
	struct kernel_image bz, elf;
	struct symtab ks, ks_elf, map, st;
	struct errbuf err;
	const char *cache = getenv("VMMTRACE_CACHE"), *xdg = getenv("XDG_CACHE_HOME");
	int rc;

	/* As scripts/common.sh: $VMMTRACE_CACHE, else $XDG_CACHE_HOME/vmmtrace, else ~/.cache/vmmtrace. */
	if (cache)
		snprintf(lean, sizeof(lean), "%s/lean", cache);
	else if (xdg)
		snprintf(lean, sizeof(lean), "%s/vmmtrace/lean", xdg);
	else
		snprintf(lean, sizeof(lean), "%s/.cache/vmmtrace/lean", getenv("HOME") ? getenv("HOME") : "");
	symtab_init(&map);
	symtab_init(&st);
	rc = sysmap_read_file(lean_file("System.map"), &map, &err);
	CHECK(rc == 0 && symtab_finish(&map) == 0, "lean System.map: %s", rc ? err.msg : "read");
	if (rc) {
		printf("FAIL: the lean kernel is missing: run scripts/setup.sh\n");
		return 1;
	}
	if (open_kallsyms("bzImage", &bz, &ks) || open_kallsyms("vmlinux", &elf, &ks_elf))
		return check_exit();
	CHECK(identical(&ks, &ks_elf), "the bzImage and the vmlinux give the same kallsyms");
	check_against_map(&map, &ks);
	CHECK(sysmap_read_elf(&elf.elf, &st, &err) == 0 && symtab_finish(&st) == 0, "vmlinux .symtab: %zu symbols", st.count);
	CHECK(same_lines(&st, &map), "the .symtab, typed as nm does and filtered as mksysmap does, is System.map exactly");
	check_against_map(&st, &ks);
	check_slots(&bz, &ks, &map);
	check_lookups(&map, &ks);
	symtab_destroy(&st);
	symtab_destroy(&map);
	symtab_destroy(&ks_elf);
	symtab_destroy(&ks);
	image_close(&elf);
	image_close(&bz);
	return check_exit();
}
