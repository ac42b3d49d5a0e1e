// SPDX-License-Identifier: GPL-2.0
/*
 * The PSCI payload: a freestanding arm64 guest for vmmtrace's arm64 KVM
 * host that makes the PSCI and SMCCC calls a Linux boot never makes (bad
 * CPUs, bad affinity levels, a second CPU_ON, 64-bit forms PSCI does not
 * define, reset types it refuses) next to those it does, and prints each
 * answer whole: "PSCI <call> = <x0> <x1> <x2> <x3>", x0 signed, the rest
 * hex. Booted once with KVM answering (no --event) and once with vmmtrace
 * answering through KVM's SMCCC filter (--event kvm:hypercall), the two
 * consoles must be the same line for line: KVM is the reference
 * (tests/kvm-arm64/trace.sh). docs/TEST-GUEST.md, "The PSCI payload".
 *
 * It runs on 2 vCPUs: CPU 1 is started twice (the 32-bit and the 64-bit
 * CPU_ON), reports what the reset left in its registers, and powers
 * itself off; CPU 0 waits for it at each step, so the console's order is
 * the same in every run. `psci.end=off|reset|reset2|reset2-vendor` on the
 * command line chooses how it ends (default off).
 */
#include <stdint.h>

#define UART_DR		0x09000000UL	/* the arm64 host's PL011 data register */
#define GICD_CTLR	0x08000000UL	/* its GICv3 distributor's control register */
#define GICR0_ISENABLER0 (0x080a0000UL + 0x10000 + 0x100)	/* CPU 0's PPI enables (SGI frame) */
#define VTIMER_PPI	27

#define PSCI(n)		(0x84000000u + (n))
#define PSCI64(n)	(0xc4000000u + (n))
enum {
	VERSION = 0, CPU_SUSPEND = 1, CPU_OFF = 2, CPU_ON = 3, AFFINITY_INFO = 4, MIGRATE = 5,
	MIGRATE_INFO_TYPE = 6, MIGRATE_INFO_UP_CPU = 7, SYSTEM_OFF = 8, SYSTEM_RESET = 9, FEATURES = 0xa,
	CPU_FREEZE = 0xb, SYSTEM_SUSPEND = 0xe, SYSTEM_RESET2 = 0x12,
};
#define SMCCC_VERSION		0x80000000u
#define SMCCC_ARCH_FEATURES	0x80000001u
#define SMCCC_ARCH_WORKAROUND_1	0x80008000u
#define KVM_FEATURES		0x86000000u
#define VENDOR_HYP_UID		0x8600ff01u
#define PV_TIME_FEATURES	0xc5000020u
#define PV_TIME_ST		0xc5000021u

struct ans { uint64_t x[4]; };

/* Set by CPU 1 (the MMU is off: every access goes to memory, both CPUs see it). */
static volatile uint64_t cpu1_step;

extern char secondary[];

static struct ans call(int smc, uint32_t fid, uint64_t a1, uint64_t a2, uint64_t a3)
{
	register uint64_t x0 __asm__("x0") = fid, x1 __asm__("x1") = a1, x2 __asm__("x2") = a2,
		 x3 __asm__("x3") = a3;

	if (smc)
		__asm__ volatile("smc #0" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3) : :
				 "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15",
				 "x16", "x17", "memory");
	else
		__asm__ volatile("hvc #0" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3) : :
				 "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15",
				 "x16", "x17", "memory");
	return (struct ans){ { x0, x1, x2, x3 } };
}

static void putc_(char c)
{
	*(volatile uint32_t *)UART_DR = (uint8_t)c;
}

static void puts_(const char *s)
{
	while (*s)
		putc_(*s++);
}

static void put_hex(uint64_t v)
{
	int i = 60;

	puts_("0x");
	while (i > 0 && !(v >> i & 0xf))
		i -= 4;
	for (; i >= 0; i -= 4)
		putc_("0123456789abcdef"[v >> i & 0xf]);
}

static void put_dec(int64_t v)
{
	char buf[24];
	int n = 0;
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;

	do
		buf[n++] = (char)('0' + u % 10);
	while ((u /= 10));
	if (v < 0)
		putc_('-');
	while (n)
		putc_(buf[--n]);
}

/* "PSCI <what>(<a>[,<b>]) = x0 x1 x2 x3" */
static void report(const char *what, int nargs, uint64_t a, uint64_t b, struct ans r)
{
	puts_("PSCI ");
	puts_(what);
	if (nargs) {
		putc_('(');
		put_hex(a);
		if (nargs > 1) {
			putc_(',');
			put_hex(b);
		}
		putc_(')');
	}
	puts_(" = ");
	put_dec((int64_t)r.x[0]);
	for (int i = 1; i < 4; i++) {
		putc_(' ');
		put_hex(r.x[i]);
	}
	putc_('\n');
}

/* x1..x3 hold a pattern on entry: an answer that leaves them shows it. */
#define JUNK 0x5a5a5a5a00000000ULL

static struct ans hvc(uint32_t fid, uint64_t a1, uint64_t a2, uint64_t a3)
{
	return call(0, fid, a1, a2, a3);
}

/* An exception: its vector, syndrome and addresses, then power off. */
void psci_fatal(uint64_t vec, uint64_t esr, uint64_t elr, uint64_t far)
{
	puts_("PAYLOAD FATAL exception vector ");
	put_dec((int64_t)vec);
	puts_(" esr ");
	put_hex(esr);
	puts_(" elr ");
	put_hex(elr);
	puts_(" far ");
	put_hex(far);
	putc_('\n');
	hvc(PSCI(SYSTEM_OFF), 0, 0, 0);
	for (;;)
		__asm__ volatile("wfi");
}

/* CPU 1, from each CPU_ON: what the reset left, its own view, then off. */
void psci_secondary(uint64_t context, uint64_t x1, uint64_t x2, uint64_t x3, uint64_t daif, uint64_t el)
{
	uint64_t mpidr;

	__asm__ volatile("mrs %0, mpidr_el1" : "=r"(mpidr));
	puts_("CPU1 up context ");
	put_hex(context);
	puts_(" x1 ");
	put_hex(x1);
	puts_(" x2 ");
	put_hex(x2);
	puts_(" x3 ");
	put_hex(x3);
	puts_(" daif ");
	put_hex(daif);
	puts_(" el ");
	put_hex(el >> 2);
	puts_(" mpidr ");
	put_hex(mpidr & 0xff00ffffffULL);
	putc_('\n');
	report("AFFINITY_INFO/cpu1", 2, 1, 0, hvc(PSCI(AFFINITY_INFO), 1, 0, 0));
	report("CPU_ON/cpu1-self", 1, 1, 0, hvc(PSCI64(CPU_ON), 1, (uint64_t)secondary, 0));
	cpu1_step = context;
	hvc(PSCI(CPU_OFF), 0, 0, 0);
	puts_("PAYLOAD FATAL CPU_OFF returned\n");
	for (;;)
		__asm__ volatile("wfi");
}

/*
 * Waits for CPU 1 to reach step, then until AFFINITY_INFO says it is off:
 * its answer. CPU 0 prints nothing meanwhile, CPU 1 does.
 */
static struct ans wait_cpu1_off(uint64_t step)
{
	struct ans r = { { 0 } };
	unsigned long n;

	for (n = 0; cpu1_step != step && n < 200000000UL; n++)
		__asm__ volatile("yield");
	for (unsigned i = 0; i < 100000; i++) {
		r = hvc(PSCI(AFFINITY_INFO), 1, 0, 0);
		if (r.x[0] == 1)	/* OFF */
			break;
	}
	if (cpu1_step != step)
		puts_("PAYLOAD FATAL CPU 1 never reached its step\n");
	return r;
}

/* The command line's psci.end= value, read straight out of the device tree's bytes. */
static const char *end_mode(const uint8_t *dtb)
{
	static const char key[] = "psci.end=";
	uint32_t size = (uint32_t)dtb[4] << 24 | (uint32_t)dtb[5] << 16 | (uint32_t)dtb[6] << 8 | dtb[7];

	for (uint32_t i = 0; i + sizeof(key) < size && size < (1u << 21); i++) {
		uint32_t k = 0;

		while (key[k] && dtb[i + k] == (uint8_t)key[k])
			k++;
		if (!key[k])
			return (const char *)dtb + i + k;
	}
	return "off";
}

static int word_is(const char *s, const char *w)
{
	while (*w && *s == *w)
		s++, w++;
	return !*w && (!*s || *s == ' ');
}

void psci_main(const uint8_t *dtb)
{
	static const uint32_t features[] = {
		PSCI(VERSION), PSCI64(VERSION), PSCI(CPU_SUSPEND), PSCI64(CPU_SUSPEND), PSCI(CPU_OFF), PSCI64(CPU_OFF),
		PSCI(CPU_ON), PSCI64(CPU_ON), PSCI(AFFINITY_INFO), PSCI64(AFFINITY_INFO), PSCI(MIGRATE),
		PSCI(MIGRATE_INFO_TYPE), PSCI(MIGRATE_INFO_UP_CPU), PSCI(SYSTEM_OFF), PSCI(SYSTEM_RESET),
		PSCI(FEATURES), PSCI64(FEATURES), PSCI(CPU_FREEZE), PSCI(SYSTEM_SUSPEND), PSCI64(SYSTEM_SUSPEND),
		PSCI(SYSTEM_RESET2), PSCI64(SYSTEM_RESET2), PSCI(0x1f), SMCCC_VERSION, SMCCC_ARCH_FEATURES,
		SMCCC_ARCH_WORKAROUND_1, KVM_FEATURES, 0,
	};
	static const struct { uint32_t fid; const char *name; } plain[] = {
		{ PSCI(VERSION), "VERSION" }, { PSCI64(VERSION), "VERSION64" },
		{ PSCI(MIGRATE), "MIGRATE" }, { PSCI(MIGRATE_INFO_TYPE), "MIGRATE_INFO_TYPE" },
		{ PSCI64(MIGRATE_INFO_TYPE), "MIGRATE_INFO_TYPE64" }, { PSCI(MIGRATE_INFO_UP_CPU), "MIGRATE_INFO_UP_CPU" },
		{ PSCI(CPU_FREEZE), "CPU_FREEZE" }, { PSCI(SYSTEM_SUSPEND), "SYSTEM_SUSPEND" },
		{ PSCI64(SYSTEM_OFF), "SYSTEM_OFF64" }, { PSCI(0x1f), "PSCI_0x1f" },
		{ SMCCC_VERSION, "SMCCC_VERSION" }, { VENDOR_HYP_UID, "VENDOR_HYP_UID" },
		{ KVM_FEATURES, "KVM_FEATURES" }, { 0x86000005u, "KVM_0x5" },
	};
	/* AFFINITY_INFO's targets and levels: CPU 1 not yet on, CPUs that do not exist, bits outside the affinity. */
	static const struct { uint32_t fid; uint64_t target, level; } aff[] = {
		{ PSCI(AFFINITY_INFO), 0, 0 }, { PSCI(AFFINITY_INFO), 1, 0 }, { PSCI(AFFINITY_INFO), 7, 0 },
		{ PSCI(AFFINITY_INFO), 0x100, 1 }, { PSCI(AFFINITY_INFO), 0x1, 1 }, { PSCI(AFFINITY_INFO), 0, 3 },
		{ PSCI(AFFINITY_INFO), 0, 4 }, { PSCI(AFFINITY_INFO), 0x1000000, 0 },
		{ PSCI(AFFINITY_INFO), 0x100000000ULL, 0 }, { PSCI64(AFFINITY_INFO), 0x100000000ULL, 0 },
		{ PSCI64(AFFINITY_INFO), 1, 0 }, { PSCI(AFFINITY_INFO), 0, 0xffffffff00000000ULL },
	};
	/* CPU_ON of CPUs that cannot start: none such, itself, bits outside the affinity. */
	static const struct { uint32_t fid; uint64_t target; } bad_on[] = {
		{ PSCI(CPU_ON), 7 }, { PSCI(CPU_ON), 0 }, { PSCI64(CPU_ON), 0x1000001 },
		{ PSCI64(CPU_ON), 0x100000001ULL }, { PSCI64(CPU_ON), 0x8000000000ULL },
	};
	const char *end = end_mode(dtb);
	uint64_t entry = (uint64_t)secondary;
	struct ans r, r2, off;

	puts_("PAYLOAD psci: start\n");
	report("VERSION/smc", 0, 0, 0, call(1, PSCI(VERSION), JUNK, JUNK, JUNK));
	for (unsigned i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		report(plain[i].name, 0, 0, 0, hvc(plain[i].fid, JUNK, JUNK, JUNK));
	for (unsigned i = 0; features[i]; i++)
		report("FEATURES", 1, features[i], 0, hvc(PSCI(FEATURES), features[i], JUNK, JUNK));
	report("FEATURES/high", 1, 0x100000000ULL | PSCI(CPU_ON), 0,
	       hvc(PSCI(FEATURES), 0x100000000ULL | PSCI(CPU_ON), JUNK, JUNK));
	for (uint64_t f = PV_TIME_FEATURES; f <= PV_TIME_ST + 1; f++)
		report("PV_TIME_FEATURES", 1, f, 0, hvc(PV_TIME_FEATURES, f, JUNK, JUNK));
	for (unsigned i = 0; i < sizeof(aff) / sizeof(aff[0]); i++)
		report(aff[i].fid == PSCI(AFFINITY_INFO) ? "AFFINITY_INFO" : "AFFINITY_INFO64", 2, aff[i].target,
		       aff[i].level, hvc(aff[i].fid, aff[i].target, aff[i].level, JUNK));
	for (unsigned i = 0; i < sizeof(bad_on) / sizeof(bad_on[0]); i++)
		report(bad_on[i].fid == PSCI(CPU_ON) ? "CPU_ON" : "CPU_ON64", 1, bad_on[i].target, 0,
		       hvc(bad_on[i].fid, bad_on[i].target, entry, 0x1234));

	/*
	 * CPU_SUSPEND waits for an interrupt under KVM (a WFI): the virtual
	 * timer's is made pending (CVAL 0, enabled, unmasked) and visible to
	 * KVM's GIC (distributor on, the PPI enabled, priority 0 under the
	 * mask); PSTATE.I keeps it from being taken.
	 */
	*(volatile uint32_t *)GICD_CTLR = 0x12;		/* EnableGrp1, ARE */
	*(volatile uint32_t *)GICR0_ISENABLER0 = 1u << VTIMER_PPI;
	__asm__ volatile("msr S3_0_C4_C6_0, %0; isb" : : "r"(0xf0UL));	/* ICC_PMR_EL1 */
	__asm__ volatile("msr cntv_cval_el0, xzr; mov x9, #1; msr cntv_ctl_el0, x9; isb" ::: "x9");
	report("CPU_SUSPEND", 1, 0, 0, hvc(PSCI(CPU_SUSPEND), 0, 0, 0));
	report("CPU_SUSPEND64", 1, 0, 0, hvc(PSCI64(CPU_SUSPEND), 0, 0, 0));
	__asm__ volatile("msr cntv_ctl_el0, xzr; isb");

	/* CPU 1: started by the 32-bit CPU_ON, a second CPU_ON at once, then off; again by the 64-bit form. */
	r = hvc(PSCI(CPU_ON), 1, entry, 0x1111);
	r2 = hvc(PSCI(CPU_ON), 1, entry, 0x2222);
	off = wait_cpu1_off(0x1111);
	report("CPU_ON/cpu1", 1, 1, 0, r);
	report("CPU_ON/cpu1-again", 1, 1, 0, r2);
	report("AFFINITY_INFO/after-off", 2, 1, 0, off);
	r = hvc(PSCI64(CPU_ON), 1, entry, 0x3333);
	off = wait_cpu1_off(0x3333);
	report("CPU_ON64/cpu1", 1, 1, 0, r);
	report("AFFINITY_INFO/after-off", 2, 1, 0, off);

	report("SYSTEM_RESET2", 1, 1, 0, hvc(PSCI(SYSTEM_RESET2), 1, 0, 0));
	report("SYSTEM_RESET2_64", 1, 0x7fffffff, 0, hvc(PSCI64(SYSTEM_RESET2), 0x7fffffff, 0, 0));
	puts_("PAYLOAD psci: end ");
	for (const char *s = end; *s && *s != ' '; s++)
		putc_(*s);
	putc_('\n');
	if (word_is(end, "reset"))
		r = hvc(PSCI(SYSTEM_RESET), 0, 0, 0);
	else if (word_is(end, "reset2"))
		r = hvc(PSCI(SYSTEM_RESET2), 0, 0, 0);
	else if (word_is(end, "reset2-vendor"))
		r = hvc(PSCI64(SYSTEM_RESET2), 0x80000000u, 0xc0ffee, 0);
	else
		r = hvc(PSCI(SYSTEM_OFF), 0, 0, 0);
	report("PAYLOAD FATAL the last call returned", 0, 0, 0, r);
	for (;;)
		__asm__ volatile("wfi");
}
