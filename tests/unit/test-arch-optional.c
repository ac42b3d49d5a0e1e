// SPDX-License-Identifier: GPL-2.0
/*
 * What a KVM host arch offers of struct arch_optional (vmm/kvm/arch.h):
 * x86_64 every part (a part left NULL there would silently turn off its
 * compat layer, NMIs, kvm:msr or kvm:cpuid on KVM, which no test without
 * /dev/kvm would see), arm64 none of them.
 */
#include <string.h>

#include "tests/unit/check.h"
#include "vmm/kvm/arch.h"

int main(void)
{
	const struct arch_optional *o = &arch_optional;
	int set = !!o->compat_detect + !!o->compat_assist_name + !!o->vcpu_nmi + !!o->vcpu_nmi_busy +
		  !!o->vm_msr_intercept + !!o->vcpu_cpuid;

	if (!strcmp(arch_name(), "x86_64")) {
		CHECK(set == 6, "x86_64 offers every optional part (%d of 6)", set);
		CHECK(o->compat_assist_name && o->compat_assist_name(0) != NULL, "x86_64 names its first compat assist");
	} else {
		CHECK(set == 0, "%s offers none of them (%d)", arch_name(), set);
	}
	return check_exit();
}
