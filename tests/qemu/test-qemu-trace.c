// SPDX-License-Identifier: GPL-2.0
/*
 * vmmtrace boot --host qemu tracing the lean arm64, riscv64 and x86_64
 * kernels (vmm/qemu/host-qemu.c behind the tracer; x86_64's bzImage, its
 * stub in RAM kept with memmap=), against QEMU's own gdbstub on the same
 * kernel:
 *  - the reference: software breakpoints on start_kernel, setup_arch,
 *    trap_init, sched_init and rest_init, run to kernel_init: the order
 *    they are hit in;
 *  - `--trace` of those five `--stop-at kernel_init`: exactly those
 *    events, once each, in the reference's order, across the ftrace_init
 *    hand-off (three before it, two after), status 0, as swapper/0-0;
 *  - `--trace '*'` to kernel_init on 1 vCPU: the five appear in the same
 *    first-hit order among all the others, every event the summary counts
 *    is in the output, nothing dropped;
 *  - the same on 2 vCPUs, on to driver_init (after smp_init): CPU 1's
 *    events too, the rings (128 records each on arm64, in the init data's
 *    tail) drained at their doorbells, the stop waiting for no vCPU
 *    inside the stub; loongarch64 on to the guest's reboot instead, its
 *    initramfs (tests/guest/cinit.c) run to its end: status 0.
 * loongarch64's reference boots as vmmtrace's QEMU host boots it: QEMU 7.2
 * gives that kernel no command line or device tree, so the test writes
 * the same boot data through the same code (vmm/qemu/la64-boot.h) before
 * QEMU's breakpoints are set.
 *
 *   test-qemu-trace [ARCH...]     (default: arm64, riscv64 and x86_64; loongarch64 when named:
 *                                  tests/qemu/loongarch64-qemu.sh runs it)
 *   test-qemu-trace --reference ARCH...
 *                                 only the reference: a line "REFERENCE ARCH: f1 f2 f3 f4 f5",
 *                                 the five in their first-hit order, for a test of another host
 *                                 (tests/kvm-arm64/trace.sh: the arm64 KVM host)
 *
 * Debian's 6.12 kernels (x86_64-6.12, arm64-6.12, arm64-16k-6.12, when
 * named: tests/qemu/stock612.sh runs them) have no System.map: the
 * reference's addresses come from the file QTEST_SYSMAP names, which the
 * script writes from the booted guest's own /proc/kallsyms. They get the
 * five and `--trace '*'` to kernel_init on 1 vCPU, not the 2-vCPU boot.
 * The lean 6.12 kernels (lean-x86_64-6.12, lean-arm64-6.12,
 * lean-arm64-6.12-nopad, lean-arm64-6.12-gcc, lean-riscv64-6.12,
 * lean-riscv64-6.12-nostrict) get every check when named
 * (tests/qemu/lean612.sh).
 */
#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/qemu/qtest.h"
#include "tests/unit/check.h"
#include "vmm/image/image.h"
#include "vmm/qemu/la64-boot.h"
#include "vmm/qemu/qemu-vm.h"

#define NFUNCS 5
static const char *const funcs[NFUNCS] = { "start_kernel", "setup_arch", "trap_init", "sched_init", "rest_init" };

struct tarch {
	const char *name, *dir, *file;
	int image_arch;
	/* The 2-vCPU --trace '*' goes on to the reboot with this initramfs (in the cache) and command line. */
	const char *initrd, *cmdline;
	int named;			/* run only when named (its arch's own test script runs it) */
	int one_cpu;			/* no 2-vCPU boot (a stock kernel: its own script boots it on 2) */
};

static const struct tarch tarches[] = {
	{ "arm64", "lean-arm64", "Image", IMAGE_ARCH_ARM64, NULL, NULL, 0, 0 },
	/* No padding below _etext (scripts/prepare-tests.sh): the stub in _end's guard page (guest-qemu.sh runs it). */
	{ "arm64-nopad", "lean-arm64-nopad", "Image", IMAGE_ARCH_ARM64, NULL, NULL, 1, 0 },
	{ "riscv64", "lean-riscv64", "Image", IMAGE_ARCH_RISCV64, NULL, NULL, 0, 0 },
	/* Without STRICT_KERNEL_RWX: the stub past the image's end (guest-qemu.sh runs it). */
	{ "riscv64-nostrict", "lean-riscv64-nostrict", "Image", IMAGE_ARCH_RISCV64, NULL, NULL, 1, 0 },
	{ "x86_64", "lean", "bzImage", IMAGE_ARCH_X86_64, NULL, NULL, 0, 0 },
	{ "loongarch64", "lean-loongarch64", "vmlinux", IMAGE_ARCH_LOONGARCH64, "initramfs-loongarch64.cpio",
	  "-- 100 2", 1, 0 },
	/* The same with a device tree built in, which the kernel prefers (loongarch64-qemu.sh runs it). */
	{ "loongarch64-dtb", "lean-loongarch64-dtb", "vmlinux", IMAGE_ARCH_LOONGARCH64, "initramfs-loongarch64.cpio",
	  "-- 100 2", 1, 0 },
	/* Debian 12's security suite's 6.12 (scripts/fetch-debian-kernel.sh): IBT, call padding; call ops, 52-bit VAs. */
	{ "x86_64-6.12", ".", "stock612-bzImage", IMAGE_ARCH_X86_64, NULL, NULL, 1, 1 },
	{ "arm64-6.12", ".", "stock612-arm64-Image", IMAGE_ARCH_ARM64, NULL, NULL, 1, 1 },
	{ "arm64-16k-6.12", ".", "stock612-arm64-16k-Image", IMAGE_ARCH_ARM64, NULL, NULL, 1, 1 },
	/* Debian 12's own 6.1 (QTEST_SYSMAP: the package's System.map). */
	{ "arm64-6.1", ".", "stock-arm64-Image", IMAGE_ARCH_ARM64, NULL, NULL, 1, 1 },
	/* The lean 6.12 kernels (tests/qemu/lean612.sh): clang's IBT, kCFI and call padding; call ops and BTI. */
	{ "lean-x86_64-6.12", "lean-x86_64-6.12", "bzImage", IMAGE_ARCH_X86_64, NULL, NULL, 1, 0 },
	{ "lean-arm64-6.12", "lean-arm64-6.12", "Image", IMAGE_ARCH_ARM64, NULL, NULL, 1, 0 },
	/* No padding below _etext: the guard page the host maps in the tables 6.12 builds for itself. */
	{ "lean-arm64-6.12-nopad", "lean-arm64-6.12-nopad", "Image", IMAGE_ARCH_ARM64, NULL, NULL, 1, 0 },
	/* Built with gcc at -Os: WITH_ARGS without call ops, neither BTI nor pointer authentication. */
	{ "lean-arm64-6.12-gcc", "lean-arm64-6.12-gcc", "Image", IMAGE_ARCH_ARM64, NULL, NULL, 1, 0 },
	{ "lean-riscv64-6.12", "lean-riscv64-6.12", "Image", IMAGE_ARCH_RISCV64, NULL, NULL, 1, 0 },
	{ "lean-riscv64-6.12-nostrict", "lean-riscv64-6.12-nostrict", "Image", IMAGE_ARCH_RISCV64, NULL, NULL, 1, 0 },
};

/* Guest memory for the reference and the traced boots (vmmtrace boot's default). */
#define GUEST_MEM (512ULL << 20)

/* loongarch64: the boot data vmmtrace's host writes (la64-boot.h), for the kernel at path. */
static int la64_reference_boot(struct qvm *vm, const char *path, const char *cmdline, struct errbuf *err)
{
	struct la64_boot lb = { .mem = GUEST_MEM, .ncpus = 1, .cmdline = cmdline };
	struct kernel_image img;
	int rc = image_open(path, &img, err);

	if (rc)
		return rc;
	rc = la64_boot_plan(&lb, &img.elf, err);
	image_close(&img);
	return rc ? rc : la64_boot_write(vm, &lb, err);
}

static char vmmtrace[600], tmpdir[64];

/* The order QEMU's breakpoints see the functions in, up to kernel_init: indices into funcs. */
static int reference(const struct tarch *a, int *order, int *n, struct errbuf *err)
{
	const struct qvm_arch *qa = qvm_arch_for(a->image_arch);
	uint64_t addr[NFUNCS], stop = qtest_sysmap(a->dir, "kernel_init"), pc = 0;
	char kernel[640];
	int la64 = a->image_arch == IMAGE_ARCH_LOONGARCH64;
	struct qemu_config cfg = {
		.binary = qa->binary, .machine = qa->machine, .cpu = qa->cpu, .bios = qa->bios, .ncpus = 1,
		.mem_size = GUEST_MEM < qa->min_mem ? qa->min_mem : GUEST_MEM, .kernel = kernel,
		.cmdline = la64 ? NULL : qa->cmdline, .console_path = "/dev/null", .timeout_ms = 10000,
	};
	struct gdb_stop st;
	struct qvm vm;
	int rc;

	snprintf(kernel, sizeof(kernel), "%s/%s/%s", qtest_cache_dir(), a->dir, a->file);
	for (int i = 0; i < NFUNCS; i++)
		if (!(addr[i] = qtest_sysmap(a->dir, funcs[i])))
			return err_set(err, ENOENT, "%s is not in the System.map", funcs[i]);
	if (!stop || (rc = qvm_open(&vm, &cfg, qa, err)))
		return stop ? rc : err_set(err, ENOENT, "kernel_init is not in the System.map");
	if (la64 && (rc = la64_reference_boot(&vm, kernel, qa->cmdline, err))) {
		qvm_close(&vm);
		return rc;
	}
	*n = 0;
	for (int i = 0; !rc && i < NFUNCS; i++)
		rc = gdb_set_break(&vm.q.gdb, 0, addr[i], qa->bp_kind, err);
	if (!rc)
		rc = gdb_set_break(&vm.q.gdb, 0, stop, qa->bp_kind, err);
	while (!rc && !(rc = qtest_run_to(&vm.q, qa->pc_off, &pc, err)) && pc != stop && *n < 64) {
		for (int i = 0; i < NFUNCS; i++)
			if (pc == addr[i])
				order[(*n)++] = i;
		/* Past the breakpoint: lift it, one step, put it back. */
		rc = gdb_clear_break(&vm.q.gdb, 0, pc, qa->bp_kind, err);
		if (!rc)
			rc = gdb_send(&vm.q.gdb, "s", err);
		if (!rc)
			rc = gdb_wait_stop(&vm.q.gdb, 10000, &st, err);
		if (!rc)
			rc = gdb_set_break(&vm.q.gdb, 0, pc, qa->bp_kind, err);
	}
	qvm_close(&vm);
	return rc;
}

/* How long one boot may take (QEMU TCG boots these kernels in seconds): a hang fails, not blocks the suite. */
#define RUN_SECS 300

/* Runs vmmtrace boot with args; its exit status (143 or 124 when it ran past RUN_SECS: SIGTERM, then SIGKILL), or -1. */
static int run(const char *const *args, const char *out, const char *err)
{
	char *argv[32];
	int n = 0, status;
	pid_t pid, w;

	argv[n++] = vmmtrace;
	argv[n++] = (char *)"boot";
	for (; *args && n < 30; args++)
		argv[n++] = (char *)*args;
	argv[n] = NULL;
	pid = fork();
	if (pid == 0) {
		if (!freopen(out, "w", stdout) || !freopen(err, "w", stderr) || !freopen("/dev/null", "r", stdin))
			_exit(126);
		execv(vmmtrace, argv);
		_exit(127);
	}
	if (pid < 0)
		return -1;
	for (int tenths = 0; (w = waitpid(pid, &status, WNOHANG)) == 0; tenths++) {
		if (tenths == RUN_SECS * 10) {
			fprintf(stderr, "INFO: vmmtrace boot ran past %d s: stopped (SIGTERM, then SIGKILL)\n", RUN_SECS);
			kill(pid, SIGTERM);
		} else if (tenths == RUN_SECS * 10 + 100) {
			kill(pid, SIGKILL);
		}
		usleep(100000);
	}
	if (w != pid)
		return -1;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		return 124;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

struct events {
	size_t n;			/* event lines */
	int first[NFUNCS];		/* each function's first line, -1: none */
	int count[NFUNCS];
	int all_swapper;		/* the five's events are all swapper/0-0's */
	size_t cpu1;			/* events on CPU 1 */
};

/* The text output's event lines: "   comm-pid   [cpu] flags   time: func <-parent". */
static int parse(const char *path, struct events *ev)
{
	char line[1024];
	FILE *f = fopen(path, "r");

	memset(ev, 0, sizeof(*ev));
	ev->all_swapper = 1;
	for (int i = 0; i < NFUNCS; i++)
		ev->first[i] = -1;
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, ']'), name[256];

		if (line[0] == '#' || !p || !(p = strstr(p, ": ")) || sscanf(p + 2, "%255s", name) != 1)
			continue;
		for (int i = 0; i < NFUNCS; i++)
			if (!strcmp(name, funcs[i])) {
				if (ev->first[i] < 0)
					ev->first[i] = (int)ev->n;
				ev->count[i]++;
				ev->all_swapper &= strstr(line, " swapper/0-0 ") != NULL;
			}
		ev->cpu1 += strstr(line, " [001] ") != NULL;
		ev->n++;
	}
	fclose(f);
	return 0;
}

/* The summary's "N events (B before ftrace_init, A after)" and "D dropped". */
static int summary(const char *path, unsigned long long *events, unsigned long long *before, unsigned long long *dropped)
{
	char line[1024];
	FILE *f = fopen(path, "r");
	int found = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		const char *d = strstr(line, " doorbells; ");

		if (sscanf(line, "vmmtrace: trace: %llu events (%llu before", events, before) == 2 && d &&
		    sscanf(d, " doorbells; %llu dropped", dropped) == 1)
			found = 1;
	}
	fclose(f);
	return found;
}

/* Whether the file at path holds text. */
static int grep(const char *path, const char *text)
{
	char line[1024];
	FILE *f = fopen(path, "r");
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, text) != NULL;
	if (f)
		fclose(f);
	return found;
}

/* Whether the functions' first hits come in the reference's order. */
static int same_order(const struct events *ev, const int *order, int n)
{
	for (int i = 1; i < n; i++)
		if (ev->first[order[i - 1]] < 0 || ev->first[order[i]] < ev->first[order[i - 1]])
			return 0;
	return n == NFUNCS && ev->first[order[0]] >= 0;
}

static void test_arch(const struct tarch *a)
{
	char image[640], out[128], err[128], cpus[8];
	int order[64], n = 0, rc;
	struct errbuf e = { "" };
	unsigned long long events = 0, before = 0, dropped = 1;
	struct events ev;

	snprintf(image, sizeof(image), "%s/%s/%s", qtest_cache_dir(), a->dir, a->file);
	rc = reference(a, order, &n, &e);
	CHECK(!rc && n == NFUNCS, "%s: QEMU's breakpoints see each of the five once before kernel_init (%d hits; %s)",
	      a->name, n, e.msg);
	if (rc || n != NFUNCS)
		return;

	snprintf(out, sizeof(out), "%s/%s-five.txt", tmpdir, a->name);
	snprintf(err, sizeof(err), "%s/%s-five.err", tmpdir, a->name);
	const char *five[] = { "--host", "qemu", image, "--trace", funcs[0], "--trace", funcs[1], "--trace", funcs[2],
			       "--trace", funcs[3], "--trace", funcs[4], "--stop-at", "kernel_init", "-o", out, NULL };
	rc = run(five, "/dev/null", err);
	CHECK(rc == 0, "%s: the traced boot stops at kernel_init: status 0 (got %d)", a->name, rc);
	CHECK(!parse(out, &ev) && ev.n == NFUNCS, "%s: exactly %d events (got %zu)", a->name, NFUNCS, ev.n);
	int exact = 1;

	for (int i = 0; i < NFUNCS; i++)
		exact &= ev.count[i] == 1 && ev.first[order[i]] == i;
	CHECK(exact, "%s: each of the five once, in the order QEMU's breakpoints give", a->name);
	CHECK(ev.all_swapper, "%s: every event is swapper/0-0's", a->name);
	CHECK(summary(err, &events, &before, &dropped) && events == NFUNCS && before == 3 && dropped == 0,
	      "%s: the summary: 5 events, 3 before ftrace_init (start_kernel, setup_arch, trap_init), none dropped "
	      "(%llu, %llu, %llu)", a->name, events, before, dropped);
	for (int c = 1; c <= (a->one_cpu ? 1 : 2); c++) {
		/* With an initramfs: on to the guest's reboot, its /init run to its end. */
		int to_end = c == 2 && a->initrd;
		char initrd[640];

		snprintf(cpus, sizeof(cpus), "%d", c);
		snprintf(out, sizeof(out), "%s/%s-all%d.txt", tmpdir, a->name, c);
		snprintf(err, sizeof(err), "%s/%s-all%d.err", tmpdir, a->name, c);
		snprintf(initrd, sizeof(initrd), "%s/%s", qtest_cache_dir(), a->initrd ? a->initrd : "");
		const char *all[] = { "--host", "qemu", image, "--cpus", cpus, "--trace", "*", "-o", out, "--stop-at",
				      c == 1 ? "kernel_init" : "driver_init", NULL, NULL, NULL, NULL, NULL };
		if (to_end) {
			all[9] = "--initrd";
			all[10] = initrd;
			all[11] = "--cmdline";
			all[12] = a->cmdline;
		}
		rc = run(all, "/dev/null", err);
		CHECK(rc == 0, "%s, %d vCPU(s): --trace '*' to %s: status 0 (got %d)", a->name, c,
		      to_end ? "the guest's reboot" : all[10], rc);
		CHECK(!parse(out, &ev) && ev.n > 10000 && same_order(&ev, order, n),
		      "%s, %d vCPU(s): the five appear among %zu events in the reference's first-hit order", a->name, c, ev.n);
		CHECK(summary(err, &events, &before, &dropped) && events == ev.n && dropped == 0,
		      "%s, %d vCPU(s): every event counted is written, none dropped (%llu counted, %zu written, %llu dropped)",
		      a->name, c, events, ev.n, dropped);
		if (c == 2)
			CHECK(ev.cpu1 > 100 && !grep(err, "stayed inside the stub"),
			      "%s, 2 vCPUs: %zu events on CPU 1; the stop found no vCPU stuck in the stub", a->name, ev.cpu1);
	}
}

/* --reference: the five's first hits under QEMU's breakpoints, in order, on one line. */
static void print_reference(const struct tarch *a)
{
	int order[64], n = 0, seen[NFUNCS] = { 0 };
	struct errbuf e = { "" };

	if (reference(a, order, &n, &e)) {
		CHECK(0, "%s: QEMU's breakpoints up to kernel_init (%s)", a->name, e.msg);
		return;
	}
	printf("REFERENCE %s:", a->name);
	for (int i = 0; i < n; i++)
		if (!seen[order[i]]++)
			printf(" %s", funcs[order[i]]);
	printf("\n");
}

int main(int argc, char **argv)
{
	char *copy = strdup(argv[0]);
	int ref = argc > 1 && !strcmp(argv[1], "--reference");

	signal(SIGPIPE, SIG_IGN);
	snprintf(vmmtrace, sizeof(vmmtrace), "%.500s/../../vmmtrace", dirname(copy));
	free(copy);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/vt-qtrace-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		CHECK(0, "a temporary directory: %s", strerror(errno));
		return check_exit();
	}
	if (ref) {
		argv[1] = argv[0];
		argv++, argc--;
	}
	for (unsigned i = 0; i < sizeof(tarches) / sizeof(tarches[0]); i++) {
		char image[640];

		if (!qtest_wanted(argc, argv, tarches[i].name) || (argc == 1 && tarches[i].named))
			continue;
		if (ref) {
			print_reference(&tarches[i]);
			continue;
		}
		snprintf(image, sizeof(image), "%s/%s/%s", qtest_cache_dir(), tarches[i].dir, tarches[i].file);
		if (access(image, R_OK) || access(vmmtrace, X_OK)) {
			CHECK(0, "%s: the lean kernel (%s) and vmmtrace (%s) are there", tarches[i].name, image, vmmtrace);
			continue;
		}
		test_arch(&tarches[i]);
	}
	if (!getenv("VT_KEEP")) {	/* VT_KEEP=1 keeps the traces for a look */
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd))
			fprintf(stderr, "INFO: %s is left behind\n", tmpdir);
	}
	return check_exit();
}
