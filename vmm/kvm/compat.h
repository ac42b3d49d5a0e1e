/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host-compatibility layer for software-assisted KVM hosts
 * (shared/docs/HOST-KVM.md). The generic part: the mode switch and the
 * per-assist counters. Every workaround itself lives in
 * vmm/kvm-<arch>/compat.c, each with the host behaviour it answers.
 */
#ifndef VMM_COMPAT_H
#define VMM_COMPAT_H

#include <stdatomic.h>
#include <stdio.h>

#define COMPAT_MAX_ASSISTS 16

struct compat_stats {
	atomic_ulong fired[COMPAT_MAX_ASSISTS];
};

/* 1 when the layer should be on: forced (mode 1, 0), or detected for this host (mode < 0: auto). */
int compat_resolve(int mode);
void compat_count(struct compat_stats *stats, unsigned assist);
/* One line per assist that fired, for -v. */
void compat_report(struct compat_stats *stats, FILE *out);

#endif
