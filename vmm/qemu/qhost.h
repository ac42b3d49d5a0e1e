/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The QEMU host's side of the boundary of docs/HOSTS.md: the operations
 * the tracer needs of whatever runs the guest, on a QEMU process
 * (vmm/qemu/qemu.h) and its gdbstub in all-stop mode. Guest memory is read
 * through the shared RAM mapping; guest code is written only through the
 * gdbstub, by guest-physical address, so that QEMU drops its translated
 * blocks and no page table of any boot phase matters.
 *
 * One thread drives a qhost at a time (the gdbstub is one conversation).
 */
#ifndef VMM_QEMU_QHOST_H
#define VMM_QEMU_QHOST_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/qemu/qemu.h"

#define QHOST_MAX_CPUS 8

struct qhost_arch {
	uint64_t ram_gpa;		/* guest-physical address of RAM's first byte (the memfd's offset 0) */
	unsigned pc_off;		/* the PC's offset in the gdbstub's 'g' reply */
	unsigned bp_kind;		/* Z0/Z1 kind: x86 1, arm64 4, riscv64 2 */
	/* How QEMU runs a guest of the arch (qhost_arch_for). */
	const char *binary, *machine, *cpu, *bios;
	const char *cmdline;		/* the default kernel command line */
	int image_arch;			/* IMAGE_ARCH_*: how a 'g' reply reads (qhost_vcpu_dump) */
};

/* The QEMU host's settings for a guest of arch (IMAGE_ARCH_*), or NULL. */
const struct qhost_arch *qhost_arch_for(int image_arch);

struct qhost {
	struct qemu q;
	struct qhost_arch arch;
	unsigned ncpus;
	long thread[QHOST_MAX_CPUS];	/* the gdbstub's thread id of each vCPU */
	int running;			/* resumed: a stop reply is pending */
	int phys_mode;			/* the gdbstub's memory accesses are guest-physical now */
	int exited;			/* QEMU has ended (the guest powered off or reset) */
};

/* A vCPU that stopped, and where. */
struct qhost_stop {
	unsigned cpu;
	uint64_t pc;
};

/* Starts QEMU (stopped before the first instruction) and learns its vCPUs. */
int qhost_open(struct qhost *h, const struct qemu_config *cfg, const struct qhost_arch *arch,
	       struct errbuf *err);
void qhost_close(struct qhost *h);

/*
 * Every vCPU runs / stops (the stop waits for QEMU to say so). A vCPU may
 * have hit a breakpoint just before the pause: then *st (if st) says
 * which and where, for the caller to handle as qhost_wait's; st->cpu is
 * QHOST_MAX_CPUS when the stop was the pause's own.
 */
int qhost_resume(struct qhost *h, struct errbuf *err);
int qhost_pause(struct qhost *h, struct qhost_stop *st, struct errbuf *err);
/*
 * After qhost_resume: waits up to timeout_ms for a vCPU to stop (a
 * breakpoint); every vCPU is then stopped. -ETIMEDOUT: none did (still
 * running); -ECHILD: QEMU ended (h->exited).
 */
int qhost_wait(struct qhost *h, int timeout_ms, struct qhost_stop *st, struct errbuf *err);
/* The same, ended early (-ETIMEDOUT) when wake_fd turns readable (it is drained). */
int qhost_wait_wake(struct qhost *h, int timeout_ms, int wake_fd, struct qhost_stop *st, struct errbuf *err);
/*
 * While paused: lets only the vCPUs in mask (bit i: vCPU i) run for
 * run_ms, the others staying stopped, then stops them again. A vCPU of
 * the mask that hits a breakpoint meanwhile ends the run early (*st, if
 * st; st->cpu is QHOST_MAX_CPUS when none did).
 */
int qhost_let_run(struct qhost *h, uint64_t mask, unsigned run_ms, struct qhost_stop *st,
		  struct errbuf *err);

/* While paused: a vCPU's PC. */
int qhost_vcpu_pc(struct qhost *h, unsigned cpu, uint64_t *pc, struct errbuf *err);
/* While paused: the 8 bytes at offset off of a vCPU's 'g' reply (a general register). */
int qhost_vcpu_reg(struct qhost *h, unsigned cpu, unsigned off, uint64_t *val, struct errbuf *err);

/*
 * While paused: a vCPU's registers as lines of text (general registers,
 * PC, stack pointer, flags), *pc its PC, for a post-mortem.
 */
int qhost_vcpu_dump(struct qhost *h, unsigned cpu, char *buf, size_t len, uint64_t *pc, struct errbuf *err);

/* Guest RAM through the shared mapping (data only: rings, tables); NULL outside RAM. */
void *qhost_gpa_ptr(struct qhost *h, uint64_t gpa, uint64_t len);
/* While paused: guest code at a guest-physical address, through the gdbstub. */
int qhost_write_code(struct qhost *h, uint64_t gpa, const void *buf, size_t len, struct errbuf *err);
/* While paused: reads guest-virtual memory as vCPU cpu sees it. */
int qhost_read_virt_on(struct qhost *h, unsigned cpu, uint64_t va, void *buf, size_t len, struct errbuf *err);

/* While paused: execution breakpoints (hw: the CPU's debug registers; else QEMU's own list). */
int qhost_set_break(struct qhost *h, int hw, uint64_t va, struct errbuf *err);
int qhost_clear_break(struct qhost *h, int hw, uint64_t va, struct errbuf *err);
/* While paused at a breakpoint at st: runs that vCPU past it (one step with the breakpoint lifted). */
int qhost_step_over(struct qhost *h, int hw, const struct qhost_stop *st, struct errbuf *err);

#endif
