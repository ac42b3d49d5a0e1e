// SPDX-License-Identifier: GPL-2.0
/*
 * The GDB remote serial protocol, client side (vmm/qemu/gdb-client.h). Packets
 * are "$payload#cs" with an 8-bit checksum; the receiver acknowledges each
 * with '+' ('-' asks for it again). Replies may escape bytes ('}' then the
 * byte XOR 0x20) and run-length encode them ('*' then a count + 29).
 */
#include <errno.h>
#include <stddef.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vmm/qemu/gdb-client.h"
#include "vmm/util/util.h"

#define GDB_RETRIES 3

uint8_t gdb_checksum(const uint8_t *p, size_t len)
{
	uint8_t sum = 0;

	while (len--)
		sum += *p++;
	return sum;
}

long gdb_frame(const char *cmd, char *out, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;
	uint8_t sum = 0;

	if (cap < 4)
		return -ENOSPC;
	out[n++] = '$';
	for (const char *c = cmd; *c; c++) {
		int esc = *c == '$' || *c == '#' || *c == '}' || *c == '*';
		uint8_t b = esc ? (uint8_t)(*c ^ 0x20) : (uint8_t)*c;

		if (n + esc + 1 + 3 > cap)
			return -ENOSPC;
		if (esc) {
			out[n++] = '}';
			sum += '}';
		}
		out[n++] = (char)b;
		sum += b;
	}
	out[n++] = '#';
	out[n++] = hex[sum >> 4];
	out[n++] = hex[sum & 15];
	return (long)n;
}

long gdb_decode(const uint8_t *p, size_t len, char *out, size_t cap)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		uint8_t b = p[i];

		if (b == '}') {
			if (++i == len)
				return -EINVAL;
			b = p[i] ^ 0x20;
		} else if (b == '*') {
			/* Repeat the previous byte (count - 29) more times. */
			if (!n || ++i == len || p[i] < 29 + 3 || p[i] > 126)
				return -EINVAL;
			size_t reps = p[i] - 29u;

			if (n + reps > cap)
				return -ENOSPC;
			memset(out + n, out[n - 1], reps);
			n += reps;
			continue;
		}
		if (n + 1 > cap)
			return -ENOSPC;
		out[n++] = (char)b;
	}
	return (long)n;
}

int gdb_unhex(const char *hex, size_t digits, uint8_t *out, size_t cap)
{
	if (digits % 2 || digits / 2 > cap)
		return -EINVAL;
	for (size_t i = 0; i < digits / 2; i++) {
		/* Never past a NUL: the second digit is read only after the first is one. */
		int hi = util_hex_digit(hex[2 * i]), lo = hi < 0 ? -1 : util_hex_digit(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/* A hex number of at most 16 digits ending at a char of `end` (or NUL); advances *s. */
static int parse_hex(const char **s, const char *end, uint64_t *v)
{
	const char *p = *s;
	unsigned n = 0;

	*v = 0;
	for (; util_hex_digit(*p) >= 0; p++, n++)
		*v = *v << 4 | (uint64_t)util_hex_digit(*p);
	if (!n || n > 16 || (*p && !strchr(end, *p)))
		return -EINVAL;
	*s = p;
	return 0;
}

/* "01", "p1.2" (multiprocess form: the thread after the dot), "-1". */
static int parse_thread(const char **s, long *id)
{
	uint64_t v;

	if (**s == 'p') {
		++*s;
		if (parse_hex(s, ".", &v) || **s != '.')
			return -EINVAL;
		++*s;
	}
	if (**s == '-' && (*s)[1] == '1') {
		*s += 2;
		*id = -1;
		return 0;
	}
	if (parse_hex(s, ";,", &v) || v > 0x7fffffff)
		return -EINVAL;
	*id = (long)v;
	return 0;
}

int gdb_parse_stop(const char *pkt, struct gdb_stop *st)
{
	uint8_t sig;

	memset(st, 0, sizeof(*st));
	if (strnlen(pkt, 3) < 3 || (pkt[0] != 'T' && pkt[0] != 'S' && pkt[0] != 'W' && pkt[0] != 'X') ||
	    gdb_unhex(pkt + 1, 2, &sig, 1) || (pkt[3] && pkt[0] != 'T' && pkt[3] != ';'))
		return -EINVAL;
	st->kind = pkt[0] == 'W' ? GDB_STOP_EXITED : pkt[0] == 'X' ? GDB_STOP_KILLED : GDB_STOP_SIGNAL;
	st->sig = sig;
	if (pkt[0] != 'T')
		return 0;
	/* T: "n:r;" pairs; only the ones the backend uses are read. */
	for (const char *p = pkt + 3; *p;) {
		const char *colon = strchr(p, ':'), *semi;

		if (!colon)
			return -EINVAL;
		semi = strchr(colon, ';');
		if (!semi)
			return -EINVAL;
		if (colon - p == 6 && !strncmp(p, "thread", 6)) {
			const char *t = colon + 1;

			if (parse_thread(&t, &st->thread) || t != semi)
				return -EINVAL;
		} else if (colon - p == 7 && !strncmp(p, "swbreak", 7)) {
			st->swbreak = 1;
		} else if (colon - p == 7 && !strncmp(p, "hwbreak", 7)) {
			st->hwbreak = 1;
		} else if ((colon - p == 5 && !strncmp(p, "watch", 5)) ||
			   (colon - p == 6 && (!strncmp(p, "rwatch", 6) || !strncmp(p, "awatch", 6)))) {
			st->watch = 1;
		}
		p = semi + 1;
	}
	return 0;
}

/* Waits until fd is readable or the deadline passes (bytes already there are read even after it). */
static int wait_readable(int fd, uint64_t deadline_ns)
{
	for (;;) {
		uint64_t now = util_now_ns();
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int rc = poll(&pfd, 1, now >= deadline_ns ? 0 : (int)((deadline_ns - now + 999999) / 1000000));

		if (rc > 0)
			return 0;
		if (rc == 0 && util_now_ns() >= deadline_ns)
			return -ETIMEDOUT;
		if (rc < 0 && errno != EINTR)
			return -errno;
	}
}

/* More bytes from the peer into g->in. */
static int fill(struct gdb *g, uint64_t deadline_ns, struct errbuf *err)
{
	ssize_t n;
	int rc;

	if (g->in_len == sizeof(g->in))
		return err_set(err, EPROTO, "gdbstub: a packet longer than %zu bytes", sizeof(g->in));
	if ((rc = wait_readable(g->fd, deadline_ns)))
		return err_set(err, -rc, "gdbstub: no reply: %s", strerror(-rc));
	do
		n = read(g->fd, g->in + g->in_len, sizeof(g->in) - g->in_len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return err_set(err, errno, "gdbstub: read: %s", strerror(errno));
	if (!n)
		return err_set(err, ECONNRESET, "gdbstub: QEMU closed the connection");
	g->in_len += (size_t)n;
	return 0;
}

static void consume(struct gdb *g, size_t n)
{
	memmove(g->in, g->in + n, g->in_len - n);
	g->in_len -= n;
}

/* QEMU may be gone: no SIGPIPE, an error (the socket is a stream socket pair). */
static int write_all(int fd, const char *buf, size_t len, struct errbuf *err)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return err_set(err, n < 0 ? errno : EIO, "gdbstub: write: %s",
				       n < 0 ? strerror(errno) : "short write");
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * One whole packet from g->in (reading as needed): checked, decoded into
 * g->pkt and acknowledged. Stray bytes before a '$' (acks, noise) are
 * dropped; a bad checksum is answered with '-' and the peer sends again.
 */
int gdb_receive(struct gdb *g, int timeout_ms, struct errbuf *err)
{
	uint64_t deadline = util_now_ns() + (uint64_t)timeout_ms * 1000000ULL;
	unsigned bad = 0;
	int rc;

	for (;;) {
		uint8_t *start = memchr(g->in, '$', g->in_len), *hash;
		long n;

		if (!start) {
			g->in_len = 0;
			if ((rc = fill(g, deadline, err)))
				return rc;
			continue;
		}
		consume(g, (size_t)(start - g->in));
		hash = memchr(g->in, '#', g->in_len);
		if (!hash || (size_t)(hash - g->in) + 3 > g->in_len) {
			if ((rc = fill(g, deadline, err)))
				return rc;
			continue;
		}
		size_t body = (size_t)(hash - g->in) - 1;
		uint8_t cs;

		if (gdb_unhex((char *)hash + 1, 2, &cs, 1) || cs != gdb_checksum(g->in + 1, body)) {
			consume(g, body + 4);
			if (++bad > GDB_RETRIES)
				return err_set(err, EPROTO, "gdbstub: %u packets with a bad checksum", bad);
			if ((rc = write_all(g->fd, "-", 1, err)))
				return rc;
			continue;
		}
		n = gdb_decode(g->in + 1, body, g->pkt, GDB_PACKET_MAX);
		consume(g, body + 4);
		/* A peer that closed after its last packet (QEMU exiting after "W") needs no ack. */
		rc = write_all(g->fd, "+", 1, NULL);
		if (rc && rc != -EPIPE && rc != -ECONNRESET)
			return err_set(err, -rc, "gdbstub: write: %s", strerror(-rc));
		if (n < 0)
			return err_set(err, EPROTO, "gdbstub: a malformed packet (bad escape or repeat)");
		g->pkt[n] = 0;
		g->pkt_len = (size_t)n;
		if (memchr(g->pkt, 0, g->pkt_len))
			return err_set(err, EPROTO, "gdbstub: a packet with a NUL byte");
		return 0;
	}
}

int gdb_send(struct gdb *g, const char *cmd, struct errbuf *err)
{
	char *frame = malloc(2 * strlen(cmd) + 8);
	long n = frame ? gdb_frame(cmd, frame, 2 * strlen(cmd) + 8) : -ENOMEM;
	int rc = 0;

	if (n < 0) {
		free(frame);
		return err_set(err, (int)-n, "gdbstub: cannot frame a %zu-byte command", strlen(cmd));
	}
	for (unsigned tries = 0;; tries++) {
		uint64_t deadline = util_now_ns() + (uint64_t)g->timeout_ms * 1000000ULL;
		uint8_t *ack = NULL;

		if (tries > GDB_RETRIES) {
			rc = err_set(err, EPROTO, "gdbstub: '%.16s' was refused %u times", cmd, tries);
			break;
		}
		if ((rc = write_all(g->fd, frame, (size_t)n, err)))
			break;
		/* The ack is the first '+' or '-' before any packet. */
		while (!rc) {
			for (size_t i = 0; i < g->in_len && !ack; i++)
				if (g->in[i] == '+' || g->in[i] == '-')
					ack = g->in + i;
				else if (g->in[i] == '$')
					break;
			if (ack)
				break;
			rc = fill(g, deadline, err);
		}
		if (rc)
			break;
		if (*ack == '+') {
			consume(g, (size_t)(ack - g->in) + 1);
			break;
		}
		consume(g, (size_t)(ack - g->in) + 1);
	}
	free(frame);
	return rc;
}

int gdb_request(struct gdb *g, const char *cmd, struct errbuf *err)
{
	int rc = gdb_send(g, cmd, err);

	/* Console output ('O' + hex) may come before the reply: skip it. */
	while (!rc && !(rc = gdb_receive(g, g->timeout_ms, err)) && g->pkt[0] == 'O' && g->pkt_len > 1 &&
	       g->pkt_len % 2 == 1)
		g->console_bytes += g->pkt_len / 2;
	return rc;
}

/* A reply of "OK", or a one-line error naming the request. */
static int expect_ok(struct gdb *g, const char *what, struct errbuf *err)
{
	if (!strcmp(g->pkt, "OK"))
		return 0;
	if (!g->pkt_len)
		return err_set(err, EOPNOTSUPP, "gdbstub: %s is not supported", what);
	return err_set(err, EIO, "gdbstub: %s failed (%.32s)", what, g->pkt);
}

int gdb_open(struct gdb *g, int fd, int timeout_ms, struct errbuf *err)
{
	int rc;

	memset(g, 0, offsetof(struct gdb, in));
	g->in_len = 0;
	g->pkt[0] = 0;
	g->pkt_len = 0;
	g->fd = fd;
	g->timeout_ms = timeout_ms;
	g->packet_size = 256;
	if ((rc = gdb_request(g, "qSupported:swbreak+;hwbreak+", err)))
		return rc;
	for (char *p = g->pkt; p && *p; p = strchr(p, ';') ? strchr(p, ';') + 1 : NULL) {
		const char *v = p + strlen("PacketSize=");
		uint64_t size;

		if (!strncmp(p, "PacketSize=", strlen("PacketSize=")) && !parse_hex(&v, ";", &size))
			g->packet_size = size < 64 ? 64 : size > GDB_PACKET_MAX ? GDB_PACKET_MAX : (unsigned)size;
	}
	return 0;
}

void gdb_close(struct gdb *g)
{
	if (g->fd >= 0)
		close(g->fd);
	g->fd = -1;
}

int gdb_query_stop(struct gdb *g, struct gdb_stop *st, struct errbuf *err)
{
	int rc = gdb_request(g, "?", err);

	if (!rc && gdb_parse_stop(g->pkt, st))
		rc = err_set(err, EPROTO, "gdbstub: '?' got no stop reply (%.32s)", g->pkt);
	return rc;
}

int gdb_continue(struct gdb *g, struct errbuf *err)
{
	return gdb_send(g, "c", err);
}

int gdb_wait_stop(struct gdb *g, int timeout_ms, struct gdb_stop *st, struct errbuf *err)
{
	int rc;

	for (;;) {
		if ((rc = gdb_receive(g, timeout_ms, err)))
			return rc;
		if (g->pkt[0] == 'O' && g->pkt_len % 2 == 1) {
			g->console_bytes += g->pkt_len / 2;
			continue;
		}
		if (gdb_parse_stop(g->pkt, st))
			return err_set(err, EPROTO, "gdbstub: expected a stop reply, got '%.32s'", g->pkt);
		return 0;
	}
}

int gdb_wait_stop_wake(struct gdb *g, int timeout_ms, int wake_fd, struct gdb_stop *st, struct errbuf *err)
{
	struct pollfd pfd[2] = { { .fd = g->fd, .events = POLLIN }, { .fd = wake_fd, .events = POLLIN } };
	uint64_t v;
	int rc;

	if (wake_fd >= 0 && !g->in_len) {
		do
			rc = poll(pfd, 2, timeout_ms);
		while (rc < 0 && errno == EINTR);
		if (rc < 0)
			return err_set(err, errno, "gdbstub: poll: %s", strerror(errno));
		if (!pfd[0].revents) {
			if (pfd[1].revents && read(wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				return err_set(err, errno, "gdbstub: the wake-up's read: %s", strerror(errno));
			return err_set(err, ETIMEDOUT, "gdbstub: no stop yet");
		}
	}
	return gdb_wait_stop(g, timeout_ms, st, err);
}

int gdb_interrupt(struct gdb *g, struct gdb_stop *st, struct errbuf *err)
{
	int rc = write_all(g->fd, "\003", 1, err);

	return rc ? rc : gdb_wait_stop(g, g->timeout_ms, st, err);
}

/* Bytes of memory one packet carries each way, as hex, with its header. */
static size_t mem_chunk(const struct gdb *g)
{
	return (g->packet_size - 40) / 2;
}

int gdb_read_mem(struct gdb *g, uint64_t addr, void *buf, size_t len, struct errbuf *err)
{
	char cmd[64];
	int rc;

	while (len) {
		size_t n = len < mem_chunk(g) ? len : mem_chunk(g);

		snprintf(cmd, sizeof(cmd), "m%llx,%zx", (unsigned long long)addr, n);
		if ((rc = gdb_request(g, cmd, err)))
			return rc;
		if (g->pkt_len != 2 * n || gdb_unhex(g->pkt, 2 * n, buf, n))
			return err_set(err, g->pkt[0] == 'E' ? EFAULT : EPROTO,
				       "gdbstub: cannot read %zu bytes at %#llx (%.16s)", n,
				       (unsigned long long)addr, g->pkt);
		addr += n;
		buf = (uint8_t *)buf + n;
		len -= n;
	}
	return 0;
}

int gdb_write_mem(struct gdb *g, uint64_t addr, const void *buf, size_t len, struct errbuf *err)
{
	static const char hex[] = "0123456789abcdef";
	char *cmd = malloc(64 + 2 * mem_chunk(g));
	const uint8_t *p = buf;
	int rc = 0;

	if (!cmd)
		return err_set(err, ENOMEM, "gdbstub: out of memory");
	while (len && !rc) {
		size_t n = len < mem_chunk(g) ? len : mem_chunk(g);
		int off = snprintf(cmd, 64, "M%llx,%zx:", (unsigned long long)addr, n);

		for (size_t i = 0; i < n; i++) {
			cmd[off + 2 * i] = hex[p[i] >> 4];
			cmd[off + 2 * i + 1] = hex[p[i] & 15];
		}
		cmd[off + 2 * n] = 0;
		if (!(rc = gdb_request(g, cmd, err)) && strcmp(g->pkt, "OK"))
			rc = err_set(err, EFAULT, "gdbstub: cannot write %zu bytes at %#llx (%.16s)", n,
				     (unsigned long long)addr, g->pkt);
		addr += n;
		p += n;
		len -= n;
	}
	free(cmd);
	return rc;
}

static int breakpoint(struct gdb *g, char op, int hw, uint64_t addr, unsigned kind, struct errbuf *err)
{
	char cmd[64];
	int rc;

	snprintf(cmd, sizeof(cmd), "%c%d,%llx,%x", op, hw ? 1 : 0, (unsigned long long)addr, kind);
	if ((rc = gdb_request(g, cmd, err)))
		return rc;
	return expect_ok(g, cmd, err);
}

int gdb_set_break(struct gdb *g, int hw, uint64_t addr, unsigned kind, struct errbuf *err)
{
	return breakpoint(g, 'Z', hw, addr, kind, err);
}

int gdb_clear_break(struct gdb *g, int hw, uint64_t addr, unsigned kind, struct errbuf *err)
{
	return breakpoint(g, 'z', hw, addr, kind, err);
}

int gdb_threads(struct gdb *g, long *ids, unsigned max, unsigned *n, struct errbuf *err)
{
	const char *cmd = "qfThreadInfo";
	int rc;

	*n = 0;
	for (;;) {
		const char *p;

		if ((rc = gdb_request(g, cmd, err)))
			return rc;
		if (!strcmp(g->pkt, "l"))
			return 0;
		if (g->pkt[0] != 'm')
			return err_set(err, EPROTO, "gdbstub: bad thread list '%.32s'", g->pkt);
		for (p = g->pkt + 1;;) {
			long id;

			if (parse_thread(&p, &id) || id <= 0)
				return err_set(err, EPROTO, "gdbstub: bad thread id in '%.32s'", g->pkt);
			if (*n == max)
				return err_set(err, E2BIG, "gdbstub: more than %u threads", max);
			ids[(*n)++] = id;
			if (!*p)
				break;
			if (*p++ != ',')
				return err_set(err, EPROTO, "gdbstub: bad thread list '%.32s'", g->pkt);
		}
		cmd = "qsThreadInfo";
	}
}

int gdb_select_thread(struct gdb *g, long id, struct errbuf *err)
{
	char cmd[32];
	int rc;

	snprintf(cmd, sizeof(cmd), "Hg%lx", id);
	if ((rc = gdb_request(g, cmd, err)))
		return rc;
	return expect_ok(g, cmd, err);
}

static int hex_reply(struct gdb *g, const char *what, uint8_t *buf, size_t cap, size_t *len,
		     struct errbuf *err)
{
	/* 'x' marks bytes the stub does not know: taken as zero. */
	for (size_t i = 0; i < g->pkt_len; i++)
		if (g->pkt[i] == 'x')
			g->pkt[i] = '0';
	if (!g->pkt_len || g->pkt_len % 2 || g->pkt_len / 2 > cap || gdb_unhex(g->pkt, g->pkt_len, buf, cap))
		return err_set(err, EPROTO, "gdbstub: bad reply to %s ('%.16s', %zu bytes)", what, g->pkt,
			       g->pkt_len);
	*len = g->pkt_len / 2;
	return 0;
}

int gdb_read_regs(struct gdb *g, uint8_t *buf, size_t cap, size_t *len, struct errbuf *err)
{
	int rc = gdb_request(g, "g", err);

	return rc ? rc : hex_reply(g, "g", buf, cap, len, err);
}

int gdb_read_reg(struct gdb *g, unsigned regno, uint8_t *buf, size_t cap, size_t *len,
		 struct errbuf *err)
{
	char cmd[32];
	int rc;

	snprintf(cmd, sizeof(cmd), "p%x", regno);
	rc = gdb_request(g, cmd, err);
	return rc ? rc : hex_reply(g, cmd, buf, cap, len, err);
}

int gdb_write_reg(struct gdb *g, unsigned regno, const void *buf, size_t len, struct errbuf *err)
{
	static const char hex[] = "0123456789abcdef";
	char cmd[32 + 2 * 64];
	const uint8_t *p = buf;
	int off, rc;

	if (len > 64)
		return err_set(err, EINVAL, "gdbstub: a register of %zu bytes", len);
	off = snprintf(cmd, 32, "P%x=", regno);
	for (size_t i = 0; i < len; i++) {
		cmd[off + 2 * i] = hex[p[i] >> 4];
		cmd[off + 2 * i + 1] = hex[p[i] & 15];
	}
	cmd[off + 2 * len] = 0;
	if ((rc = gdb_request(g, cmd, err)))
		return rc;
	cmd[off] = 0;
	return expect_ok(g, cmd, err);
}
