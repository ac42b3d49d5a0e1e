// SPDX-License-Identifier: GPL-2.0
/*
 * sysloop N: makes exactly N getpriority(PRIO_PROCESS, 0) syscalls and prints
 * "SYSLOOP cpu=<cpu> calls=<n> ns=<elapsed> pid=<its pid>" (a trace's TASK-PID
 * column must name it: tests/e2e/tasks.sh).
 *
 * getpriority because nothing else in the test guest calls it (busybox's sh,
 * mount, taskset, awk and the kernel's own boot do not), so a trace of its
 * handler counts exactly this program's calls. In a 6.1 x86_64 kernel the
 * handler is __x64_sys_getpriority (kernel/sys.c SYSCALL_DEFINE2, its
 * __do_sys_getpriority body inlined into it); it starts with the fentry
 * slot, so both ftrace and vmmtrace can trace it. Besides the N calls the
 * program makes only clock_gettime (2), getcpu (1), getpid (1), write (1)
 * and exit.
 */
#include <linux/resource.h>
#include <linux/time.h>

#include "rt.h"

static unsigned long now_ns(void)
{
	struct timespec ts;

	if (rt_syscall(__NR_clock_gettime, CLOCK_MONOTONIC, (long)&ts, 0))
		return 0;
	return (unsigned long)ts.tv_sec * 1000000000ul + ts.tv_nsec;
}

int rt_main(long *sp)
{
	char **argv = (char **)(sp + 1);
	long n = sp[0] == 2 ? rt_atol(argv[1]) : -1;
	unsigned long start, calls = 0, elapsed;
	unsigned int cpu = ~0u;
	long pid;
	char line[128], *p = line;

	if (n < 0) {
		static const char usage[] = "usage: sysloop N\n";

		rt_write(2, usage, sizeof(usage) - 1);
		return 2;
	}
	start = now_ns();
	for (long i = 0; i < n; i++) {
		/* Only count calls the kernel handled: it returns 1..40 here. */
		if (rt_syscall(__NR_getpriority, PRIO_PROCESS, 0, 0) > 0)
			calls++;
	}
	elapsed = now_ns() - start;
	rt_syscall(__NR_getcpu, (long)&cpu, 0, 0);
	pid = rt_syscall(__NR_getpid, 0, 0, 0);
	p = rt_puts(p, "SYSLOOP cpu=");
	p = cpu == ~0u ? rt_puts(p, "?") : rt_utoa(p, cpu);
	p = rt_puts(p, " calls=");
	p = rt_utoa(p, calls);
	p = rt_puts(p, " ns=");
	p = rt_utoa(p, elapsed);
	p = rt_puts(p, " pid=");
	p = rt_utoa(p, (unsigned long)pid);
	*p++ = '\n';
	rt_write(1, line, p - line);
	return calls == (unsigned long)n ? 0 : 1;
}
