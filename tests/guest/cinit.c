// SPDX-License-Identifier: GPL-2.0
/*
 * /init in C, for a guest with no busybox (Debian 12 ships no riscv64 or
 * loongarch64 packages): the riscv64 and loongarch64 test initramfs's only
 * user-space program (loongarch64: built by clang-19, no libc). Its
 * arguments come from the kernel command line after "--":
 *
 *   -- LOOPS CPUS [FUNC [FLOOPS [ROUNDS [TRACER]]]]
 *
 * It mounts /proc and /sys, starts one worker per CPU 0..CPUS-1 (pinned)
 * that makes exactly LOOPS getpriority(PRIO_PROCESS, 0) calls, as sysloop
 * does, and reports "CINIT-WORKER cpu=<cpu> calls=<n> ns=<its time> pid=<pid>".
 * With FUNC it then hands FUNC to the guest's own function tracer, makes
 * three getpid calls and FLOOPS getpriority calls (timed: ns=), and
 * reports how many of the trace's lines name FUNC and how many "ftrace
 * failed to modify" and "WARNING" lines the kernel log has:
 * "CINIT-FTRACE func=<f> events=<n> ftrace_failed=<n> warnings=<n> loops=<n> ns=<t>".
 * With ROUNDS it then times, ROUNDS times over, FLOOPS getpriority calls
 * three ways for bench/event-cost-qemu, a second's sleep between them for
 * the host to attach or detach (QEMU's host has no guest input):
 * "CINIT-LOOP ns=<t>", "CINIT-SLEEP n=<k>", "CINIT-LOOP ns=<t>",
 * "CINIT-SLEEP n=<k+1>", then with FUNC in the guest's function tracer
 * (or TRACER: function_graph) "CINIT-FLOOP ns=<t>".
 * Before all that, with sleepers=N on the kernel command line (the kernel
 * passes such words to init's environment) it starts N children that
 * sleep 3 s each (nanosleep) at once, reports "CINIT-SLEEPERS n=<started>",
 * and waits for them with the workers: each holds one of --graph's shadow
 * stacks while it sleeps.
 * With markloop=SECS there (after the workers) it runs markloop's loop
 * (tests/guest/progs/markloop.c) on each CPU 0..CPUS-1 for SECS seconds:
 * each iteration calls sched_get_priority_max(SCHED_FIFO) (the marker) then
 * getpriority, "VMMTRACE-STEP mark-loop: running cpu=<cpu>" after the
 * first 64, "MARKLOOP cpu=<cpu> iterations=<n>" at the end; a host test
 * attaches and detaches meanwhile (tests/qemu/loongarch64-qemu.sh).
 * Then "CINIT: done" and a reboot (QEMU, run with -no-reboot, exits), or
 * with poweroff=1 there a power-off.
 */
#include <linux/reboot.h>
#include <linux/resource.h>
#include <linux/time.h>

#include "tests/guest/progs/rt.h"

#define AT_FDCWD_ (-100)
#define O_RDONLY_ 0
#define O_WRONLY_ 1
#define O_TRUNC_ 01000
#define SIGCHLD_ 17
#define SYSLOG_READ_ALL 3
#define TCSBRK_ 0x5409		/* asm-generic/ioctls.h; with argument 1: tcdrain */

static char buf[256 << 10];

static void say(const char *s)
{
	rt_write(1, s, rt_strlen(s));
}

static long atol_(const char *s)
{
	long v = 0;

	while (*s >= '0' && *s <= '9')
		v = v * 10 + (*s++ - '0');
	return v;
}

/* Writes s to the file at path; 0 or -errno. */
static long put(const char *path, const char *s)
{
	long fd = rt_syscall4(__NR_openat, AT_FDCWD_, (long)path, O_WRONLY_ | O_TRUNC_, 0), n;

	if (fd < 0)
		return fd;
	n = rt_syscall(__NR_write, fd, (long)s, (long)rt_strlen(s));
	rt_syscall(__NR_close, fd, 0, 0);
	return n < 0 ? n : 0;
}

/* Reads the file at path into buf (NUL-terminated); its length, or -errno. */
static long slurp(const char *path)
{
	long fd = rt_syscall4(__NR_openat, AT_FDCWD_, (long)path, O_RDONLY_, 0), n, len = 0;

	if (fd < 0)
		return fd;
	while (len < (long)sizeof(buf) - 1 &&
	       (n = rt_syscall(__NR_read, fd, (long)(buf + len), (long)(sizeof(buf) - 1 - len))) > 0)
		len += n;
	rt_syscall(__NR_close, fd, 0, 0);
	buf[len] = 0;
	return len;
}

/* How many lines of buf[0..len) hold needle. */
static unsigned long count_lines(long len, const char *needle)
{
	unsigned long n = 0, k = rt_strlen(needle);

	for (long i = 0; i < len;) {
		long end = i, hit = 0;

		while (end < len && buf[end] != '\n')
			end++;
		for (long j = i; !hit && j + (long)k <= end; j++) {
			unsigned long m = 0;

			while (m < k && buf[j + m] == needle[m])
				m++;
			hit = m == k;
		}
		n += hit;
		i = end + 1;
	}
	return n;
}

static unsigned long now_ns(void)
{
	struct timespec ts;

	if (rt_syscall(__NR_clock_gettime, CLOCK_MONOTONIC, (long)&ts, 0))
		return 0;
	return (unsigned long)ts.tv_sec * 1000000000ul + ts.tv_nsec;
}

/* LOOPS getpriority calls; how many the kernel handled (it returns 1..40), and in *ns how long. */
static unsigned long prio_loop(long loops, unsigned long *ns)
{
	unsigned long calls = 0, start = now_ns();

	for (long i = 0; i < loops; i++)
		if (rt_syscall(__NR_getpriority, PRIO_PROCESS, 0, 0) > 0)
			calls++;
	*ns = now_ns() - start;
	return calls;
}

/* key (its own spaces and "=" included), then value, at p; returns the end. */
static char *kv(char *p, const char *key, unsigned long v)
{
	return rt_utoa(rt_puts(p, key), v);
}

static void worker(long cpu, long loops)
{
	unsigned long mask = 1ul << cpu, calls, ns;
	char line[160], *p = line;

	rt_syscall(__NR_sched_setaffinity, 0, sizeof(mask), (long)&mask);
	calls = prio_loop(loops, &ns);
	p = kv(p, "CINIT-WORKER cpu=", (unsigned long)cpu);
	p = kv(p, " calls=", calls);
	p = kv(p, " ns=", ns);
	p = kv(p, " pid=", (unsigned long)rt_syscall(__NR_getpid, 0, 0, 0));
	p = rt_puts(p, "\n");
	rt_write(1, line, (unsigned long)(p - line));
	rt_syscall(__NR_exit, 0, 0, 0);
}

static void ftrace(const char *func, long floops)
{
	const char *t = "/sys/kernel/tracing";
	char line[320], *p = line;
	unsigned long events = 0, failed, warnings, fcalls = 0, fns = 0;
	long len;

	if (rt_syscall6(__NR_mount, (long)"tracefs", (long)t, (long)"tracefs", 0, 0, 0) ||
	    put("/sys/kernel/tracing/tracing_on", "0") || put("/sys/kernel/tracing/set_ftrace_filter", func) ||
	    put("/sys/kernel/tracing/current_tracer", "function") || put("/sys/kernel/tracing/tracing_on", "1")) {
		say("CINIT-FTRACE refused: the guest's function tracer did not take it\n");
	} else {
		for (int i = 0; i < 3; i++)
			rt_syscall(__NR_getpid, 0, 0, 0);
		fcalls = prio_loop(floops, &fns);
		put("/sys/kernel/tracing/tracing_on", "0");
		len = slurp("/sys/kernel/tracing/trace");
		events = len > 0 ? count_lines(len, func) : 0;
		put("/sys/kernel/tracing/current_tracer", "nop");
	}
	len = rt_syscall(__NR_syslog, SYSLOG_READ_ALL, (long)buf, sizeof(buf) - 1);
	failed = len > 0 ? count_lines(len, "ftrace failed to modify") : 0;
	warnings = len > 0 ? count_lines(len, "WARNING") : 0;
	p = rt_puts(p, "CINIT-FTRACE func=");
	p = rt_puts(p, func);
	p = kv(p, " events=", events);
	p = kv(p, " ftrace_failed=", failed);
	p = kv(p, " warnings=", warnings);
	p = kv(p, " loops=", fcalls);
	p = kv(p, " ns=", fns);
	p = rt_puts(p, len > 0 ? "\n" : " (no kernel log)\n");
	rt_write(1, line, (unsigned long)(p - line));
}

static void loop_line(const char *what, long floops)
{
	unsigned long ns, calls = prio_loop(floops, &ns);
	char line[96], *p = line;

	p = rt_puts(p, what);
	p = kv(p, " calls=", calls);
	p = kv(p, " ns=", ns);
	p = rt_puts(p, "\n");
	rt_write(1, line, (unsigned long)(p - line));
}

static void sleep_line(unsigned long n)
{
	struct timespec ts = { 1, 0 };
	char line[48], *p = line;

	p = kv(p, "CINIT-SLEEP n=", n);
	p = rt_puts(p, "\n");
	rt_write(1, line, (unsigned long)(p - line));
	rt_syscall(__NR_nanosleep, (long)&ts, 0, 0);
}

/* Untraced, (the host attaches) traced, (it detaches) in the guest's tracer: ROUNDS times. */
static void bench_rounds(const char *func, long floops, long rounds, const char *tracer)
{
	const char *t = "/sys/kernel/tracing";

	if (rt_syscall6(__NR_mount, (long)"tracefs", (long)t, (long)"tracefs", 0, 0, 0) ||
	    put("/sys/kernel/tracing/set_ftrace_filter", func)) {
		say("CINIT-BENCH refused: the guest's function tracer did not take it\n");
		return;
	}
	for (long r = 0; r < rounds; r++) {
		loop_line("CINIT-LOOP", floops);
		sleep_line((unsigned long)(2 * r + 1));
		loop_line("CINIT-LOOP", floops);
		sleep_line((unsigned long)(2 * r + 2));
		put("/sys/kernel/tracing/current_tracer", tracer);
		loop_line("CINIT-FLOOP", floops);
		put("/sys/kernel/tracing/current_tracer", "nop");
	}
}

#define MARKLOOP_SPIN 10000

/* markloop's iterations on CPU cpu for secs seconds (see the header), then the child exits. */
static void markloop(long cpu, long secs)
{
	unsigned long mask = 1ul << cpu, n = 0, end;
	char line[128], *p;

	rt_syscall(__NR_sched_setaffinity, 0, sizeof(mask), (long)&mask);
	end = now_ns() + (unsigned long)secs * 1000000000ul;
	do {
		for (int i = 0; i < 64; i++, n++) {
			rt_syscall(__NR_sched_get_priority_max, 1 /* SCHED_FIFO */, 0, 0);
			rt_syscall(__NR_getpriority, PRIO_PROCESS, 0, 0);
			/* Some user time between iterations: a trace of every marker stays tens of MB. */
			for (volatile unsigned k = 0; k < MARKLOOP_SPIN; k++)
				;
		}
		if (n == 64) {
			p = kv(line, "VMMTRACE-STEP mark-loop: running cpu=", (unsigned long)cpu);
			p = rt_puts(p, "\n");
			rt_write(1, line, (unsigned long)(p - line));
		}
	} while (now_ns() < end);
	p = kv(line, "MARKLOOP cpu=", (unsigned long)cpu);
	p = kv(p, " iterations=", n);
	p = rt_puts(p, "\n");
	rt_write(1, line, (unsigned long)(p - line));
	rt_syscall(__NR_exit, 0, 0, 0);
}

/* NAME=<number> in init's environment (after argv's NULL on the stack), or 0. */
static long env_num(long *sp, const char *name)
{
	char **envp = (char **)(sp + 1 + sp[0] + 1);
	unsigned long k = rt_strlen(name);

	for (; *envp; envp++) {
		unsigned long m = 0;

		while (m < k && (*envp)[m] == name[m])
			m++;
		if (m == k && (*envp)[k] == '=')
			return atol_(*envp + k + 1);
	}
	return 0;
}

/* n children asleep at once, 3 s each; the caller waits for them. */
static void sleepers(long n)
{
	struct timespec ts = { 3, 0 };
	unsigned long started = 0;
	char line[48], *p = line;

	for (long i = 0; i < n; i++) {
		long pid = rt_syscall6(__NR_clone, SIGCHLD_, 0, 0, 0, 0, 0);

		if (pid == 0) {
			rt_syscall(__NR_nanosleep, (long)&ts, 0, 0);
			rt_syscall(__NR_exit, 0, 0, 0);
		}
		started += pid > 0;
	}
	p = kv(p, "CINIT-SLEEPERS n=", started);
	p = rt_puts(p, "\n");
	rt_write(1, line, (unsigned long)(p - line));
}

int rt_main(long *sp)
{
	long argc = sp[0], loops, cpus;
	char **argv = (char **)(sp + 1);
	int status;

	say("CINIT: start\n");
	loops = argc > 1 ? atol_(argv[1]) : 0;
	cpus = argc > 2 ? atol_(argv[2]) : 1;
	rt_syscall(__NR_mkdirat, AT_FDCWD_, (long)"/proc", 0555);
	rt_syscall(__NR_mkdirat, AT_FDCWD_, (long)"/sys", 0555);
	if (rt_syscall6(__NR_mount, (long)"proc", (long)"/proc", (long)"proc", 0, 0, 0) ||
	    rt_syscall6(__NR_mount, (long)"sysfs", (long)"/sys", (long)"sysfs", 0, 0, 0))
		say("CINIT: mounts failed\n");
	if (env_num(sp, "sleepers") > 0)
		sleepers(env_num(sp, "sleepers"));
	for (long c = 0; loops && c < cpus && c < 64; c++)
		if (rt_syscall6(__NR_clone, SIGCHLD_, 0, 0, 0, 0, 0) == 0)
			worker(c, loops);
	while (rt_syscall4(__NR_wait4, -1, (long)&status, 0, 0) > 0)
		;
	for (long c = 0; env_num(sp, "markloop") > 0 && c < cpus && c < 64; c++)
		if (rt_syscall6(__NR_clone, SIGCHLD_, 0, 0, 0, 0, 0) == 0)
			markloop(c, env_num(sp, "markloop"));
	while (rt_syscall4(__NR_wait4, -1, (long)&status, 0, 0) > 0)
		;
	if (argc > 5)
		bench_rounds(argv[3], atol_(argv[4]), atol_(argv[5]), argc > 6 ? argv[6] : "function");
	else if (argc > 3)
		ftrace(argv[3], argc > 4 ? atol_(argv[4]) : 0);
	say("CINIT: done\n");
	/*
	 * Until the console has sent every line: the reset loses what is still
	 * queued, and loongarch64's UART is polled (no interrupt in its DT).
	 */
	rt_syscall(__NR_ioctl, 1, TCSBRK_, 1);
	rt_syscall(__NR_sync, 0, 0, 0);
	rt_syscall4(__NR_reboot, LINUX_REBOOT_MAGIC1, LINUX_REBOOT_MAGIC2,
		    env_num(sp, "poweroff") > 0 ? LINUX_REBOOT_CMD_POWER_OFF : LINUX_REBOOT_CMD_RESTART, 0);
	for (;;)
		rt_syscall(__NR_sched_yield, 0, 0, 0);
}
