// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>

#include "vmm/kvm/pio.h"

int pio_register(struct pio_bus *bus, uint16_t base, uint16_t len, pio_fn *fn, void *opaque)
{
	if (bus->count == PIO_MAX_HANDLERS)
		return -ENOSPC;
	bus->handlers[bus->count++] = (struct pio_handler){ base, len, fn, opaque };
	return 0;
}

void pio_dispatch(struct pio_bus *bus, uint16_t port, int is_write, uint8_t *data, unsigned size)
{
	for (unsigned i = 0; i < bus->count; i++) {
		const struct pio_handler *h = &bus->handlers[i];

		if (port >= h->base && port - h->base < h->len) {
			h->fn(h->opaque, port, is_write, data, size);
			return;
		}
	}
	if (!is_write)
		memset(data, 0xff, size);
}
