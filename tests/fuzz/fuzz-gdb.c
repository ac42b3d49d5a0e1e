// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for what the QEMU backend does with the gdbstub's
 * bytes (vmm/qemu/gdb-client.c): the input is what the peer sends on the socket.
 * It is fed to the packet reader through a socket pair until the reader
 * stops with a packet or an error, and every packet it returns goes
 * through the stop-reply and hex parsers, as the backend would use it.
 * The pure helpers also get the raw input. Nothing may crash, hang or
 * read past what it was given.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vmm/qemu/gdb-client.h"

static struct gdb g;

static void use_packet(const char *pkt, size_t len)
{
	struct gdb_stop st;
	uint8_t bytes[256];

	gdb_parse_stop(pkt, &st);
	gdb_unhex(pkt, len, bytes, sizeof(bytes));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char out[512], *copy;
	int sv[2];

	gdb_decode(data, size, out, sizeof(out));
	gdb_decode(data, size, out, 3);
	copy = malloc(size + 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = 0;
	use_packet(copy, strlen(copy));
	free(copy);

	if (size > 60000 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 0;
	memset(&g, 0, offsetof(struct gdb, in));
	g.fd = sv[0];
	g.timeout_ms = 0;
	g.packet_size = 256;
	g.in_len = 0;
	if (size && write(sv[1], data, size) != (ssize_t)size) {
		close(sv[0]);
		close(sv[1]);
		return 0;
	}
	close(sv[1]);	/* the peer goes away after its bytes: the reader must end */
	for (int i = 0; i < 64 && !gdb_receive(&g, 0, NULL); i++)
		use_packet(g.pkt, g.pkt_len);
	close(sv[0]);
	return 0;
}
