// SPDX-License-Identifier: GPL-2.0
/* The legacy PC devices at their ISA ports: COM1, the i8042 reset line, the CMOS clock. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/kvm/arch.h"
#include "vmm/kvm-x86_64/layout.h"
#include "vmm/host/console.h"
#include "vmm/devices/i8042.h"
#include "vmm/devices/rtc.h"
#include "vmm/devices/serial.h"
#include "vmm/kvm/vm.h"

int arch_vm_add_devices(struct vm *vm, struct errbuf *err)
{
	vm->serial = serial_create(vm->vm_fd, LAYOUT_COM1_IRQ, vm->cfg.console ? vm->cfg.console->out : -1,
				   vm->cfg.console ? console_watch_line : NULL, vm->cfg.console);
	vm->rtc = calloc(1, sizeof(*vm->rtc));
	if (!vm->serial || !vm->rtc)
		return err_set(err, ENOMEM, "out of memory for the serial port and the CMOS clock");
	if (pio_register(&vm->pio, LAYOUT_COM1, 8, serial_pio, vm->serial) ||
	    pio_register(&vm->pio, LAYOUT_I8042_DATA, 1, i8042_pio, vm) ||
	    pio_register(&vm->pio, LAYOUT_I8042_CMD, 1, i8042_pio, vm) ||
	    pio_register(&vm->pio, LAYOUT_RTC, 2, rtc_pio, vm->rtc))
		return err_set(err, ENOSPC, "too many port I/O devices");
	return 0;
}

void arch_vm_remove_devices(struct vm *vm)
{
	serial_destroy(vm->serial);
	free(vm->rtc);
	vm->serial = NULL;
	vm->rtc = NULL;
}

size_t arch_console_input(struct vm *vm, const uint8_t *buf, size_t len)
{
	return serial_receive(vm->serial, buf, len > 4096 ? 4096 : (unsigned)len);
}

void arch_console_flush(struct vm *vm)
{
	if (vm->serial)
		serial_flush(vm->serial);
}

/* The PC's devices are all on ports: no MMIO device. */
int arch_vcpu_mmio(struct vcpu *vcpu, uint64_t addr, uint8_t *data, unsigned len, int is_write)
{
	(void)vcpu, (void)addr, (void)data, (void)len, (void)is_write;
	return 0;
}
