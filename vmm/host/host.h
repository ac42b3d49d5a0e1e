/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The host boundary (docs/HOSTS.md): what the tracer asks of whatever runs
 * the guest, and what it is told back. vmmtrace's own KVM VMM implements it
 * (vmm/kvm/host-kvm.c), QEMU another (vmm/qemu/); the tracer includes this
 * header and nothing of either.
 *
 * vCPUs are named by index (0 .. ncpus-1). `self` is the calling vCPU's
 * index when a hook's thread calls back in, HOST_NO_CPU elsewhere.
 */
#ifndef VMM_HOST_H
#define VMM_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "vmm/util/error.h"

#define HOST_MAX_CPUS 8
#define HOST_NO_CPU (-1)

struct elf_image;
struct kernel_image;
struct symtab;

/*
 * Why the guest stopped. The host says why; the command line turns it into
 * a process status (README, "Exit status").
 */
enum vm_stop_reason {
	VM_STOP_NONE,		/* still running */
	VM_STOP_GUEST_EXIT,	/* the guest rebooted or powered off */
	VM_STOP_REQUESTED,	/* a user asked: `vmmtrace stop`, --stop-at */
	VM_STOP_SIGNAL,		/* a signal to vmmtrace */
	VM_STOP_HOST_FAILURE,	/* the host refused something (its hypervisor, memory, threads) */
	VM_STOP_GUEST_PANIC,	/* the guest kernel panicked */
	VM_STOP_CPU_SHUTDOWN,	/* a vCPU shut down on a fault it could not take (x86: a triple fault) */
	VM_STOP_UNEMULATED,	/* the host cannot execute what the guest ran (KVM: an internal error) */
	VM_STOP_GUEST_HANG,	/* the guest made no progress for too long (--hang) */
};

struct vm_exit_info;
struct host_exit_ops;

/*
 * The stub's home, placed by the host: its code (the configuration block
 * at code_va, the entry after it) and its data (rings), each with the
 * host's view and the guest kernel's virtual address.
 */
struct stub_region {
	uint8_t *host;			/* memory the host mapped for it (NULL: in guest RAM) */
	uint64_t size;
	uint64_t gpa;
	uint8_t *code;			/* host view of the code: the config block, then the entry */
	uint64_t code_va;
	uint64_t code_gpa;		/* where the code is written (write_code) */
	size_t code_size;		/* the stub image's bytes */
	uint8_t *data;			/* host view of the ring area */
	uint64_t data_va;
	uint64_t data_size;
	int data_must_move;		/* the guest frees it after the hand-over: the rings move (rings_area) */
};

/*
 * What the tracer is told. Every hook may be NULL; they are set before the
 * vCPUs start and stay until the guest stopped.
 */
struct host_hooks {
	void *opaque;
	/* A thread that calls the hooks starts and ends (e.g. liburcu registration). */
	void (*thread_enter)(void *opaque);
	void (*thread_exit)(void *opaque);
	/* Whether pc lies in the stub. */
	bool (*pc_in_stub)(void *opaque, uint64_t pc);
	/*
	 * A stop was asked for (host_ops.stop): the tracer may finish work in
	 * flight, and must end with host_ops.request_stop.
	 */
	void (*stop)(void *opaque, int self, enum vm_stop_reason reason, const char *msg);
	/* vCPU cpu stopped at one of the execution breakpoints the tracer set. */
	void (*debug_exit)(void *opaque, unsigned cpu, uint64_t pc);
	/*
	 * The stub rang: its lossless ring `ring` (the guest's value, not yet
	 * checked) is full; it waits until this returns.
	 */
	void (*doorbell)(void *opaque, uint32_t ring);
	/* Every exit a host with VM exits handled (host->exits; kvm:* events), on the vCPU's thread. */
	void (*exit)(void *opaque, unsigned cpu, const struct vm_exit_info *x);
};

struct host;

struct host_ops {
	/*
	 * Stop-the-world: on return no vCPU but self runs or handles an exit,
	 * until resume, which the same thread calls. Returns the time it took
	 * in ns. Any thread; one pause at a time.
	 */
	uint64_t (*pause)(struct host *h, int self);
	void (*resume)(struct host *h);
	/*
	 * While paused: lets only the vCPUs in mask (bit i: vCPU i; never self)
	 * run a moment (at most wait_ns to start), then pauses them again.
	 */
	void (*let_run)(struct host *h, int self, uint64_t mask, uint64_t wait_ns);
	/* A paused vCPU's PC (or the calling vCPU's own). */
	int (*vcpu_pc)(struct host *h, unsigned cpu, uint64_t *pc);
	/* Up to 4 execution breakpoints (guest-virtual); n = 0 clears them. From the vCPU's hook or before it runs. */
	int (*set_breakpoints)(struct host *h, unsigned cpu, const uint64_t *va, unsigned n, struct errbuf *err);
	/* At a function's first instruction (a breakpoint there): its stack pointer and return address. */
	int (*entry_frame)(struct host *h, unsigned cpu, uint64_t *sp, uint64_t *ret);
	/* The guest's counter as the stub reads it (x86 TSC, arm64 CNTVCT, riscv64 time), and its rate. */
	int (*read_clock)(struct host *h, unsigned cpu, uint64_t *ticks);
	int (*clock_khz)(struct host *h, uint64_t *khz);
	/* A clean stop: the stop hook runs first (self as for pause). */
	void (*stop)(struct host *h, int self, enum vm_stop_reason reason, const char *msg);
	/* Records why the guest stops (the first reason wins). Any thread. */
	void (*request_stop)(struct host *h, enum vm_stop_reason reason, const char *msg);
	/* Whether a stop is under way. */
	bool (*stopping)(struct host *h);
	void (*set_hooks)(struct host *h, const struct host_hooks *hooks);

	/* Guest RAM for data (slots are read, rings read and written); NULL outside it. */
	void *(*gpa_ptr)(struct host *h, uint64_t gpa, uint64_t len);
	/*
	 * Guest code: len bytes at gpa, whose host view is hva (from gpa_ptr),
	 * while every other vCPU is paused. A host whose CPU caches translated
	 * code (QEMU TCG) must drop it. 0 or -errno.
	 */
	int (*write_code)(struct host *h, uint64_t gpa, uint8_t *hva, const void *bytes, size_t len);

	/*
	 * The stub for the guest's arch and data_size bytes of ring memory,
	 * where every slot reaches it in every boot phase; before the guest's
	 * first instruction. stub_free undoes it.
	 */
	int (*stub_install)(struct host *h, const struct elf_image *elf, const struct symtab *syms,
			    uint64_t data_size, struct stub_region *r, struct errbuf *err);
	void (*stub_free)(struct host *h, struct stub_region *r);
	/*
	 * More ring memory than stub_install could give, reachable by the stub
	 * from the hand-over on (ftrace_init: the guest's own page tables are
	 * up, every vCPU is paused and out of the stub): its host view, its
	 * guest VA and size. NULL, or -ENOENT: none.
	 */
	int (*rings_area)(struct host *h, uint8_t **host, uint64_t *va, uint64_t *size, struct errbuf *err);
	/* How many bytes of ring memory stub_install can give (NULL: as many as asked). */
	int (*stub_room)(struct host *h, const struct elf_image *elf, const struct symtab *syms,
			 uint64_t *bytes, struct errbuf *err);

	/* For `vmmtrace status` (NULL: nothing to say): a line per vCPU on f. Any thread. */
	void (*describe)(struct host *h, FILE *f);
	/* For `vmmtrace nmi` (NULL: the host cannot): an NMI to every vCPU; how many got one. */
	unsigned (*inject_nmi)(struct host *h);

	/*
	 * The guest's life, as the boot driver (vmm/cli/boot.c) leads it; a
	 * tracer, if any, is made between the host's creation and start.
	 * start: the vCPUs are ready and the console's input flows.
	 */
	int (*start)(struct host *h, struct errbuf *err);
	/*
	 * Runs the guest until it stops, on the calling thread; returns why,
	 * and *signo the signal for VM_STOP_SIGNAL. SIGINT, SIGTERM and
	 * SIGHUP stop it: the caller blocks them in every thread first.
	 */
	enum vm_stop_reason (*run)(struct host *h, int *signo);
	/* After run: why it stopped, one line. */
	const char *(*stop_msg)(struct host *h);
	/* After run: a vCPU's registers, as lines of text; *pc its PC (0: unknown). */
	void (*vcpu_registers)(struct host *h, unsigned cpu, char *buf, size_t len, uint64_t *pc);
	/* -v's closing account of the host itself (NULL: nothing to say). */
	void (*report)(struct host *h, FILE *f);
	/* After run, or instead of start: everything the host holds goes (the stub's memory too). */
	void (*destroy)(struct host *h);
};

/* A guest on some host; a backend embeds it and fills it in. */
struct host {
	const struct host_ops *ops;
	const char *name;		/* "KVM", "qemu": for messages */
	unsigned ncpus;
	/* The VM exits it reports (vmm/host/host-exits.h), or NULL: none (QEMU). */
	const struct host_exit_ops *exits;
	const char *kernel_path;
	pid_t child;			/* a process of its own the sandbox lets it end (QEMU's), 0: none */
};

/*
 * What the boot driver asks a host to boot. Each host prepares the guest
 * its own way (KVM: the kernel's segments, zero page, E820 map and MP
 * table; QEMU: its command line and device tree, the x86_64 stub's
 * region, running to the kernel's entry) and says with -v what it added
 * to the command line, and why. A host's create function fails with
 * -EINVAL, -ENOEXEC, -E2BIG or -EOPNOTSUPP for what was asked and cannot
 * be (exit status 2), with anything else when the host itself fails.
 */
struct host_boot {
	const char *kernel;		/* the path, for messages and QEMU's -kernel */
	const struct kernel_image *img;	/* the kernel, open */
	const char *initrd;		/* the initrd's path, or NULL */
	const uint8_t *initrd_data;	/* ... and its bytes, read and checked */
	size_t initrd_size;
	const char *cmdline_replace;	/* the whole command line, or NULL: the host's default */
	const char *cmdline_extra;	/* appended ("" or " ..."), as --cmdline gives it */
	unsigned ncpus;
	uint64_t mem;
	int compat;			/* the host's compatibility layer: HOST_AUTO, 0 off, 1 on */
	int fast_boot;			/* options that only shorten an emulated boot: HOST_AUTO, 0, 1 */
	int deterministic;		/* QEMU: instruction counting for the guest's clock (docs/TRACING.md) */
	const char *firmware;		/* QEMU, riscv64: the SBI firmware (-bios), or NULL: QEMU's own */
	int console_fd;			/* where the guest's console goes */
	int verbose;
	/* The tracer will place a stub, with this much data (stub_geom_region_bytes). */
	int traced;
	uint64_t stub_bytes;
};
#define HOST_AUTO (-1)

#endif
