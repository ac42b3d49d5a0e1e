/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Error reporting below the command layer: functions return 0 or -errno and,
 * when given an errbuf, say in one line what failed and with which input.
 * Only main and the cmd-*.c files print it and choose the exit status.
 */
#ifndef VMM_ERROR_H
#define VMM_ERROR_H

#include <stddef.h>

struct errbuf {
	char msg[512];
};

/* Formats into err (if not NULL) and returns -errnum. */
int err_set(struct errbuf *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
