/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host-compatibility layer for software-assisted KVM hosts
 * (shared/docs/HOST-KVM.md). The generic part: the mode switch and the
 * per-assist counters. Every workaround itself lives in
 * arch/<arch>/compat.c, each with the host behaviour it answers.
 */
#ifndef VMM_COMPAT_H
#define VMM_COMPAT_H

#include <stdatomic.h>
#include <stdio.h>

enum compat_mode { COMPAT_AUTO, COMPAT_ON, COMPAT_OFF };

#define COMPAT_MAX_ASSISTS 16

struct compat_stats {
	atomic_ulong fired[COMPAT_MAX_ASSISTS];
};

int compat_parse_mode(const char *s, enum compat_mode *mode);
/* 1 when the layer should be on: forced, or auto-detected for this host. */
int compat_resolve(enum compat_mode mode);
void compat_count(struct compat_stats *stats, unsigned assist);
/* One line per assist that fired, for -v. */
void compat_report(struct compat_stats *stats, FILE *out);

#endif
