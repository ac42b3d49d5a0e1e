// SPDX-License-Identifier: GPL-2.0
/*
 * markloop SECS: for SECS seconds, each iteration calls
 * sched_get_priority_max(SCHED_FIFO) (the marker: kernel handler
 * __x64_sys_sched_get_priority_max, which nothing else in the test guest
 * calls) then getpriority (__x64_sys_getpriority). A test
 * that keeps the marker traced throughout can attribute every getpriority
 * event of an attached window to one iteration: between two consecutive
 * markers of a CPU there is exactly one getpriority call.
 * After its first 64 iterations it announces itself on standard error
 * ("VMMTRACE-STEP mark-loop: running cpu=<cpu>"; /init sends that to the
 * console), so that a host test can wait until every CPU is busy before it
 * attaches. At the end it prints "MARKLOOP cpu=<cpu> iterations=<n>" on
 * standard output.
 */
#include <asm/unistd.h>
#include <linux/resource.h>
#include <linux/time.h>

#include "rt.h"

static unsigned long now_s(void)
{
	struct timespec ts;

	if (rt_syscall(__NR_clock_gettime, CLOCK_MONOTONIC, (long)&ts, 0))
		return 0;
	return (unsigned long)ts.tv_sec;
}

int rt_main(long *sp)
{
	char **argv = (char **)(sp + 1);
	long secs = sp[0] == 2 ? rt_atol(argv[1]) : -1;
	unsigned long end, n = 0;
	unsigned int cpu = ~0u;
	char line[128], *p = line;

	if (secs < 0) {
		static const char usage[] = "usage: markloop SECS\n";

		rt_write(2, usage, sizeof(usage) - 1);
		return 2;
	}
	rt_syscall(__NR_getcpu, (long)&cpu, 0, 0);
	end = now_s() + secs;
	do {
		/* The clock is read every 64 iterations: its syscall is not free here. */
		for (int i = 0; i < 64; i++, n++) {
			rt_syscall(__NR_sched_get_priority_max, 1 /* SCHED_FIFO */, 0, 0);
			rt_syscall(__NR_getpriority, PRIO_PROCESS, 0, 0);
		}
		if (n == 64) {
			p = rt_puts(line, "VMMTRACE-STEP mark-loop: running cpu=");
			p = cpu == ~0u ? rt_puts(p, "?") : rt_utoa(p, cpu);
			*p++ = '\n';
			rt_write(2, line, p - line);
			p = line;
		}
	} while (now_s() < end);
	rt_syscall(__NR_getcpu, (long)&cpu, 0, 0);
	p = rt_puts(p, "MARKLOOP cpu=");
	p = cpu == ~0u ? rt_puts(p, "?") : rt_utoa(p, cpu);
	p = rt_puts(p, " iterations=");
	p = rt_utoa(p, n);
	*p++ = '\n';
	rt_write(1, line, p - line);
	return 0;
}
