// SPDX-License-Identifier: GPL-2.0
/*
 * The stub placement of docs/STUB-PLACEMENT.md, proven on the lean arm64
 * and riscv64 kernels under QEMU TCG before the real stubs exist: a
 * minimal stub in padding of the kernel image that is executable in every
 * boot phase records each call's return point into image memory that is
 * writable in every phase, and slots are written through the gdbstub with
 * vmmtrace's own encoders (arch/), while the guest is stopped before its
 * first traced call under its early page tables.
 *  - arm64: stub at the end of the .text tail [.., _etext), data in
 *    [init_pg_end, _end); slots `mov x9, x30; bl stub`, written at
 *    __primary_switched (under init_pg_dir);
 *  - riscv64 (STRICT_KERNEL_RWX): stub at the end of [_etext, __init_begin),
 *    data in [_end, ALIGN(_end, 2M)); slots `auipc t0; jalr t0`, written at
 *    the first traced call, soc_early_init (under early_pg_dir).
 * Checked: the compiled slots classify as original, the written ones as
 * enabled towards the stub; every traced call, from before start_kernel
 * through setup_arch, which switches to swapper_pg_dir in paging_init, to
 * calls after the switch (arm64: paging_init itself and trap_init; riscv64:
 * unflatten_device_tree and trap_init), reaches the stub and returns into its function: the
 * recorded calls are exactly the first hits QEMU's gdbstub breakpoints give
 * on the same kernel, in the same order, and the boot reaches ftrace_init.
 *
 *   test-qemu-stub-placement [ARCH...]     (default: arm64 and riscv64)
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/slot.h"
#include "tests/unit/check.h"
#include "tests/qemu/qtest.h"

#define PC_OFF (32 * 8)		/* 'g' on both: 32 general registers (arm64: x0..x30, sp), then pc */
#define MAX_FUNCS 6
#define MAX_CALLS 1000
#define STUB_MAX_WORDS 24

struct placement {
	const char *name, *dir, *binary, *cpu, *bios, *console;
	enum slot_arch arch;
	unsigned bp_kind;
	const char *entry;			/* where the slots are written: before the first traced call */
	const char *stub_end, *data_start, *data_end;	/* symbols bounding the stub's and the data's areas */
	uint64_t data_end_align;		/* data_end is rounded up to this (0: as is) */
	const char *funcs[MAX_FUNCS];		/* traced, in the order the boot calls them */
	unsigned nfuncs;
	/* The stub: x9/ra and x30/t0 as the slot leaves them; its last word is the data pointer. */
	uint32_t code[STUB_MAX_WORDS];
	unsigned ncode;				/* words before the data pointer (8-aligned) */
};

static const struct placement placements[] = {
	{
		.name = "arm64", .dir = "lean-arm64", .binary = "qemu-system-aarch64", .cpu = "max",
		.console = "console=ttyAMA0 nokaslr", .arch = SLOT_ARCH_ARM64, .bp_kind = 4,
		.entry = "__primary_switched", .stub_end = "_etext", .data_start = "init_pg_end",
		.data_end = "_end",
		.funcs = { "early_fdt_map", "init_feature_override", "start_kernel", "setup_arch",
			   "paging_init", "trap_init" },
		.nfuncs = 6,
		/* x9: the caller's LR, x30: slot + 8 */
		.code = {
			0xa9bf07e0,	/* stp x0, x1, [sp, #-16]! */
			0x580001a0,	/* ldr x0, data_ptr */
			0xf9400001,	/* ldr x1, [x0]            count */
			0xf10fa03f,	/* cmp x1, #1000 */
			0x540000a2,	/* b.hs 1f */
			0x91000421,	/* add x1, x1, #1 */
			0xf9000001,	/* str x1, [x0] */
			0x8b010c01,	/* add x1, x0, x1, lsl #3 */
			0xf900003e,	/* str x30, [x1]           calls[count] = slot + 8 */
			0xa8c107e0,	/* 1: ldp x0, x1, [sp], #16 */
			0xaa1e03ea,	/* mov x10, x30 */
			0xaa0903fe,	/* mov x30, x9 */
			0xd65f0140,	/* ret x10 */
			0xd503201f,	/* nop */
		},
		.ncode = 14,
	},
	{
		.name = "riscv64", .dir = "lean-riscv64", .binary = "qemu-system-riscv64", .bios = "default",
		.console = "console=ttyS0", .arch = SLOT_ARCH_RISCV64, .bp_kind = 2,
		.entry = "soc_early_init", .stub_end = "__init_begin", .data_start = "_end",
		.data_end = "_end", .data_end_align = 2 << 20,
		/* paging_init has no slot here: arch/riscv/mm/init.c is built without ftrace. */
		.funcs = { "soc_early_init", "start_kernel", "setup_arch", "unflatten_device_tree", "trap_init" },
		.nfuncs = 5,
		/* t0: slot + 8 (ra is the caller's, untouched) */
		.code = {
			0xff010113,	/* addi sp, sp, -16 */
			0x00a13023,	/* sd a0, 0(sp) */
			0x00b13423,	/* sd a1, 8(sp) */
			0x00000517,	/* auipc a0, 0 */
			0x03c53503,	/* ld a0, 60(a0)           data_ptr */
			0x00053583,	/* ld a1, 0(a0)            count */
			0xc1858593,	/* addi a1, a1, -1000 */
			0x0005dc63,	/* bgez a1, 1f */
			0x3e958593,	/* addi a1, a1, 1001 */
			0x00b53023,	/* sd a1, 0(a0) */
			0x00359593,	/* slli a1, a1, 3 */
			0x00b505b3,	/* add a1, a0, a1 */
			0x0055b023,	/* sd t0, 0(a1)            calls[count] = slot + 8 */
			0x00013503,	/* 1: ld a0, 0(sp) */
			0x00813583,	/* ld a1, 8(sp) */
			0x01010113,	/* addi sp, sp, 16 */
			0x00028067,	/* jr t0 */
			0x00000013,	/* nop */
		},
		.ncode = 18,
	},
};

static int start(const struct placement *p, struct qemu *q, struct errbuf *err)
{
	char kernel[640];
	struct qemu_config cfg = {
		.binary = p->binary, .machine = "virt", .cpu = p->cpu, .bios = p->bios, .ncpus = 1,
		.mem_size = 512ULL << 20, .kernel = kernel, .cmdline = p->console, .console_path = "/dev/null",
		.timeout_ms = 10000,
	};

	snprintf(kernel, sizeof(kernel), "%s/%s/Image", qtest_cache_dir(), p->dir);
	return qemu_start(q, &cfg, err);
}

/* The reference: first hits of software breakpoints on the functions, up to the stop. */
static int reference(const struct placement *p, const uint64_t *addr, uint64_t stop, int *order, unsigned *n,
		     struct errbuf *err)
{
	struct qemu q;
	uint64_t pc = 0;
	int rc = start(p, &q, err);

	*n = 0;
	for (unsigned i = 0; !rc && i < p->nfuncs; i++)
		rc = gdb_set_break(&q.gdb, 0, addr[i], p->bp_kind, err);
	if (!rc)
		rc = gdb_set_break(&q.gdb, 0, stop, p->bp_kind, err);
	while (!rc && !(rc = qtest_run_to(&q, PC_OFF, &pc, err)) && pc != stop) {
		unsigned i;

		for (i = 0; i < p->nfuncs && addr[i] != pc; i++)
			;
		if (i == p->nfuncs || *n == p->nfuncs) {
			rc = err_set(err, EIO, "reference: stopped at %#llx", (unsigned long long)pc);
			break;
		}
		order[(*n)++] = (int)i;
		rc = gdb_clear_break(&q.gdb, 0, pc, p->bp_kind, err);
	}
	qemu_stop(&q);
	return rc;
}

/* Writes the stub and enables each slot, with the guest stopped at p->entry. */
static int install(const struct placement *p, struct qemu *q, const uint64_t *addr, uint64_t stub,
		   uint64_t data, struct errbuf *err)
{
	const struct slot_ops *ops = slot_ops_for(p->arch);
	uint8_t tail[4096], zero[4096] = { 0 }, code[STUB_MAX_WORDS * 4 + 8];
	struct slot_err serr = { "" };
	int rc = gdb_read_mem(&q->gdb, stub, tail, sizeof(tail), err);

	CHECK(!rc && !memcmp(tail, zero, sizeof(tail)), "%s: the 4 KiB below %s are unused (zeros) (%s)", p->name,
	      p->stub_end, err->msg);
	memcpy(code, p->code, p->ncode * 4);
	memcpy(code + p->ncode * 4, &data, 8);
	if (!rc)
		rc = gdb_write_mem(&q->gdb, stub, code, p->ncode * 4 + 8, err);
	if (!rc)
		rc = gdb_write_mem(&q->gdb, data, zero, 8, err);
	CHECK(!rc, "%s: the stub written at %#llx, its data at %#llx (%s)", p->name, (unsigned long long)stub,
	      (unsigned long long)data, err->msg);
	for (unsigned i = 0; !rc && i < p->nfuncs; i++) {
		struct slot_ctx ctx = { .slot_pc = addr[i], .our_target = stub };
		uint8_t cur[8], next[8];
		uint64_t target = 0;
		enum slot_state before, after = SLOT_UNKNOWN;

		if ((rc = gdb_read_mem(&q->gdb, addr[i], cur, 8, err)))
			break;
		before = slot_classify(ops, &ctx, cur, NULL);
		if (before != SLOT_ORIGINAL)
			rc = err_set(err, EINVAL, "not a compiled slot: left alone");
		if (!rc)
			rc = slot_build(ops, SLOT_ENABLED, &ctx, next, &serr);
		if (!rc)
			rc = gdb_write_mem(&q->gdb, addr[i], next, 8, err);
		if (!rc)
			rc = gdb_read_mem(&q->gdb, addr[i], cur, 8, err);
		if (!rc)
			after = slot_classify(ops, &ctx, cur, &target);
		CHECK(!rc && before == SLOT_ORIGINAL && after == SLOT_ENABLED && target == stub,
		      "%s: %s: slot %s -> %s, calling %#llx (%s%s)", p->name, p->funcs[i], slot_state_name(before),
		      slot_state_name(after), (unsigned long long)target, err->msg, serr.msg);
	}
	return rc;
}

static void test_placement(const struct placement *p)
{
	uint64_t addr[MAX_FUNCS], stub_end = qtest_sysmap(p->dir, p->stub_end), data = qtest_sysmap(p->dir, p->data_start);
	uint64_t dend = qtest_sysmap(p->dir, p->data_end), entry = qtest_sysmap(p->dir, p->entry);
	uint64_t stop = qtest_sysmap(p->dir, "ftrace_init"), stub, pc = 0, calls[MAX_CALLS + 1];
	struct errbuf err = { "" };
	int ref[MAX_FUNCS], bad = 0, rc;
	unsigned nref = 0;
	char kernel[640];
	struct qemu q;

	snprintf(kernel, sizeof(kernel), "%s/%s/Image", qtest_cache_dir(), p->dir);
	for (unsigned i = 0; i < p->nfuncs; i++)
		bad |= !(addr[i] = qtest_sysmap(p->dir, p->funcs[i]));
	if (bad || !stub_end || !data || !dend || !entry || !stop || access(kernel, R_OK)) {
		CHECK(0, "%s: the lean kernel and its System.map are in %s/%s (scripts/build-lean-kernel.sh %s)",
		      p->name, qtest_cache_dir(), p->dir, p->name);
		return;
	}
	data = (data + 7) & ~7ULL;
	if (p->data_end_align)
		dend = (dend + p->data_end_align - 1) & ~(p->data_end_align - 1);
	stub = stub_end - 4096;
	CHECK(dend - data >= 8 * (MAX_CALLS + 1), "%s: the data area [%s, %s%s) holds the calls (%llu bytes)",
	      p->name, p->data_start, p->data_end_align ? "ALIGN(" : "", p->data_end,
	      (unsigned long long)(dend - data));
	rc = reference(p, addr, stop, ref, &nref, &err);
	CHECK(!rc && nref == p->nfuncs, "%s: reference: QEMU's breakpoints hit all %u functions before ftrace_init (%u; %s)",
	      p->name, p->nfuncs, nref, err.msg);

	rc = start(p, &q, &err);
	if (!rc)
		rc = gdb_set_break(&q.gdb, 1, entry, p->bp_kind, &err);
	if (!rc)
		rc = qtest_run_to(&q, PC_OFF, &pc, &err);
	CHECK(!rc && pc == entry, "%s: stopped at %s, under the early page tables (pc %#llx; %s)", p->name,
	      p->entry, (unsigned long long)pc, err.msg);
	if (!rc)
		rc = gdb_clear_break(&q.gdb, 1, entry, p->bp_kind, &err);
	if (!rc)
		rc = install(p, &q, addr, stub, data, &err);
	if (!rc)
		rc = gdb_set_break(&q.gdb, 1, stop, p->bp_kind, &err);
	if (!rc)
		rc = qtest_run_to(&q, PC_OFF, &pc, &err);
	CHECK(!rc && pc == stop, "%s: with the slots enabled the boot reaches ftrace_init (pc %#llx; %s)", p->name,
	      (unsigned long long)pc, err.msg);
	if (!rc)
		rc = gdb_read_mem(&q.gdb, data, calls, sizeof(calls), &err);
	if (!rc) {
		char got[512] = "", want[512] = "";
		uint64_t n = calls[0];

		for (uint64_t k = 1; k <= n && k <= MAX_CALLS; k++) {
			unsigned i;

			for (i = 0; i < p->nfuncs && addr[i] + 8 != calls[k]; i++)
				;
			snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s ", i < p->nfuncs ? p->funcs[i] : "?");
		}
		for (unsigned k = 0; k < nref; k++)
			snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s ", p->funcs[ref[k]]);
		CHECK(n == p->nfuncs && !strcmp(got, want),
		      "%s: the stub saw every call, in the reference's order: %s(reference: %s)", p->name, got, want);
	}
	qemu_stop(&q);
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	for (unsigned i = 0; i < sizeof(placements) / sizeof(placements[0]); i++) {
		if (qtest_wanted(argc, argv, placements[i].name))
			test_placement(&placements[i]);
	}
	return check_exit();
}
