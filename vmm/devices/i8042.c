// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "vmm/devices/i8042.h"
#include "vmm/kvm/vm.h"

#define I8042_CMD_PORT_OFFSET 4
#define I8042_CMD_RESET       0xfe

void i8042_pio(void *opaque, uint64_t port, int is_write, uint8_t *data, unsigned size)
{
	struct vm *vm = opaque;

	if (!is_write) {
		/*
		 * Status 0: both buffers empty, so the reboot path's wait for
		 * an empty input buffer ends at once. No keyboard behind it.
		 */
		memset(data, 0, size);
		return;
	}
	if ((port & 7) == I8042_CMD_PORT_OFFSET && data[0] == I8042_CMD_RESET)
		vm_request_reset(vm, "i8042 reset line");
}
