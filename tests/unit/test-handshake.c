// SPDX-License-Identifier: GPL-2.0
/*
 * The --handshake table (vmm/output/handshake.c) from hand-made kvm:cpuid
 * and kvm:msr events: what was offered, which features a guest turned on,
 * first on which CPU and when, from which function (the MSR accessor's
 * caller, else the RIP), with which value; turned off again; written but
 * never on; faulted; features without an MSR; MSRs the table does not
 * know; and the line printed instead when no MSR event could be seen.
 * arm64's table from kvm:hypercall events: one row per call and what it
 * asked about, counted, with the PSCI version and KVM's services in the
 * header; the line printed instead when no hypercall could be seen.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arm64/smccc.h"
#include "tests/unit/check.h"
#include "vmm/image/symtab.h"
#include "vmm/output/handshake.h"
#include "vmm/output/vmevent.h"

#define WRMSR_VA	0xffffffff81010000ull	/* native_write_msr */
#define CLOCK_VA	0xffffffff81020000ull	/* kvm_register_clock */
#define OFFLINE_VA	0xffffffff81030000ull	/* kvm_guest_cpu_offline */
#define END_VA		0xffffffff81040000ull

static struct ring_event msr_write(unsigned cpu, uint64_t ms, uint32_t msr, uint64_t v, uint64_t caller)
{
	return (struct ring_event){
		.tsc = ms * 1000000, .cpu = (uint16_t)cpu, .ring = cpu, .func = WRMSR_VA + 4,
		.parent = vmev_msr_pack(msr, caller), .arg = v, .flags = vmev_flags(VMEV_MSR, VMEV_FLAG_WRITE),
	};
}

static struct ring_event cpuid(unsigned cpu, uint64_t fn, uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
	return (struct ring_event){
		.cpu = (uint16_t)cpu, .ring = cpu, .func = fn, .parent = a | (uint64_t)b << 32,
		.arg = c | (uint64_t)d << 32, .flags = vmev_flags(VMEV_CPUID, 0),
	};
}

#define HVC_VA		0xffffffc00801a9ecull	/* __arm_smccc_hvc */
#define HYP_VA		0xffffffc0082c90d8ull	/* kvm_init_hyp_services */

static struct ring_event hvc(unsigned cpu, uint64_t ms, uint64_t pc, uint32_t fid, uint64_t x1, uint32_t ret)
{
	return (struct ring_event){
		.tsc = ms * 1000000, .cpu = (uint16_t)cpu, .ring = cpu, .func = pc,
		.parent = vmev_hypercall_pack(fid, ret), .arg = x1, .flags = vmev_flags(VMEV_HYPERCALL, 0),
	};
}

/* The table's line for a feature (its name, then at least two spaces), or "". */
static const char *row(const char *table, const char *name, char *buf, size_t len)
{
	const char *p = table;
	size_t n = strlen(name);

	buf[0] = 0;
	while ((p = strstr(p, "\n  "))) {
		p += 3;
		if (!strncmp(p, name, n) && !strncmp(p + n, "  ", 2)) {
			size_t l = strcspn(p, "\n");

			snprintf(buf, len, "%.*s", (int)(l < len ? l : len - 1), p);
			break;
		}
	}
	return buf;
}

/* The table as text: x86's (handshake_print) or, smccc, arm64's. */
static char *print_table(struct handshake *h, const struct trace_meta *m, const char *why_not, int smccc)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	(smccc ? handshake_print_smccc : handshake_print)(h, m, why_not, f);
	fclose(f);
	return text;
}
#define table_of(h, m, why_not) print_table(h, m, why_not, 0)
#define smccc_table_of(h, m, why_not) print_table(h, m, why_not, 1)

/* arm64: a boot's SMCCC calls, a CPU taken offline and back, and a host that forwards none. */
static void test_smccc(void)
{
	struct symtab syms;
	struct trace_meta meta = { .syms = &syms, .tsc_khz = 1000000, .ncpus = 2 };
	struct handshake *h = handshake_new();
	char line[512], *t;
	const uint32_t on = A64_PSCI_FN64(A64_PSCI_CPU_ON), features = A64_PSCI_FN(A64_PSCI_FEATURES);
	const uint32_t einval = (uint32_t)A64_PSCI_RET_INVALID_PARAMS;
	struct ring_event ev[] = {
		hvc(0, 1, HVC_VA + 8, A64_PSCI_FN(A64_PSCI_VERSION), 0, 0x10001),
		hvc(0, 2, HVC_VA + 8, features, SMCCC_VERSION_FID, 0),
		hvc(0, 3, HVC_VA + 8, features, A64_PSCI_FN64(A64_PSCI_SYSTEM_SUSPEND), (uint32_t)-1),
		hvc(0, 4, HYP_VA + 0x48, SMCCC_VENDOR_HYP_UID, 0, SMCCC_KVM_UID_0),
		hvc(0, 5, HYP_VA + 0xac, SMCCC_KVM_FEATURES, 0, 3),
		hvc(0, 6, HVC_VA + 8, on, 1, 0),
		hvc(1, 7, HVC_VA + 8, A64_PSCI_FN(A64_PSCI_CPU_OFF), 0, 0),
		hvc(0, 8, HVC_VA + 8, A64_PSCI_FN64(A64_PSCI_AFFINITY_INFO), 1, 1),
		hvc(0, 9, HVC_VA + 8, on, 1, 0),
		hvc(0, 10, HVC_VA + 8, on, 7, einval),	/* a CPU the board lacks */
		hvc(0, 11, HVC_VA + 8, 0xc6000042, 5, (uint32_t)-1),	/* a call the table does not name */
	};

	symtab_init(&syms);
	CHECK(!symtab_add(&syms, HVC_VA, 'T', "__arm_smccc_hvc", 15) &&
	      !symtab_add(&syms, HYP_VA, 'T', "kvm_init_hyp_services", 21) &&
	      !symtab_add(&syms, HYP_VA + 0x200, 't', "_etext", 6) && !symtab_finish(&syms), "symbols (arm64)");
	CHECK(h != NULL, "handshake_new (arm64)");
	if (!h)
		return;
	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
		handshake_event(h, &ev[i]);
	t = smccc_table_of(h, &meta, NULL);
	printf("%s", t);
	CHECK(strstr(t, "vmmtrace: handshake: arm64, SMCCC calls to the hypervisor: 11; PSCI 1.1; "
		      "KVM vendor services 0x3 FEATURES PTP\n") != NULL, "the header: calls, PSCI version, KVM's services");
	row(t, "PSCI_VERSION", line, sizeof(line));
	CHECK(strstr(line, " 0x84000000 1 ") && strstr(line, " 0.001000 ") && strstr(line, " __arm_smccc_hvc ") &&
	      strstr(line, "-> 1.1"), "PSCI_VERSION: once, when, from where, 1.1: '%s'", line);
	CHECK(strstr(t, " SMCCC_VERSION -> SUCCESS\n") && strstr(t, " PSCI_SYSTEM_SUSPEND_64 -> NOT_SUPPORTED\n"),
	      "PSCI_FEATURES: a row per function asked about, named (the SMC64 form said), with its answer");
	row(t, "VENDOR_HYP_CALL_UID", line, sizeof(line));
	CHECK(strstr(line, " kvm_init_hyp_services ") && strstr(line, "-> KVM"), "the UID call answered KVM: '%s'", line);
	row(t, "PSCI_CPU_ON", line, sizeof(line));
	CHECK(strstr(line, " 0xc4000003 2 ") && strstr(line, " 0.006000 ") && strstr(line, "0x1 -> SUCCESS"),
	      "CPU_ON of CPU 1: twice (booted, back online), first at 6 ms: '%s'", line);
	CHECK(strstr(t, " 0x7 -> INVALID_PARAMS\n") != NULL, "CPU_ON of a CPU that does not exist: its own row");
	row(t, "PSCI_CPU_OFF", line, sizeof(line));
	CHECK(strstr(line, " 1   __arm_smccc_hvc ") && strstr(line, "-> no return"), "CPU_OFF on CPU 1: '%s'", line);
	row(t, "PSCI_AFFINITY_INFO", line, sizeof(line));
	CHECK(strstr(line, "-> OFF"), "AFFINITY_INFO: OFF: '%s'", line);
	row(t, "SMCCC", line, sizeof(line));
	CHECK(strstr(line, " 0xc6000042 ") && strstr(line, "-> NOT_SUPPORTED"), "a call not named: its ID: '%s'", line);
	free(t);
	t = smccc_table_of(h, &meta, "this host's KVM has no SMCCC filter");
	CHECK(!strcmp(t, "vmmtrace: handshake: arm64, SMCCC calls to the hypervisor: not recorded: this host's KVM has "
		      "no SMCCC filter\n"), "without hypercall events: one line: '%s'", t);
	free(t);
	handshake_free(h);
	symtab_destroy(&syms);
}

int main(void)
{
	struct symtab syms;
	struct trace_meta meta = { .syms = &syms, .tsc_khz = 1000000, .ncpus = 2 };
	struct handshake *h = handshake_new();
	char line[512], *t;
	struct ring_event ev[] = {
		cpuid(0, 0x40000000, 0x40000001, 0x4b4d564b, 0x564b4d56, 0x4d),
		/* A second vCPU's table and a sub-leaf are not the boot vCPU's leaf. */
		cpuid(1, 0x40000001, 0xffffffff, 0, 0, 0),
		cpuid(0, 0x40000001 | 1ull << 32, 0xffffffff, 0, 0, 0),
		cpuid(0, 0x40000001, 0x10076fb, 0, 0, 0),
		msr_write(0, 1, 0x4b564d01, 0x19a2001, CLOCK_VA + 0x30),
		msr_write(0, 2, 0x4b564d03, 0x1f41ae81, 0),		/* no caller: the RIP */
		msr_write(1, 3, 0x4b564d03, 0x1f42ae81, 0),
		msr_write(0, 4, 0x4b564d06, 0xf3, 0),
		msr_write(0, 5, 0x4b564d02, 0x1f41aec9, 0),		/* enabled, as interrupt: not as #PF vmexit */
		msr_write(0, 6, 0x4b564d04, 0, 0),			/* off before ever on: written, not enabled */
		msr_write(0, 7, 0x10, 1234, 0),				/* an MSR the table does not know */
		msr_write(0, 9, 0x4b564d03, 0, OFFLINE_VA + 8),
	};
	struct ring_event gp = msr_write(0, 8, 0x12, 0, 0);

	symtab_init(&syms);
	CHECK(!symtab_add(&syms, WRMSR_VA, 't', "native_write_msr", 16) &&
	      !symtab_add(&syms, CLOCK_VA, 't', "kvm_register_clock", 18) &&
	      !symtab_add(&syms, OFFLINE_VA, 't', "kvm_guest_cpu_offline", 21) &&
	      !symtab_add(&syms, END_VA, 't', "_etext", 6) && !symtab_finish(&syms), "symbols");
	gp.flags = vmev_flags(VMEV_MSR, VMEV_FLAG_GP);
	CHECK(h != NULL, "handshake_new");
	if (!h)
		return check_exit();
	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++) {
		handshake_event(h, &ev[i]);
		if (i == 8)
			handshake_event(h, &gp);
	}
	t = table_of(h, &meta, NULL);
	printf("%s", t);
	CHECK(strstr(t, "KVM features 0x10076fb offered (CPUID 0x40000001 EAX, signature 'KVMKVMKVM')") != NULL,
	      "the header: the boot vCPU's leaf 0x40000001 and the signature");
	row(t, "kvm-clock", line, sizeof(line));
	CHECK(strstr(line, " yes ") && strstr(line, " 4b564d01 ") && strstr(line, " 1/2 CPUs ") &&
	      strstr(line, " 0.001000 ") && strstr(line, " kvm_register_clock ") &&
	      strstr(line, "pvclock area at GPA 0x19a2000"),
	      "kvm-clock: on, at 1 ms on CPU 0, from the caller, its pvclock GPA: '%s'", line);
	row(t, "steal time", line, sizeof(line));
	CHECK(strstr(line, " 2/2 CPUs ") && strstr(line, " 0.002000 ") && strstr(line, " native_write_msr+0x4 ") &&
	      strstr(line, "area at GPA 0x1f41ae80, low bits 0x1") &&
	      strstr(line, "; off at 0.009000 on CPU 0 (kvm_guest_cpu_offline)"),
	      "steal time: on on both CPUs, first from the RIP (no caller), off again: '%s'", line);
	row(t, "async PF as interrupt", line, sizeof(line));
	CHECK(strstr(line, " 1/2 CPUs ") && strstr(line, "vector 0xf3"), "async PF INT: its vector: '%s'", line);
	row(t, "async PF", line, sizeof(line));
	CHECK(strstr(line, " 1/2 CPUs ") && strstr(line, " 0.005000 "), "async PF on: '%s'", line);
	row(t, "async PF as #PF vmexit", line, sizeof(line));
	CHECK(strstr(line, " yes ") && strstr(line, " no ") && strstr(line, "1 writes, 0 reads, 0 #GP, none turning it on"),
	      "offered, written without its bit: not on: '%s'", line);
	row(t, "PV EOI", line, sizeof(line));
	CHECK(strstr(line, " no ") && strstr(line, "1 writes"), "PV EOI: written 0, never on: '%s'", line);
	row(t, "kvm-clock (legacy MSR)", line, sizeof(line));
	CHECK(strstr(line, "0 writes, 0 reads, 1 #GP"), "a faulting access is counted, not taken: '%s'", line);
	row(t, "PV send IPI", line, sizeof(line));
	CHECK(!strncmp(line, "PV send IPI", 11) && strstr(line, " no ") && strstr(line, "no MSR: KVM_HC_SEND_IPI"),
	      "a feature not offered, without an MSR: '%s'", line);
	row(t, "stable kvm-clock", line, sizeof(line));
	CHECK(strstr(line, " yes ") && strstr(line, "no MSR"), "bit 24 offered: '%s'", line);
	row(t, "migration control", line, sizeof(line));
	CHECK(strstr(line, " no ") && !strstr(line, "writes"), "nothing seen: '%s'", line);
	CHECK(!strstr(t, "1234") && !strstr(t, "4d2"), "an MSR outside the table is not in it");
	free(t);

	t = table_of(h, &meta, "this host's KVM lacks KVM_CAP_X86_USER_SPACE_MSR");
	CHECK(strstr(t, "vmmtrace: handshake: this host's KVM lacks KVM_CAP_X86_USER_SPACE_MSR: which features "
		      "the guest turned on is not known\n") && !strstr(t, "kvm-clock"),
	      "without MSR events: one line instead of rows");
	free(t);
	handshake_free(h);

	h = handshake_new();
	t = h ? table_of(h, &meta, NULL) : NULL;
	CHECK(t && strstr(t, "no kvm:cpuid record: what KVM offered is not known") &&
	      strstr(row(t, "kvm-clock", line, sizeof(line)), " ? "), "no CPUID record: offered is '?'");
	free(t);
	handshake_free(h);
	test_smccc();
	symtab_destroy(&syms);
	return check_exit();
}
