// SPDX-License-Identifier: GPL-2.0
/*
 * What the payload does, in the order a kernel would: CPU set-up, round 1
 * of calls, ftrace_init and round 2 (vt.ftrace=1), the APs, the loop
 * (vt.loop=1), then one result line per count and a reset. The console
 * lines are the payload's protocol (docs/TEST-GUEST.md, "The payload"):
 *
 *   PAYLOAD start cpus=N
 *   PAYLOAD round=R f_a=N f_b=N f_leaf=N f_irqon=N
 *   PAYLOAD ftrace_init: slots=N nopped=N mismatched=N first_bad=ADDR
 *   PAYLOAD loop: running cpu=C
 *   PAYLOAD loop: cpu=C iterations=N nmis=N
 *   PAYLOAD done
 *   PAYLOAD FATAL: ...            (any unexpected exception, then a reset)
 */
#include "tests/guest/payload/payload.h"

#define BOOT_PARAMS_CMDLINE_PTR 0x228	/* struct boot_params: hdr.cmd_line_ptr */

static unsigned loops_done;
static unsigned long loop_spin;

static void ap_loop(unsigned cpu)
{
	loop_cpu(cpu, loop_spin);
	__atomic_fetch_add(&loops_done, 1, __ATOMIC_RELEASE);
}

static void round_report(unsigned round, unsigned long a, unsigned long b, unsigned long irqon)
{
	struct round_counts c;

	run_calls(a, b, irqon, &c);
	pr("PAYLOAD round=%u f_a=%lu f_b=%lu f_leaf=%lu f_irqon=%lu\n", round, c.f_a, c.f_b, c.f_leaf,
	   c.f_irqon);
}

static void loop_report(unsigned ncpus)
{
	loop_cpu(0, loop_spin);
	while (__atomic_load_n(&loops_done, __ATOMIC_ACQUIRE) < ncpus - 1)
		cpu_relax();
	for (unsigned cpu = 0; cpu < ncpus; cpu++)
		pr("PAYLOAD loop: cpu=%u iterations=%lu nmis=%lu\n", cpu, loop_iterations(cpu), cpu_nmis(cpu));
}

/* From startup_64 (head.S), on the payload's page tables, %gs on CPU 0's area. */
NORETURN void bsp_main(const uint8_t *boot_params)
{
	const char *cmdline = (const char *)(uintptr_t)*(const uint32_t *)(boot_params + BOOT_PARAMS_CMDLINE_PTR);
	struct params p;
	unsigned ncpus = 1;

	cpu_init_bsp();
	con_init();
	params_parse(cmdline, &p);
	if (p.cpus > MAX_CPUS) {
		pr("PAYLOAD FATAL: vt.cpus=%lu, at most %u\n", p.cpus, MAX_CPUS);
		reset();
	}
	loop_spin = p.spin;
	pr("PAYLOAD start cpus=%lu\n", p.cpus ? p.cpus : 1);
	if (p.insncost) {
		insncost_run(p.insncost);
		pr("PAYLOAD done\n");
		reset();
	}
	if (p.hostile) {
		hostile_run(p.hostile, p.a, p.spin);
		pr("PAYLOAD done\n");
		reset();
	}
	round_report(1, p.a, p.b, p.irqon);
	if (p.ftrace) {
		ftrace_init();
		pr("PAYLOAD ftrace_init: slots=%lu nopped=%lu mismatched=%lu first_bad=%lx\n",
		   ftrace_result.slots, ftrace_result.nopped, ftrace_result.mismatched,
		   (unsigned long)ftrace_result.first_bad);
		round_report(2, p.a2, p.b2, 0);
	}
	/* After ftrace_init, as in Linux: no other CPU runs while it rewrites text. */
	if (p.cpus > 1)
		ncpus = cpu_start_aps((unsigned)p.cpus, p.loop ? ap_loop : NULL);
	if (p.loop)
		loop_report(ncpus);
	pr("PAYLOAD done\n");
	reset();
}
