/* SPDX-License-Identifier: GPL-2.0 */
/* vmmtrace boot --host qemu (vmm/cli/boot-qemu.c). */
#ifndef VMM_CLI_BOOT_QEMU_H
#define VMM_CLI_BOOT_QEMU_H

#include <stdint.h>
#include <sys/types.h>

#include "vmm/host/host.h"

struct kernel_image;
struct tracer;
struct tracer_config;

struct boot_qemu_opts {
	const char *kernel;
	int arch;			/* IMAGE_ARCH_* */
	const char *initrd;		/* or NULL */
	const char *cmdline_replace;	/* the whole command line, or NULL: the arch's default */
	const char *cmdline_extra;	/* appended ("" or " ..."), as --cmdline gives it */
	unsigned ncpus;
	uint64_t mem;
	int console_fd;			/* where the guest's console goes (-1: --console failed to open) */
	const char *console;		/* --console, for that error */
	int verbose;
	const struct kernel_image *img;	/* the kernel, open */
	const struct tracer_config *tcfg;	/* --trace, --stop-at, -o ...: traced when it asks for something */
	int unsupported;		/* asked for what the QEMU host does not do yet (--event, ...) */
	const char *control;		/* --control: the control socket's path, or NULL */
	size_t attach_backlog;		/* --attach-backlog (0: the default) */
	int kvm_missing;		/* QEMU was chosen because /dev/kvm does not open */
	int loadable;			/* QEMU's loaders take the kernel (boot_qemu_loads) */
	int no_sandbox;			/* --no-sandbox */
};

/* Runs the guest under QEMU until it ends; returns vmmtrace's exit status. */
int boot_qemu(const struct boot_qemu_opts *o);

enum boot_host { BOOT_HOST_AUTO, BOOT_HOST_KVM, BOOT_HOST_QEMU };

/* Whether QEMU's own loaders take the kernel: an x86_64 bzImage, a plain arm64 or riscv64 Image. */
int boot_qemu_loads(const struct kernel_image *img);

/* --host's value: "kvm" or "qemu"; -EINVAL otherwise. */
int boot_host_parse(const char *s, enum boot_host *host);
/*
 * The trace's last events and closing account after the guest stopped (its
 * line stop_msg already said), on either host; returns the exit status,
 * status unless the output failed (cmd-boot.c).
 */
int boot_finish_trace(struct tracer *t, const char *stop_msg, int status);
/*
 * The seccomp sandbox, on either host (cmd-boot.c, docs/SANDBOX.md): off
 * with --no-sandbox; child is QEMU's pid (0: none). 0, or the exit status
 * when it cannot be entered.
 */
int boot_sandbox(int no_sandbox, pid_t child);
/* The process status for why the guest stopped (README, "Exit status"), on either host. */
int boot_exit_status(enum vm_stop_reason reason, int signo);
/*
 * The host for a kernel of image_arch: the one asked for, else this VMM on
 * KVM for an x86_64 kernel where /dev/kvm opens, else QEMU (*kvm_missing
 * then says /dev/kvm was why).
 */
enum boot_host boot_host_choose(enum boot_host want, int image_arch, int *kvm_missing);

#endif
