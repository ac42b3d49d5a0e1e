// SPDX-License-Identifier: GPL-2.0
/* vmmtrace symbols: placeholder until its issue lands. */
#include <stdio.h>

#include "vmm/cmd.h"

int cmd_symbols(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "vmmtrace symbols: not implemented yet\n");
	return EXIT_BAD_INPUT;
}
