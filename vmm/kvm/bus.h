/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Emulated devices on a bus of address ranges: the VM's MMIO bus (every
 * arch: vm->mmio) and x86's port I/O bus (its host arch's own). Registered
 * before the vCPUs start; dispatched from the exits, on a vCPU's thread.
 */
#ifndef VMM_KVM_BUS_H
#define VMM_KVM_BUS_H

#include <stdint.h>

#define BUS_MAX_HANDLERS 16

/* An access of size bytes at addr (a port or a GPA); for reads the handler fills data. */
typedef void bus_fn(void *opaque, uint64_t addr, int is_write, uint8_t *data, unsigned size);

struct bus_handler {
	uint64_t base, len;
	bus_fn *fn;
	void *opaque;
};

struct io_bus {
	struct bus_handler handlers[BUS_MAX_HANDLERS];
	unsigned count;
};

/* 0, or -ENOSPC when the bus is full. */
int bus_register(struct io_bus *bus, uint64_t base, uint64_t len, bus_fn *fn, void *opaque);
/* 1 when a device took the access; else reads return all ones (no device) and writes are dropped: 0. */
int bus_dispatch(struct io_bus *bus, uint64_t addr, int is_write, uint8_t *data, unsigned size);

#endif
