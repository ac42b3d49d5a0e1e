// SPDX-License-Identifier: GPL-2.0
/* vmmtrace encode: placeholder until its issue lands. */
#include <stdio.h>

#include "vmm/cmd.h"

int cmd_encode(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "vmmtrace encode: not implemented yet\n");
	return EXIT_BAD_INPUT;
}
