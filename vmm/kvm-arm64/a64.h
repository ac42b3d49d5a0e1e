/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The arm64 host arch of vmmtrace's KVM VMM (issue 38): QEMU's virt board's
 * memory map, so that what a kernel engineer knows of that board holds.
 */
#ifndef VMM_KVM_ARM64_A64_H
#define VMM_KVM_ARM64_A64_H

#include <stdint.h>

#include "vmm/util/error.h"

struct vm;
struct vcpu;

#define A64_GICD		0x08000000ULL	/* GICv3 distributor, 64 KiB */
#define A64_GICR		0x080a0000ULL	/* redistributors, 128 KiB each */
#define A64_GICR_EACH		0x20000ULL
#define A64_UART		0x09000000ULL	/* PL011, 4 KiB */
#define A64_UART_SPI		1		/* its interrupt: SPI 1 (INTID 33) */
#define A64_RAM			0x40000000ULL

struct pl011;

struct a64_state {
	int gic_fd;
	struct pl011 *uart;
	uint64_t entry, dtb;
};

/* The device tree for the VM (libfdt): *out malloc'ed, *len its size. */
int a64_fdt(const struct vm *vm, uint64_t initrd, uint64_t initrd_size, void **out, size_t *len,
	    struct errbuf *err);

#endif
