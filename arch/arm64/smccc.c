// SPDX-License-Identifier: GPL-2.0
/* SMCCC calls' names and answers (smccc.h). */
#include <stdio.h>

#include "arch/arm64/smccc.h"

static const char *const psci_names[A64_PSCI_NFNS] = {
	[A64_PSCI_VERSION] = "PSCI_VERSION", [A64_PSCI_CPU_SUSPEND] = "PSCI_CPU_SUSPEND",
	[A64_PSCI_CPU_OFF] = "PSCI_CPU_OFF", [A64_PSCI_CPU_ON] = "PSCI_CPU_ON",
	[A64_PSCI_AFFINITY_INFO] = "PSCI_AFFINITY_INFO", [A64_PSCI_MIGRATE] = "PSCI_MIGRATE",
	[A64_PSCI_MIGRATE_INFO_TYPE] = "PSCI_MIGRATE_INFO_TYPE", [A64_PSCI_MIGRATE_INFO_UP_CPU] = "PSCI_MIGRATE_INFO_UP_CPU",
	[A64_PSCI_SYSTEM_OFF] = "PSCI_SYSTEM_OFF", [A64_PSCI_SYSTEM_RESET] = "PSCI_SYSTEM_RESET",
	[A64_PSCI_FEATURES] = "PSCI_FEATURES", [A64_PSCI_CPU_FREEZE] = "PSCI_CPU_FREEZE",
	[A64_PSCI_CPU_DEFAULT_SUSPEND] = "PSCI_CPU_DEFAULT_SUSPEND", [A64_PSCI_NODE_HW_STATE] = "PSCI_NODE_HW_STATE",
	[A64_PSCI_SYSTEM_SUSPEND] = "PSCI_SYSTEM_SUSPEND", [A64_PSCI_SET_SUSPEND_MODE] = "PSCI_SET_SUSPEND_MODE",
	[A64_PSCI_STAT_RESIDENCY] = "PSCI_STAT_RESIDENCY", [A64_PSCI_STAT_COUNT] = "PSCI_STAT_COUNT",
	[A64_PSCI_SYSTEM_RESET2] = "PSCI_SYSTEM_RESET2",
};

uint32_t smccc_psci32(uint32_t fid)
{
	return (fid & ~0xffu) == A64_PSCI_FN64(0) ? fid & ~SMCCC_64 : fid;
}

const char *smccc_name(uint32_t fid)
{
	uint32_t f = smccc_psci32(fid);

	if (smccc_is_psci(fid))
		return f - A64_PSCI_FN(0) < A64_PSCI_NFNS ? psci_names[f - A64_PSCI_FN(0)] : NULL;
	switch (fid) {
	case SMCCC_VERSION_FID: return "SMCCC_VERSION";
	case SMCCC_ARCH_FEATURES_FID: return "SMCCC_ARCH_FEATURES";
	case SMCCC_PV_TIME_FEATURES: return "PV_TIME_FEATURES";
	case SMCCC_PV_TIME_ST: return "PV_TIME_ST";
	case SMCCC_KVM_FEATURES: return "KVM_FEATURES";
	case SMCCC_KVM_PTP: return "KVM_PTP";
	case SMCCC_VENDOR_HYP_UID: return "VENDOR_HYP_CALL_UID";
	}
	return NULL;
}

unsigned smccc_nargs(uint32_t fid)
{
	static const unsigned char psci[A64_PSCI_NFNS] = {
		[A64_PSCI_CPU_SUSPEND] = 3, [A64_PSCI_CPU_ON] = 3, [A64_PSCI_AFFINITY_INFO] = 2, [A64_PSCI_MIGRATE] = 1,
		[A64_PSCI_FEATURES] = 1, [A64_PSCI_CPU_DEFAULT_SUSPEND] = 2, [A64_PSCI_NODE_HW_STATE] = 2,
		[A64_PSCI_SYSTEM_SUSPEND] = 2, [A64_PSCI_SET_SUSPEND_MODE] = 1, [A64_PSCI_STAT_RESIDENCY] = 2,
		[A64_PSCI_STAT_COUNT] = 2, [A64_PSCI_SYSTEM_RESET2] = 2,
	};
	uint32_t f = smccc_psci32(fid);

	if (smccc_is_psci(fid))
		return f - A64_PSCI_FN(0) < A64_PSCI_NFNS ? psci[f - A64_PSCI_FN(0)] : 0;
	return fid == SMCCC_ARCH_FEATURES_FID || fid == SMCCC_PV_TIME_FEATURES || fid == SMCCC_KVM_PTP;
}

int smccc_arg_is_fid(uint32_t fid)
{
	return smccc_psci32(fid) == A64_PSCI_FN(A64_PSCI_FEATURES) || fid == SMCCC_ARCH_FEATURES_FID ||
	       fid == SMCCC_PV_TIME_FEATURES;
}

const char *smccc_arg_name(uint32_t fid, char *buf, unsigned len)
{
	const char *name = smccc_name(fid);

	if (!name)
		return NULL;
	snprintf(buf, len, "%s%s", name, smccc_psci32(fid) != fid ? "_64" : "");
	return buf;
}

/* A negative answer's name: PSCI's codes, or SMCCC's for the other owners. */
static const char *smccc_error(uint32_t fid, int32_t r)
{
	static const char *const psci[] = {
		"NOT_SUPPORTED", "INVALID_PARAMS", "DENIED", "ALREADY_ON", "ON_PENDING",
		"INTERNAL_FAILURE", "NOT_PRESENT", "DISABLED", "INVALID_ADDRESS",
	};
	static const char *const smccc[] = { "NOT_SUPPORTED", "NOT_REQUIRED", "INVALID_PARAMETER" };

	if (smccc_is_psci(fid))
		return -r <= (int32_t)(sizeof(psci) / sizeof(psci[0])) ? psci[-r - 1] : NULL;
	return -r <= (int32_t)(sizeof(smccc) / sizeof(smccc[0])) ? smccc[-r - 1] : NULL;
}

const char *smccc_result(uint32_t fid, uint32_t x0, char *buf, unsigned len)
{
	static const char *const affinity[] = { "ON", "OFF", "ON_PENDING" };
	static const char *const migrate[] = { "UP_MIGRATE_CAPABLE", "UP_NOT_MIGRATE_CAPABLE", "NOT_PRESENT_MP" };
	int32_t r = (int32_t)x0;
	uint32_t f = smccc_psci32(fid);
	const char *e = r < 0 ? smccc_error(fid, r) : NULL;

	if (f == A64_PSCI_FN(A64_PSCI_VERSION) && r >= 0)
		snprintf(buf, len, "%u.%u", x0 >> 16, x0 & 0xffff);
	else if (f == A64_PSCI_FN(A64_PSCI_AFFINITY_INFO) && r >= 0 && r <= 2)
		snprintf(buf, len, "%s", affinity[r]);
	else if (f == A64_PSCI_FN(A64_PSCI_MIGRATE_INFO_TYPE) && r >= 0 && r <= 2)
		snprintf(buf, len, "%s", migrate[r]);
	else if ((f == A64_PSCI_FN(A64_PSCI_SYSTEM_OFF) || f == A64_PSCI_FN(A64_PSCI_SYSTEM_RESET) ||
		  f == A64_PSCI_FN(A64_PSCI_SYSTEM_RESET2)) && r == A64_PSCI_RET_INTERNAL_FAILURE)
		snprintf(buf, len, "no return");
	else if (f == A64_PSCI_FN(A64_PSCI_CPU_OFF) && r == A64_PSCI_RET_SUCCESS)
		snprintf(buf, len, "no return");
	else if (fid == SMCCC_VENDOR_HYP_UID && x0 == SMCCC_KVM_UID_0)
		snprintf(buf, len, "KVM");
	else if (fid == SMCCC_VENDOR_HYP_UID && r < 0 && e)
		snprintf(buf, len, "%s", e);
	else if (fid == SMCCC_VENDOR_HYP_UID)
		snprintf(buf, len, "0x%x", x0);
	else if (fid == SMCCC_KVM_FEATURES)
		snprintf(buf, len, "0x%x%s%s", x0, x0 >> SMCCC_KVM_FEATURE_FEATURES & 1 ? " FEATURES" : "",
			 x0 >> SMCCC_KVM_FEATURE_PTP & 1 ? " PTP" : "");
	else if (e)
		snprintf(buf, len, "%s", e);
	else if (r == 0)
		snprintf(buf, len, "SUCCESS");
	else
		snprintf(buf, len, "%d", r);
	return buf;
}
