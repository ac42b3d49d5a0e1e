/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The x86_64 host arch's own state (vm->arch_state): the PC's port bus and
 * the devices on it (COM1, the i8042 reset line, the CMOS clock, the
 * stub's doorbell port), none of which the VM core knows.
 */
#ifndef VMM_KVM_X86_64_DEVICES_H
#define VMM_KVM_X86_64_DEVICES_H

#include "vmm/kvm/bus.h"

struct rtc;
struct serial;
struct vcpu;

struct x86_state {
	struct io_bus pio;
	struct serial *serial;		/* the console: output, input, flush */
	struct rtc *rtc;
};

/* A port access (KVM_EXIT_IO): to the devices on the port bus, then reported. */
void x86_exit_io(struct vcpu *vcpu);

#endif
