// SPDX-License-Identifier: GPL-2.0
/*
 * MSR accesses brought to the VMM (kvm:msr): KVM's MSR filter denies the
 * chosen MSRs to the guest, KVM_CAP_X86_USER_SPACE_MSR turns each denied
 * access into a KVM_EXIT_X86_RDMSR/WRMSR, and the VMM completes it through
 * KVM itself (host-initiated KVM_GET/SET_MSRS), so the guest reads and
 * writes what it would have without the VMM. A failed host-initiated
 * access becomes the #GP the guest's own access would have raised.
 */
#include <errno.h>
#include <string.h>

#include "vmm/kvm/arch.h"
#include "vmm/kvm-x86_64/cpu.h"
#include "vmm/kvm/kvm.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/kvm/vm.h"
#include "vmm/util/log.h"
#include "vmm/kvm-x86_64/msr.h"

int x86_vm_msr_intercept(struct vm *vm, const uint32_t (*ranges)[2], unsigned n, struct errbuf *err)
{
	static uint8_t deny[KVM_MSR_FILTER_MAX_BITMAP_SIZE];	/* all zero: every MSR in a range exits */
	struct kvm_enable_cap cap = { .cap = KVM_CAP_X86_USER_SPACE_MSR,
				      .args[0] = KVM_MSR_EXIT_REASON_FILTER };
	struct kvm_msr_filter f = { .flags = KVM_MSR_FILTER_DEFAULT_ALLOW };
	int rc;

	if (!kvm_check_cap(vm->kvm_fd, KVM_CAP_X86_USER_SPACE_MSR))
		return err_set(err, EOPNOTSUPP, "this host's KVM lacks KVM_CAP_X86_USER_SPACE_MSR");
	if (!kvm_check_cap(vm->kvm_fd, KVM_CAP_X86_MSR_FILTER))
		return err_set(err, EOPNOTSUPP, "this host's KVM lacks KVM_CAP_X86_MSR_FILTER");
	if (n > KVM_MSR_FILTER_MAX_RANGES)
		return err_set(err, E2BIG, "at most %d MSR ranges", KVM_MSR_FILTER_MAX_RANGES);
	for (unsigned i = 0; i < n; i++) {
		uint32_t count = ranges[i][1] - ranges[i][0] + 1;

		if (ranges[i][1] < ranges[i][0] || count > 8 * sizeof(deny))
			return err_set(err, EINVAL, "bad MSR range 0x%x-0x%x", ranges[i][0], ranges[i][1]);
		f.ranges[i] = (struct kvm_msr_filter_range){
			.flags = KVM_MSR_FILTER_READ | KVM_MSR_FILTER_WRITE,
			.nmsrs = count, .base = ranges[i][0], .bitmap = deny,
		};
	}
	if ((rc = kvm_ioctl(vm->vm_fd, KVM_ENABLE_CAP, &cap, err)) < 0)
		return rc;
	rc = kvm_ioctl(vm->vm_fd, KVM_X86_SET_MSR_FILTER, &f, err);
	return rc < 0 ? rc : 0;
}

/*
 * The proof that a forwarded write took: KVM must now read back what the
 * guest wrote (true of every KVM PV MSR). Writes are rare (a dozen a boot),
 * so this costs nothing; -v says when it does not hold.
 */
static void msr_check_readback(struct vcpu *vcpu, uint32_t index, uint64_t wrote)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e;
	} m = { .hdr.nmsrs = 1, .e.index = index };

	if (kvm_ioctl(vcpu->fd, KVM_GET_MSRS, &m, NULL) != 1)
		log_info("kvm:msr: vCPU %u: MSR 0x%x written (0x%llx) but cannot be read back",
			 vcpu->id, index, (unsigned long long)wrote);
	else if (m.e.data != wrote)
		log_info("kvm:msr: vCPU %u: MSR 0x%x written 0x%llx, reads back 0x%llx",
			 vcpu->id, index, (unsigned long long)wrote, (unsigned long long)m.e.data);
	else
		log_debug("kvm:msr: vCPU %u: MSR 0x%x reads back 0x%llx as written",
			  vcpu->id, index, (unsigned long long)wrote);
}

/* Completes the access through KVM and tells the hooks' owner of it. */
void msr_exit(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	int is_write = run->exit_reason == KVM_EXIT_X86_WRMSR;
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e;
	} m = { .hdr.nmsrs = 1, .e.index = run->msr.index, .e.data = run->msr.data };
	int done;

	/* Only filtered MSRs exit (the capability was enabled for that reason alone). */
	if (run->msr.reason != KVM_MSR_EXIT_REASON_FILTER) {
		run->msr.error = 1;
		return;
	}
	done = kvm_ioctl(vcpu->fd, is_write ? KVM_SET_MSRS : KVM_GET_MSRS, &m, NULL) == 1;
	run->msr.error = !done;
	if (done && !is_write)
		run->msr.data = m.e.data;
	if (done && is_write)
		msr_check_readback(vcpu, run->msr.index, run->msr.data);
	vm_report_exit(vcpu->vm, vcpu, &(struct vm_exit_info){
		.kind = VM_EXIT_MSR, .reason = run->exit_reason, .is_write = is_write,
		.failed = !done, .addr = run->msr.index, .size = 8,
		.value = is_write ? m.e.data : (done ? run->msr.data : 0),
	});
}
