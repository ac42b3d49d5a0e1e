/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An extension of the host boundary (host.h) that a host may offer: the
 * exits of a guest run under hardware virtualization, each of which
 * reaches the host's VMM (vmmtrace's own KVM VMM offers it; QEMU under
 * TCG has no exits to report). The tracer asks whether a host has it
 * (host->exits), never which host it is. The kvm:* events are made of
 * these (vmm/output/vmevent.h).
 */
#ifndef VMM_HOST_EXITS_H
#define VMM_HOST_EXITS_H

#include <stdint.h>

#include "vmm/host/host.h"
#include "vmm/util/error.h"

/*
 * An exit, as the exit hook is told of it: VM_EXIT_ANY for every exit,
 * first, before it is handled; then, for port, MMIO and MSR accesses and
 * hypercalls, their details once answered (a read's value is what the
 * guest gets, a hypercall's result what it returns).
 */
enum vm_exit_kind { VM_EXIT_ANY = 1, VM_EXIT_PIO, VM_EXIT_MMIO, VM_EXIT_MSR, VM_EXIT_HYPERCALL };
struct vm_exit_info {
	enum vm_exit_kind kind;
	uint32_t reason;		/* the hypervisor's own exit code (KVM_EXIT_*), as kvm:exit prints it */
	enum vm_exit_kind detail;	/* VM_EXIT_ANY: the kind of the details that follow, 0 if none */
	int is_write;
	int failed;			/* msr: the access raises #GP in the guest */
	uint64_t addr;			/* port, GPA, MSR index or hypercall number (arm64: SMCCC function ID) */
	uint32_t size;			/* bytes per access (pio, mmio) */
	uint32_t count;			/* pio: accesses of a rep ins/outs */
	uint64_t value;			/* the first access's data (up to 8 bytes); a hypercall's first argument */
	uint64_t ret;			/* hypercall: what it returns (arm64: x0) */
	int smc;			/* hypercall: made with SMC, not HVC (arm64) */
};

/* One CPUID leaf as a vCPU was given it (x86; other arches have none). */
struct host_cpuid_leaf {
	uint32_t function, index, eax, ebx, ecx, edx;
};

/* What a host's exit hook reports (host_exit_ops.setup). */
enum { HOST_EV_EXIT = 1, HOST_EV_PIO = 2, HOST_EV_MMIO = 4, HOST_EV_MSR = 8, HOST_EV_CPUID = 16, HOST_EV_HYPERCALL = 32 };

struct host_exit_ops {
	/*
	 * *offered gets the HOST_EV_* kinds this host reports through the
	 * exit hook; msrs (n_msrs ranges of first and last index, n_msrs 0:
	 * none) are the MSRs whose accesses it should report, and hypercall
	 * whether hypercalls are wanted. Before the vCPUs run. What it cannot
	 * do it says in a warning, not an error, except for the HOST_EV_*
	 * kinds in quiet (asked for by a table that does without them);
	 * *why_no_hypercall (static text) says why, when hypercalls were
	 * wanted and are not offered.
	 */
	int (*setup)(struct host *h, const uint32_t (*msrs)[2], unsigned n_msrs, int hypercall, unsigned quiet,
		     unsigned *offered, const char **why_no_hypercall, struct errbuf *err);
	/* On the exiting vCPU's thread: its counter and PC at the exit. */
	int (*stamp)(struct host *h, unsigned cpu, uint64_t *ticks, uint64_t *pc);
	/* Inside a leaf function: the return address into its caller. */
	int (*caller)(struct host *h, unsigned cpu, uint64_t *ret);
	/* The CPUID table a vCPU was given, up to max leaves (NULL: none). */
	int (*cpuid)(struct host *h, unsigned cpu, struct host_cpuid_leaf *out, unsigned max, unsigned *n);
};

#endif
