// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the parsers of untrusted symbol data: the kallsyms
 * decoder (input = the section that holds the tables, at KGEN_VA, with
 * _stext expected at KGEN_STEXT as the seeds lay them out) and the
 * System.map reader (input = the file's text). Built and run for 20 s by
 * tests/interop/fuzz-kallsyms.sh; docs/SYMBOLS.md has the long-run command.
 */
#include <stddef.h>
#include <stdint.h>

#include "tests/fuzz/kallsyms-gen.h"
#include "vmm/image/kallsyms.h"
#include "vmm/image/sysmap.h"

static void use_table(struct symtab *tab)
{
	if (symtab_finish(tab) || !tab->count)
		return;
	/* Lookups must hold on whatever the decoder accepted. */
	symtab_find_addr(tab, tab->syms[tab->count / 2].addr + 1, NULL);
	symtab_find_name(tab, symtab_name(tab, &tab->syms[0]));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kallsyms_layout layout;
	struct symtab tab;
	struct errbuf err;

	symtab_init(&tab);
	if (!kallsyms_decode(data, size, KGEN_VA, KGEN_STEXT, &tab, &layout, &err))
		use_table(&tab);
	symtab_destroy(&tab);
	symtab_init(&tab);
	if (!sysmap_parse("fuzz", (const char *)data, size, &tab, &err))
		use_table(&tab);
	symtab_destroy(&tab);
	return 0;
}
