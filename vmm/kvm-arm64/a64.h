/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The arm64 host arch of vmmtrace's KVM VMM (issue 38): QEMU's virt board's
 * memory map, so that what a kernel engineer knows of that board holds.
 */
#ifndef VMM_KVM_ARM64_A64_H
#define VMM_KVM_ARM64_A64_H

#include <linux/kvm.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "vmm/guest/a64-guard.h"
#include "vmm/kvm/vm.h"
#include "vmm/util/error.h"

struct vm;
struct vcpu;

#define A64_GICD		0x08000000ULL	/* GICv3 distributor, 64 KiB */
#define A64_GICR		0x080a0000ULL	/* redistributors, 128 KiB each */
#define A64_GICR_EACH		0x20000ULL
#define A64_UART		0x09000000ULL	/* PL011, 4 KiB */
#define A64_UART_SPI		1		/* its interrupt: SPI 1 (INTID 33) */
#define A64_PVTIME		0x090a0000ULL	/* steal-time records, 64 bytes a vCPU, 64 KiB */
#define A64_PVTIME_SIZE		0x10000ULL
#define A64_RAM			0x40000000ULL

struct pl011;

/*
 * PSCI answered by the host (psci.c), when the boot records hypercalls on
 * a KVM with the SMCCC filter: each vCPU's power state and the CPU_ON
 * asked of it, under lock.
 */
enum a64_power { A64_OFF, A64_ON_PENDING, A64_ON };
struct a64_psci {
	int user;			/* KVM forwards PSCI here */
	pthread_mutex_t lock;
	enum a64_power power[VM_MAX_CPUS];
	uint64_t entry[VM_MAX_CPUS], context[VM_MAX_CPUS];
	atomic_int pending[VM_MAX_CPUS];	/* a CPU_ON for the vCPU's own thread to carry out */
};

struct a64_state {
	int gic_fd;
	struct pl011 *uart;
	uint8_t *pvtime;		/* steal time offered (KVM_CAP_STEAL_TIME): its records' memory; NULL: not */
	uint64_t entry, dtb;
	/* Tracing (stub.c, debug.c). */
	uint64_t area_pa, area_size;	/* the rings' region at the hand-over, reserved in the device tree */
	uint64_t doorbell_bp;		/* the stub's doorbell, a breakpoint of the host's own; 0: none */
	const uint8_t *stub_cfg;	/* the host's view of the stub's configuration block */
	uint64_t memstart_pa;		/* memstart_addr's image-relative address, 0: not in kallsyms */
	unsigned va_bits, page_shift;	/* the kernel's, from _stext and the Image header */
	unsigned hw_bps;		/* breakpoint registers KVM gives user space (KVM_CAP_GUEST_DEBUG_HW_BPS) */
	unsigned long doorbells;
	/* [_end, its 2 MiB block's end), reserved in the device tree: the guard page's stub and tables. */
	uint64_t past_end_pa, past_end_size;
	struct a64_guard guard;		/* a kernel without padding: the stub in _end's guard page */
	/* Each vCPU's breakpoints the tracer last asked for (the host's own added to them). */
	uint64_t bps[VM_MAX_CPUS][4];
	unsigned nbps[VM_MAX_CPUS];
	/* Each vCPU's KVM_ARM_VCPU_INIT (a PSCI CPU_ON resets it with the same) and MPIDR_EL1. */
	struct kvm_vcpu_init init[VM_MAX_CPUS];
	uint64_t mpidr[VM_MAX_CPUS];
	struct a64_psci psci;
};

/* An arm64 core register's id for KVM_{GET,SET}_ONE_REG. */
#define A64_CORE_REG(x) (KVM_REG_ARM64 | KVM_REG_SIZE_U64 | KVM_REG_ARM_CORE | KVM_REG_ARM_CORE_REG(x))
int a64_get_reg(struct vcpu *vcpu, uint64_t id, uint64_t *v);
int a64_set_reg(struct vcpu *vcpu, uint64_t id, uint64_t v, struct errbuf *err);
/*
 * Where va leads through the kernel's upper-range tables as some vCPU has
 * them (stub.c): 0 and *pa, -ENOENT when no vCPU has its MMU on with va
 * mapped. The vCPUs are paused, or it is the calling vCPU's own.
 */
int a64_translate_any(struct vm *vm, uint64_t va, uint64_t *pa);
/* Guest RAM as the page-table walks read it (a64_table_fn; opaque: the struct vm). */
uint64_t *a64_table(void *opaque, uint64_t pa, uint64_t bytes);

/* A hypercall KVM forwarded (KVM_EXIT_HYPERCALL): answered, reported; 0, or the VM asked to stop. */
int a64_smccc_exit(struct vcpu *vcpu);

/* The device tree for the VM (libfdt): *out malloc'ed, *len its size. */
int a64_fdt(const struct vm *vm, uint64_t initrd, uint64_t initrd_size, void **out, size_t *len,
	    struct errbuf *err);

#endif
