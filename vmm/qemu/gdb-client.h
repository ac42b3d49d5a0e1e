/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A client of the GDB remote serial protocol, as QEMU's gdbstub speaks it:
 * the QEMU host backend pauses and resumes the guest, reads its registers,
 * writes guest code (QEMU then drops its translated blocks of the page,
 * which a write into shared guest RAM would not do) and sets breakpoints
 * through it. The peer is a separate process: every reply is checked
 * (framing, checksum, length, hex) before it is used, and a reply that
 * does not come within the timeout is an error, never a hang.
 */
#ifndef VMM_QEMU_GDB_H
#define VMM_QEMU_GDB_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/util/error.h"

#define GDB_PACKET_MAX   (64 * 1024)	/* the longest reply accepted, decoded */
#define GDB_MAX_THREADS  64

struct gdb {
	int fd;
	int timeout_ms;			/* for each reply */
	unsigned packet_size;		/* the stub's PacketSize (qSupported) */
	uint8_t in[GDB_PACKET_MAX];	/* bytes read, not yet parsed */
	size_t in_len;
	char pkt[GDB_PACKET_MAX + 1];	/* the last packet received, decoded, NUL-terminated */
	size_t pkt_len;
	uint64_t console_bytes;		/* 'O' packets skipped */
};

/* Why a vCPU (or the guest) stopped, from a stop reply (T, S, W, X). */
enum gdb_stop_kind { GDB_STOP_SIGNAL = 1, GDB_STOP_EXITED, GDB_STOP_KILLED };
struct gdb_stop {
	enum gdb_stop_kind kind;
	unsigned sig;			/* signal, or exit status for GDB_STOP_EXITED */
	long thread;			/* the thread that stopped (QEMU: vCPU index + 1), 0: not said */
	int swbreak, hwbreak, watch;	/* the reason the stub gave with T */
};

/* Takes fd (a connected stream socket); negotiates the packet size. */
int gdb_open(struct gdb *g, int fd, int timeout_ms, struct errbuf *err);
void gdb_close(struct gdb *g);

/*
 * Frames and sends one command and waits for its acknowledgement.
 * gdb_request also reads the reply (skipping console output) into g->pkt.
 */
int gdb_send(struct gdb *g, const char *cmd, struct errbuf *err);
int gdb_request(struct gdb *g, const char *cmd, struct errbuf *err);
/* Reads one packet into g->pkt (acknowledged); -ETIMEDOUT when none came. */
int gdb_receive(struct gdb *g, int timeout_ms, struct errbuf *err);

/* "?": why the guest is stopped now. */
int gdb_query_stop(struct gdb *g, struct gdb_stop *st, struct errbuf *err);
/* Resumes every vCPU ("c"); gdb_interrupt stops them (0x03) and waits for the stop reply. */
int gdb_continue(struct gdb *g, struct errbuf *err);
int gdb_interrupt(struct gdb *g, struct gdb_stop *st, struct errbuf *err);
/* After gdb_continue: waits up to timeout_ms for the guest to stop (-ETIMEDOUT: it did not). */
int gdb_wait_stop(struct gdb *g, int timeout_ms, struct gdb_stop *st, struct errbuf *err);
/* The same, but a readable wake_fd (drained) ends the wait early too, as a timeout (-ETIMEDOUT). */
int gdb_wait_stop_wake(struct gdb *g, int timeout_ms, int wake_fd, struct gdb_stop *st, struct errbuf *err);

/* Guest-virtual memory, as the selected vCPU sees it. */
int gdb_read_mem(struct gdb *g, uint64_t addr, void *buf, size_t len, struct errbuf *err);
int gdb_write_mem(struct gdb *g, uint64_t addr, const void *buf, size_t len, struct errbuf *err);

/* Execution breakpoints: hw 0 = software (Z0), 1 = hardware (Z1); kind is the arch's (x86: 1). */
int gdb_set_break(struct gdb *g, int hw, uint64_t addr, unsigned kind, struct errbuf *err);
int gdb_clear_break(struct gdb *g, int hw, uint64_t addr, unsigned kind, struct errbuf *err);

/* The stub's thread ids (QEMU: one per vCPU), at most max. */
int gdb_threads(struct gdb *g, long *ids, unsigned max, unsigned *n, struct errbuf *err);
/* Selects the thread later register and memory accesses use ("Hg"). */
int gdb_select_thread(struct gdb *g, long id, struct errbuf *err);
/* All registers of the selected thread ("g"), as the target's raw bytes. */
int gdb_read_regs(struct gdb *g, uint8_t *buf, size_t cap, size_t *len, struct errbuf *err);
/* One register by the target's number ("p"): its raw bytes (little-endian targets). */
int gdb_read_reg(struct gdb *g, unsigned regno, uint8_t *buf, size_t cap, size_t *len,
		 struct errbuf *err);

/*
 * Writes one register of the selected thread ("P"): its raw bytes. QEMU 7.2
 * answers P (and p) only once the client has read its target.xml
 * (gdb_has_xml): read it first with qXfer:features:read.
 */
int gdb_write_reg(struct gdb *g, unsigned regno, const void *buf, size_t len, struct errbuf *err);

/*
 * Pure helpers (unit-tested): the checksum of a payload; frames cmd into
 * out ("$cmd#cs", escaping '$', '#', '}' and '*'); decodes one packet's
 * payload (escapes and run-length encoding) into out. Each returns the
 * length, or -EINVAL / -ENOSPC.
 */
uint8_t gdb_checksum(const uint8_t *p, size_t len);
long gdb_frame(const char *cmd, char *out, size_t cap);
long gdb_decode(const uint8_t *p, size_t len, char *out, size_t cap);
/* Parses a stop reply; -EINVAL if it is not one. */
int gdb_parse_stop(const char *pkt, struct gdb_stop *st);
/* Hex digits to bytes: exactly 2 * len digits. */
int gdb_unhex(const char *hex, size_t digits, uint8_t *out, size_t cap);

#endif
