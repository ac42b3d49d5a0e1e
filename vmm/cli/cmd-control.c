// SPDX-License-Identifier: GPL-2.0
/* vmmtrace detach / status / nmi / stop: one request on a guest's control socket. */
#include <stdio.h>
#include <string.h>

#include "vmm/cli/cmd.h"
#include "vmm/control/control-frame.h"
#include "vmm/control/ctl-client.h"

static int control_run(const char *name, int argc, char **argv, uint16_t type, int globs)
{
	static char reply[VT_CTL_MAX_PAYLOAD + 1];
	char payload[VT_CTL_MAX_PAYLOAD];
	struct errbuf err;
	const char *args = globs ? " [GLOB...]" : "";
	int len = 0, status = 0;

	if (argc >= 2 && !strcmp(argv[1], "--help")) {
		printf("usage: vmmtrace %s SOCKET%s\n", name, args);
		return EXIT_OK;
	}
	if (argc < 2)
		return cmd_fail(name, EXIT_BAD_INPUT, "SOCKET is missing; usage: vmmtrace %s SOCKET%s", name, args);
	if (argv[1][0] == '-')
		return cmd_fail(name, EXIT_BAD_INPUT, "unknown option '%s'; usage: vmmtrace %s SOCKET%s",
				argv[1], name, args);
	if (!globs && argc > 2)
		return cmd_fail(name, EXIT_BAD_INPUT, "unexpected argument '%s'", argv[2]);
	for (int i = 2; globs && i < argc; i++)
		if (!argv[i][0])
			return cmd_fail(name, EXIT_BAD_INPUT, "bad pattern: an empty GLOB (argument %d)", i);
	if (globs) {
		len = ctl_frame_pack_patterns(payload, sizeof(payload), (const char **)argv + 2, argc - 2, NULL, 0);
		if (len < 0)
			return cmd_fail(name, EXIT_BAD_INPUT, "the patterns are too long together");
	}
	if (ctl_request(argv[1], type, payload, len, reply, sizeof(reply), &status, &err))
		return cmd_fail(name, EXIT_BAD_INPUT, "%s", err.msg);
	if (status)
		return cmd_fail(name, EXIT_BAD_INPUT, "%s", reply);
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
	return control_run("status", argc, argv, VT_CTL_STATUS, 1);
}

int cmd_nmi(int argc, char **argv)
{
	return control_run("nmi", argc, argv, VT_CTL_NMI, 0);
}

int cmd_stop(int argc, char **argv)
{
	return control_run("stop", argc, argv, VT_CTL_STOP, 0);
}
