// SPDX-License-Identifier: GPL-2.0
/* What every subcommand shares: the shape of its error line. */
#include <stdarg.h>
#include <stdio.h>

#include "vmm/cli/cmd.h"

int cmd_fail(const char *cmd, int status, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "vmmtrace%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return status;
}
