/* SPDX-License-Identifier: GPL-2.0 */
/* Port I/O dispatch to emulated devices. Registered before vCPUs start. */
#ifndef VMM_PIO_H
#define VMM_PIO_H

#include <stdint.h>

#define PIO_MAX_HANDLERS 16

/* data holds `size` bytes; for reads the handler fills it. */
typedef void pio_fn(void *opaque, uint16_t port, int is_write, uint8_t *data, unsigned size);

struct pio_handler {
	uint16_t base;
	uint16_t len;
	pio_fn *fn;
	void *opaque;
};

struct pio_bus {
	struct pio_handler handlers[PIO_MAX_HANDLERS];
	unsigned count;
};

int pio_register(struct pio_bus *bus, uint16_t base, uint16_t len, pio_fn *fn, void *opaque);
/* Unclaimed reads return all ones (no device), unclaimed writes are dropped. */
void pio_dispatch(struct pio_bus *bus, uint16_t port, int is_write, uint8_t *data, unsigned size);

#endif
