/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A virtual machine: the KVM fds, guest memory, vCPUs and devices, and the
 * one place that decides why and with which status the guest stopped.
 */
#ifndef VMM_VM_H
#define VMM_VM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/host/host-exits.h"
#include "vmm/kvm/compat.h"
#include "vmm/kvm/bus.h"
#include "vmm/util/error.h"

#define VM_MAX_CPUS    8
#define VM_MAX_REGIONS 4

struct console;
struct vcpu;
struct vm;

/*
 * What a layer above the VM core (the tracer) asks to be told. The core
 * calls these and knows nothing else of that layer; every hook may be NULL,
 * and with no hooks set a guest runs without any of that layer's costs.
 * Set them before the vCPUs start (vm_set_hooks); they stay until vm_run
 * returns.
 */
struct vm_hooks {
	void *opaque;
	/* A vCPU thread starts and ends its loop (e.g. liburcu registration). */
	void (*thread_enter)(void *opaque);
	void (*thread_exit)(void *opaque);
	/* Whether pc lies in code the layer placed in the guest (the stub). */
	bool (*pc_in_stub)(void *opaque, uint64_t pc);
	/*
	 * A stop vm_stop() was asked for: the layer may finish work in flight
	 * first, and must end with vm_request_stop(). self: the calling vCPU,
	 * or NULL on another thread.
	 */
	void (*stop)(void *opaque, struct vm *vm, struct vcpu *self,
		     enum vm_stop_reason reason, const char *msg);
	/* A vCPU stopped at one of the execution breakpoints the layer set. */
	void (*debug_exit)(void *opaque, struct vcpu *vcpu, uint64_t pc);
	/* Every exit the VMM handled (kvm:* events), on the vCPU's thread. */
	void (*exit)(void *opaque, struct vcpu *vcpu, const struct vm_exit_info *x);
	/*
	 * The stub's doorbell rang for ring (UINT32_MAX: none known), however
	 * the host arch hears it (x86_64: a port write); on the vCPU's thread.
	 */
	void (*doorbell)(void *opaque, uint32_t ring);
};

struct vm_config {
	const char *kernel_path;
	const char *initrd_path;
	const char *cmdline;		/* final guest command line */
	unsigned ncpus;
	uint64_t mem_size;
	int compat;			/* host-compatibility layer on (1) / off (0) */
	struct console *console;	/* the guest's console (vmm/host/console.h) */
	uint64_t stub_bytes;		/* the tracer's stub data (host_boot.stub_bytes), 0: untraced */
};

struct mem_region {
	uint64_t gpa;
	uint64_t size;
	uint8_t *hva;
};

struct vm {
	int kvm_fd;
	int vm_fd;
	struct vm_config cfg;
	struct mem_region regions[VM_MAX_REGIONS];
	unsigned nregions;
	uint8_t *ram;			/* one host mapping backing all RAM regions */
	uint64_t ram_size;
	struct vcpu *vcpus;
	unsigned ncpus;
	struct io_bus mmio;		/* the MMIO devices the host arch put on it */
	/* The host arch's own (vmm/kvm-<arch>/): its devices (x86_64: its port bus), its state. */
	void *arch_state;
	struct compat_stats compat;
	/* Where the boot vCPU starts, and its boot argument (x86: zero page). */
	uint64_t boot_entry;
	uint64_t boot_arg;

	/* Stopping: first reason wins; every vCPU is then kicked out of KVM_RUN. */
	pthread_mutex_t stop_lock;
	atomic_int stopping;
	enum vm_stop_reason stop_reason;
	int stop_signal;		/* with VM_STOP_SIGNAL */
	char stop_msg[512];
	/* Stop-the-world: see vm_pause(). */
	pthread_mutex_t pause_lock;
	pthread_cond_t pause_cond;
	pthread_mutex_t pauser_lock;	/* one pauser at a time */
	int pause_req;
	uint64_t run_mask;		/* while paused: vCPUs allowed to run (vm_let_run) */
	unsigned paused;
	unsigned live_vcpus;		/* vCPU threads still in their loop */

	struct vm_hooks hooks;
};

int vm_create(struct vm *vm, const struct vm_config *cfg, struct errbuf *err);
void vm_destroy(struct vm *vm);

/* Creates cfg.ncpus vCPUs; call after the kernel is loaded (boot state). */
int vm_create_vcpus(struct vm *vm, struct errbuf *err);

/* Adds guest RAM [gpa, gpa+size) backed by host memory at hva. */
int vm_add_region(struct vm *vm, uint64_t gpa, uint64_t size, uint8_t *hva,
		  struct errbuf *err);
/* Host pointer for len bytes of guest-physical memory, or NULL. */
void *vm_gpa_ptr(struct vm *vm, uint64_t gpa, uint64_t len);

/* Installs hooks (NULL: none); before the vCPUs start or after vm_run. */
void vm_set_hooks(struct vm *vm, const struct vm_hooks *hooks);

/* Runs every vCPU until the guest stops; returns why it stopped. */
enum vm_stop_reason vm_run(struct vm *vm);

/*
 * Records why the guest stops (the first call wins) and kicks all vCPUs.
 * Safe from any thread.
 */
void vm_request_stop(struct vm *vm, enum vm_stop_reason reason, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * A clean stop: the hooks' owner may finish work in flight first (the
 * tracer lets a vCPU caught inside its stub finish its record), then
 * vm_request_stop. self: the calling vCPU, or NULL on another thread.
 */
void vm_stop(struct vm *vm, struct vcpu *self, enum vm_stop_reason reason, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/*
 * Stop-the-world: on return no vCPU other than `self` (NULL from a non-vCPU
 * thread) is inside KVM_RUN or handling an exit, until vm_resume().
 * Returns the time it took in ns.
 */
uint64_t vm_pause(struct vm *vm, struct vcpu *self);
void vm_resume(struct vm *vm);
/*
 * While paused by the caller: lets only the vCPUs in mask (bit i: vCPU i;
 * never self) run until each has entered the guest once (at most
 * wait_ns), then a moment more, and pauses them again. The other vCPUs
 * stay paused throughout, so vCPUs that keep returning to some code (the
 * tracer's stub) cannot keep each other from leaving it.
 */
void vm_let_run(struct vm *vm, struct vcpu *self, uint64_t mask, uint64_t wait_ns);
/* Called by each vCPU thread between exits. */
void vm_pause_point(struct vm *vm, struct vcpu *vcpu);
void vm_vcpu_exited(struct vm *vm);

/* Tells the hooks' owner of an exit (no-op without an exit hook). */
static inline void vm_report_exit(struct vm *vm, struct vcpu *vcpu, const struct vm_exit_info *x)
{
	if (vm->hooks.exit)
		vm->hooks.exit(vm->hooks.opaque, vcpu, x);
}

/* A guest-initiated reset: reboot, or the end of a panic with panic=-1. */
void vm_request_reset(struct vm *vm, const char *source);
/*
 * An NMI into every running vCPU (like a machine's NMI button); each vCPU's
 * thread hands it to KVM before it next enters the guest. Returns how many
 * vCPUs were asked, once each has handed its NMI over (at most 1 s later).
 */
unsigned vm_inject_nmi(struct vm *vm);

#endif
