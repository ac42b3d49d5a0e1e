/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A virtual machine: the KVM fds, guest memory, vCPUs and devices, and the
 * one place that decides why and with which status the guest stopped.
 */
#ifndef VMM_VM_H
#define VMM_VM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/compat.h"
#include "vmm/error.h"
#include "vmm/pio.h"
#include "vmm/rtc.h"

#define VM_MAX_CPUS    8
#define VM_MAX_REGIONS 4

struct serial;
struct vcpu;

struct vm_config {
	const char *kernel_path;
	const char *initrd_path;
	const char *cmdline;		/* final guest command line */
	unsigned ncpus;
	uint64_t mem_size;
	int compat;			/* host-compatibility layer on (1) / off (0) */
	int console_in_fd;		/* -1: the guest gets no input */
	int console_out_fd;
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
	struct pio_bus pio;
	struct serial *serial;
	struct rtc rtc;
	struct compat_stats compat;
	/* Where the boot vCPU starts, and its boot argument (x86: zero page). */
	uint64_t boot_entry;
	uint64_t boot_arg;

	/* Stopping: first reason wins; every vCPU is then kicked out of KVM_RUN. */
	pthread_mutex_t stop_lock;
	atomic_int stopping;
	int exit_status;
	char exit_msg[512];
	/* Stop-the-world: see vm_pause(). */
	pthread_mutex_t pause_lock;
	pthread_cond_t pause_cond;
	pthread_mutex_t pauser_lock;	/* one pauser at a time */
	int pause_req;
	unsigned paused;
	unsigned live_vcpus;		/* vCPU threads still in their loop */

	/* Hooks of the tracer (NULL when not tracing). */
	struct tracer *tracer;

	/* Set by the console watcher when the guest printed a panic. */
	char panic_msg[256];
	atomic_int poweroff_seen;
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

/* Runs every vCPU until the guest stops; returns the exit status. */
int vm_run(struct vm *vm);

/*
 * Records why the guest stops (the first call wins) and kicks all vCPUs.
 * Safe from any thread.
 */
void vm_request_stop(struct vm *vm, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * Stop-the-world: on return no vCPU other than `self` (NULL from a non-vCPU
 * thread) is inside KVM_RUN or handling an exit, until vm_resume().
 * Returns the time it took in ns.
 */
uint64_t vm_pause(struct vm *vm, struct vcpu *self);
void vm_resume(struct vm *vm);
/* Called by each vCPU thread between exits. */
void vm_pause_point(struct vm *vm);
void vm_vcpu_exited(struct vm *vm);

/* A guest-initiated reset: reboot, or the end of a panic with panic=-1. */
void vm_request_reset(struct vm *vm, const char *source);
/*
 * An NMI into every running vCPU (like a machine's NMI button); each vCPU's
 * thread hands it to KVM before it next enters the guest. Returns how many
 * vCPUs were asked, once each has handed its NMI over (at most 1 s later).
 */
unsigned vm_inject_nmi(struct vm *vm);

#endif
