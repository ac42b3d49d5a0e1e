/* SPDX-License-Identifier: GPL-2.0 */
/* vmmtrace boot's options: what the command line says, checked (boot-opts.c). */
#ifndef VMM_CLI_BOOT_OPTS_H
#define VMM_CLI_BOOT_OPTS_H

#include <stdint.h>

#include "vmm/cli/cmd.h"
#include "vmm/trace/tracer.h"
#include "vmm/trace/vmev-select.h"

#define BOOT_DEFAULT_MEM   (512ULL << 20)
#define BOOT_MAX_MEM       (64ULL << 30)
#define BOOT_MIN_MEM       (64ULL << 20)
#define BOOT_MAX_INITRD    (1ULL << 30)
#define BOOT_CMDLINE_MAX   4096
#define BOOT_MAX_GLOBS     64
#define BOOT_DEFAULT_BUFFER (512ULL << 10)	/* 4,096 records of 128 bytes */
/* --deterministic's: each doorbell moves the guest's clock to its next timer (docs/TRACING.md) */
#define BOOT_DETERMINISTIC_BUFFER (16ULL << 20)

enum boot_host { BOOT_HOST_AUTO, BOOT_HOST_KVM, BOOT_HOST_QEMU };

struct boot_opts {
	const char *kernel;
	const char *initrd;
	char cmdline_extra[BOOT_CMDLINE_MAX];
	const char *cmdline_replace;
	unsigned ncpus;
	uint64_t mem;
	int compat;			/* --compat: HOST_AUTO, 0 off, 1 on */
	int fast_boot;			/* --fast-boot: HOST_AUTO (with the compat layer), 0, 1 */
	int verbose;
	int quiet;			/* -q: no progress line */
	int no_sandbox;			/* --no-sandbox: no seccomp filter */
	/* Tracing (active when at least one --trace is given). */
	const char *trace[BOOT_MAX_GLOBS];
	const char *notrace[BOOT_MAX_GLOBS];
	struct tracer_config tcfg;
	int events_given;		/* --event was given (tcfg.events may also come from --handshake ...) */
	struct vmev_msr_set msrs;	/* --msr additions */
	uint32_t msr_ranges[VMEV_MAX_MSR_RANGES][2];
	const char *console;
	const char *control;
	uint64_t attach_backlog;
	int handshake;			/* --handshake: the PV feature table at the end */
	unsigned flight_recorder;	/* --flight-recorder N: events kept (0: off) */
	unsigned hang;			/* --hang SECS (0: off) */
	enum boot_host host;		/* --host (default: KVM for x86_64 where it opens, else QEMU) */
	const char *arch;		/* --arch: the kernel's architecture, checked against the image's */
	int deterministic;		/* --deterministic: QEMU's instruction count is the guest's clock */
	const char *firmware;		/* --firmware: riscv64's SBI firmware under QEMU (its -bios) */
	int buffer_given;		/* --buffer-size was given */
};

#define boot_fail(...) cmd_fail("boot", EXIT_BAD_INPUT, __VA_ARGS__)

/*
 * Fills o from the command line; 0, -1 after --help (printed), or the exit
 * status of a bad option, its one line printed.
 */
int boot_parse(int argc, char **argv, struct boot_opts *o);

/*
 * The host for a kernel of image_arch: the one asked for, else this VMM on
 * KVM for an x86_64 kernel where /dev/kvm opens, else QEMU (*kvm_missing
 * then says /dev/kvm was why).
 */
enum boot_host boot_host_choose(enum boot_host want, int image_arch, int *kvm_missing);

#endif
