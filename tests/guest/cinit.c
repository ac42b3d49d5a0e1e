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
 * With ftraceall=1 there, the guest's own function and function_graph
 * tracers on every function around a read of /proc/version each (see
 * ftrace_all()), before FUNC's.
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
#define SYSLOG_CLEAR 5
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

/* A child that reads /proc/version 512 bytes at a time, as dd does; its pid once it has exited. */
static long read_version(void)
{
	long pid = rt_syscall6(__NR_clone, SIGCHLD_, 0, 0, 0, 0, 0), fd;
	char b[512];
	int status;

	if (pid == 0) {
		fd = rt_syscall4(__NR_openat, AT_FDCWD_, (long)"/proc/version", O_RDONLY_, 0);
		while (fd >= 0 && rt_syscall(__NR_read, fd, (long)b, sizeof(b)) > 0)
			;
		rt_syscall(__NR_exit, 0, 0, 0);
	}
	if (pid > 0)
		rt_syscall4(__NR_wait4, pid, (long)&status, 0, 0);
	return pid;
}

/*
 * Each line of the guest's trace that names task -PID, after tag, to the
 * kernel log (its console writes are synchronous; loongarch64's UART
 * without an interrupt passes a tty's bytes at about 1 KB/s), else to
 * stdout. The kernel command line says printk.devkmsg=on.
 */
static void trace_lines_of(const char *tag, long pid)
{
	long fd = rt_syscall4(__NR_openat, AT_FDCWD_, (long)"/sys/kernel/tracing/trace", O_RDONLY_, 0);
	long out, have = 0, n, start, taglen = (long)rt_strlen(tag);
	char needle[24], *q = rt_utoa(rt_puts(needle, "-"), (unsigned long)pid), line[640];
	unsigned long k;

	rt_syscall4(__NR_mknodat, AT_FDCWD_, (long)"/dev/kmsg", 0020600, 1 << 8 | 11);	/* S_IFCHR, 1:11 */
	out = rt_syscall4(__NR_openat, AT_FDCWD_, (long)"/dev/kmsg", O_WRONLY_, 0);
	q = rt_puts(q, " ");
	*q = 0;
	k = rt_strlen(needle);
	while (fd >= 0 && (n = rt_syscall(__NR_read, fd, (long)(buf + have), (long)(sizeof(buf) - 1 - have))) > 0) {
		have += n;
		start = 0;
		for (long i = 0; i < have; i++) {
			long len = i - start, hit = 0;

			if (buf[i] != '\n')
				continue;
			for (long j = start; !hit && j + (long)k <= i; j++) {
				unsigned long m = 0;

				while (m < k && buf[j + m] == needle[m])
					m++;
				hit = m == k;
			}
			if (hit && taglen + len + 1 <= (long)sizeof(line)) {
				for (long j = 0; j < taglen; j++)
					line[j] = tag[j];
				for (long j = 0; j <= len; j++)
					line[taglen + j] = buf[start + j];
				rt_write(out >= 0 ? (int)out : 1, line, (unsigned long)(taglen + len + 1));
			}
			start = i + 1;
		}
		for (long j = start; j < have; j++)
			buf[j - start] = buf[j];
		have -= start;
		if (have == (long)sizeof(buf) - 1)
			have = 0;	/* no line is that long: drop it */
	}
	if (fd >= 0)
		rt_syscall(__NR_close, fd, 0, 0);
	if (out >= 0)
		rt_syscall(__NR_close, out, 0, 0);
}

/* The kernel log's ftrace failures, warnings and oopses since the last call, added to n[3]; -1 without a log. */
static long log_scan(unsigned long n[3])
{
	long len = rt_syscall(__NR_syslog, SYSLOG_READ_ALL, (long)buf, sizeof(buf) - 1);

	if (len < 0)
		return len;
	n[0] += count_lines(len, "ftrace failed to modify");
	n[1] += count_lines(len, "WARNING: CPU");
	n[2] += count_lines(len, "general protection") + count_lines(len, "BUG: ") + count_lines(len, "Oops");
	rt_syscall(__NR_syslog, SYSLOG_CLEAR, 0, 0);	/* the trace lines that follow go there too */
	return 0;
}

/*
 * A read_version() child with the guest's tracer on (ON: tracing_on's
 * path), then the kernel log's failures since the last scan into n and
 * the child's trace lines after TAG; the child's pid.
 */
static long traced_child(const char *on, const char *tag, unsigned long n[3], long *nolog)
{
	long pid;

	put(on, "1");
	pid = read_version();
	put(on, "0");
	*nolog |= log_scan(n);
	trace_lines_of(tag, pid);
	return pid;
}

/*
 * ftraceall=1: the guest's own function tracer on every function around a
 * read_version() child, then its function_graph tracer around another,
 * while vmmtrace may hold every slot (issue 37; busybox's /init step
 * ftrace-all does the same). Prints both children's trace lines
 * ("CINIT-TRACE f " and "CINIT-TRACE g " in the kernel log, for the host
 * to compare with its own trace) and "CINIT-FTRACE-ALL function_pid=<p> graph_pid=<g>
 * refused=<0|1> ftrace_failed=<n> warnings=<n> oopses=<n>" from the
 * kernel log.
 */
static void ftrace_all(void)
{
	const char *t = "/sys/kernel/tracing/";
	char line[256], path[64], *p = line;
	long fpid = 0, gpid = 0, refused = 0, nolog = 0;
	unsigned long n[3] = { 0, 0, 0 };

#define TRACEFS(file) (rt_puts(rt_puts(path, t), file)[0] = 0, path)
	rt_syscall6(__NR_mount, (long)"tracefs", (long)"/sys/kernel/tracing", (long)"tracefs", 0, 0, 0);
	put(TRACEFS("tracing_on"), "0");
	put(TRACEFS("set_ftrace_filter"), "");	/* O_TRUNC: every function */
	put(TRACEFS("trace"), "");
	if (put(TRACEFS("current_tracer"), "function")) {
		refused = 1;
	} else {
		fpid = traced_child(TRACEFS("tracing_on"), "CINIT-TRACE f ", n, &nolog);
		put(TRACEFS("current_tracer"), "nop");
		put(TRACEFS("trace"), "");
		if (put(TRACEFS("current_tracer"), "function_graph")) {
			refused = 1;
		} else {
			put(TRACEFS("trace_options"), "funcgraph-proc");
			gpid = traced_child(TRACEFS("tracing_on"), "CINIT-TRACE g ", n, &nolog);
			put(TRACEFS("trace_options"), "nofuncgraph-proc");
		}
		put(TRACEFS("current_tracer"), "nop");
	}
#undef TRACEFS
	nolog |= log_scan(n);
	p = kv(p, "CINIT-FTRACE-ALL function_pid=", (unsigned long)fpid);
	p = kv(p, " graph_pid=", (unsigned long)gpid);
	p = kv(p, " refused=", (unsigned long)refused);
	p = kv(p, " ftrace_failed=", n[0]);
	p = kv(p, " warnings=", n[1]);
	p = kv(p, " oopses=", n[2]);
	p = rt_puts(p, nolog ? " (no kernel log)\n" : "\n");
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
	if (env_num(sp, "ftraceall") > 0)
		ftrace_all();
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
