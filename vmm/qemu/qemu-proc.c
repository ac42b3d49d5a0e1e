// SPDX-License-Identifier: GPL-2.0
/*
 * Starting and ending the QEMU process of the QEMU host backend
 * (vmm/qemu/qemu-proc.h). QEMU gets two file descriptors at fixed numbers: the
 * memfd of guest RAM (QEMU_FD_MEM, opened again by QEMU as /dev/fd/N with
 * share=on, so both processes see the same pages) and its end of the
 * gdbstub's socket pair (QEMU_FD_GDB, a connected chardev socket).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmm/qemu/qemu-proc.h"
#include "vmm/util/util.h"

#define QEMU_FD_MEM 3
#define QEMU_FD_GDB 4
#define QEMU_FD_CON 5
#define QEMU_EXEC_FAILED 127

/* Appends one argument, formatted into the store. */
static int arg_add(char **argv, unsigned *argc, char **store, size_t *left, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static int arg_add(char **argv, unsigned *argc, char **store, size_t *left, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*argc >= QEMU_MAX_ARGS)
		return -E2BIG;
	va_start(ap, fmt);
	n = vsnprintf(*store, *left, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= *left)
		return -E2BIG;
	argv[(*argc)++] = *store;
	*store += n + 1;
	*left -= (size_t)n + 1;
	return 0;
}

int qemu_build_args(const struct qemu_config *cfg, int mem_fd, int gdb_fd, char *store,
		    size_t store_len, char **argv, struct errbuf *err)
{
	unsigned argc = 0;
	int rc = 0;

#define ADD(...) do { if (!rc) rc = arg_add(argv, &argc, &store, &store_len, __VA_ARGS__); } while (0)
	if (!cfg->binary || !cfg->machine || !cfg->kernel || !cfg->ncpus || !cfg->mem_size ||
	    cfg->mem_size % (1 << 20) || (!cfg->console_path && cfg->console_fd < 0))
		return err_set(err, EINVAL, "qemu: incomplete configuration");
	ADD("%s", cfg->binary);
	ADD("-nodefaults");
	ADD("-no-user-config");
	ADD("-display");
	ADD("none");
	ADD("-no-reboot");
	ADD("-S");
	ADD("-M");
	ADD("%s,memory-backend=vt-ram", cfg->machine);
	if (cfg->cpu) {
		ADD("-cpu");
		ADD("%s", cfg->cpu);
	}
	if (cfg->bios) {
		ADD("-bios");
		ADD("%s", cfg->bios);
	}
	/*
	 * The pc machine: a CPU per socket. SeaBIOS's MP table names only the
	 * first CPU of each package, and a kernel without ACPI (the lean one)
	 * knows its CPUs from that table alone.
	 */
	ADD("-smp");
	if (!strcmp(cfg->machine, "pc"))
		ADD("%u,sockets=%u,cores=1,threads=1", cfg->ncpus, cfg->ncpus);
	else
		ADD("%u", cfg->ncpus);
	ADD("-m");
	ADD("%lluM", (unsigned long long)(cfg->mem_size >> 20));
	ADD("-object");
	ADD("memory-backend-file,id=vt-ram,size=%lluM,mem-path=/dev/fd/%d,share=on",
	    (unsigned long long)(cfg->mem_size >> 20), mem_fd);
	ADD("-chardev");
	ADD("socket,id=vt-gdb,fd=%d", gdb_fd);
	ADD("-gdb");
	ADD("chardev:vt-gdb");
	ADD("-chardev");
	if (cfg->console_path)
		ADD("file,id=vt-con,path=%s", cfg->console_path);
	else if (cfg->console_socket)
		ADD("socket,id=vt-con,fd=%d", QEMU_FD_CON);
	else
		ADD("file,id=vt-con,path=/dev/fd/%d", QEMU_FD_CON);
	ADD("-serial");
	ADD("chardev:vt-con");
	ADD("-kernel");
	ADD("%s", cfg->kernel);
	if (cfg->initrd) {
		ADD("-initrd");
		ADD("%s", cfg->initrd);
	}
	if (cfg->cmdline) {
		ADD("-append");
		ADD("%s", cfg->cmdline);
	}
	if (cfg->dtb) {
		ADD("-dtb");
		ADD("%s", cfg->dtb);
	}
	if (cfg->deterministic) {
		/*
		 * The guest's clocks (TSC, the generic timer, time CSR, the
		 * constant timer) count its instructions, 8 ns each (x86_64's
		 * loops that wait for time make the lean boot 7 times slower
		 * at 1 ns), and idle time jumps to the next timer; the RTC
		 * starts at a fixed date and follows that clock; RDRAND, RNDR
		 * and the device tree's seeds come from a seeded generator.
		 */
		ADD("-icount");
		ADD("shift=3,sleep=off");
		ADD("-rtc");
		ADD("base=2026-01-01T00:00:00,clock=vm");
		ADD("-seed");
		ADD("1");
	}
#undef ADD
	if (rc)
		return err_set(err, E2BIG, "qemu: the command line is too long");
	argv[argc] = NULL;
	return 0;
}

/* In the child: the two descriptors at their numbers, nothing else open, then QEMU. */
static void child_exec(pid_t parent, int mem_fd, int gdb_fd, int con_fd, char **argv)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(QEMU_EXEC_FAILED);
	/* Out of the way first, so that none lands on another's number. */
	int m = fcntl(mem_fd, F_DUPFD, 100), g = fcntl(gdb_fd, F_DUPFD, 100);
	int c = con_fd >= 0 ? fcntl(con_fd, F_DUPFD, 100) : -1;

	if (m < 0 || g < 0 || dup2(m, QEMU_FD_MEM) < 0 || dup2(g, QEMU_FD_GDB) < 0 ||
	    (con_fd >= 0 && (c < 0 || dup2(c, QEMU_FD_CON) < 0)))
		_exit(QEMU_EXEC_FAILED);
	closefrom(con_fd >= 0 ? QEMU_FD_CON + 1 : QEMU_FD_GDB + 1);
	/* QEMU's own messages go to vmmtrace's stderr; its stdin is nothing. */
	int null = open("/dev/null", O_RDONLY);

	if (null < 0 || dup2(null, 0) < 0)
		_exit(QEMU_EXEC_FAILED);
	if (null != 0)
		close(null);
	/* Nothing of vmmtrace's signal set-up carries over (a caller may block SIGINT for its signalfd). */
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	execvp(argv[0], argv);
	_exit(QEMU_EXEC_FAILED);
}

int qemu_start(struct qemu *q, const struct qemu_config *cfg, struct errbuf *err)
{
	char store[8192], *argv[QEMU_MAX_ARGS + 1];
	int sv[2] = { -1, -1 }, rc;
	pid_t parent = getpid();

	memset(q, 0, offsetof(struct qemu, gdb));
	q->pid = -1;
	q->mem_fd = -1;
	q->gdb.fd = -1;
	q->reaped = 0;
	if ((rc = qemu_build_args(cfg, QEMU_FD_MEM, QEMU_FD_GDB, store, sizeof(store), argv, err)))
		return rc;
	q->mem_fd = memfd_create("vmmtrace-guest-ram", MFD_CLOEXEC);
	if (q->mem_fd < 0)
		return err_set(err, errno, "qemu: memfd for %llu MiB of guest RAM: %s",
			       (unsigned long long)(cfg->mem_size >> 20), strerror(errno));
	if (ftruncate(q->mem_fd, (off_t)cfg->mem_size)) {
		rc = err_set(err, errno, "qemu: guest RAM of %llu MiB: %s",
			     (unsigned long long)(cfg->mem_size >> 20), strerror(errno));
		goto fail;
	}
	q->ram = mmap(NULL, cfg->mem_size, PROT_READ | PROT_WRITE, MAP_SHARED, q->mem_fd, 0);
	if (q->ram == MAP_FAILED) {
		q->ram = NULL;
		rc = err_set(err, errno, "qemu: mapping guest RAM: %s", strerror(errno));
		goto fail;
	}
	q->ram_size = cfg->mem_size;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		rc = err_set(err, errno, "qemu: socketpair: %s", strerror(errno));
		goto fail;
	}
	q->pid = fork();
	if (q->pid < 0) {
		rc = err_set(err, errno, "qemu: fork: %s", strerror(errno));
		goto fail;
	}
	if (!q->pid)
		child_exec(parent, q->mem_fd, sv[1], cfg->console_path ? -1 : cfg->console_fd, argv);
	close(sv[1]);
	sv[1] = -1;
	rc = gdb_open(&q->gdb, sv[0], cfg->timeout_ms, err);
	sv[0] = -1;
	if (rc) {
		/* Most often QEMU did not start at all: say so rather than what the socket saw. */
		for (int i = 0; i < 100 && !qemu_reap(q); i++)
			usleep(10000);
		if (q->reaped && WIFEXITED(q->status) && WEXITSTATUS(q->status) == QEMU_EXEC_FAILED)
			rc = err_set(err, ENOENT, "qemu: cannot run %s", cfg->binary);
		else if (q->reaped)
			rc = err_set(err, EIO, "qemu: %s exited at start (status %d): see its message above",
				     cfg->binary, WIFEXITED(q->status) ? WEXITSTATUS(q->status) : 128 + WTERMSIG(q->status));
		goto fail;
	}
	return 0;
fail:
	if (sv[0] >= 0)
		close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	qemu_stop(q);
	return rc;
}

int qemu_dump_dtb(const struct qemu_config *cfg, void **dtb, size_t *len, struct errbuf *err)
{
	char path[] = "/tmp/vmmtrace-dtb.XXXXXX", machine[256], smp[16], mem[32];
	char *argv[] = { (char *)cfg->binary, "-M", machine, "-smp", smp, "-m", mem, "-display", "none",
			 "-nodefaults", "-no-user-config", cfg->cpu ? "-cpu" : NULL, (char *)cfg->cpu, NULL };
	int fd = mkstemp(path), status = 0, rc;
	uint8_t *data = NULL;
	FILE *msgs = NULL;
	pid_t pid;

	*dtb = NULL;
	if (fd < 0)
		return err_set(err, errno, "qemu: temporary file for the device tree: %s", strerror(errno));
	close(fd);
	snprintf(machine, sizeof(machine), "%s,dumpdtb=%s", cfg->machine, path);
	snprintf(smp, sizeof(smp), "%u", cfg->ncpus);
	snprintf(mem, sizeof(mem), "%lluM", (unsigned long long)(cfg->mem_size >> 20));
	/* QEMU's messages (its "dtb dumped" note, or why it failed) are kept for the error. */
	msgs = tmpfile();
	if (!msgs) {
		rc = err_set(err, errno, "qemu: temporary file: %s", strerror(errno));
		goto out;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		rc = err_set(err, errno, "qemu: fork: %s", strerror(errno));
		goto out;
	}
	if (!pid) {
		int null = open("/dev/null", O_RDWR);

		if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(fileno(msgs), 2) < 0 ||
		    prctl(PR_SET_PDEATHSIG, SIGKILL))
			_exit(QEMU_EXEC_FAILED);
		closefrom(3);
		execvp(argv[0], argv);
		_exit(QEMU_EXEC_FAILED);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		char line[200] = "";

		rewind(msgs);
		if (fgets(line, sizeof(line), msgs))
			line[strcspn(line, "\n")] = 0;
		rc = WIFEXITED(status) && WEXITSTATUS(status) == QEMU_EXEC_FAILED
			     ? err_set(err, ENOENT, "qemu: cannot run %s", cfg->binary)
			     : err_set(err, EIO, "qemu: %s -M %s,dumpdtb= failed (status %d): %s", cfg->binary,
				       cfg->machine, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
				       line);
		goto out;
	}
	if ((rc = util_read_file(path, 16 << 20, &data, len))) {
		rc = err_set(err, -rc, "qemu: reading the device tree QEMU dumped: %s", strerror(-rc));
		goto out;
	}
	*dtb = data;
out:
	if (msgs)
		fclose(msgs);
	unlink(path);
	return rc;
}

int qemu_reap(struct qemu *q)
{
	pid_t r;

	if (q->reaped || q->pid <= 0)
		return q->reaped;
	do
		r = waitpid(q->pid, &q->status, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == q->pid)
		q->reaped = 1;
	return q->reaped;
}

void qemu_kill(struct qemu *q)
{
	if (q->pid > 0 && !qemu_reap(q)) {
		kill(q->pid, SIGKILL);
		while (waitpid(q->pid, &q->status, 0) < 0 && errno == EINTR)
			;
		q->reaped = 1;
	}
}

void qemu_stop(struct qemu *q)
{
	qemu_kill(q);
	q->pid = -1;
	gdb_close(&q->gdb);
	if (q->ram)
		munmap(q->ram, q->ram_size);
	q->ram = NULL;
	if (q->mem_fd >= 0)
		close(q->mem_fd);
	q->mem_fd = -1;
}

int qemu_version(const char *binary, unsigned *major, unsigned *minor, struct errbuf *err)
{
	char *argv[] = { (char *)binary, "--version", NULL }, out[256] = "";
	int fds[2], status = 0;
	ssize_t n, got = 0;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return err_set(err, errno, "qemu: pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return err_set(err, errno, "qemu: fork: %s", strerror(errno));
	}
	if (!pid) {
		int null = open("/dev/null", O_RDWR);

		if (null < 0 || dup2(null, 0) < 0 || dup2(fds[1], 1) < 0 || dup2(null, 2) < 0 ||
		    prctl(PR_SET_PDEATHSIG, SIGKILL))
			_exit(QEMU_EXEC_FAILED);
		closefrom(3);
		execvp(argv[0], argv);
		_exit(QEMU_EXEC_FAILED);
	}
	close(fds[1]);
	while ((size_t)got < sizeof(out) - 1 && ((n = read(fds[0], out + got, sizeof(out) - 1 - (size_t)got)) > 0 ||
						 (n < 0 && errno == EINTR)))
		got += n > 0 ? n : 0;
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return err_set(err, ENOENT, "qemu: cannot run %s --version", binary);
	/* "QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18)"; an error quotes the first line only. */
	out[strcspn(out, "\r\n")] = 0;
	if (sscanf(out, "QEMU emulator version %u.%u", major, minor) != 2)
		return err_set(err, EPROTO, "qemu: %s --version says no version: %.60s", binary, out);
	return 0;
}
