/* SPDX-License-Identifier: GPL-2.0 */
/* Subcommands and the exit statuses they return (documented in README). */
#ifndef VMM_CMD_H
#define VMM_CMD_H

enum exit_status {
	EXIT_OK = 0,		/* guest rebooted / powered off, command done */
	EXIT_FAILURE_RUN = 1,	/* host-side failure while running */
	EXIT_BAD_INPUT = 2,	/* bad arguments or input files */
	EXIT_GUEST_PANIC = 3,	/* guest kernel panicked */
	EXIT_TRIPLE_FAULT = 4,	/* guest triple-faulted (KVM_EXIT_SHUTDOWN) */
	EXIT_KVM_INTERNAL = 5,	/* KVM internal error the VMM could not assist */
	EXIT_TRACE_WRITE = 6,	/* the trace file could not be written (disk full, ...) */
	EXIT_GUEST_HANG = 7,	/* the guest made no progress for --hang SECS */
	EXIT_SIGNAL_BASE = 128,	/* stopped by signal N: 128 + N, as shells do */
};

/*
 * The one shape of a command's failure: "vmmtrace CMD: message" on stderr,
 * one line; returns status so that a command can `return cmd_fail(...)`.
 */
int cmd_fail(const char *cmd, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

int cmd_boot(int argc, char **argv);
int cmd_symbols(int argc, char **argv);
int cmd_encode(int argc, char **argv);
int cmd_attach(int argc, char **argv);
int cmd_detach(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_nmi(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);

#endif
