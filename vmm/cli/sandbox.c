// SPDX-License-Identifier: GPL-2.0
/*
 * The seccomp sandbox of `vmmtrace boot` (docs/SANDBOX.md). Once the VM,
 * its vCPU threads, the trace files, the consumer, the control server and
 * the console reader exist, the process needs only a few dozen system
 * calls: KVM_RUN and the register ioctls, reads and writes on open fds,
 * poll/accept/send on the listening control socket, futexes, signals,
 * memory. Everything else is refused, so a guest that took over a device
 * model or the control parser cannot open files, start programs or reach
 * the network.
 *
 * Actions: the calls an attacker wants and vmmtrace never makes after
 * set-up (execve, ptrace, socket, connect, ...) kill the process; any other
 * unlisted call fails with EPERM, so a legitimate path the allowlist missed
 * fails like an ordinary error and the trace in every format is still
 * finished and closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/kvm.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include "vmm/cli/sandbox.h"
#include "vmm/kvm/host-kvm.h"

/* Plain calls: memory, threads, signals, time, I/O on fds opened before. */
static const char *const sandbox_allowed[] = {
	/* memory: malloc, thread stacks, the trace buffers */
	"brk", "mmap", "munmap", "mremap", "mprotect", "madvise",
	/* threads: futexes, liburcu's membarrier, a thread's own start and end */
	"futex", "membarrier", "set_robust_list", "rseq", "sched_yield",
	"gettid", "exit", "exit_group",
	/* signals: vm_run's wait, the vCPU kick (tgkill), handlers */
	"rt_sigprocmask", "rt_sigtimedwait", "rt_sigreturn", "rt_sigaction",
	"tgkill", "getpid", "restart_syscall",
	/* time: waits between ring drains, timestamps outside the vDSO */
	"clock_nanosleep", "nanosleep", "clock_gettime", "gettimeofday",
	/* I/O on the trace, console and serial fds */
	"read", "write", "writev", "pread64", "pwrite64", "lseek", "close",
	"fstat", "newfstatat", "fcntl", "ftruncate", "fsync", "fdatasync",
	"poll", "ppoll",
	/* the control server: accept, peer check, replies */
	"accept4", "accept", "getsockopt", "sendto", "sendmsg", "recvfrom",
	"recvmsg", "shutdown", "geteuid", "getuid",
	/* removing the control socket at the end; glibc's qsort asks sysinfo */
	"unlink", "sysinfo",
};

/* Never made after set-up: a process that makes one has been taken over. */
static const char *const sandbox_fatal[] = {
	"execve", "execveat", "fork", "vfork", "ptrace", "process_vm_readv",
	"process_vm_writev", "socket", "socketpair", "connect", "bind", "listen",
};

/*
 * ioctl requests allowed, on any fd: the vCPU loop, the tracer's
 * breakpoints, termios; the KVM host arch adds its register and interrupt
 * calls (host_kvm_sandbox_ioctls).
 */
static const unsigned long sandbox_ioctls[] = {
	KVM_RUN, KVM_SET_GUEST_DEBUG, KVM_GET_MP_STATE, KVM_IRQ_LINE,
	TCGETS, TCSETS, TCSETSW, TCSETSF, TIOCGWINSZ,
};

#define SANDBOX_N(a) (sizeof(a) / sizeof((a)[0]))

static int sandbox_add(scmp_filter_ctx ctx, uint32_t action, const char *name,
		       unsigned nargs, const struct scmp_arg_cmp *args, struct errbuf *err)
{
	int nr = seccomp_syscall_resolve_name(name);
	int rc;

	if (nr == __NR_SCMP_ERROR)
		return err_set(err, EINVAL, "sandbox: unknown system call '%s'", name);
	rc = seccomp_rule_add_array(ctx, action, nr, nargs, args);
	if (rc)
		return err_set(err, -rc, "sandbox: cannot add a rule for %s: %s", name, strerror(-rc));
	return 0;
}

/* The QEMU host: its process is ended (kill) and reaped (wait4) by vmmtrace; no other. */
static int sandbox_add_child(scmp_filter_ctx ctx, pid_t child, unsigned *nallowed, struct errbuf *err)
{
	struct scmp_arg_cmp pid = SCMP_A0_32(SCMP_CMP_EQ, (uint32_t)child);
	int rc;

	if (child <= 0)
		return 0;
	if ((rc = sandbox_add(ctx, SCMP_ACT_ALLOW, "kill", 1, &pid, err)) ||
	    (rc = sandbox_add(ctx, SCMP_ACT_ALLOW, "wait4", 1, &pid, err)))
		return rc;
	*nallowed += 2;
	return 0;
}

static int sandbox_add_rules(scmp_filter_ctx ctx, unsigned *nallowed, struct errbuf *err)
{
	/* Threads only: fork()'s clone (no CLONE_THREAD) falls to the default. */
	struct scmp_arg_cmp thread = SCMP_A0_64(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD);
	/* Unnamed files only (trace.dat's per-CPU pages): O_TMPFILE cannot open an existing file. */
	struct scmp_arg_cmp tmpfile = SCMP_A2_32(SCMP_CMP_MASKED_EQ, O_TMPFILE, O_TMPFILE);
	struct scmp_arg_cmp req;
	size_t i, n_arch;
	const unsigned long *arch_ioctls = host_kvm_sandbox_ioctls(&n_arch);
	int rc;

	for (i = 0; i < SANDBOX_N(sandbox_allowed); i++)
		if ((rc = sandbox_add(ctx, SCMP_ACT_ALLOW, sandbox_allowed[i], 0, NULL, err)))
			return rc;
	for (i = 0; i < SANDBOX_N(sandbox_fatal); i++)
		if ((rc = sandbox_add(ctx, SCMP_ACT_KILL_PROCESS, sandbox_fatal[i], 0, NULL, err)))
			return rc;
	for (i = 0; i < SANDBOX_N(sandbox_ioctls) + n_arch; i++) {
		unsigned long r = i < SANDBOX_N(sandbox_ioctls) ? sandbox_ioctls[i] :
				  arch_ioctls[i - SANDBOX_N(sandbox_ioctls)];

		/* The kernel compares the request as 32 bits; so do we. */
		req = SCMP_A1_32(SCMP_CMP_EQ, (uint32_t)r);
		if ((rc = sandbox_add(ctx, SCMP_ACT_ALLOW, "ioctl", 1, &req, err)))
			return rc;
	}
	if ((rc = sandbox_add(ctx, SCMP_ACT_ALLOW, "clone", 1, &thread, err)) ||
	    (rc = sandbox_add(ctx, SCMP_ACT_ALLOW, "openat", 1, &tmpfile, err)))
		return rc;
	/* clone3's flags are behind a pointer: ENOSYS sends glibc to clone. */
	if ((rc = sandbox_add(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL, err)))
		return rc;
	*nallowed = SANDBOX_N(sandbox_allowed) + 3;	/* + ioctl, clone, openat */
	/*
	 * An arch with no unlink of its own (arm64: libseccomp gives the name a
	 * pseudo number that matches nothing) removes the control socket with
	 * unlinkat, which glibc's unlink() calls there, relative to the
	 * working directory as unlink is.
	 */
	if (seccomp_syscall_resolve_name("unlink") < 0) {
		/* The low 32 bits: glibc passes AT_FDCWD sign-extended to the register's 64. */
		struct scmp_arg_cmp cwd = SCMP_A0_64(SCMP_CMP_MASKED_EQ, 0xffffffffULL, (uint32_t)AT_FDCWD);

		if ((rc = sandbox_add(ctx, SCMP_ACT_ALLOW, "unlinkat", 1, &cwd, err)))
			return rc;
		++*nallowed;
	}
	return 0;
}

/* No capability is needed once the VM exists: clear them all, for good. */
static int sandbox_drop_caps(struct errbuf *err)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capset, &hdr, data))
		return err_set(err, errno, "sandbox: cannot drop capabilities: %s", strerror(errno));
	return 0;
}

int sandbox_enter(pid_t child, unsigned *nallowed, struct errbuf *err)
{
	scmp_filter_ctx ctx;
	int rc;

	if ((rc = sandbox_drop_caps(err)))
		return rc;
	if (!(ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM))))
		return err_set(err, ENOMEM, "sandbox: seccomp_init failed");
	/* Every thread, not only the caller; NO_NEW_PRIVS is set by seccomp_load. */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
	if (rc)
		err_set(err, -rc, "sandbox: cannot synchronise threads: %s", strerror(-rc));
	else if (!(rc = sandbox_add_rules(ctx, nallowed, err)) && !(rc = sandbox_add_child(ctx, child, nallowed, err)) &&
		 (rc = seccomp_load(ctx)))
		err_set(err, -rc, "sandbox: cannot load the seccomp filter: %s", strerror(-rc));
	seccomp_release(ctx);
	return rc;
}

int sandbox_available(const char **why)
{
#if defined(__SANITIZE_ADDRESS__)
	/* LeakSanitizer stops the threads with ptrace at exit: the filter would kill it. */
	*why = "an AddressSanitizer build";
	return 0;
#else
	*why = NULL;
	return 1;
#endif
}

int sandbox_selftest(const char **what)
{
	const char *mode = getenv("VMMTRACE_SANDBOX_SELFTEST");
	char *const argv[] = { "true", NULL };
	int fd;

	if (!mode)
		return 1;
	if (!strcmp(mode, "kill")) {
		*what = "execve(\"/bin/true\")";
		execve("/bin/true", argv, environ);
		return -errno;
	}
	*what = "open(\"/etc/passwd\")";
	fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return -errno;
}
