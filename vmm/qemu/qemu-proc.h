/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A QEMU process the QEMU host backend owns: started with the guest's RAM
 * in a memfd that vmmtrace maps too (the rings are read at memory speed),
 * its gdbstub on one end of a socket pair (vmm/qemu/gdb-client.h), stopped before
 * the first guest instruction (-S). It never outlives vmmtrace: it gets
 * SIGKILL when the thread that started it exits (PR_SET_PDEATHSIG), and
 * qemu_stop() kills and reaps it.
 */
#ifndef VMM_QEMU_QEMU_H
#define VMM_QEMU_QEMU_H

#include <stdint.h>
#include <sys/types.h>

#include "vmm/qemu/gdb-client.h"
#include "vmm/util/error.h"

#define QEMU_MAX_ARGS 48

struct qemu_config {
	const char *binary;		/* qemu-system-x86_64, qemu-system-aarch64, ... (PATH is searched) */
	const char *machine;		/* -M: "pc", "virt" */
	const char *cpu;		/* -cpu, or NULL */
	const char *bios;		/* -bios, or NULL (the machine's default firmware) */
	unsigned ncpus;
	uint64_t mem_size;		/* bytes, a multiple of 1 MiB */
	const char *kernel;
	const char *initrd;		/* or NULL */
	const char *cmdline;		/* or NULL */
	const char *dtb;		/* -dtb, or NULL */
	const char *console_path;	/* the guest's first serial port goes there (a file or FIFO), or: */
	int console_fd;			/* when console_path is NULL: to this descriptor (a pipe's end) */
	int console_socket;		/* console_fd is a connected socket: the guest's input comes from it too */
	int timeout_ms;			/* each gdbstub reply */
	int deterministic;		/* -icount: the guest's clock and interrupts follow its instructions */
};

struct qemu {
	pid_t pid;
	int mem_fd;
	uint8_t *ram;			/* guest RAM, shared with QEMU; guest-physical RAM base at offset 0 */
	uint64_t ram_size;
	struct gdb gdb;
	int status;			/* after qemu_reap: the wait status */
	int reaped;
};

/* Builds the argument vector (unit-tested); argv gets at most QEMU_MAX_ARGS entries and a NULL. */
int qemu_build_args(const struct qemu_config *cfg, int mem_fd, int gdb_fd, char *store,
		    size_t store_len, char **argv, struct errbuf *err);
/* The version binary says it is (--version; PATH is searched): major and minor. */
int qemu_version(const char *binary, unsigned *major, unsigned *minor, struct errbuf *err);
/* Starts QEMU stopped (-S) and connects to its gdbstub. */
int qemu_start(struct qemu *q, const struct qemu_config *cfg, struct errbuf *err);
/*
 * QEMU's own device tree for cfg's machine, CPUs and memory
 * (-machine dumpdtb=): *dtb (free() it) and its length. QEMU writes it
 * into a temporary file and exits; it runs no guest.
 */
int qemu_dump_dtb(const struct qemu_config *cfg, void **dtb, size_t *len, struct errbuf *err);
/* Whether QEMU has exited (reaps it; q->status says how). */
int qemu_reap(struct qemu *q);
/* Kills QEMU if it still runs and reaps it; its RAM stays mapped (the rings are read after). */
void qemu_kill(struct qemu *q);
/* Kills QEMU if it still runs, reaps it, unmaps the RAM. Idempotent. */
void qemu_stop(struct qemu *q);

#endif
