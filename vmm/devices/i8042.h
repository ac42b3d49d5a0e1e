/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Just enough of the i8042 keyboard controller for its reset line: the
 * guest reboots by writing 0xfe (pulse reset) to the command port.
 */
#ifndef VMM_I8042_H
#define VMM_I8042_H

#include <stdint.h>

/* bus_fn for the data (0x60) and command/status (0x64) ports; opaque is the vm. */
void i8042_pio(void *opaque, uint64_t port, int is_write, uint8_t *data, unsigned size);

#endif
