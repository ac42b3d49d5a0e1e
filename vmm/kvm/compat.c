// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>

#include "vmm/kvm/arch.h"
#include "vmm/kvm/compat.h"

int compat_parse_mode(const char *s, enum compat_mode *mode)
{
	if (!strcmp(s, "auto"))
		*mode = COMPAT_AUTO;
	else if (!strcmp(s, "on"))
		*mode = COMPAT_ON;
	else if (!strcmp(s, "off"))
		*mode = COMPAT_OFF;
	else
		return -EINVAL;
	return 0;
}

int compat_resolve(enum compat_mode mode)
{
	if (mode == COMPAT_AUTO)
		return arch_compat_detect();
	return mode == COMPAT_ON;
}

void compat_count(struct compat_stats *stats, unsigned assist)
{
	if (assist < COMPAT_MAX_ASSISTS)
		atomic_fetch_add_explicit(&stats->fired[assist], 1, memory_order_relaxed);
}

void compat_report(struct compat_stats *stats, FILE *out)
{
	for (unsigned i = 0; i < COMPAT_MAX_ASSISTS; i++) {
		unsigned long n = atomic_load(&stats->fired[i]);
		const char *name = arch_compat_assist_name(i);

		if (name)
			fprintf(out, "vmmtrace: compat assist %-10s fired %lu times\n", name, n);
	}
}
