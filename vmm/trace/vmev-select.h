/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which VM events a trace records (--event globs over their names) and
 * which MSRs kvm:msr watches (--msr lists); the events themselves are
 * vmm/output/vmevent.h's.
 */
#ifndef VMM_TRACE_VMEV_SELECT_H
#define VMM_TRACE_VMEV_SELECT_H

#include <stdint.h>

#include "vmm/output/vmevent.h"

/*
 * Adds the kinds whose names match glob (ftrace-like glob over
 * "kvm:pio" ...) to *mask. -ENOENT when it matches none.
 */
int vmev_select(const char *glob, uint32_t *mask);

#define VMEV_MAX_MSR_RANGES 16
struct vmev_msr_range {
	uint32_t first, last;		/* inclusive */
};
struct vmev_msr_set {
	struct vmev_msr_range r[VMEV_MAX_MSR_RANGES];
	unsigned n;
};
/* The MSRs kvm:msr records by default: the KVM PV MSRs. */
void vmev_msr_defaults(struct vmev_msr_set *set);
/*
 * Adds a --msr list: comma-separated MSR numbers or FIRST-LAST ranges
 * (hex with 0x, or decimal), each at most 0xffffffff and a range at most
 * 256 MSRs. -EINVAL for a malformed list, -E2BIG past the range limit.
 */
int vmev_msr_parse(const char *list, struct vmev_msr_set *set);

#endif
