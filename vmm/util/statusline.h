/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One live status line at the bottom of a terminal (vmmtrace boot's
 * progress), shared with everything else that writes to that terminal: the
 * guest's console and log lines erase it before they write, and the next
 * refresh draws it again. Off (every call a plain write or a no-op) until
 * statusline_enable().
 */
#ifndef VMM_UTIL_STATUSLINE_H
#define VMM_UTIL_STATUSLINE_H

#include <stddef.h>

/* Draws the line on fd (a terminal) from now on; 0, or -ENOTTY. */
int statusline_enable(int fd);
/* Erases the line for good. */
void statusline_disable(void);
/* Replaces the line's text (one line; longer text is cut to 200 bytes). */
void statusline_show(const char *text);
/*
 * write(2) of len bytes to fd, all of them unless fd fails, the status
 * line erased first when fd is the same terminal. Returns 0 or -errno.
 */
int statusline_write(int fd, const void *buf, size_t len);
/* statusline_write of a formatted text (at most 1 KiB). */
int statusline_printf(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
