// SPDX-License-Identifier: GPL-2.0
#include "vmm/kvm/arch.h"
#include "vmm/kvm/compat.h"

int compat_resolve(int mode)
{
	return mode < 0 ? arch_optional.compat_detect && arch_optional.compat_detect() : mode != 0;
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
		const char *name = arch_optional.compat_assist_name ? arch_optional.compat_assist_name(i) : NULL;

		if (name)
			fprintf(out, "vmmtrace: compat assist %-10s fired %lu times\n", name, n);
	}
}
