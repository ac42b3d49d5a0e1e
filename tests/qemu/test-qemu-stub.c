// SPDX-License-Identifier: GPL-2.0
/*
 * vmmtrace's arm64 and riscv64 stubs (guest-stub/<arch>/stub.S) on the lean
 * kernels under QEMU TCG, installed where docs/STUB-PLACEMENT.md puts them
 * (arm64: the .text tail, ring in [init_pg_end, _end); riscv64:
 * [_etext, __init_begin), ring in [_end, ALIGN(_end, 2M))), before the
 * tracer drives them: every function of .init.text whose slot is as
 * compiled is traced, from before the first traced call (arm64:
 * __primary_switched under init_pg_dir; riscv64: soc_early_init under
 * early_pg_dir) to ftrace_init. The ring holds 32 records, so it fills many
 * times: the stub stops at vt_stub_doorbell, where a hardware breakpoint
 * lets this test drain it with the tracer's own ring reader
 * (vmm/trace/ring.c, which validates every record) and go on. Checked:
 *  - every record is valid and committed, none dropped, none lost;
 *  - the calls the stub recorded are exactly the calls QEMU's gdbstub
 *    breakpoints count on the same functions in another boot of the same
 *    kernel, call for call, in the same order;
 *  - each record's caller is inside the kernel's text, its task is
 *    init_task (arm64: sp_el0; riscv64: tp), its pid 0 and comm "swapper"
 *    (offsets from the kernel's BTF), its CPU 0; timestamps never go back.
 *
 *   test-qemu-stub [ARCH...]     (default: arm64 and riscv64)
 */
#include <bpf/btf.h>
#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/slot.h"
#include "tests/qemu/qtest.h"
#include "tests/unit/check.h"
#include "vmm/trace/ring.h"
#include "vmm/util/util.h"

#define PC_OFF (32 * 8)	/* 'g' on both: 32 general registers, then pc */
#define NRECORDS 32

struct stub_arch {
	const char *name, *dir, *binary, *cpu, *bios, *console;
	enum slot_arch arch;
	unsigned bp_kind;
	const char *entry;		/* stopped there, the stub and slots are written */
	const char *image_start;	/* the symbol at the image's first byte */
	const char *stub_end;		/* the stub goes in the 8 KiB below it (its doorbell in the upper page) */
	const char *data_start, *data_end;
	uint64_t data_end_align;
	int cpu_in_task;		/* cpu number: thread_info.cpu (riscv64), else cpu_number per CPU */
	unsigned tif_need_resched;	/* TIF_NEED_RESCHED's bit */
	int resched_bit32;		/* arm64: preempt_count's bit 32 is the inverted need-resched */
};

static const struct stub_arch stub_arches[] = {
	{ "arm64", "lean-arm64", "qemu-system-aarch64", "max", NULL, "console=ttyAMA0 nokaslr", SLOT_ARCH_ARM64, 4,
	  "__primary_switched", "_text", "_etext", "init_pg_end", "_end", 0, 0, 1, 1 },
	{ "riscv64", "lean-riscv64", "qemu-system-riscv64", NULL, "default", "console=ttyS0", SLOT_ARCH_RISCV64, 2,
	  "soc_early_init", "_start", "__init_begin", "_end", "_end", 2 << 20, 1, 3, 0 },
};

static const struct stub_arch *A;	/* the one under test */
#define MAX_FUNCS 1024
#define MAX_EVENTS (1 << 20)

struct calls {
	uint64_t *func;
	size_t n;
};

static int push(struct calls *c, uint64_t func)
{
	if (c->n == MAX_EVENTS)
		return -ENOSPC;
	c->func[c->n++] = func;
	return 0;
}

struct sink {
	struct calls *calls;
	uint64_t init_task, text_lo, text_hi, last_tsc;
	unsigned bad;
	char first_bad[160];
	/* The context of the first event; every other must have the same (no PREEMPT_COUNT here). */
	int have_ctx;
	uint32_t preempt;
	uint16_t ctx_flags;
};

#define CTX_FLAGS (VT_REC_FLAG_CTX | VT_REC_FLAG_NEED_RESCHED | VT_REC_FLAG_PREEMPT_RESCHED | VT_REC_MIGR_MASK)

static int sink_event(void *opaque, const struct ring_event *ev)
{
	struct sink *s = opaque;
	const char *why = NULL;

	if (ev->task != s->init_task)
		why = "task is not init_task";
	else if (ev->pid != 0 || strcmp(ev->comm, "swapper"))
		why = "pid/comm not swapper's";
	else if (ev->cpu != 0)
		why = "cpu not 0";
	else if (ev->parent < s->text_lo || ev->parent >= s->text_hi)
		why = "caller outside the kernel's text";
	else if (ev->tsc < s->last_tsc)
		why = "time went back";
	else if (!(ev->flags & VT_REC_FLAG_CTX))
		why = "no preempt count";
	else if (s->have_ctx && (ev->preempt != s->preempt || (ev->flags & CTX_FLAGS) != s->ctx_flags))
		why = "context changed";
	if (!s->have_ctx) {
		s->have_ctx = 1;
		s->preempt = ev->preempt;
		s->ctx_flags = ev->flags & CTX_FLAGS;
	}
	if (why && !s->bad++)
		snprintf(s->first_bad, sizeof(s->first_bad), "%s (func %#llx parent %#llx task %#llx pid %d comm '%s')",
			 why, (unsigned long long)ev->func, (unsigned long long)ev->parent,
			 (unsigned long long)ev->task, ev->pid, ev->comm);
	s->last_tsc = ev->tsc;
	return push(s->calls, ev->func);
}

/* A member's byte offset in a struct of the kernel's BTF, or -1. */
static long member_offset(const struct btf *btf, const char *type, const char *member)
{
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, (unsigned)id) : NULL;
	const struct btf_member *m = t ? btf_members(t) : NULL;

	for (unsigned i = 0; t && i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), member))
			return (long)(btf_member_bit_offset(t, i) / 8);
	return -1;
}

struct task_offs {
	uint64_t pid, comm, cpu, preempt, flags, migr;
};

/* task_struct's members the stubs read, from the kernel's BTF (thread_info is task_struct's first). */
static int task_offsets(struct task_offs *o)
{
	char path[640];
	struct btf *btf;
	int rc;

	snprintf(path, sizeof(path), "%s/%s/vmlinux.btf", qtest_cache_dir(), A->dir);
	btf = btf__parse(path, NULL);
	if (!btf)
		return -errno;
	long p = member_offset(btf, "task_struct", "pid"), c = member_offset(btf, "task_struct", "comm");
	long ti = member_offset(btf, "task_struct", "thread_info"), tc = member_offset(btf, "thread_info", "cpu");
	long tp = member_offset(btf, "thread_info", "preempt_count"), tf = member_offset(btf, "thread_info", "flags");
	long m = member_offset(btf, "task_struct", "migration_disabled");

	/* arm64's preempt_count sits in an anonymous union: found by its own name there. */
	if (tp < 0) {
		int id = btf__find_by_name_kind(btf, "thread_info", BTF_KIND_STRUCT);
		const struct btf_type *t = id > 0 ? btf__type_by_id(btf, (unsigned)id) : NULL;
		const struct btf_member *mb = t ? btf_members(t) : NULL;

		for (unsigned i = 0; t && i < btf_vlen(t) && tp < 0; i++, mb++) {
			const struct btf_type *u = btf__type_by_id(btf, mb->type);

			if (!btf_is_union(u))
				continue;
			const struct btf_member *um = btf_members(u);

			for (unsigned j = 0; j < btf_vlen(u); j++, um++)
				if (!strcmp(btf__name_by_offset(btf, um->name_off), "preempt_count"))
					tp = (long)(btf_member_bit_offset(t, i) / 8);
		}
	}
	rc = p < 0 || c < 0 || ti < 0 || tp < 0 || tf < 0 || m < 0 ? -ENOENT : 0;
	o->pid = (uint64_t)p;
	o->comm = (uint64_t)c;
	o->cpu = ti >= 0 && tc >= 0 ? (uint64_t)(ti + tc) : UINT64_MAX;
	o->preempt = (uint64_t)(ti + tp);
	o->flags = (uint64_t)(ti + tf);
	o->migr = (uint64_t)m;
	btf__free(btf);
	return rc;
}

/* Guest RAM from the image's first byte (at text_off in the mapping), plus off. */
static const uint8_t *image_ram(const struct qemu *q, uint64_t text_off, uint64_t off)
{
	return q->ram + text_off + off;
}

static int step_over(struct qemu *q, int hw, uint64_t pc, struct errbuf *err)
{
	struct gdb_stop st;
	int rc = gdb_clear_break(&q->gdb, hw, pc, A->bp_kind, err);

	if (!rc)
		rc = gdb_send(&q->gdb, "s", err);
	if (!rc)
		rc = gdb_wait_stop(&q->gdb, 10000, &st, err);
	if (!rc)
		rc = gdb_set_break(&q->gdb, hw, pc, A->bp_kind, err);
	return rc;
}

static int start(struct qemu *q, struct errbuf *err)
{
	char kernel[640];
	struct qemu_config cfg = {
		.binary = A->binary, .machine = "virt", .cpu = A->cpu, .bios = A->bios, .ncpus = 1,
		.mem_size = 512ULL << 20, .kernel = kernel, .cmdline = A->console,
		.console_path = "/dev/null", .timeout_ms = 10000,
	};

	snprintf(kernel, sizeof(kernel), "%s/%s/Image", qtest_cache_dir(), A->dir);
	return qemu_start(q, &cfg, err);
}

/* The reference: every hit of a software breakpoint on each function, up to ftrace_init. */
static int reference(const uint64_t *funcs, size_t n, uint64_t stop, struct calls *c, struct errbuf *err)
{
	struct qemu q;
	uint64_t pc = 0;
	int rc = start(&q, err);

	for (size_t i = 0; !rc && i < n; i++)
		rc = gdb_set_break(&q.gdb, 0, funcs[i], A->bp_kind, err);
	if (!rc)
		rc = gdb_set_break(&q.gdb, 0, stop, A->bp_kind, err);
	while (!rc && !(rc = qtest_run_to(&q, PC_OFF, &pc, err)) && pc != stop)
		if (!(rc = push(c, pc)))
			rc = step_over(&q, 0, pc, err);
	qemu_stop(&q);
	return rc;
}

/* The functions of .init.text whose slots are as compiled, from the image in guest RAM. */
static size_t pick_functions(const struct qemu *q, uint64_t text_va, uint64_t text_pa_off, uint64_t *funcs)
{
	const struct slot_ops *ops = slot_ops_for(A->arch);
	uint64_t lo = qtest_sysmap(A->dir, "_sinittext"), hi = qtest_sysmap(A->dir, "_einittext");
	char path[640], line[256], sym[200], type;
	unsigned long long addr;
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/System.map", qtest_cache_dir(), A->dir);
	if (!lo || !hi || !(f = fopen(path, "r")))
		return 0;
	while (n < MAX_FUNCS && fgets(line, sizeof(line), f)) {
		struct slot_ctx ctx = { .slot_pc = 0, .our_target = SLOT_TARGET_NONE };

		if (sscanf(line, "%llx %c %199s", &addr, &type, sym) != 3 || (type != 't' && type != 'T') ||
		    addr < lo || addr >= hi || (n && funcs[n - 1] == addr))
			continue;
		ctx.slot_pc = addr;
		if (text_pa_off + (addr - text_va) + 8 <= q->ram_size &&
		    slot_classify(ops, &ctx, q->ram + text_pa_off + (addr - text_va), NULL) == SLOT_ORIGINAL)
			funcs[n++] = addr;
	}
	fclose(f);
	return n;
}

static void test_arch(const char *argv0)
{
	static uint64_t funcs[MAX_FUNCS], got_buf[MAX_EVENTS], want_buf[MAX_EVENTS];
	struct calls got = { got_buf, 0 }, want = { want_buf, 0 };
	const struct slot_ops *ops = slot_ops_for(A->arch);
	uint64_t text = qtest_sysmap(A->dir, A->image_start), stub_end = qtest_sysmap(A->dir, A->stub_end);
	uint64_t data = qtest_sysmap(A->dir, A->data_start), dend = qtest_sysmap(A->dir, A->data_end);
	uint64_t entry = qtest_sysmap(A->dir, A->entry), stop = qtest_sysmap(A->dir, "ftrace_init");
	uint64_t init_task = qtest_sysmap(A->dir, "init_task"), cpu_number = qtest_sysmap(A->dir, "cpu_number");
	struct task_offs to = { 0, 0, 0, 0, 0, 0 };
	uint64_t pc = 0, stub, text_off = 0, doorbells = 0;
	char stub_path[600], image_path[640];
	uint8_t image_head[64], *stub_img = NULL;
	struct errbuf err = { "" };
	struct slot_err serr = { "" };
	struct ring_view view;
	size_t stub_len = 0, nfuncs;
	struct qemu q;
	int rc;

	char *argv0_copy = strdup(argv0);

	snprintf(stub_path, sizeof(stub_path), "%.500s/../../guest-stub/%s/stub.bin", dirname(argv0_copy), A->name);
	free(argv0_copy);
	snprintf(image_path, sizeof(image_path), "%s/%s/Image", qtest_cache_dir(), A->dir);
	rc = util_read_file(stub_path, 1 << 20, &stub_img, &stub_len);
	CHECK(!rc && stub_len > VT_CFG_SIZE && stub_len <= 8192, "%s: the stub is built: %s (%zu bytes)", A->name,
	      stub_path, stub_len);
	if (rc || !text || !stub_end || !data || !dend || !entry || !stop || !init_task ||
	    (!A->cpu_in_task && !cpu_number) || task_offsets(&to) ||
	    (A->cpu_in_task && to.cpu == UINT64_MAX) || access(image_path, R_OK)) {
		CHECK(0, "%s: the lean kernel, its System.map and vmlinux.btf are in %s/%s (scripts/build-lean-kernel.sh %s)",
		      A->name, qtest_cache_dir(), A->dir, A->name);
		free(stub_img);
		return;
	}
	stub = stub_end - 8192;	/* the stub's page, then its doorbell's */
	data = (data + 127) & ~127ULL;
	if (A->data_end_align)
		dend = (dend + A->data_end_align - 1) & ~(A->data_end_align - 1);
	CHECK(dend - data >= VT_HDR_SIZE + NRECORDS * VT_REC_SIZE, "%s: the ring fits [%s, %s%s%s) (%llu bytes)",
	      A->name, A->data_start, A->data_end_align ? "ALIGN(" : "", A->data_end, A->data_end_align ? ", 2M)" : "",
	      (unsigned long long)(dend - data));

	/* Where QEMU put the image: its header (at _text) in guest RAM. */
	rc = start(&q, &err);
	if (!rc) {
		FILE *f = fopen(image_path, "rb");

		rc = f && fread(image_head, 1, sizeof(image_head), f) == sizeof(image_head) ? 0 : -EIO;
		if (f)
			fclose(f);
		for (text_off = 0; !rc && text_off + sizeof(image_head) <= q.ram_size; text_off += 4096)
			if (!memcmp(q.ram + text_off, image_head, sizeof(image_head)))
				break;
		if (text_off + sizeof(image_head) > q.ram_size)
			rc = err_set(&err, ENOENT, "the kernel image is not in guest RAM");
	}
	nfuncs = rc ? 0 : pick_functions(&q, text, text_off, funcs);
	CHECK(!rc && nfuncs >= 100, "%s: %zu functions of .init.text with compiled slots (%s)", A->name, nfuncs,
	      err.msg);
	qemu_stop(&q);
	if (rc || nfuncs < 100) {
		free(stub_img);
		return;
	}

	rc = reference(funcs, nfuncs, stop, &want, &err);
	CHECK(!rc && want.n > NRECORDS * 4, "%s: reference: QEMU's breakpoints count %zu calls of them before ftrace_init (%s)",
	      A->name, want.n, err.msg);

	/* The traced boot. */
	rc = start(&q, &err);
	if (!rc)
		rc = gdb_set_break(&q.gdb, 1, entry, A->bp_kind, &err);
	if (!rc)
		rc = qtest_run_to(&q, PC_OFF, &pc, &err);
	if (!rc)
		rc = gdb_clear_break(&q.gdb, 1, entry, A->bp_kind, &err);
	CHECK(!rc && pc == entry, "%s: stopped at %s (%s)", A->name, A->entry, err.msg);
	if (rc)
		goto out;
	struct vt_stub_config *cfg = (struct vt_stub_config *)stub_img;
	uint64_t doorbell = stub + cfg->doorbell_pc;

	cfg->magic = VT_STUB_MAGIC;
	cfg->cpu_off = A->cpu_in_task ? to.cpu : cpu_number;
	cfg->ring_hdrs = data;
	cfg->ring_recs = data + VT_HDR_SIZE;
	cfg->ring_bytes = NRECORDS * VT_REC_SIZE;
	cfg->ring_mask = NRECORDS - 1;
	cfg->limit = NRECORDS;
	cfg->nrings = 1;
	cfg->cur_off = 0;
	cfg->pc_off = to.preempt;
	cfg->tif_off = to.flags;
	cfg->tif_mask = 1ULL << A->tif_need_resched;
	cfg->migr_off = to.migr;
	cfg->stack_off = UINT64_MAX;
	cfg->pid_off = to.pid;
	cfg->comm_off = to.comm;
	cfg->doorbell_pc = doorbell;
	/* The ring is data: through the shared mapping. The stub is code: through the gdbstub. */
	uint8_t *hdr = q.ram + text_off + (data - text);

	memset(hdr, 0, VT_HDR_SIZE + NRECORDS * VT_REC_SIZE);
	ring_view_init(&view, 0, (struct vt_ring_hdr *)hdr, (struct vt_record *)(hdr + VT_HDR_SIZE), NRECORDS, 1);
	rc = gdb_write_mem(&q.gdb, stub, stub_img, stub_len, &err);
	for (size_t i = 0; !rc && i < nfuncs; i++) {
		struct slot_ctx ctx = { .slot_pc = funcs[i], .our_target = stub + VT_CFG_SIZE };
		uint8_t next[8];

		rc = slot_build(ops, SLOT_ENABLED, &ctx, next, &serr) ? -EINVAL : 0;
		if (!rc)
			rc = gdb_write_mem(&q.gdb, funcs[i], next, 8, &err);
	}
	CHECK(!rc, "%s: the stub and %zu slots written through the gdbstub (%s%s)", A->name, nfuncs, err.msg, serr.msg);
	struct sink s = { .calls = &got, .init_task = init_task, .text_lo = text, .text_hi = qtest_sysmap(A->dir, "_einittext") };
	int in_flight = 0;
	long drained;

	if (!rc)
		rc = gdb_set_break(&q.gdb, 1, doorbell, A->bp_kind, &err);
	if (!rc)
		rc = gdb_set_break(&q.gdb, 1, stop, A->bp_kind, &err);
	while (!rc && !(rc = qtest_run_to(&q, PC_OFF, &pc, &err)) && pc == doorbell) {
		doorbells++;
		drained = ring_drain(&view, sink_event, &s, 0, &in_flight);
		if (drained < 0)
			rc = (int)drained;
		else
			rc = step_over(&q, 1, doorbell, &err);
	}
	CHECK(!rc && pc == stop, "%s: the traced boot reaches ftrace_init after %llu doorbells (pc %#llx; %s)",
	      A->name, (unsigned long long)doorbells, (unsigned long long)pc, err.msg);
	drained = rc ? -1 : ring_drain(&view, sink_event, &s, 1, &in_flight);
	CHECK(drained >= 0 && !view.rejected && !view.lost && !view.unfinished && !view.stub_dropped && !view.broken,
	      "%s: every record valid, none lost, unfinished or dropped (rejected %llu lost %llu unfinished %llu dropped %llu)",
	      A->name, (unsigned long long)view.rejected, (unsigned long long)view.lost,
	      (unsigned long long)view.unfinished, (unsigned long long)view.stub_dropped);
	CHECK(!s.bad, "%s: each record's task, pid, comm, CPU, caller, time and context are right (%u bad; first: %s)", A->name,
	      s.bad, s.first_bad);
	/* What init_task's thread_info holds, read from guest memory, against what the stub recorded. */
	const uint8_t *it = image_ram(&q, text_off, init_task - text);
	uint64_t pc64 = 0, tif = 0;
	uint16_t migr = 0;

	memcpy(&pc64, it + to.preempt, 8);
	memcpy(&tif, it + to.flags, 8);
	memcpy(&migr, it + to.migr, 2);
	uint16_t want_flags = VT_REC_FLAG_CTX | (tif & (1ULL << A->tif_need_resched) ? VT_REC_FLAG_NEED_RESCHED : 0) |
			      (A->resched_bit32 && !(pc64 >> 32 & 1) ? VT_REC_FLAG_PREEMPT_RESCHED : 0) |
			      (uint16_t)((migr > 15 ? 15 : migr) << VT_REC_MIGR_SHIFT);

	CHECK(s.have_ctx && s.preempt == (uint32_t)pc64 && s.ctx_flags == want_flags,
	      "%s: the context is init_task's: preempt count %u, flags %#x (recorded %u, %#x)", A->name,
	      (uint32_t)pc64, want_flags, s.preempt, s.ctx_flags);
	size_t same = 0;

	while (same < got.n && same < want.n && got.func[same] == want.func[same])
		same++;
	CHECK(got.n == want.n && same == got.n,
	      "%s: the stub recorded the reference's %zu calls exactly, in order (got %zu; first difference at call %zu)",
	      A->name, want.n, got.n, same);
	ring_view_destroy(&view);
out:
	qemu_stop(&q);
	free(stub_img);
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	for (unsigned i = 0; i < sizeof(stub_arches) / sizeof(stub_arches[0]); i++) {
		if (qtest_wanted(argc, argv, stub_arches[i].name)) {
			A = &stub_arches[i];
			test_arch(argv[0]);
		}
	}
	return check_exit();
}
