// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>

#include "vmm/util/log.h"
#include "vmm/util/statusline.h"

static int log_level = LOG_WARN;

void log_set_level(int level)
{
	log_level = level;
}

int log_get_level(void)
{
	return log_level;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	static const char *const prefix[] = {
		[LOG_ERROR] = "error", [LOG_WARN] = "warning",
		[LOG_INFO] = "info", [LOG_DEBUG] = "debug",
	};
	char line[1024];
	va_list ap;

	if ((int)level > log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* One write so that lines from several threads do not interleave. */
	statusline_printf(2, "vmmtrace: %s: %s\n", prefix[level], line);
}
