/* SPDX-License-Identifier: GPL-2.0 */
/* Small helpers several layers share: a monotonic clock, whole-file reads, hex digits. */
#ifndef VMM_UTIL_H
#define VMM_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t util_now_ns(void);

/*
 * Reads the whole regular file at path, of at most max bytes, into a new
 * buffer (8-byte aligned, with at least one zero byte after the data so a
 * text parser may treat it as a string); free() it. Returns 0, or -errno:
 * the open/read error, -EINVAL when it is not a regular file, -EFBIG when
 * it is larger than max, -EIO on a short read, -ENOMEM.
 */
int util_read_file(const char *path, uint64_t max, uint8_t **data, size_t *size);

/* A hex digit's value (either case), or -1. */
int util_hex_digit(char c);

#endif
