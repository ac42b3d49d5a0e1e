// SPDX-License-Identifier: GPL-2.0
/*
 * The device tree the QEMU host backend gives arm64 and riscv64 guests
 * (vmm/guest/devtree.c), from QEMU's own (-machine dumpdtb=):
 *  - the /reserved-memory node reads back with libfdt (reg, no-map), with
 *    the tree's RAM found in its /memory node;
 *  - bad input is refused with one line: not a device tree, a truncated
 *    one, a region outside RAM or wrapping around;
 *  - on a real boot (the lean kernel under QEMU TCG, to rest_init), a
 *    pattern written into the reserved region stays untouched, while the
 *    same region without the reservation is written by the kernel (its
 *    early allocations come from the top of RAM): the check can fail.
 *
 *   test-qemu-devtree [ARCH...]     (default: arm64 and riscv64, those with a kernel)
 */
#include <errno.h>
#include <libfdt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/check.h"
#include "vmm/guest/devtree.h"
#include "tests/qemu/qtest.h"

struct guest_arch {
	const char *name, *binary, *cpu, *bios, *dir, *console;
	unsigned pc_off, bp_kind;
};

static const struct guest_arch arches[] = {
	{ "arm64", "qemu-system-aarch64", "max", NULL, "lean-arm64", "console=ttyAMA0", 32 * 8, 4 },
	{ "riscv64", "qemu-system-riscv64", NULL, "default", "lean-riscv64", "console=ttyS0", 32 * 8, 2 },
};

#define MEM (512ULL << 20)
#define MiB (1ULL << 20)
#define PATTERN 0x5a

static long boot_and_count(const struct guest_arch *a, const char *dtb, uint64_t off, uint64_t len,
			   struct errbuf *err)
{
	char kernel[640], cmdline[128];
	uint64_t stop = qtest_sysmap(a->dir, "rest_init"), pc = 0;
	struct qemu q;
	struct gdb_stop st;
	uint8_t regs[4096];
	size_t n;
	long changed = 0;
	int rc;

	snprintf(kernel, sizeof(kernel), "%s/%s/Image", qtest_cache_dir(), a->dir);
	snprintf(cmdline, sizeof(cmdline), "%s nokaslr panic=-1", a->console);
	struct qemu_config cfg = {
		.binary = a->binary, .machine = "virt", .cpu = a->cpu, .bios = a->bios, .ncpus = 1,
		.mem_size = MEM, .kernel = kernel, .cmdline = cmdline, .dtb = dtb,
		.console_path = "/dev/null", .timeout_ms = 10000,
	};
	if (!stop)
		return err_set(err, ENOENT, "no rest_init in %s/%s/System.map", qtest_cache_dir(), a->dir);
	if ((rc = qemu_start(&q, &cfg, err)))
		return rc;
	memset(q.ram + off, PATTERN, len);
	rc = gdb_set_break(&q.gdb, 1, stop, a->bp_kind, err);
	if (!rc)
		rc = gdb_continue(&q.gdb, err);
	if (!rc)
		rc = gdb_wait_stop(&q.gdb, 60000, &st, err);
	if (!rc)
		rc = gdb_read_regs(&q.gdb, regs, sizeof(regs), &n, err);
	if (!rc && n >= a->pc_off + 8)
		memcpy(&pc, regs + a->pc_off, 8);
	if (!rc && pc != stop)
		rc = err_set(err, EIO, "stopped at %#llx, not rest_init", (unsigned long long)pc);
	for (uint64_t i = 0; !rc && i < len; i++)
		changed += q.ram[off + i] != PATTERN;
	qemu_stop(&q);
	return rc ? rc : changed;
}

static void test_arch(const struct guest_arch *a)
{
	char kernel[640], dtb_path[] = "/tmp/vt-devtree.XXXXXX";
	struct qemu_config cfg = { .binary = a->binary, .machine = "virt", .cpu = a->cpu, .ncpus = 1, .mem_size = MEM };
	struct errbuf err = { "" };
	uint64_t base = 0, size = 0, rbase;
	void *dtb = NULL, *out = NULL, *bad = NULL;
	size_t len = 0, out_len = 0, bad_len;
	int rc, fd;

	rc = qemu_dump_dtb(&cfg, &dtb, &len, &err);
	CHECK(!rc && len > 0, "%s: QEMU's device tree for virt (%zu bytes; %s)", a->name, len, err.msg);
	if (rc)
		return;
	rc = devtree_memory(dtb, &base, &size, &err);
	CHECK(!rc && size == MEM, "%s: its RAM: %#llx, %llu MiB (%s)", a->name, (unsigned long long)base,
	      (unsigned long long)(size >> 20), err.msg);
	/* Below the top 2 MiB, where QEMU may put the device tree itself. */
	rbase = base + size - 18 * MiB;
	rc = devtree_add_reserved(dtb, len, "vmmtrace", rbase, 16 * MiB, 1, &out, &out_len, &err);
	int rm = rc ? -1 : fdt_path_offset(out, "/reserved-memory");
	char child_path[96];

	snprintf(child_path, sizeof(child_path), "/reserved-memory/vmmtrace@%llx", (unsigned long long)rbase);
	int child = rc ? -1 : fdt_path_offset(out, child_path);
	int reg_len = 0;
	const fdt32_t *reg = child >= 0 ? fdt_getprop(out, child, "reg", &reg_len) : NULL;
	CHECK(!rc && rm >= 0 && child >= 0 && reg && reg_len == 16 &&
	      ((uint64_t)fdt32_to_cpu(reg[0]) << 32 | fdt32_to_cpu(reg[1])) == rbase &&
	      ((uint64_t)fdt32_to_cpu(reg[2]) << 32 | fdt32_to_cpu(reg[3])) == 16 * MiB &&
	      fdt_getprop(out, child, "no-map", NULL) && !fdt_check_full(out, out_len),
	      "%s: %s reads back: reg %#llx+16M, no-map (%s)", a->name, child_path, (unsigned long long)rbase, err.msg);

	/* Bad input: one line each, and a machine QEMU does not know. */
	struct qemu_config nomachine = cfg;
	void *none = NULL;
	size_t none_len;

	nomachine.machine = "no-such-board";
	rc = qemu_dump_dtb(&nomachine, &none, &none_len, &err);
	CHECK(rc == -EIO && !none && strstr(err.msg, "no-such-board"), "%s: an unknown machine: %s", a->name, err.msg);
	CHECK(devtree_add_reserved("not a device tree at all, just text", 36, "x", rbase, MiB, 1, &bad, &bad_len, &err) ==
		      -EINVAL && !bad, "%s: not a device tree: %s", a->name, err.msg);
	CHECK(devtree_add_reserved(dtb, fdt_totalsize(dtb) / 2, "x", rbase, MiB, 1, &bad, &bad_len, &err) == -EINVAL,
	      "%s: a truncated device tree: %s", a->name, err.msg);
	CHECK(devtree_add_reserved(dtb, len, "x", base + size - MiB, 2 * MiB, 1, &bad, &bad_len, &err) == -ERANGE,
	      "%s: a region past the end of RAM: %s", a->name, err.msg);
	CHECK(devtree_add_reserved(dtb, len, "x", ~0ULL - MiB, 2 * MiB, 1, &bad, &bad_len, &err) == -EINVAL,
	      "%s: a region that wraps: %s", a->name, err.msg);

	/* The guest keeps out of the reserved region; without it, it does not. */
	snprintf(kernel, sizeof(kernel), "%s/%s/Image", qtest_cache_dir(), a->dir);
	fd = mkstemp(dtb_path);
	if (access(kernel, R_OK) || fd < 0 || !out || write(fd, out, out_len) != (ssize_t)out_len) {
		CHECK(0, "%s: the lean kernel is in %s/%s (scripts/build-lean-kernel.sh %s) and the tree is written",
		      a->name, qtest_cache_dir(), a->dir, a->name);
	} else {
		err.msg[0] = 0;
		long with = boot_and_count(a, dtb_path, rbase - base, 16 * MiB, &err);

		CHECK(with == 0, "%s: booted to rest_init with the reservation, the region is untouched (%ld bytes changed; %s)",
		      a->name, with, err.msg);
		err.msg[0] = 0;
		long without = boot_and_count(a, NULL, rbase - base, 16 * MiB, &err);

		CHECK(without > 0, "%s: without it the kernel writes there (%ld bytes changed; %s)", a->name, without,
		      err.msg);
	}
	if (fd >= 0) {
		close(fd);
		unlink(dtb_path);
	}
	free(out);
	free(dtb);
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	for (unsigned i = 0; i < sizeof(arches) / sizeof(arches[0]); i++) {
		if (qtest_wanted(argc, argv, arches[i].name))
			test_arch(&arches[i]);
	}
	return check_exit();
}
