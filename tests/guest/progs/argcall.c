// SPDX-License-Identifier: GPL-2.0
/*
 * argcall N: N rounds of system calls with arguments chosen to be seen in a
 * trace of the kernel functions they reach with those values (--args,
 * tests/e2e/tasks.sh), then one line on standard output:
 *   "ARGCALL pid=<pid> rounds=<n> dup3=<r> dup3_bad=<r> close=<r> close_bad=<r> getpriority=<r>"
 * with what the last round's calls returned. Each round, in a 6.1 x86_64 kernel:
 *   dup3(1, 77, O_CLOEXEC)     ksys_dup3(oldfd=1, newfd=77, flags=0x80000)
 *   dup3(1, 78, -1)            ksys_dup3(..., flags=-1): -EINVAL
 *   close(77)                  close_fd(fd=77)
 *   close(78)                  close_fd(fd=78): -EBADF
 *   getpriority(PRIO_PROCESS, own pid)   find_task_by_vpid(vnr=pid)
 * (the handlers __x64_sys_dup3, __x64_sys_close and __x64_sys_getpriority
 * call these; nothing else in the test guest uses fds 77 and 78).
 */
#include <asm/unistd.h>
#include <linux/fcntl.h>
#include <linux/resource.h>

#include "rt.h"

static char *put_long(char *p, long v)
{
	if (v < 0) {
		*p++ = '-';
		return rt_utoa(p, (unsigned long)-v);
	}
	return rt_utoa(p, (unsigned long)v);
}

int rt_main(long *sp)
{
	char **argv = (char **)(sp + 1);
	long n = sp[0] == 2 ? rt_atol(argv[1]) : -1;
	long pid = rt_syscall(__NR_getpid, 0, 0, 0);
	long r[5] = { 0 };
	char line[192], *p = line;

	if (n < 1) {
		static const char usage[] = "usage: argcall N (N >= 1)\n";

		rt_write(2, usage, sizeof(usage) - 1);
		return 2;
	}
	for (long i = 0; i < n; i++) {
		r[0] = rt_syscall(__NR_dup3, 1, 77, O_CLOEXEC);
		r[1] = rt_syscall(__NR_dup3, 1, 78, -1);
		r[2] = rt_syscall(__NR_close, 77, 0, 0);
		r[3] = rt_syscall(__NR_close, 78, 0, 0);
		r[4] = rt_syscall(__NR_getpriority, PRIO_PROCESS, pid, 0);
	}
	p = rt_puts(p, "ARGCALL pid=");
	p = put_long(p, pid);
	p = rt_puts(p, " rounds=");
	p = put_long(p, n);
	p = rt_puts(p, " dup3=");
	p = put_long(p, r[0]);
	p = rt_puts(p, " dup3_bad=");
	p = put_long(p, r[1]);
	p = rt_puts(p, " close=");
	p = put_long(p, r[2]);
	p = rt_puts(p, " close_bad=");
	p = put_long(p, r[3]);
	p = rt_puts(p, " getpriority=");
	p = put_long(p, r[4]);
	*p++ = '\n';
	rt_write(1, line, p - line);
	return r[0] == 77 && r[1] == -22 && r[2] == 0 && r[3] == -9 && r[4] > 0 ? 0 : 1;
}
