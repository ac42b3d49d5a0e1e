/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An ARM PL011 UART (pl011.c): the arm64 KVM host's console, at the
 * address and interrupt its device tree names.
 */
#ifndef VMM_DEVICES_PL011_H
#define VMM_DEVICES_PL011_H

#include <stddef.h>
#include <stdint.h>

struct pl011;

/* Where the guest's output goes, a byte at a time as it writes them. */
typedef void pl011_out_fn(void *opaque, const void *buf, size_t len);

/* irq: its line as KVM_IRQ_LINE numbers it (arm64: type, vCPU and number). */
struct pl011 *pl011_create(int vm_fd, uint32_t irq, pl011_out_fn *out, void *opaque);
void pl011_destroy(struct pl011 *u);
/* An access at offset off of its 4 KiB (KVM_EXIT_MMIO). */
void pl011_mmio(struct pl011 *u, uint64_t off, uint8_t *data, unsigned len, int is_write);
/* Console input: how many of len bytes its receive buffer took. */
size_t pl011_receive(struct pl011 *u, const uint8_t *buf, size_t len);

#endif
