// SPDX-License-Identifier: GPL-2.0
/*
 * The VM core's bus of address ranges (vmm/kvm/bus.c), which carries the
 * MMIO devices and x86_64's port devices: an access reaches the device
 * whose range holds it, with its own address; one no device holds reads
 * all ones and is said to be unclaimed; a full bus refuses one more.
 */
#include <errno.h>
#include <string.h>

#include "tests/unit/check.h"
#include "vmm/kvm/bus.h"

struct seen {
	uint64_t addr;
	int is_write, calls;
	uint8_t data[8];
};

static void device(void *opaque, uint64_t addr, int is_write, uint8_t *data, unsigned size)
{
	struct seen *s = opaque;

	s->addr = addr;
	s->is_write = is_write;
	s->calls++;
	if (is_write)
		memcpy(s->data, data, size);
	else
		memset(data, 0x5a, size);
}

int main(void)
{
	struct io_bus bus = { .count = 0 };
	struct seen com = { 0 }, bell = { 0 };
	uint8_t data[8] = { 1, 2, 3, 4 };

	CHECK(!bus_register(&bus, 0x3f8, 8, device, &com) && !bus_register(&bus, 0x9000000, 0x1000, device, &bell),
	      "two devices registered");
	CHECK(bus_dispatch(&bus, 0x3fd, 0, data, 1) == 1 && com.calls == 1 && com.addr == 0x3fd && data[0] == 0x5a,
	      "a read inside COM1's range reaches it with its own address and gets its answer");
	CHECK(bus_dispatch(&bus, 0x9000fe0, 1, (uint8_t[]){ 0x11, 0, 0, 0 }, 4) == 1 && bell.addr == 0x9000fe0 &&
	      bell.is_write && bell.data[0] == 0x11, "an MMIO write at the range's end reaches its device");
	memset(data, 0, sizeof(data));
	CHECK(bus_dispatch(&bus, 0x3f8 + 8, 0, data, 4) == 0 && !memcmp(data, "\xff\xff\xff\xff", 4) && com.calls == 1,
	      "just past a range: unclaimed, a read sees all ones");
	CHECK(bus_dispatch(&bus, 0x3f7, 1, data, 1) == 0 && com.calls == 1, "just before it: a write is dropped");
	for (unsigned i = bus.count; i < BUS_MAX_HANDLERS; i++)
		bus_register(&bus, 0x1000 + i, 1, device, &com);
	CHECK(bus_register(&bus, 0x2000, 1, device, &com) == -ENOSPC, "a full bus refuses one more device");
	return check_exit();
}
