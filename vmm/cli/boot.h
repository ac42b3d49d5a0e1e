/* SPDX-License-Identifier: GPL-2.0 */
/* The boot driver (boot.c): vmmtrace boot on any host. */
#ifndef VMM_CLI_BOOT_H
#define VMM_CLI_BOOT_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/cli/boot-opts.h"
#include "vmm/host/host.h"

struct kernel_image;

/* What cmd-boot.c found out before the guest is made. */
struct boot_run {
	const struct kernel_image *img;	/* the kernel, open */
	const uint8_t *initrd;		/* its bytes (KVM loads them; QEMU reads the file itself) */
	size_t initrd_size;
	int console_fd;			/* where the guest's console goes */
	int qemu;			/* the QEMU host, else KVM */
	int kvm_missing;		/* QEMU because /dev/kvm does not open */
};

/* Boots and runs the guest on the host r says, traced as o says; returns the exit status. */
int boot_run(const struct boot_opts *o, const struct boot_run *r);
/* The process status for why the guest stopped (README, "Exit status"). */
int boot_exit_status(enum vm_stop_reason reason, int signo);

#endif
