// SPDX-License-Identifier: GPL-2.0
/* --event globs and --msr lists (vmev-select.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/trace/filter.h"
#include "vmm/trace/vmev-select.h"

int vmev_select(const char *glob, uint32_t *mask)
{
	uint32_t m = 0;

	for (unsigned k = 1; k < VMEV_NKINDS; k++)
		if (filter_glob_match(glob, vmev_name(k)))
			m |= VMEV_MASK(k);
	if (!m)
		return -ENOENT;
	*mask |= m;
	return 0;
}

void vmev_msr_defaults(struct vmev_msr_set *set)
{
	/*
	 * The KVM PV MSRs a Linux guest writes during its handshake
	 * (Documentation/virt/kvm/x86/msr.rst): the legacy wall-clock and
	 * system-time pair, and 0x4b564d00..08 (wall clock, system time,
	 * async PF, steal time, PV EOI, poll control, async PF int and ack,
	 * migration control).
	 */
	set->n = 0;
	set->r[set->n++] = (struct vmev_msr_range){ 0x11, 0x12 };
	set->r[set->n++] = (struct vmev_msr_range){ 0x4b564d00, 0x4b564d08 };
}

static int vmev_msr_number(const char *s, const char **end, uint32_t *out)
{
	unsigned long long v;
	char *e;

	if (*s < '0' || *s > '9')	/* strtoull would take a sign or spaces */
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &e, 0);
	if (errno || e == s || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	*end = e;
	return 0;
}

int vmev_msr_parse(const char *list, struct vmev_msr_set *set)
{
	const char *p = list;

	if (!*p)
		return -EINVAL;
	for (;;) {
		struct vmev_msr_range r;

		if (vmev_msr_number(p, &p, &r.first))
			return -EINVAL;
		r.last = r.first;
		if (*p == '-' && vmev_msr_number(p + 1, &p, &r.last))
			return -EINVAL;
		/* A range is a handful of MSRs: a large one is a typo, not a wish. */
		if (r.last < r.first || r.last - r.first >= 256)
			return -EINVAL;
		if (set->n == VMEV_MAX_MSR_RANGES)
			return -E2BIG;
		set->r[set->n++] = r;
		if (!*p)
			return 0;
		if (*p++ != ',' || !*p)
			return -EINVAL;
	}
}

/* include/trace/events/kvm.h's names for KVM_EXIT_* (kvm_userspace_exit). */
