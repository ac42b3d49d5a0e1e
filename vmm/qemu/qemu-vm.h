/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The QEMU host's side of the boundary of docs/HOSTS.md: the operations
 * the tracer needs of whatever runs the guest, on a QEMU process
 * (vmm/qemu/qemu-proc.h) and its gdbstub in all-stop mode. Guest memory is read
 * through the shared RAM mapping; guest code is written only through the
 * gdbstub, by guest-physical address, so that QEMU drops its translated
 * blocks and no page table of any boot phase matters.
 *
 * One thread drives a qvm at a time (the gdbstub is one conversation).
 */
#ifndef VMM_QEMU_QHOST_H
#define VMM_QEMU_QHOST_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/qemu/qemu-proc.h"

#define QVM_MAX_CPUS 8

struct qvm_arch {
	uint64_t ram_gpa;		/* guest-physical address of RAM's first byte (the memfd's offset 0) */
	unsigned pc_off;		/* the PC's offset in the gdbstub's 'g' reply */
	unsigned bp_kind;		/* Z0/Z1 kind: x86 1, arm64 4, riscv64 2 */
	/* How QEMU runs a guest of the arch (qvm_arch_for). */
	const char *binary, *machine, *cpu, *bios;
	const char *cmdline;		/* the default kernel command line */
	int image_arch;			/* IMAGE_ARCH_*: how a 'g' reply reads (qvm_vcpu_dump) */
	/*
	 * RAM in two pieces (loongarch64's virt board): the first ram_low
	 * bytes at ram_gpa, the rest at ram_high (the memfd's offset ram_low
	 * on); ram_low 0: one piece.
	 */
	uint64_t ram_low, ram_high;
	uint64_t min_mem;		/* the least -m the machine takes (0: any) */
};

/* The QEMU host's settings for a guest of arch (IMAGE_ARCH_*), or NULL. */
const struct qvm_arch *qvm_arch_for(int image_arch);

struct qvm {
	struct qemu q;
	struct qvm_arch arch;
	unsigned ncpus;
	long thread[QVM_MAX_CPUS];	/* the gdbstub's thread id of each vCPU */
	int running;			/* resumed: a stop reply is pending */
	int phys_mode;			/* the gdbstub's memory accesses are guest-physical now */
	int exited;			/* QEMU has ended (the guest powered off or reset) */
	int has_xml;			/* its target.xml was read: P is answered */
	unsigned rv_csr_base;		/* riscv64: the gdbstub's number of CSR 0 */
	uint64_t rv_ceiling;		/* riscv64 --deterministic: the VS timer's lead, in ticks (0: none) */
	unsigned rv_resumes;		/* ... and how often the guest was resumed since */
};

/* A vCPU that stopped, and where. */
struct qvm_stop {
	unsigned cpu;
	uint64_t pc;
};

/* Starts QEMU (stopped before the first instruction) and learns its vCPUs. */
int qvm_open(struct qvm *h, const struct qemu_config *cfg, const struct qvm_arch *arch,
	       struct errbuf *err);
void qvm_close(struct qvm *h);

/*
 * riscv64 under -icount with sleep=off (--deterministic): before each
 * resume, vCPU 0's VS-level timer (vstimecmp) is armed ticks ahead of its
 * time, so that no stop lets QEMU move the guest's clock further
 * (qemu-vm.c says why). Fails in one line where the CPU has no Sstc and H.
 */
int qvm_clock_ceiling(struct qvm *h, uint64_t ticks, struct errbuf *err);

/*
 * Every vCPU runs / stops (the stop waits for QEMU to say so). A vCPU may
 * have hit a breakpoint just before the pause: then *st (if st) says
 * which and where, for the caller to handle as qvm_wait's; st->cpu is
 * QVM_MAX_CPUS when the stop was the pause's own.
 */
int qvm_resume(struct qvm *h, struct errbuf *err);
int qvm_pause(struct qvm *h, struct qvm_stop *st, struct errbuf *err);
/*
 * After qvm_resume: waits up to timeout_ms for a vCPU to stop (a
 * breakpoint); every vCPU is then stopped. -ETIMEDOUT: none did (still
 * running); -ECHILD: QEMU ended (h->exited).
 */
int qvm_wait(struct qvm *h, int timeout_ms, struct qvm_stop *st, struct errbuf *err);
/* The same, ended early (-ETIMEDOUT) when wake_fd turns readable (it is drained). */
int qvm_wait_wake(struct qvm *h, int timeout_ms, int wake_fd, struct qvm_stop *st, struct errbuf *err);
/*
 * While paused: lets only the vCPUs in mask (bit i: vCPU i) run for
 * run_ms, the others staying stopped, then stops them again. A vCPU of
 * the mask that hits a breakpoint meanwhile ends the run early (*st, if
 * st; st->cpu is QVM_MAX_CPUS when none did).
 */
int qvm_let_run(struct qvm *h, uint64_t mask, unsigned run_ms, struct qvm_stop *st,
		  struct errbuf *err);

/*
 * While paused: sets general register regno (the target's numbering) of a
 * vCPU to val, 8 bytes ("P"; its target.xml is read first, which QEMU 7.2
 * needs before it answers P).
 */
int qvm_set_reg(struct qvm *h, unsigned cpu, unsigned regno, uint64_t val, struct errbuf *err);

/* While paused: a vCPU's PC. */
int qvm_vcpu_pc(struct qvm *h, unsigned cpu, uint64_t *pc, struct errbuf *err);
/* While paused: the 8 bytes at offset off of a vCPU's 'g' reply (a general register). */
int qvm_vcpu_reg(struct qvm *h, unsigned cpu, unsigned off, uint64_t *val, struct errbuf *err);

/*
 * While paused: a vCPU's registers as lines of text (general registers,
 * PC, stack pointer, flags), *pc its PC, for a post-mortem.
 */
int qvm_vcpu_dump(struct qvm *h, unsigned cpu, char *buf, size_t len, uint64_t *pc, struct errbuf *err);

/* Guest RAM through the shared mapping (data only: rings, tables); NULL outside RAM. */
void *qvm_gpa_ptr(struct qvm *h, uint64_t gpa, uint64_t len);
/* While paused: guest code at a guest-physical address, through the gdbstub. */
int qvm_write_code(struct qvm *h, uint64_t gpa, const void *buf, size_t len, struct errbuf *err);
/* While paused: reads guest-virtual memory as vCPU cpu sees it. */
int qvm_read_virt_on(struct qvm *h, unsigned cpu, uint64_t va, void *buf, size_t len, struct errbuf *err);

/* While paused: execution breakpoints (hw: the CPU's debug registers; else QEMU's own list). */
int qvm_set_break(struct qvm *h, int hw, uint64_t va, struct errbuf *err);
int qvm_clear_break(struct qvm *h, int hw, uint64_t va, struct errbuf *err);
/* While paused at a breakpoint at st: runs that vCPU past it (one step with the breakpoint lifted). */
int qvm_step_over(struct qvm *h, int hw, const struct qvm_stop *st, struct errbuf *err);

#endif
