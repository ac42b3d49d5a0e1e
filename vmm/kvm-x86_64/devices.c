// SPDX-License-Identifier: GPL-2.0
/*
 * The legacy PC devices at their ISA ports (COM1, the i8042 reset line, the
 * CMOS clock) and the stub's doorbell port, on the host arch's port bus.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/trace.h"
#include "vmm/kvm/arch.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/kvm-x86_64/devices.h"
#include "vmm/kvm-x86_64/layout.h"
#include "vmm/host/console.h"
#include "vmm/devices/i8042.h"
#include "vmm/devices/rtc.h"
#include "vmm/devices/serial.h"
#include "vmm/kvm/vm.h"

static struct x86_state *x86(const struct vm *vm)
{
	return vm->arch_state;
}

/* The stub's doorbell: a 32-bit out to VT_DOORBELL_PORT, its value the ring. */
static void x86_doorbell(void *opaque, uint64_t port, int is_write, uint8_t *data, unsigned size)
{
	struct vm *vm = opaque;
	uint32_t ring = 0;

	if (!is_write) {
		memset(data, 0xff, size);
		return;
	}
	memcpy(&ring, data, size < 4 ? size : 4);
	/* The handler spans the 4 bytes of the stub's 32-bit out; only its first port rings. */
	if (port != VT_DOORBELL_PORT)
		ring = UINT32_MAX;	/* the tracer counts it as invalid */
	if (vm->hooks.doorbell)
		vm->hooks.doorbell(vm->hooks.opaque, ring);
}

int arch_vm_add_devices(struct vm *vm, struct errbuf *err)
{
	struct x86_state *s = x86(vm);

	s->serial = serial_create(vm->vm_fd, LAYOUT_COM1_IRQ, vm->cfg.console ? vm->cfg.console->out : -1,
				  vm->cfg.console ? console_watch_line : NULL, vm->cfg.console);
	s->rtc = calloc(1, sizeof(*s->rtc));
	if (!s->serial || !s->rtc)
		return err_set(err, ENOMEM, "out of memory for the serial port and the CMOS clock");
	if (bus_register(&s->pio, LAYOUT_COM1, 8, serial_pio, s->serial) ||
	    bus_register(&s->pio, LAYOUT_I8042_DATA, 1, i8042_pio, vm) ||
	    bus_register(&s->pio, LAYOUT_I8042_CMD, 1, i8042_pio, vm) ||
	    bus_register(&s->pio, LAYOUT_RTC, 2, rtc_pio, s->rtc) ||
	    bus_register(&s->pio, VT_DOORBELL_PORT, 4, x86_doorbell, vm))
		return err_set(err, ENOSPC, "too many port I/O devices");
	return 0;
}

/* Also the state arch_vm_init made, whatever came of it. */
void arch_vm_remove_devices(struct vm *vm)
{
	struct x86_state *s = x86(vm);

	if (!s)
		return;
	serial_destroy(s->serial);
	free(s->rtc);
	free(s);
	vm->arch_state = NULL;
}

size_t arch_console_input(struct vm *vm, const uint8_t *buf, size_t len)
{
	return serial_receive(x86(vm)->serial, buf, len > 4096 ? 4096 : (unsigned)len);
}

void arch_console_flush(struct vm *vm)
{
	if (x86(vm) && x86(vm)->serial)
		serial_flush(x86(vm)->serial);
}

void x86_exit_io(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	uint8_t *data = (uint8_t *)run + run->io.data_offset;
	size_t total = (size_t)run->io.count * run->io.size;

	/* data_offset comes from KVM, but stay inside the run area regardless. */
	if (run->io.data_offset >= vcpu->run_size || total > vcpu->run_size - run->io.data_offset) {
		vm_request_stop(vcpu->vm, VM_STOP_HOST_FAILURE, "KVM_EXIT_IO data outside the run area");
		return;
	}
	for (unsigned i = 0; i < run->io.count; i++, data += run->io.size)
		bus_dispatch(&x86(vcpu->vm)->pio, run->io.port, run->io.direction == KVM_EXIT_IO_OUT, data,
			     run->io.size);
	if (run->io.count) {
		struct vm_exit_info x = {
			.kind = VM_EXIT_PIO, .reason = KVM_EXIT_IO, .addr = run->io.port,
			.is_write = run->io.direction == KVM_EXIT_IO_OUT,
			.size = run->io.size, .count = run->io.count,
		};

		memcpy(&x.value, (uint8_t *)run + run->io.data_offset, run->io.size < 8 ? run->io.size : 8);
		vm_report_exit(vcpu->vm, vcpu, &x);
	}
}
