// SPDX-License-Identifier: GPL-2.0
/*
 * The guest's calls to its hypervisor, brought to the host so that the
 * trace records them (`--event kvm:hypercall`, `--handshake`): KVM's SMCCC
 * filter (KVM_ARM_VM_SMCCC_FILTER, Linux 6.4 and later) forwards PSCI, the
 * PV time feature query and KVM's vendor UID and feature calls as
 * KVM_EXIT_HYPERCALL, and this file answers them as KVM's own
 * arch/arm64/kvm/psci.c and hypercalls.c would, from what KVM says of
 * itself (its PSCI version and vendor services, read from its firmware
 * registers). KVM keeps the Arm architecture calls (SMCCC_VERSION,
 * SMCCC_ARCH_FEATURES: the Spectre mitigations' discovery), PV_TIME_ST,
 * TRNG and PTP, which need its own state: those are answered inside KVM,
 * unseen.
 *
 * CPU_ON is carried out by the target vCPU's own thread (a vCPU's ioctls
 * wait while its thread sleeps powered off in KVM_RUN): the caller leaves
 * the entry point and kicks it; the target resets itself with the
 * KVM_ARM_VCPU_INIT it was created with and starts there.
 */
#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "arch/arm64/smccc.h"
#include "vmm/kvm-arm64/a64.h"
#include "vmm/kvm/arch.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/kvm/vm.h"

/* Linux 6.4's uapi, which Debian 12's 6.1 headers predate. */
#ifndef KVM_ARM_VM_SMCCC_CTRL
#define KVM_ARM_VM_SMCCC_CTRL	0
#define KVM_ARM_VM_SMCCC_FILTER	0
#endif
#define A64_SMCCC_FWD_TO_USER	2	/* KVM_SMCCC_FILTER_FWD_TO_USER */
#define A64_HYPERCALL_EXIT_SMC	1u	/* KVM_HYPERCALL_EXIT_SMC */
struct a64_smccc_filter {
	uint32_t base, nr_functions;
	uint8_t action, pad[15];
};
#ifndef KVM_REG_ARM_VENDOR_HYP_BMAP
#define KVM_REG_ARM_VENDOR_HYP_BMAP KVM_REG_ARM_FW_FEAT_BMAP_REG(2)
#endif
#define A64_MPIDR_HWID		0xff00ffffffULL	/* MPIDR_EL1's affinity fields */

static struct a64_state *psci_state(struct vcpu *vcpu)
{
	return vcpu->vm->arch_state;
}

/* No port I/O and no CPUID: the exits an arm64 guest brings are MMIO (and the hypercalls forwarded). */
unsigned arch_vm_exit_kinds(void)
{
	return HOST_EV_EXIT | HOST_EV_MMIO;
}

int arch_vm_hypercall_exits(struct vm *vm, const char **why, struct errbuf *err)
{
	static const struct { uint32_t base, n; } fwd[] = {
		{ A64_PSCI_FN(0), A64_PSCI_NFNS }, { A64_PSCI_FN64(0), A64_PSCI_NFNS },
		{ SMCCC_PV_TIME_FEATURES, 1 }, { SMCCC_KVM_FEATURES, 1 }, { SMCCC_VENDOR_HYP_UID, 1 },
	};
	struct a64_state *s = vm->arch_state;
	struct kvm_device_attr a = { .group = KVM_ARM_VM_SMCCC_CTRL, .attr = KVM_ARM_VM_SMCCC_FILTER };

	if (ioctl(vm->vm_fd, KVM_HAS_DEVICE_ATTR, &a)) {
		*why = "this host's KVM has no SMCCC filter (KVM_ARM_VM_SMCCC_FILTER, Linux 6.4 and later) and answers "
		       "PSCI and SMCCC calls itself";
		return -EOPNOTSUPP;
	}
	for (unsigned i = 0; i < sizeof(fwd) / sizeof(fwd[0]); i++) {
		struct a64_smccc_filter f = { .base = fwd[i].base, .nr_functions = fwd[i].n,
					      .action = A64_SMCCC_FWD_TO_USER };

		a.addr = (uint64_t)(uintptr_t)&f;
		if (ioctl(vm->vm_fd, KVM_SET_DEVICE_ATTR, &a))
			return err_set(err, errno, "kvm:hypercall: KVM_ARM_VM_SMCCC_FILTER for 0x%x..0x%x: %s",
				       fwd[i].base, fwd[i].base + fwd[i].n - 1, strerror(errno));
	}
	s->psci.user = 1;
	return 0;
}

/* KVM's PSCI version for this VM (its firmware register): 0x10001 for 1.1. */
static uint32_t psci_version(struct vcpu *vcpu)
{
	uint64_t v = 0;

	return a64_get_reg(vcpu, KVM_REG_ARM_PSCI_VERSION, &v) ? 0x2 : (uint32_t)v;	/* 0.2: the feature asked */
}

/*
 * Whether PSCI function fid is one KVM's PSCI (version) implements: the
 * SMC64 forms only where PSCI defines one; SYSTEM_SUSPEND never (this host
 * does not enable it).
 */
static int psci_has(uint32_t version, uint32_t fid)
{
	uint32_t f = smccc_psci32(fid);
	int is64 = f != fid;

	if (!smccc_is_psci(fid))
		return 0;
	switch (f - A64_PSCI_FN(0)) {
	case A64_PSCI_CPU_SUSPEND: case A64_PSCI_CPU_ON: case A64_PSCI_AFFINITY_INFO:
		return 1;
	case A64_PSCI_VERSION: case A64_PSCI_CPU_OFF: case A64_PSCI_MIGRATE_INFO_TYPE: case A64_PSCI_SYSTEM_OFF:
	case A64_PSCI_SYSTEM_RESET:
		return !is64;
	case A64_PSCI_FEATURES:
		return !is64 && version >= 0x10000;
	case A64_PSCI_SYSTEM_RESET2:
		return version >= 0x10001;
	}
	return 0;
}

/* A64_PSCI_FEATURES: what KVM's own PSCI 1.x says of each function (no feature flags). */
static int64_t psci_features(uint32_t version, uint32_t fid)
{
	if (fid == SMCCC_VERSION_FID)
		return A64_PSCI_RET_SUCCESS;
	return psci_has(version, fid) ? A64_PSCI_RET_SUCCESS : A64_PSCI_RET_NOT_SUPPORTED;
}

/* The vCPU whose MPIDR_EL1 is mpidr's affinity, or -1 (none, or bits outside the affinity fields, as KVM says). */
static int psci_find(struct a64_state *s, const struct vm *vm, uint64_t mpidr)
{
	if (mpidr & ~A64_MPIDR_HWID)
		return -1;
	for (unsigned i = 0; i < vm->ncpus && i < VM_MAX_CPUS; i++)
		if ((s->mpidr[i] & A64_MPIDR_HWID) == (mpidr & A64_MPIDR_HWID))
			return (int)i;
	return -1;
}

static int64_t psci_cpu_on(struct vcpu *vcpu, uint64_t mpidr, uint64_t entry, uint64_t context)
{
	struct a64_state *s = psci_state(vcpu);
	int t = psci_find(s, vcpu->vm, mpidr);
	int64_t ret = A64_PSCI_RET_SUCCESS;

	if (t < 0)
		return A64_PSCI_RET_INVALID_PARAMS;
	pthread_mutex_lock(&s->psci.lock);
	/* KVM makes the target runnable within the call: a second CPU_ON finds it on, never pending. */
	if (s->psci.power[t] != A64_OFF)
		ret = A64_PSCI_RET_ALREADY_ON;
	else {
		s->psci.power[t] = A64_ON_PENDING;
		s->psci.entry[t] = entry;
		s->psci.context[t] = context;
		atomic_store(&s->psci.pending[t], 1);
	}
	pthread_mutex_unlock(&s->psci.lock);
	if (ret == A64_PSCI_RET_SUCCESS)
		vcpu_kick(&vcpu->vm->vcpus[t]);
	return ret;
}

/* AFFINITY_INFO: ON when any vCPU at that affinity is (or is being) on. */
static int64_t psci_affinity_info(struct vcpu *vcpu, uint64_t target, uint64_t level)
{
	struct a64_state *s = psci_state(vcpu);
	uint64_t mask;
	int64_t ret = A64_PSCI_RET_INVALID_PARAMS;

	if (level > 3 || (target & ~A64_MPIDR_HWID))
		return A64_PSCI_RET_INVALID_PARAMS;
	mask = A64_MPIDR_HWID & ~((1ULL << (level == 3 ? 32 : 8 * level)) - 1);
	pthread_mutex_lock(&s->psci.lock);
	for (unsigned i = 0; i < vcpu->vm->ncpus && i < VM_MAX_CPUS; i++) {
		if ((s->mpidr[i] & mask) != (target & mask))
			continue;
		if (s->psci.power[i] != A64_OFF) {
			ret = A64_PSCI_AFFINITY_ON;
			break;
		}
		ret = A64_PSCI_AFFINITY_OFF;
	}
	pthread_mutex_unlock(&s->psci.lock);
	return ret;
}

/* CPU_OFF: this vCPU sleeps in KVM_RUN until a CPU_ON wakes it. */
static int64_t psci_cpu_off(struct vcpu *vcpu)
{
	struct a64_state *s = psci_state(vcpu);
	struct kvm_mp_state mp = { .mp_state = KVM_MP_STATE_STOPPED };

	pthread_mutex_lock(&s->psci.lock);
	s->psci.power[vcpu->id] = A64_OFF;
	pthread_mutex_unlock(&s->psci.lock);
	if (ioctl(vcpu->fd, KVM_SET_MP_STATE, &mp)) {
		vm_request_stop(vcpu->vm, VM_STOP_HOST_FAILURE, "vCPU %u: PSCI CPU_OFF: KVM_SET_MP_STATE: %s",
				vcpu->id, strerror(errno));
		return A64_PSCI_RET_INTERNAL_FAILURE;
	}
	return A64_PSCI_RET_SUCCESS;
}

/* PSCI's answer to fid, with the vCPU's x1..x3 as arguments. */
static int64_t psci_call(struct vcpu *vcpu, uint32_t fid, const uint64_t a[3])
{
	uint32_t version = psci_version(vcpu);

	if (!psci_has(version, fid))
		return A64_PSCI_RET_NOT_SUPPORTED;
	switch (smccc_psci32(fid) - A64_PSCI_FN(0)) {
	case A64_PSCI_VERSION: return version;
	case A64_PSCI_CPU_SUSPEND: return A64_PSCI_RET_SUCCESS;	/* a standby that ends at once, as a wake-up may */
	case A64_PSCI_CPU_OFF: return psci_cpu_off(vcpu);
	case A64_PSCI_CPU_ON: return psci_cpu_on(vcpu, a[0], a[1], a[2]);
	case A64_PSCI_AFFINITY_INFO: return psci_affinity_info(vcpu, a[0], a[1]);
	case A64_PSCI_MIGRATE_INFO_TYPE: return A64_PSCI_TOS_NOT_PRESENT_MP;
	case A64_PSCI_SYSTEM_OFF:
		vm_request_stop(vcpu->vm, VM_STOP_GUEST_EXIT, "guest powered off");
		return A64_PSCI_RET_INTERNAL_FAILURE;	/* what a return would mean */
	case A64_PSCI_SYSTEM_RESET:
		vm_request_reset(vcpu->vm, "system reset event");
		return A64_PSCI_RET_INTERNAL_FAILURE;
	case A64_PSCI_SYSTEM_RESET2:	/* the architectural warm reset (0) or a vendor's (bit 31) */
		if (a[0] && !(a[0] & 0x80000000u))
			return A64_PSCI_RET_INVALID_PARAMS;
		vm_request_reset(vcpu->vm, "system reset event");
		return A64_PSCI_RET_INTERNAL_FAILURE;
	case A64_PSCI_FEATURES:
		return psci_features(version, (uint32_t)a[0]);
	}
	return A64_PSCI_RET_NOT_SUPPORTED;
}

/* The call's answer in x[] (KVM's own, for the calls it forwards: x1..x3 zero unless it says otherwise). */
static void smccc_answer(struct vcpu *vcpu, uint32_t fid, const uint64_t a[3], uint64_t x[4])
{
	uint64_t bmap = 0;

	x[0] = (uint64_t)(int64_t)A64_PSCI_RET_NOT_SUPPORTED;
	if (smccc_is_psci(fid))
		x[0] = (uint64_t)psci_call(vcpu, fid, a);
	else if (fid == SMCCC_VENDOR_HYP_UID) {
		x[0] = SMCCC_KVM_UID_0, x[1] = SMCCC_KVM_UID_1, x[2] = SMCCC_KVM_UID_2, x[3] = SMCCC_KVM_UID_3;
	} else if (fid == SMCCC_KVM_FEATURES) {
		/* KVM's bitmap of the vendor services it offers this VM. */
		if (a64_get_reg(vcpu, KVM_REG_ARM_VENDOR_HYP_BMAP, &bmap))
			bmap = 1u << SMCCC_KVM_FEATURE_FEATURES;
		x[0] = bmap;
	}
	/* PV time: supported where the host gave KVM the steal-time records (PV_TIME_ST itself stays KVM's). */
	else if (fid == SMCCC_PV_TIME_FEATURES && (a[0] == SMCCC_PV_TIME_FEATURES || a[0] == SMCCC_PV_TIME_ST) &&
		 psci_state(vcpu)->pvtime)
		x[0] = A64_PSCI_RET_SUCCESS;
}

int a64_smccc_exit(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	uint32_t fid = (uint32_t)run->hypercall.nr;
	uint64_t a[3] = { 0, 0, 0 }, x[4] = { 0, 0, 0, 0 };
	struct errbuf err;
	int rc = 0;

	for (unsigned i = 0; i < 3 && !rc; i++)
		rc = a64_get_reg(vcpu, A64_CORE_REG(regs.regs[i + 1]), &a[i]);
	if (rc) {
		vm_request_stop(vcpu->vm, VM_STOP_HOST_FAILURE, "vCPU %u: a hypercall's arguments: %s", vcpu->id,
				strerror(-rc));
		return rc;
	}
	if (!(fid & SMCCC_64))		/* SMC32 calls take 32-bit arguments */
		for (unsigned i = 0; i < 3; i++)
			a[i] = (uint32_t)a[i];
	/* The answer as KVM gives it: a negative one sign-extended to 64 bits, SMC32 or not. */
	smccc_answer(vcpu, fid, a, x);
	for (int i = 0; i < 4 && !rc; i++)
		rc = a64_set_reg(vcpu, A64_CORE_REG(regs.regs[i]), x[i], &err);
	if (rc) {
		vm_request_stop(vcpu->vm, VM_STOP_HOST_FAILURE, "%s", err.msg);
		return rc;
	}
	/* The PC is already past the HVC, and past an SMC too (KVM moves it before forwarding). */
	vm_report_exit(vcpu->vm, vcpu, &(struct vm_exit_info){
		.kind = VM_EXIT_HYPERCALL, .reason = KVM_EXIT_HYPERCALL, .addr = fid, .value = a[0], .ret = x[0],
		.smc = !!(run->hypercall.longmode & A64_HYPERCALL_EXIT_SMC) });
	return 0;
}

/* A CPU_ON another vCPU asked of this one: reset it, and start it at the entry with x0 = context. */
void arch_vcpu_before_run(struct vcpu *vcpu)
{
	struct a64_state *s = psci_state(vcpu);
	struct kvm_mp_state mp = { .mp_state = KVM_MP_STATE_RUNNABLE };
	uint64_t entry, context;
	struct errbuf err = { "" };
	int rc = 0;

	if (!s || vcpu->id >= VM_MAX_CPUS || !atomic_load(&s->psci.pending[vcpu->id]))
		return;
	pthread_mutex_lock(&s->psci.lock);
	entry = s->psci.entry[vcpu->id];
	context = s->psci.context[vcpu->id];
	pthread_mutex_unlock(&s->psci.lock);
	if (ioctl(vcpu->fd, KVM_ARM_VCPU_INIT, &s->init[vcpu->id]))
		rc = err_set(&err, errno, "KVM_ARM_VCPU_INIT: %s", strerror(errno));
	else if (ioctl(vcpu->fd, KVM_SET_MP_STATE, &mp))
		rc = err_set(&err, errno, "KVM_SET_MP_STATE: %s", strerror(errno));
	if (!rc)
		rc = a64_set_reg(vcpu, A64_CORE_REG(regs.pc), entry, &err);
	if (!rc)
		rc = a64_set_reg(vcpu, A64_CORE_REG(regs.regs[0]), context, &err);
	/* The reset leaves KVM's guest debugging as it was; set the breakpoints again all the same. */
	if (!rc)
		rc = arch_vcpu_set_breakpoints(vcpu, s->bps[vcpu->id], s->nbps[vcpu->id], &err);
	if (rc) {
		vm_request_stop(vcpu->vm, VM_STOP_HOST_FAILURE, "vCPU %u: PSCI CPU_ON at 0x%llx: %s", vcpu->id,
				(unsigned long long)entry, err.msg);
		return;
	}
	pthread_mutex_lock(&s->psci.lock);
	s->psci.power[vcpu->id] = A64_ON;
	atomic_store(&s->psci.pending[vcpu->id], 0);
	pthread_mutex_unlock(&s->psci.lock);
}
