/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The calls an arm64 guest makes to its hypervisor through the SMC Calling
 * Convention (Arm DEN0028): PSCI (DEN0022), the standard hypervisor
 * service's PV time (DEN0057) and KVM's vendor hypervisor services
 * (Documentation/virt/kvm/arm/hypercalls.rst), with the function IDs and
 * return codes Linux's include/uapi/linux/psci.h and
 * include/linux/arm-smccc.h give them. Pure code: names and numbers.
 */
#ifndef ARCH_ARM64_SMCCC_H
#define ARCH_ARM64_SMCCC_H

#include <stdint.h>

/* A function ID's fields: fast call (bit 31), SMC64 (bit 30), owner (29:24), number (15:0). */
#define SMCCC_FAST		0x80000000u
#define SMCCC_64		0x40000000u
#define SMCCC_OWNER(fid)	(((fid) >> 24) & 0x3f)
#define SMCCC_NUM(fid)		((fid) & 0xffff)
#define SMCCC_OWNER_ARCH	0
#define SMCCC_OWNER_STANDARD	4
#define SMCCC_OWNER_STD_HYP	5
#define SMCCC_OWNER_VENDOR_HYP	6

/* PSCI 0.2 and later: standard service, numbers 0 to 0x1f, SMC32 and SMC64 forms. */
#define A64_PSCI_FN(n)		(0x84000000u + (n))
#define A64_PSCI_FN64(n)		(0xc4000000u + (n))
enum a64_psci_fn {
	A64_PSCI_VERSION = 0x0, A64_PSCI_CPU_SUSPEND = 0x1, A64_PSCI_CPU_OFF = 0x2, A64_PSCI_CPU_ON = 0x3,
	A64_PSCI_AFFINITY_INFO = 0x4, A64_PSCI_MIGRATE = 0x5, A64_PSCI_MIGRATE_INFO_TYPE = 0x6,
	A64_PSCI_MIGRATE_INFO_UP_CPU = 0x7, A64_PSCI_SYSTEM_OFF = 0x8, A64_PSCI_SYSTEM_RESET = 0x9,
	A64_PSCI_FEATURES = 0xa, A64_PSCI_CPU_FREEZE = 0xb, A64_PSCI_CPU_DEFAULT_SUSPEND = 0xc,
	A64_PSCI_NODE_HW_STATE = 0xd, A64_PSCI_SYSTEM_SUSPEND = 0xe, A64_PSCI_SET_SUSPEND_MODE = 0xf,
	A64_PSCI_STAT_RESIDENCY = 0x10, A64_PSCI_STAT_COUNT = 0x11, A64_PSCI_SYSTEM_RESET2 = 0x12,
};
#define A64_PSCI_NFNS		0x20	/* the range PSCI owns */

enum a64_psci_ret {
	A64_PSCI_RET_SUCCESS = 0, A64_PSCI_RET_NOT_SUPPORTED = -1, A64_PSCI_RET_INVALID_PARAMS = -2,
	A64_PSCI_RET_DENIED = -3, A64_PSCI_RET_ALREADY_ON = -4, A64_PSCI_RET_ON_PENDING = -5,
	A64_PSCI_RET_INTERNAL_FAILURE = -6, A64_PSCI_RET_NOT_PRESENT = -7, A64_PSCI_RET_DISABLED = -8,
	A64_PSCI_RET_INVALID_ADDRESS = -9,
};
/* AFFINITY_INFO's answers; MIGRATE_INFO_TYPE's "no Trusted OS needs migrating". */
enum { A64_PSCI_AFFINITY_ON = 0, A64_PSCI_AFFINITY_OFF = 1, A64_PSCI_AFFINITY_ON_PENDING = 2 };
#define A64_PSCI_TOS_NOT_PRESENT_MP	2

/* The Arm architecture calls, which KVM always answers itself. */
#define SMCCC_VERSION_FID	0x80000000u
#define SMCCC_ARCH_FEATURES_FID	0x80000001u
/* The standard hypervisor service's PV time (steal time). */
#define SMCCC_PV_TIME_FEATURES	0xc5000020u
#define SMCCC_PV_TIME_ST	0xc5000021u
/* KVM's vendor hypervisor services. */
#define SMCCC_KVM_FEATURES	0x86000000u
#define SMCCC_KVM_PTP		0x86000001u
#define SMCCC_VENDOR_HYP_UID	0x8600ff01u
/* What the UID call answers for KVM (x0..x3), and the features bitmap's bits. */
#define SMCCC_KVM_UID_0		0xb66fb428u
#define SMCCC_KVM_UID_1		0xe911c52eu
#define SMCCC_KVM_UID_2		0x564bcaa9u
#define SMCCC_KVM_UID_3		0x743a004du
#define SMCCC_KVM_FEATURE_FEATURES	0
#define SMCCC_KVM_FEATURE_PTP		1

/* The call's name ("PSCI CPU_ON", "KVM UID"), or NULL for one this table does not know. */
const char *smccc_name(uint32_t fid);
/*
 * What x0 held after a call, as the caller reads it (32 bits are enough:
 * every answer of these calls fits, the UID's first word included), into
 * buf: "SUCCESS", "NOT_SUPPORTED", "1.1" for A64_PSCI_VERSION, "OFF" for
 * AFFINITY_INFO, "KVM" for the UID, "no return" for a power-off or reset
 * that went ahead (what a return would have said). Returns buf.
 */
const char *smccc_result(uint32_t fid, uint32_t x0, char *buf, unsigned len);
/* How many arguments (x1...) the call takes, 0 for one this table does not know. */
unsigned smccc_nargs(uint32_t fid);
/* Whether the call's first argument is another function ID (the *_FEATURES queries). */
int smccc_arg_is_fid(uint32_t fid);
/*
 * The name of a function ID asked about by such a query, into buf: the
 * call's name, "_64" after it for a PSCI call's SMC64 form (the query has
 * no other place to say which form it asked of); NULL when not known.
 */
const char *smccc_arg_name(uint32_t fid, char *buf, unsigned len);
/* The SMC32 form of a PSCI function ID (the SMC64 form's number); others unchanged. */
uint32_t smccc_psci32(uint32_t fid);
/* Whether fid is in PSCI's range (either form; the number may be one PSCI does not define). */
static inline int smccc_is_psci(uint32_t fid)
{
	return (smccc_psci32(fid) & ~0xffu) == A64_PSCI_FN(0);
}

#endif
