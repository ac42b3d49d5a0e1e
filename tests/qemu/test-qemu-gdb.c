// SPDX-License-Identifier: GPL-2.0
/*
 * The QEMU host backend's process and gdbstub control (vmm/qemu/) on real
 * QEMU (TCG) and real lean kernels (scripts/build-lean-kernel.sh), one boot
 * per architecture:
 *  - QEMU starts stopped, with one gdbstub thread per vCPU;
 *  - a hardware breakpoint stops the guest exactly at start_kernel;
 *  - guest RAM is shared: the bytes gdb reads at start_kernel and at a
 *    second function stand in the memfd mapping at the same distance;
 *  - code written through the gdbstub takes effect at once (a branch to
 *    itself written at the stopped PC keeps the vCPU there), and once the
 *    original bytes are back the boot goes on to a later function;
 *  - QEMU is killed and reaped by qemu_stop, dies with the thread that
 *    started it (SIGKILL from PR_SET_PDEATHSIG), and a missing QEMU binary
 *    is one clear error.
 *
 *   test-qemu-gdb [ARCH...]      (default: x86_64, arm64 and riscv64)
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/check.h"
#include "tests/qemu/qtest.h"

struct guest_arch {
	const char *name, *binary, *machine, *cpu, *bios, *dir, *image, *console;
	unsigned pc_off;		/* the PC's offset in the 'g' reply */
	uint8_t spin[4];		/* a branch to itself */
	unsigned spin_len;
	unsigned bp_kind;		/* Z1's kind */
	const char *later;		/* a function the boot reaches after start_kernel */
};

static const struct guest_arch arches[] = {
	{ "x86_64", "qemu-system-x86_64", "pc", NULL, NULL, "lean", "bzImage", "console=ttyS0",
	  16 * 8, { 0xeb, 0xfe }, 2, 1, "rest_init" },
	{ "arm64", "qemu-system-aarch64", "virt", "max", NULL, "lean-arm64", "Image", "console=ttyAMA0",
	  32 * 8, { 0x00, 0x00, 0x00, 0x14 }, 4, 4, "rest_init" },
	{ "riscv64", "qemu-system-riscv64", "virt", NULL, "default", "lean-riscv64", "Image", "console=ttyS0",
	  32 * 8, { 0x01, 0xa0 }, 2, 2, "rest_init" },
};

static int read_pc(struct qemu *q, const struct guest_arch *a, uint64_t *pc, struct errbuf *err)
{
	uint8_t regs[4096];
	size_t len;
	int rc = gdb_read_regs(&q->gdb, regs, sizeof(regs), &len, err);

	if (!rc && len < a->pc_off + 8)
		rc = err_set(err, EPROTO, "'g' reply of %zu bytes has no PC", len);
	if (!rc)
		memcpy(pc, regs + a->pc_off, 8);
	return rc;
}

static const uint8_t *find_bytes(const uint8_t *hay, uint64_t len, const uint8_t *needle, size_t n)
{
	for (uint64_t i = 0; i + n <= len; i += 2)
		if (hay[i] == needle[0] && !memcmp(hay + i, needle, n))
			return hay + i;
	return NULL;
}

static void test_arch(const struct guest_arch *a)
{
	char kernel[640], console[] = "/tmp/vt-qemu-console.XXXXXX", cmdline[128];
	uint64_t sk = qtest_sysmap(a->dir, "start_kernel"), later = qtest_sysmap(a->dir, a->later), pc = 0;
	struct qemu q;
	struct gdb_stop st;
	struct errbuf err = { "" };
	uint8_t code[32], code2[32];
	long threads[GDB_MAX_THREADS];
	unsigned nthreads = 0;
	int fd = mkstemp(console), rc;

	snprintf(kernel, sizeof(kernel), "%s/%s/%s", qtest_cache_dir(), a->dir, a->image);
	snprintf(cmdline, sizeof(cmdline), "%s nokaslr panic=-1", a->console);
	if (access(kernel, R_OK) || !sk || !later || fd < 0) {
		CHECK(0, "%s: the lean kernel and its System.map are in %s/%s (scripts/build-lean-kernel.sh %s)",
		      a->name, qtest_cache_dir(), a->dir, a->name);
		return;
	}
	close(fd);
	struct qemu_config cfg = {
		.binary = a->binary, .machine = a->machine, .cpu = a->cpu, .bios = a->bios, .ncpus = 2,
		.mem_size = 512ULL << 20, .kernel = kernel, .cmdline = cmdline, .console_path = console,
		.timeout_ms = 10000,
	};
	rc = qemu_start(&q, &cfg, &err);
	CHECK(!rc, "%s: QEMU starts, stopped, its gdbstub answers (%s)", a->name, err.msg);
	if (rc)
		goto out;
	rc = gdb_threads(&q.gdb, threads, GDB_MAX_THREADS, &nthreads, &err);
	CHECK(!rc && nthreads == 2, "%s: one gdbstub thread per vCPU (%u; %s)", a->name, nthreads, err.msg);

	rc = gdb_set_break(&q.gdb, 1, sk, a->bp_kind, &err);
	if (!rc)
		rc = gdb_continue(&q.gdb, &err);
	if (!rc)
		rc = gdb_wait_stop(&q.gdb, 60000, &st, &err);
	/* The boot vCPU: riscv64's is whichever hart won OpenSBI's lottery, not always the first. */
	long boot = st.thread > 0 ? st.thread : 1;

	if (!rc)
		rc = read_pc(&q, a, &pc, &err);
	CHECK(!rc && st.kind == GDB_STOP_SIGNAL && pc == sk, "%s: stopped at start_kernel %#llx (pc %#llx; %s)",
	      a->name, (unsigned long long)sk, (unsigned long long)pc, err.msg);
	if (rc)
		goto out;

	/* Shared RAM: both functions' bytes where the mapping puts them. */
	rc = gdb_read_mem(&q.gdb, sk, code, sizeof(code), &err);
	if (!rc)
		rc = gdb_read_mem(&q.gdb, later, code2, sizeof(code2), &err);
	const uint8_t *at = rc ? NULL : find_bytes(q.ram, q.ram_size, code, sizeof(code));
	uint64_t off2 = at ? (uint64_t)(at - q.ram) + (later - sk) : 0;
	CHECK(at && off2 + sizeof(code2) <= q.ram_size && !memcmp(q.ram + off2, code2, sizeof(code2)),
	      "%s: guest RAM is shared: start_kernel's and %s's bytes at the same distance in the mapping (%s)",
	      a->name, a->later, err.msg);

	/* A code write through the gdbstub takes effect at once. */
	rc = gdb_write_mem(&q.gdb, sk, a->spin, a->spin_len, &err);
	if (!rc)
		rc = gdb_clear_break(&q.gdb, 1, sk, a->bp_kind, &err);
	/*
	 * The boot vCPU spins there, but a stop may catch it in firmware (riscv64:
	 * OpenSBI taking a machine-mode interrupt, where the gdbstub's virtual
	 * addresses are physical): then let it run a little more. The writes
	 * below go through its context, so they are made with it back in the
	 * kernel.
	 */
	pc = 0;
	for (int tries = 0; !rc && tries < 20 && pc != sk; tries++) {
		rc = gdb_continue(&q.gdb, &err);
		if (!rc) {
			usleep((tries ? 20 : 300) * 1000);
			rc = gdb_interrupt(&q.gdb, &st, &err);
		}
		if (!rc)
			rc = gdb_select_thread(&q.gdb, boot, &err);
		if (!rc)
			rc = read_pc(&q, a, &pc, &err);
	}
	CHECK(!rc && pc == sk, "%s: a branch to itself written through the gdbstub holds the boot vCPU (thread %ld) at start_kernel (pc %#llx; %s)",
	      a->name, boot, (unsigned long long)pc, err.msg);

	/* The original bytes back: the boot goes on. */
	rc = gdb_write_mem(&q.gdb, sk, code, a->spin_len, &err);
	if (!rc)
		rc = gdb_set_break(&q.gdb, 1, later, a->bp_kind, &err);
	if (!rc)
		rc = gdb_continue(&q.gdb, &err);
	if (!rc)
		rc = gdb_wait_stop(&q.gdb, 60000, &st, &err);
	if (!rc)
		rc = read_pc(&q, a, &pc, &err);
	CHECK(!rc && pc == later, "%s: with its bytes restored the boot reaches %s (pc %#llx; %s)", a->name,
	      a->later, (unsigned long long)pc, err.msg);
out:
	if (q.pid > 0 || q.ram) {
		pid_t pid = q.pid;

		qemu_stop(&q);
		CHECK(q.reaped && kill(pid, 0) && errno == ESRCH, "%s: qemu_stop kills and reaps QEMU", a->name);
	}
	unlink(console);
}

/* A missing binary: one clear error, nothing left running. */
static void test_missing_binary(void)
{
	struct qemu q;
	struct errbuf err = { "" };
	struct qemu_config cfg = {
		.binary = "/nonexistent/qemu-system-x86_64", .machine = "pc", .ncpus = 1,
		.mem_size = 64ULL << 20, .kernel = "/dev/null", .console_path = "/dev/null", .timeout_ms = 5000,
	};
	int rc = qemu_start(&q, &cfg, &err);

	CHECK(rc == -ENOENT && strstr(err.msg, "cannot run /nonexistent/qemu-system-x86_64"),
	      "a missing QEMU binary: %s", err.msg);
}

/* QEMU dies with the process that started it. */
static void test_parent_death(void)
{
	char kernel[640];
	int p[2], status = 0;
	pid_t child, qpid = -1, r = 0;

	snprintf(kernel, sizeof(kernel), "%s/lean/bzImage", qtest_cache_dir());
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) || pipe(p)) {
		CHECK(0, "subreaper and pipe");
		return;
	}
	child = fork();
	if (!child) {
		struct qemu q;
		struct errbuf err;
		struct qemu_config cfg = {
			.binary = "qemu-system-x86_64", .machine = "pc", .ncpus = 1, .mem_size = 128ULL << 20,
			.kernel = kernel, .console_path = "/dev/null", .timeout_ms = 10000,
		};

		if (qemu_start(&q, &cfg, &err))
			_exit(1);
		if (write(p[1], &q.pid, sizeof(q.pid)) != sizeof(q.pid))
			_exit(1);
		raise(SIGKILL);
	}
	close(p[1]);
	if (read(p[0], &qpid, sizeof(qpid)) != sizeof(qpid))
		qpid = -1;
	close(p[0]);
	waitpid(child, NULL, 0);
	for (int i = 0; qpid > 0 && i < 500 && !(r = waitpid(qpid, &status, WNOHANG)); i++)
		usleep(10000);
	CHECK(qpid > 0 && r == qpid && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	      "QEMU (pid %d) is killed when the process that started it dies", (int)qpid);
	if (qpid > 0 && r != qpid) {
		kill(qpid, SIGKILL);
		waitpid(qpid, NULL, 0);
	}
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	for (unsigned i = 0; i < sizeof(arches) / sizeof(arches[0]); i++) {
		if (qtest_wanted(argc, argv, arches[i].name))
			test_arch(&arches[i]);
	}
	test_missing_binary();
	test_parent_death();
	return check_exit();
}
