// SPDX-License-Identifier: GPL-2.0
/*
 * The GDB remote protocol client's pure parts (vmm/qemu/gdb-client.c): framing and
 * checksums as the protocol document gives them, decoding of escapes and
 * run-length encoding, stop replies, and hostile packets from a peer over a
 * socket pair (bad checksums, truncated escapes, runaway repeats, a peer
 * that never answers). QEMU itself is the peer in tests/qemu/.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/unit/check.h"
#include "vmm/qemu/gdb-client.h"
#include "vmm/qemu/qemu-proc.h"

static void test_frame(void)
{
	char out[64];
	long n;

	/* "$g#67": 'g' is 0x67. */
	n = gdb_frame("g", out, sizeof(out));
	CHECK(n == 5 && !memcmp(out, "$g#67", 5), "frame of 'g' is $g#67 (%.*s)", (int)(n > 0 ? n : 0), out);
	n = gdb_frame("m0,4", out, sizeof(out));
	CHECK(n > 0 && !memcmp(out, "$m0,4#fd", 8), "frame of 'm0,4' carries checksum fd (%.*s)", (int)(n > 0 ? n : 0), out);
	/* '#' (0x23) goes as '}' then 0x03; the checksum covers the escaped bytes. */
	n = gdb_frame("a#b", out, sizeof(out));
	CHECK(n == 8 && !memcmp(out, "$a}\003b#", 6), "'#' in a command is escaped");
	CHECK(gdb_frame("abcdef", out, 8) == -ENOSPC, "a frame that does not fit is -ENOSPC");
}

static void test_decode(void)
{
	char out[128];
	long n;

	n = gdb_decode((const uint8_t *)"0* ", 3, out, sizeof(out));
	CHECK(n == 4 && !memcmp(out, "0000", 4), "'0* ' decodes to 0000 (run of 3 more)");
	n = gdb_decode((const uint8_t *)"a}\003b", 4, out, sizeof(out));
	CHECK(n == 3 && !memcmp(out, "a#b", 3), "an escaped '#' decodes");
	CHECK(gdb_decode((const uint8_t *)"ab}", 3, out, sizeof(out)) == -EINVAL, "a trailing escape is rejected");
	CHECK(gdb_decode((const uint8_t *)"*!", 2, out, sizeof(out)) == -EINVAL, "a repeat with nothing before is rejected");
	CHECK(gdb_decode((const uint8_t *)"a*~a*~a*~", 9, out, 100) == -ENOSPC,
	      "repeats past the buffer are -ENOSPC, not an overflow");
	CHECK(gdb_decode((const uint8_t *)"a*\001", 3, out, sizeof(out)) == -EINVAL, "a repeat count below 3 is rejected");
}

static void test_stop(void)
{
	struct gdb_stop st;

	CHECK(!gdb_parse_stop("T05thread:01;", &st) && st.kind == GDB_STOP_SIGNAL && st.sig == 5 && st.thread == 1,
	      "T05thread:01; is SIGTRAP on thread 1");
	CHECK(!gdb_parse_stop("T05thread:p01.02;hwbreak:;", &st) && st.thread == 2 && st.hwbreak,
	      "the multiprocess form and hwbreak");
	CHECK(!gdb_parse_stop("T0506:0*,;07:abc;thread:0a;swbreak:;", &st) && st.thread == 10 && st.swbreak,
	      "register pairs are skipped");
	CHECK(!gdb_parse_stop("S02", &st) && st.sig == 2, "S02");
	CHECK(!gdb_parse_stop("W00", &st) && st.kind == GDB_STOP_EXITED, "W00: the guest exited");
	CHECK(!gdb_parse_stop("X09", &st) && st.kind == GDB_STOP_KILLED && st.sig == 9, "X09");
	CHECK(gdb_parse_stop("OK", &st) == -EINVAL, "OK is no stop reply");
	CHECK(gdb_parse_stop("T05thread:zz;", &st) == -EINVAL, "a bad thread id is rejected");
	CHECK(gdb_parse_stop("T05thread", &st) == -EINVAL, "a pair without ':' is rejected");
	CHECK(gdb_parse_stop("T05thread:01", &st) == -EINVAL, "a pair without ';' is rejected");
	CHECK(gdb_parse_stop("T0", &st) == -EINVAL, "a truncated signal is rejected");
	/* fuzz-gdb's find: a one-byte reply was read past its end. */
	CHECK(gdb_parse_stop("T", &st) == -EINVAL && gdb_parse_stop("", &st) == -EINVAL,
	      "a reply of one byte, or none, is rejected");
	uint8_t b;

	CHECK(gdb_unhex("g", 2, &b, 1) == -EINVAL, "a non-hex first digit stops before the second is read");
}

/* A peer on the other end of a socket pair: sends raw bytes, reads what the client sent. */
static int pair(struct gdb *g, int timeout_ms)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return -1;
	memset(g, 0, sizeof(*g));
	g->fd = sv[0];
	g->timeout_ms = timeout_ms;
	g->packet_size = 256;
	return sv[1];
}

static void test_peer(void)
{
	static struct gdb g;
	struct errbuf err = { "" };
	char buf[256];
	ssize_t n;
	int peer, rc;

	/* A good packet after noise and an ack: decoded and acknowledged. */
	peer = pair(&g, 1000);
	n = write(peer, "+junk$OK#9a", 11);
	rc = gdb_receive(&g, 1000, &err);
	CHECK(n == 11 && !rc && !strcmp(g.pkt, "OK"), "a packet after noise is received (%s)", err.msg);
	n = read(peer, buf, sizeof(buf));
	CHECK(n == 1 && buf[0] == '+', "... and acknowledged with '+'");
	/* A bad checksum: '-', then the resent packet is taken. */
	n = write(peer, "$OK#00$OK#9a", 12);
	rc = gdb_receive(&g, 1000, &err);
	n = read(peer, buf, sizeof(buf));
	CHECK(!rc && !strcmp(g.pkt, "OK") && n == 2 && !memcmp(buf, "-+", 2),
	      "a bad checksum is answered '-', the resend '+'");
	/* Bad checksums without end: an error, not a loop. */
	n = write(peer, "$a#00$a#00$a#00$a#00$a#00", 25);
	rc = gdb_receive(&g, 1000, &err);
	CHECK(rc == -EPROTO, "endless bad checksums end in an error: %s", err.msg);
	/* A peer that says nothing: -ETIMEDOUT within the time asked. */
	g.in_len = 0;
	rc = gdb_receive(&g, 100, &err);
	CHECK(rc == -ETIMEDOUT, "no reply: a timeout, not a hang (%s)", err.msg);
	/* A NUL byte inside a packet is refused ('a' + 'b' = 0xc3). */
	n = write(peer, "$a\0b#c3", 7);
	rc = gdb_receive(&g, 1000, &err);
	CHECK(n == 7 && rc == -EPROTO, "a NUL inside a packet is refused: %s", err.msg);
	/* The peer goes away: ECONNRESET. */
	close(peer);
	g.in_len = 0;
	rc = gdb_receive(&g, 1000, &err);
	CHECK(rc == -ECONNRESET, "a closed peer is an error: %s", err.msg);
	gdb_close(&g);

	/* A memory read reply of the wrong length is rejected. */
	peer = pair(&g, 1000);
	n = write(peer, "+$0102#c3", 9);
	{
		uint8_t mem[4];

		rc = gdb_read_mem(&g, 0x1000, mem, 4, &err);
		CHECK(rc == -EPROTO, "a short memory reply is rejected: %s", err.msg);
		n = write(peer, "+$E14#aa", 8);
		rc = gdb_read_mem(&g, 0x1000, mem, 2, &err);
		CHECK(rc == -EFAULT, "an error reply to 'm' is -EFAULT: %s", err.msg);
	}
	close(peer);
	gdb_close(&g);
}

static void test_args(void)
{
	struct qemu_config cfg = {
		.binary = "qemu-system-aarch64", .machine = "virt", .cpu = "max", .ncpus = 2,
		.mem_size = 512ULL << 20, .kernel = "Image", .cmdline = "console=ttyAMA0 nokaslr",
		.dtb = "vt.dtb", .console_path = "/dev/fd/1",
	};
	char store[4096], *argv[QEMU_MAX_ARGS + 1], joined[4096] = "";
	struct errbuf err;
	int rc = qemu_build_args(&cfg, 3, 4, store, sizeof(store), argv, &err);

	for (char **a = argv; !rc && *a; a++) {
		strcat(joined, *a);
		strcat(joined, " ");
	}
	CHECK(!rc && strstr(joined, "-M virt,memory-backend=vt-ram ") &&
	      strstr(joined, "-object memory-backend-file,id=vt-ram,size=512M,mem-path=/dev/fd/3,share=on ") &&
	      strstr(joined, "-chardev socket,id=vt-gdb,fd=4 -gdb chardev:vt-gdb ") &&
	      strstr(joined, "-append console=ttyAMA0 nokaslr -dtb vt.dtb ") && strstr(joined, " -S "),
	      "QEMU's arguments: shared RAM at fd 3, gdbstub at fd 4, stopped (%s)", joined);
	CHECK(!strstr(joined, "-icount"), "no instruction counting unless asked");
	cfg.deterministic = 1;
	rc = qemu_build_args(&cfg, 3, 4, store, sizeof(store), argv, &err);
	joined[0] = 0;
	for (char **a = argv; !rc && *a; a++) {
		strcat(joined, *a);
		strcat(joined, " ");
	}
	CHECK(!rc && strstr(joined, " -icount shift=3,sleep=off ") &&
	      strstr(joined, " -rtc base=2026-01-01T00:00:00,clock=vm ") && strstr(joined, " -seed 1 "),
	      "--deterministic: the instruction count is the clock, a fixed RTC, a seeded generator (%s)", joined);
	cfg.deterministic = 0;
	cfg.mem_size = 3 << 19;
	CHECK(qemu_build_args(&cfg, 3, 4, store, sizeof(store), argv, &err) == -EINVAL,
	      "memory not a whole number of MiB is refused: %s", err.msg);
	cfg.mem_size = 512ULL << 20;
	CHECK(qemu_build_args(&cfg, 3, 4, store, 64, argv, &err) == -E2BIG, "a store too small is -E2BIG");
}

int main(void)
{
	test_frame();
	test_decode();
	test_stop();
	test_peer();
	test_args();
	return check_exit();
}
