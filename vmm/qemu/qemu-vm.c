// SPDX-License-Identifier: GPL-2.0
/*
 * The QEMU host's operations (vmm/qemu/qemu-vm.h) over the gdbstub in
 * all-stop mode: QEMU's thread ids are its vCPUs (cpu_index + 1), a stop
 * reply stops every vCPU, vCont resumes chosen ones while the others stay
 * stopped, and the QEMU-specific Qqemu.PhyMemMode packet switches memory
 * accesses to guest-physical addresses.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/image/image.h"
#include "vmm/qemu/qemu-vm.h"

/*
 * What each guest runs on: QEMU's machine and CPU, where RAM starts, where
 * the PC sits in a 'g' reply (x86_64: rax..r15, then rip; arm64: x0..x30,
 * sp, then pc; riscv64: x0..x31, then pc; loongarch64: r0..r31, orig_a0,
 * then pc), the breakpoint kind, and a command line with the console on
 * the machine's first UART and no randomisation (vmmtrace owns the device
 * tree and the command line: arm64 randomises its base from CPU entropy
 * unless told nokaslr). QEMU 7.2's loongarch64 virt board wants at least
 * 1 GiB and puts RAM's first 256 MiB at 0, the rest at 0x90000000
 * (hw/loongarch/virt.c); its kernel needs no firmware (docs/LOONGARCH64.md).
 */
static const struct qvm_arch qvm_arches[] = {
	[IMAGE_ARCH_X86_64] = { 0, 16 * 8, 1, "qemu-system-x86_64", "pc", NULL, NULL,
				"console=ttyS0 nokaslr panic=-1", IMAGE_ARCH_X86_64 },
	[IMAGE_ARCH_ARM64] = { 0x40000000, 32 * 8, 4, "qemu-system-aarch64", "virt", "max", NULL,
			       "console=ttyAMA0 nokaslr panic=-1", IMAGE_ARCH_ARM64 },
	[IMAGE_ARCH_RISCV64] = { 0x80000000, 32 * 8, 2, "qemu-system-riscv64", "virt", NULL, "default",
				 "console=ttyS0 panic=-1", IMAGE_ARCH_RISCV64 },
	[IMAGE_ARCH_LOONGARCH64] = { 0, 33 * 8, 4, "qemu-system-loongarch64", "virt", "la464", NULL,
				     "console=ttyS0,115200 panic=-1", IMAGE_ARCH_LOONGARCH64,
				     256ULL << 20, 0x90000000ULL, 1ULL << 30 },
};

const struct qvm_arch *qvm_arch_for(int image_arch)
{
	if (image_arch < 0 || image_arch >= (int)(sizeof(qvm_arches) / sizeof(qvm_arches[0])))
		return NULL;
	return qvm_arches[image_arch].binary ? &qvm_arches[image_arch] : NULL;
}

/* The gdbstub's thread id to a vCPU index, or -1. */
static int cpu_of(const struct qvm *h, long thread)
{
	for (unsigned i = 0; i < h->ncpus; i++)
		if (h->thread[i] == thread)
			return (int)i;
	return -1;
}

int qvm_open(struct qvm *h, const struct qemu_config *cfg, const struct qvm_arch *arch,
	       struct errbuf *err)
{
	long ids[GDB_MAX_THREADS];
	unsigned n = 0;
	int rc;

	memset(h, 0, offsetof(struct qvm, arch));
	h->arch = *arch;
	h->ncpus = 0;
	h->running = h->phys_mode = h->exited = h->has_xml = 0;
	h->rv_csr_base = 0;
	h->rv_ceiling = 0;
	h->rv_resumes = 0;
	if ((rc = qemu_start(&h->q, cfg, err)))
		return rc;
	if ((rc = gdb_threads(&h->q.gdb, ids, GDB_MAX_THREADS, &n, err)))
		goto fail;
	if (n != cfg->ncpus || n > QVM_MAX_CPUS) {
		rc = err_set(err, EPROTO, "qemu: %u gdbstub threads for %u vCPUs", n, cfg->ncpus);
		goto fail;
	}
	/* vCPU i is the i-th thread id in increasing order (cpu_index + 1). */
	for (unsigned i = 0; i < n; i++)
		for (unsigned j = i + 1; j < n; j++)
			if (ids[j] < ids[i]) {
				long t = ids[i];

				ids[i] = ids[j];
				ids[j] = t;
			}
	memcpy(h->thread, ids, n * sizeof(ids[0]));
	h->ncpus = n;
	return 0;
fail:
	qemu_stop(&h->q);
	return rc;
}

void qvm_close(struct qvm *h)
{
	qemu_stop(&h->q);
	h->running = 0;
}

/*
 * riscv64 under -icount with sleep=off (--deterministic). Once every vCPU
 * has stopped, at one of vmmtrace's breakpoints too, QEMU's main loop sees
 * them idle before it stops the VM and moves the guest's clock on to its
 * next timer, as for a CPU waiting in WFI (icount_start_warp_timer). Before
 * the kernel starts its own timer (time_init, after ftrace_init, where
 * vmmtrace first stops) the next one is a compare register of all ones
 * (OpenSBI's mtimecmp), which QEMU 7.2 places at INT64_MAX ns: the clock
 * jumps there and no timer fires again. So each resume arms vCPU 0's
 * VS-level timer (vstimecmp: Sstc with H; a kernel that runs no VMs never
 * enables its interrupt, and a pending VSTIP does not end a WFI) that
 * many ticks ahead: a stop moves the clock by that much at most. The
 * moves are the same in every boot, so two boots still trace alike. QEMU
 * numbers riscv64's CSRs from a base its riscv-csr.xml gives (sstatus is
 * CSR 0x100).
 */
#define RV_CSR_SSTATUS 0x100
#define RV_CSR_VSTIMECMP 0x24d
#define RV_CSR_TIME 0xc01
#define RV_XML_MAX (256 * 1024)

static int need_xml(struct qvm *h, struct errbuf *err);

static int rv_csr_xml_base(struct qvm *h, unsigned *base, struct errbuf *err)
{
	char cmd[96], *xml = NULL, *at;
	size_t len = 0;
	int rc = 0;

	for (;;) {
		size_t n;
		char kind, *grown;

		snprintf(cmd, sizeof(cmd), "qXfer:features:read:riscv-csr.xml:%zx,ffb", len);
		if ((rc = gdb_request(&h->q.gdb, cmd, err)))
			goto out;
		kind = h->q.gdb.pkt[0];
		n = h->q.gdb.pkt_len ? h->q.gdb.pkt_len - 1 : 0;
		if ((kind != 'm' && kind != 'l') || len + n > RV_XML_MAX) {
			rc = err_set(err, EOPNOTSUPP, "qemu: the gdbstub gives no riscv-csr.xml ('%.16s')", h->q.gdb.pkt);
			goto out;
		}
		if (!(grown = realloc(xml, len + n + 1))) {
			rc = err_set(err, ENOMEM, "out of memory for riscv-csr.xml");
			goto out;
		}
		xml = grown;
		memcpy(xml + len, h->q.gdb.pkt + 1, n);
		xml[len += n] = 0;
		if (kind == 'l' || !n)
			break;
	}
	at = strstr(xml, "name=\"sstatus\"");
	at = at ? strstr(at, "regnum=\"") : NULL;
	if (!at || sscanf(at, "regnum=\"%u\"", base) != 1 || *base < RV_CSR_SSTATUS)
		rc = err_set(err, EOPNOTSUPP, "qemu: riscv-csr.xml numbers no sstatus");
	else
		*base -= RV_CSR_SSTATUS;
out:
	free(xml);
	return rc;
}

int qvm_clock_ceiling(struct qvm *h, uint64_t ticks, struct errbuf *err)
{
	int rc;

	if (h->arch.image_arch != IMAGE_ARCH_RISCV64 || !ticks)
		return 0;
	if ((rc = need_xml(h, err)) || (rc = rv_csr_xml_base(h, &h->rv_csr_base, err)))
		return rc;
	h->rv_ceiling = ticks;
	return 0;
}

static int rv_csr(struct qvm *h, unsigned csr, uint64_t *val, struct errbuf *err)
{
	size_t n = 0;
	int rc = gdb_read_reg(&h->q.gdb, h->rv_csr_base + csr, (uint8_t *)val, sizeof(*val), &n, err);

	if (!rc && n != sizeof(*val))
		rc = err_set(err, EPROTO, "qemu: CSR %#x read back %zu bytes", csr, n);
	return rc;
}

/*
 * At the first stop (ftrace_init, before the kernel starts other harts)
 * the other harts wait in the firmware. OpenSBI 1.1 (Debian 12's) waits
 * with an IPI it never takes pending, so its WFI returns at once and the
 * hart never idles: when a vCPU stops at a breakpoint QEMU's round-robin
 * thread runs that hart on until the main loop stops the VM, for a time
 * the host picks, and two boots part. OpenSBI 1.5 idles there.
 */
#define RV_CSR_MIE 0x304
#define RV_CSR_MIP 0x344
#define RV_MSIP (1ULL << 3)

static int rv_check_waiting_harts(struct qvm *h, struct errbuf *err)
{
	for (unsigned i = 0; i < h->ncpus; i++) {
		uint64_t mip = 0, mie = 0;
		int rc;

		if ((rc = gdb_select_thread(&h->q.gdb, h->thread[i], err)) || (rc = rv_csr(h, RV_CSR_MIP, &mip, err)) ||
		    (rc = rv_csr(h, RV_CSR_MIE, &mie, err)))
			return rc;
		if (mip & mie & RV_MSIP)
			return err_set(err, EBUSY, "--deterministic on %u vCPUs: riscv64 hart %u waits in its firmware with "
				       "an IPI pending, so it never idles and each stop of the guest lets it run on for "
				       "a time the host picks: boots would part (OpenSBI 1.1 waits so, 1.5 idles: "
				       "--firmware)", h->ncpus, i);
	}
	return 0;
}

/*
 * Before a resume: vCPU 0's vstimecmp ticks past its time (see above). A
 * clock past 2^54 ticks (57 years of QEMU virt's 10 MHz) is one QEMU moved
 * to INT64_MAX ns (2^56.4 ticks there): nothing fires again, so say so and
 * end. QEMU's gdbstub takes a write to a CSR the CPU lacks and drops it:
 * the value is read back.
 */
static int rv_arm_ceiling(struct qvm *h, struct errbuf *err)
{
	uint64_t now = 0, at, back = 0;
	int rc;

	if (!h->rv_ceiling)
		return 0;
	if (h->rv_resumes++ == 1 && h->ncpus > 1 && (rc = rv_check_waiting_harts(h, err)))
		return rc;
	if ((rc = gdb_select_thread(&h->q.gdb, h->thread[0], err)) || (rc = rv_csr(h, RV_CSR_TIME, &now, err)))
		return rc;
	if (now >> 54)
		return err_set(err, ERANGE, "--deterministic: the riscv64 guest's clock jumped to %#llx ticks "
			       "(QEMU's instruction counting moved it to a timer at the end of time)",
			       (unsigned long long)now);
	at = now + h->rv_ceiling;
	if ((rc = gdb_write_reg(&h->q.gdb, h->rv_csr_base + RV_CSR_VSTIMECMP, &at, sizeof(at), err)))
		return rc;
	if (rv_csr(h, RV_CSR_VSTIMECMP, &back, err) || back != at)
		return err_set(err, EOPNOTSUPP, "--deterministic: this riscv64 CPU keeps no vstimecmp (Sstc and H), "
			       "which keeps vmmtrace's stops from moving its clock to the end of time");
	return 0;
}

int qvm_resume(struct qvm *h, struct errbuf *err)
{
	int rc;

	if (h->exited)
		return err_set(err, ECHILD, "qemu: the guest has ended");
	if (h->running)
		return 0;
	if ((rc = rv_arm_ceiling(h, err)))
		return rc;
	rc = gdb_continue(&h->q.gdb, err);
	h->running = !rc;
	return rc;
}

/* A stop reply in g->pkt turned into *st (the stopping vCPU and its PC). */
static int took_stop(struct qvm *h, const struct gdb_stop *gs, struct qvm_stop *st, struct errbuf *err)
{
	int cpu;

	h->running = 0;
	if (gs->kind != GDB_STOP_SIGNAL) {
		h->exited = 1;
		return err_set(err, ECHILD, "qemu: the guest ended (%s %u)",
			       gs->kind == GDB_STOP_EXITED ? "exit status" : "signal", gs->sig);
	}
	cpu = gs->thread ? cpu_of(h, gs->thread) : 0;
	if (cpu < 0)
		return err_set(err, EPROTO, "qemu: a stop on unknown thread %ld", gs->thread);
	if (!st)
		return 0;
	st->cpu = (unsigned)cpu;
	return qvm_vcpu_pc(h, st->cpu, &st->pc, err);
}

int qvm_pause(struct qvm *h, struct qvm_stop *st, struct errbuf *err)
{
	struct gdb_stop gs;
	int rc;

	if (st)
		st->cpu = QVM_MAX_CPUS;
	if (!h->running)
		return 0;
	/*
	 * A breakpoint's stop reply may be on its way already; then QEMU is
	 * stopped, ignores the interrupt, and that reply is the one read.
	 */
	if ((rc = gdb_interrupt(&h->q.gdb, &gs, err)))
		return rc == -ECONNRESET || rc == -EPIPE ? (h->exited = 1, h->running = 0, -ECHILD) : rc;
	rc = took_stop(h, &gs, st, err);
	/* SIGINT: our interrupt, not a breakpoint. */
	if (!rc && st && gs.sig == 2 && !gs.hwbreak && !gs.swbreak)
		st->cpu = QVM_MAX_CPUS;
	return rc;
}

int qvm_wait_wake(struct qvm *h, int timeout_ms, int wake_fd, struct qvm_stop *st, struct errbuf *err)
{
	struct gdb_stop gs;
	int rc;

	if (!h->running)
		return err_set(err, EINVAL, "qemu: waiting for a stop while stopped");
	rc = gdb_wait_stop_wake(&h->q.gdb, timeout_ms, wake_fd, &gs, err);
	if (rc == -ECONNRESET || rc == -EPIPE) {
		h->exited = 1;
		h->running = 0;
		return -ECHILD;
	}
	return rc ? rc : took_stop(h, &gs, st, err);
}

int qvm_wait(struct qvm *h, int timeout_ms, struct qvm_stop *st, struct errbuf *err)
{
	return qvm_wait_wake(h, timeout_ms, -1, st, err);
}

int qvm_let_run(struct qvm *h, uint64_t mask, unsigned run_ms, struct qvm_stop *st,
		  struct errbuf *err)
{
	char cmd[16 + QVM_MAX_CPUS * 24];
	size_t len = (size_t)snprintf(cmd, sizeof(cmd), "vCont");
	struct qvm_stop tmp;
	int rc;

	if (st)
		st->cpu = QVM_MAX_CPUS;
	if (h->running)
		return err_set(err, EINVAL, "qemu: let_run while running");
	for (unsigned i = 0; i < h->ncpus; i++)
		if (mask & (1ULL << i))
			len += (size_t)snprintf(cmd + len, sizeof(cmd) - len, ";c:%lx", h->thread[i]);
	if (!strcmp(cmd, "vCont"))
		return 0;
	if ((rc = rv_arm_ceiling(h, err)) || (rc = gdb_send(&h->q.gdb, cmd, err)))
		return rc;
	h->running = 1;
	rc = qvm_wait(h, (int)run_ms, st ? st : &tmp, err);
	if (rc == -ETIMEDOUT)
		rc = qvm_pause(h, st, err);
	return rc;
}

/* vCPU CPU's register file, as the gdbstub's 'g' reply gives it. */
static int read_regs(struct qvm *h, unsigned cpu, uint8_t *regs, size_t size, size_t *n, struct errbuf *err)
{
	int rc;

	if (cpu >= h->ncpus)
		return err_set(err, EINVAL, "qemu: no vCPU %u", cpu);
	if ((rc = gdb_select_thread(&h->q.gdb, h->thread[cpu], err)))
		return rc;
	return gdb_read_regs(&h->q.gdb, regs, size, n, err);
}

int qvm_vcpu_reg(struct qvm *h, unsigned cpu, unsigned off, uint64_t *val, struct errbuf *err)
{
	uint8_t regs[4096];
	size_t n;
	int rc;

	if ((rc = read_regs(h, cpu, regs, sizeof(regs), &n, err)))
		return rc;
	if (n < (size_t)off + 8)
		return err_set(err, EPROTO, "qemu: a 'g' reply of %zu bytes has no register at %u", n, off);
	memcpy(val, regs + off, 8);
	return 0;
}

static uint64_t reg64(const uint8_t *regs, unsigned i)
{
	uint64_t v;

	memcpy(&v, regs + i * 8, 8);
	return v;
}

/* Appends fmt to buf at *at, as far as it fits. */
static void dump_add(char *buf, size_t len, size_t *at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void dump_add(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*at >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	*at += n > 0 ? (size_t)n : 0;
}

/*
 * QEMU's 'g' layouts (its gdb-xml descriptions): x86_64 rax, rbx, rcx,
 * rdx, rsi, rdi, rbp, rsp, r8..r15, rip (8 bytes each), eflags and the
 * segment selectors (4 bytes each); arm64 x0..x30, sp, pc (8 bytes), then
 * cpsr (4); riscv64 x0..x31, then pc; loongarch64 r0..r31, orig_a0, pc, badv.
 */
static void dump_regs(int arch, const uint8_t *r, size_t n, char *buf, size_t len, uint64_t *pc)
{
	static const char *const x86[16] = { "RAX", "RBX", "RCX", "RDX", "RSI", "RDI", "RBP", "RSP",
					     "R08", "R09", "R10", "R11", "R12", "R13", "R14", "R15" };
	static const char *const rv[32] = { "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0",
					    "a1", "a2", "a3", "a4", "a5", "a6", "a7", "s2", "s3", "s4", "s5", "s6",
					    "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6" };
	static const char *const la[32] = { "zero", "ra", "tp", "sp", "a0", "a1", "a2", "a3", "a4", "a5", "a6",
					    "a7", "t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "r21", "fp",
					    "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8" };
	size_t at = 0;
	uint32_t w;

	buf[0] = 0;
	if (arch == IMAGE_ARCH_X86_64 && n >= 17 * 8 + 4 + 4 * 4) {
		*pc = reg64(r, 16);
		memcpy(&w, r + 17 * 8, 4);
		dump_add(buf, len, &at, "RIP: %016llx RSP: %016llx RFLAGS: %08x", (unsigned long long)*pc,
			 (unsigned long long)reg64(r, 7), w);
		memcpy(&w, r + 17 * 8 + 4, 4);
		dump_add(buf, len, &at, " CS: %04x", w);
		memcpy(&w, r + 17 * 8 + 8, 4);
		dump_add(buf, len, &at, " SS: %04x\n", w);
		for (unsigned i = 0; i < 16; i++)
			if (i != 7)
				dump_add(buf, len, &at, "%s: %016llx%s", x86[i], (unsigned long long)reg64(r, i),
					 (i == 2 || i == 5 || i == 9 || i == 12 || i == 15) ? "\n" : " ");
	} else if (arch == IMAGE_ARCH_ARM64 && n >= 33 * 8 + 4) {
		*pc = reg64(r, 32);
		memcpy(&w, r + 33 * 8, 4);
		dump_add(buf, len, &at, "PC: %016llx SP: %016llx PSTATE: %08x\n", (unsigned long long)*pc,
			 (unsigned long long)reg64(r, 31), w);
		for (unsigned i = 0; i < 31; i++)
			dump_add(buf, len, &at, "X%02u: %016llx%s", i, (unsigned long long)reg64(r, i),
				 i % 3 == 2 || i == 30 ? "\n" : " ");
	} else if (arch == IMAGE_ARCH_RISCV64 && n >= 33 * 8) {
		*pc = reg64(r, 32);
		dump_add(buf, len, &at, "PC: %016llx RA: %016llx SP: %016llx\n", (unsigned long long)*pc,
			 (unsigned long long)reg64(r, 1), (unsigned long long)reg64(r, 2));
		for (unsigned i = 3; i < 32; i++)
			dump_add(buf, len, &at, "%s: %016llx%s", rv[i], (unsigned long long)reg64(r, i),
				 (i - 3) % 3 == 2 || i == 31 ? "\n" : " ");
	} else if (arch == IMAGE_ARCH_LOONGARCH64 && n >= 34 * 8) {
		*pc = reg64(r, 33);
		dump_add(buf, len, &at, "PC: %016llx RA: %016llx SP: %016llx\n", (unsigned long long)*pc,
			 (unsigned long long)reg64(r, 1), (unsigned long long)reg64(r, 3));
		/* tp, then r4..r31: three a line. */
		for (unsigned i = 2, k = 1; i < 32; i += i == 2 ? 2 : 1, k++)
			dump_add(buf, len, &at, "%s: %016llx%s", la[i], (unsigned long long)reg64(r, i),
				 k % 3 == 0 || i == 31 ? "\n" : " ");
	} else {
		dump_add(buf, len, &at, "(a 'g' reply of %zu bytes: no registers known)\n", n);
	}
}

int qvm_vcpu_dump(struct qvm *h, unsigned cpu, char *buf, size_t len, uint64_t *pc, struct errbuf *err)
{
	uint8_t regs[4096];
	size_t n;
	int rc;

	*pc = 0;
	if ((rc = read_regs(h, cpu, regs, sizeof(regs), &n, err)))
		return rc;
	dump_regs(h->arch.image_arch, regs, n, buf, len, pc);
	return 0;
}

/* QEMU 7.2 answers p and P with an empty packet until target.xml was read (gdb_has_xml). */
static int need_xml(struct qvm *h, struct errbuf *err)
{
	int rc;

	if (h->has_xml)
		return 0;
	if ((rc = gdb_request(&h->q.gdb, "qXfer:features:read:target.xml:0,ffb", err)))
		return rc;
	if (h->q.gdb.pkt[0] != 'l' && h->q.gdb.pkt[0] != 'm')
		return err_set(err, EOPNOTSUPP, "qemu: the gdbstub gives no target.xml ('%.16s')", h->q.gdb.pkt);
	h->has_xml = 1;
	return 0;
}

int qvm_set_reg(struct qvm *h, unsigned cpu, unsigned regno, uint64_t val, struct errbuf *err)
{
	int rc;

	if (cpu >= h->ncpus)
		return err_set(err, EINVAL, "qemu: no vCPU %u", cpu);
	if (h->running)
		return err_set(err, EINVAL, "qemu: a register written while the guest runs");
	if ((rc = need_xml(h, err)) || (rc = gdb_select_thread(&h->q.gdb, h->thread[cpu], err)))
		return rc;
	return gdb_write_reg(&h->q.gdb, regno, &val, sizeof(val), err);
}

int qvm_vcpu_pc(struct qvm *h, unsigned cpu, uint64_t *pc, struct errbuf *err)
{
	return qvm_vcpu_reg(h, cpu, h->arch.pc_off, pc, err);
}

void *qvm_gpa_ptr(struct qvm *h, uint64_t gpa, uint64_t len)
{
	uint64_t off, low = h->arch.ram_low;

	if (gpa < h->arch.ram_gpa || len > h->q.ram_size)
		return NULL;
	off = gpa - h->arch.ram_gpa;
	if (low && off >= low) {
		/* Past the first piece: the second, at ram_high, or the hole between. */
		if (gpa < h->arch.ram_high)
			return NULL;
		off = low + (gpa - h->arch.ram_high);
		if (off < low)
			return NULL;
	} else if (low && len > low - off) {
		return NULL;	/* runs off the first piece into the hole */
	}
	if (off > h->q.ram_size - len)
		return NULL;
	return h->q.ram + off;
}

static int phys_mode(struct qvm *h, int on, struct errbuf *err)
{
	int rc;

	if (h->phys_mode == on)
		return 0;
	rc = gdb_request(&h->q.gdb, on ? "Qqemu.PhyMemMode:1" : "Qqemu.PhyMemMode:0", err);
	if (!rc && strcmp(h->q.gdb.pkt, "OK"))
		rc = err_set(err, EOPNOTSUPP, "qemu: the gdbstub has no physical memory mode ('%.16s')",
			     h->q.gdb.pkt);
	if (!rc)
		h->phys_mode = on;
	return rc;
}

int qvm_write_code(struct qvm *h, uint64_t gpa, const void *buf, size_t len, struct errbuf *err)
{
	int rc, rc2;

	if (h->running)
		return err_set(err, EINVAL, "qemu: code written while the guest runs");
	if (!qvm_gpa_ptr(h, gpa, len))
		return err_set(err, ERANGE, "qemu: code at %#llx+%zu is outside guest RAM",
			       (unsigned long long)gpa, len);
	if ((rc = phys_mode(h, 1, err)))
		return rc;
	rc = gdb_write_mem(&h->q.gdb, gpa, buf, len, err);
	/* Back to virtual addresses; the first failure is the one told. */
	rc2 = phys_mode(h, 0, rc ? NULL : err);
	return rc ? rc : rc2;
}

int qvm_read_virt_on(struct qvm *h, unsigned cpu, uint64_t va, void *buf, size_t len, struct errbuf *err)
{
	int rc = cpu < h->ncpus ? phys_mode(h, 0, err) : err_set(err, EINVAL, "qemu: no vCPU %u", cpu);

	if (!rc)
		rc = gdb_select_thread(&h->q.gdb, h->thread[cpu], err);
	return rc ? rc : gdb_read_mem(&h->q.gdb, va, buf, len, err);
}

int qvm_set_break(struct qvm *h, int hw, uint64_t va, struct errbuf *err)
{
	return gdb_set_break(&h->q.gdb, hw, va, h->arch.bp_kind, err);
}

int qvm_clear_break(struct qvm *h, int hw, uint64_t va, struct errbuf *err)
{
	return gdb_clear_break(&h->q.gdb, hw, va, h->arch.bp_kind, err);
}

int qvm_step_over(struct qvm *h, int hw, const struct qvm_stop *st, struct errbuf *err)
{
	char cmd[32];
	struct qvm_stop after;
	int rc;

	if (st->cpu >= h->ncpus)
		return err_set(err, EINVAL, "qemu: step over on no vCPU");
	if ((rc = qvm_clear_break(h, hw, st->pc, err)))
		return rc;
	snprintf(cmd, sizeof(cmd), "vCont;s:%lx", h->thread[st->cpu]);
	if ((rc = rv_arm_ceiling(h, err)) || (rc = gdb_send(&h->q.gdb, cmd, err)))
		return rc;
	h->running = 1;
	rc = qvm_wait(h, h->q.gdb.timeout_ms, &after, err);
	return rc ? rc : qvm_set_break(h, hw, st->pc, err);
}
