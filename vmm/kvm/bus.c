// SPDX-License-Identifier: GPL-2.0
/* A bus of address ranges (bus.h). */
#include <errno.h>
#include <string.h>

#include "vmm/kvm/bus.h"

int bus_register(struct io_bus *bus, uint64_t base, uint64_t len, bus_fn *fn, void *opaque)
{
	if (bus->count == BUS_MAX_HANDLERS)
		return -ENOSPC;
	bus->handlers[bus->count++] = (struct bus_handler){ base, len, fn, opaque };
	return 0;
}

int bus_dispatch(struct io_bus *bus, uint64_t addr, int is_write, uint8_t *data, unsigned size)
{
	for (unsigned i = 0; i < bus->count; i++) {
		const struct bus_handler *h = &bus->handlers[i];

		if (addr >= h->base && addr - h->base < h->len) {
			h->fn(h->opaque, addr, is_write, data, size);
			return 1;
		}
	}
	if (!is_write)
		memset(data, 0xff, size);
	return 0;
}
