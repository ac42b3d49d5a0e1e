// SPDX-License-Identifier: GPL-2.0
/* vmmtrace entry point: one table dispatches the subcommands. */
#include <stdio.h>
#include <string.h>

#include "vmm/cli/cmd.h"

#ifndef VMMTRACE_VERSION
#define VMMTRACE_VERSION "unknown"
#endif

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *usage;
};

static const struct command commands[] = {
	{ "boot", cmd_boot, "boot KERNEL [--initrd FILE] [--cmdline STR] [--cpus N] [--mem SIZE] [--trace GLOB]... [--control PATH] ..." },
	{ "symbols", cmd_symbols, "symbols KERNEL [GLOB...] [--slots] [--system-map FILE]" },
	{ "attach", cmd_attach, "attach SOCKET --trace GLOB... [--notrace GLOB] [-o FILE] [--duration SECS]" },
	{ "detach", cmd_detach, "detach SOCKET [GLOB...]" },
	{ "status", cmd_status, "status SOCKET" },
	{ "nmi", cmd_nmi, "nmi SOCKET" },
	{ "stop", cmd_stop, "stop SOCKET" },
	{ "encode", cmd_encode, "encode --arch ARCH INSN ARGS..." },
	{ "report", cmd_report, "report FILE [--format text|dat|perfetto|raw] [-o OUT] [--trace GLOB]... [--cpu N] [--from T --to T] [--stat] [--flame] [--chart OUT.svg]" },
	{ "diff", cmd_diff, "diff A B [--context N] [--top N] [--ignore GLOB]... [--format text|json] [--force]" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: vmmtrace COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  vmmtrace %s\n", commands[i].usage);
	fprintf(out, "\n'vmmtrace COMMAND --help' lists a command's options; man vmmtrace-COMMAND describes them.\n"
		"vmmtrace --version says which vmmtrace this is.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_BAD_INPUT;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("vmmtrace %s\n", VMMTRACE_VERSION);
		return EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "vmmtrace: unknown command '%s' (try 'vmmtrace --help')\n", argv[1]);
	return EXIT_BAD_INPUT;
}
