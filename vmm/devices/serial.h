/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A 16550A UART as Linux's 8250 driver probes it: readable IER, IIR with the
 * FIFO bits, MCR loopback reflected in MSR, scratch register, and its IRQ
 * raised through KVM_IRQ_LINE while an enabled condition is pending.
 */
#ifndef VMM_SERIAL_H
#define VMM_SERIAL_H

#include <stdint.h>

struct serial;

/* Called for every complete line the guest prints (without the newline). */
typedef void serial_line_fn(void *opaque, const char *line);

struct serial *serial_create(int vm_fd, unsigned irq, int out_fd,
			     serial_line_fn *on_line, void *opaque);
void serial_destroy(struct serial *s);
/* The port handler (bus_fn) for the 8 registers at the UART's base. */
void serial_pio(void *opaque, uint64_t port, int is_write, uint8_t *data, unsigned size);
/*
 * Queues input for the guest; returns how many bytes were taken (fewer
 * when the receive buffer is full: the caller waits and retries).
 */
unsigned serial_receive(struct serial *s, const uint8_t *buf, unsigned len);
/* Flushes partial output (at exit). */
void serial_flush(struct serial *s);

#endif
