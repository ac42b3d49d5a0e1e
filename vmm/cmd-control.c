// SPDX-License-Identifier: GPL-2.0
/* vmmtrace detach / status / nmi / stop: one request on a guest's control socket. */
#include <stdio.h>
#include <string.h>

#include "vmm/cmd.h"
#include "vmm/control-frame.h"
#include "vmm/ctl-client.h"

static int control_run(const char *name, int argc, char **argv, uint16_t type, int globs)
{
	static char reply[VT_CTL_MAX_PAYLOAD + 1];
	char payload[VT_CTL_MAX_PAYLOAD];
	struct errbuf err;
	int len = 0, status = 0;

	if (argc < 2 || !strcmp(argv[1], "--help") || argv[1][0] == '-') {
		fprintf(argc >= 2 && !strcmp(argv[1], "--help") ? stdout : stderr,
			"usage: vmmtrace %s SOCKET%s\n", name, globs ? " [GLOB...]" : "");
		return argc >= 2 && !strcmp(argv[1], "--help") ? EXIT_OK : EXIT_BAD_INPUT;
	}
	if (!globs && argc > 2) {
		fprintf(stderr, "vmmtrace %s: unexpected argument '%s'\n", name, argv[2]);
		return EXIT_BAD_INPUT;
	}
	if (globs) {
		len = ctl_frame_pack_patterns(payload, sizeof(payload), (const char **)argv + 2, argc - 2, NULL, 0);
		if (len < 0) {
			fprintf(stderr, "vmmtrace %s: the patterns are too long together\n", name);
			return EXIT_BAD_INPUT;
		}
	}
	if (ctl_request(argv[1], type, payload, len, reply, sizeof(reply), &status, &err)) {
		fprintf(stderr, "vmmtrace %s: %s\n", name, err.msg);
		return EXIT_BAD_INPUT;
	}
	if (status) {
		fprintf(stderr, "vmmtrace %s: %s\n", name, reply);
		return EXIT_BAD_INPUT;
	}
	fputs(reply, stdout);
	if (reply[0] && reply[strlen(reply) - 1] != '\n')
		putchar('\n');
	return EXIT_OK;
}

int cmd_detach(int argc, char **argv)
{
	return control_run("detach", argc, argv, VT_CTL_DETACH, 1);
}

int cmd_status(int argc, char **argv)
{
	return control_run("status", argc, argv, VT_CTL_STATUS, 0);
}

int cmd_nmi(int argc, char **argv)
{
	return control_run("nmi", argc, argv, VT_CTL_NMI, 0);
}

int cmd_stop(int argc, char **argv)
{
	return control_run("stop", argc, argv, VT_CTL_STOP, 0);
}
