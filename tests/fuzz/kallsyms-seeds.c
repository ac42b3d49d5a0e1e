// SPDX-License-Identifier: GPL-2.0
/*
 * Writes the fuzzer's seed corpus: small kallsyms sections in each layout
 * (tests/fuzz/kallsyms-gen.h) and a System.map. Usage: kallsyms-seeds DIR
 */
#include <stdio.h>

#include "tests/fuzz/kallsyms-gen.h"

static struct kgen_sym syms[400];

static int write_file(const char *dir, const char *name, const void *p, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
		perror(path);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct { const char *name; struct kgen_opts o; int percpu, long_name; } seeds[] = {
		{ "5.4", { .mode = KALLSYMS_ABSOLUTE_PERCPU, .markers_width = 4 }, 1, 0 },
		{ "ptr-markers", { .mode = KALLSYMS_ABSOLUTE_PERCPU, .markers_width = 8 }, 1, 0 },
		{ "absolute", { .mode = KALLSYMS_ABSOLUTE, .markers_width = 4 }, 1, 0 },
		{ "6.1-uleb", { .mode = KALLSYMS_ABSOLUTE_PERCPU, .markers_width = 4, .uleb = 1 }, 1, 300 },
		{ "6.2-seqs", { .mode = KALLSYMS_ABSOLUTE_PERCPU, .markers_width = 4, .uleb = 1, .seqs_width = 3 }, 1, 0 },
		{ "6.4", { .names_first = 1, .mode = KALLSYMS_ABSOLUTE_PERCPU, .markers_width = 4, .uleb = 1, .seqs_width = 3 }, 1, 0 },
		{ "6.15", { .names_first = 1, .mode = KALLSYMS_BASE_RELATIVE, .markers_width = 4, .uleb = 1, .seqs_width = 3 }, 0, 0 },
		{ "7.0", { .names_first = 1, .mode = KALLSYMS_PLACE_RELATIVE, .markers_width = 4, .uleb = 1, .seqs_width = 3 }, 0, 200 },
	};
	static const char map[] = "0000000000000000 D __per_cpu_start\nffffffff81000000 T _stext\n"
				  "ffffffff83079e46 T start_kernel\nffffffffc0a00000 t ext4_init_fs\t[ext4]\n";
	int rc = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: kallsyms-seeds DIR\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		struct kgen_out o;
		size_t n = kgen_kernel(syms, 400, 300, seeds[i].percpu, seeds[i].long_name);

		kgen_build(syms, n, &seeds[i].o, &o);
		rc |= write_file(argv[1], seeds[i].name, o.data, o.size);
		free(o.data);
	}
	rc |= write_file(argv[1], "System.map", map, sizeof(map) - 1);
	return rc;
}
