// SPDX-License-Identifier: GPL-2.0
/* vmmtrace boot: placeholder until its issue lands. */
#include <stdio.h>

#include "vmm/cmd.h"

int cmd_boot(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "vmmtrace boot: not implemented yet\n");
	return EXIT_BAD_INPUT;
}
