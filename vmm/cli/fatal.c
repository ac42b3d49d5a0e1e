// SPDX-License-Identifier: GPL-2.0
/*
 * The fatal-signal handler (fatal.h). It runs on a process that may have a
 * corrupted heap, so it touches neither the heap nor stdio nor the trace
 * writer: the line is formatted at installation into static memory, and the
 * handler only write(2)s it. It does not try to save the trace either: the
 * raw writer hands every complete chunk to the kernel as it closes it
 * (trace-raw.c), so the file already holds all that can be trusted; what is
 * lost is the open chunk and the events not yet ordered (docs/RELIABILITY.md).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vmm/cli/fatal.h"

static const struct { int sig; const char *name; } fatal_sigs[] = {
	{ SIGSEGV, "SIGSEGV" }, { SIGBUS, "SIGBUS" }, { SIGILL, "SIGILL" },
	{ SIGFPE, "SIGFPE" }, { SIGABRT, "SIGABRT" },
};
#define FATAL_NSIGS (sizeof(fatal_sigs) / sizeof(fatal_sigs[0]))

/* One finished line per signal, and the action each replaced. */
static char fatal_line[FATAL_NSIGS][640];
static struct sigaction fatal_old[FATAL_NSIGS];

static void fatal_handler(int sig, siginfo_t *info, void *uc)
{
	(void)uc;
	for (unsigned i = 0; i < FATAL_NSIGS; i++) {
		if (fatal_sigs[i].sig != sig)
			continue;
		(void)!write(2, fatal_line[i], strlen(fatal_line[i]));
		/* The previous action (default, or a sanitizer's report) takes it from here. */
		sigaction(sig, &fatal_old[i], NULL);
		/*
		 * A fault the CPU raised happens again when the handler returns;
		 * a signal sent by kill(2) or abort(3) does not: send it again.
		 * It stays blocked until this handler returns.
		 */
		if (info->si_code <= 0)
			raise(sig);
		return;
	}
}

void fatal_signals_install(const char *cmd, const char *path, int raw)
{
	struct sigaction sa = { .sa_sigaction = fatal_handler, .sa_flags = SA_SIGINFO };

	for (unsigned i = 0; i < FATAL_NSIGS; i++) {
		if (!path)
			snprintf(fatal_line[i], sizeof(fatal_line[i]), "vmmtrace %s: %s: vmmtrace crashed\n",
				 cmd, fatal_sigs[i].name);
		else if (raw)
			snprintf(fatal_line[i], sizeof(fatal_line[i]),
				 "vmmtrace %s: %s: vmmtrace crashed; %.400s reads back up to its last "
				 "complete chunk (vmmtrace report)\n", cmd, fatal_sigs[i].name, path);
		else
			snprintf(fatal_line[i], sizeof(fatal_line[i]),
				 "vmmtrace %s: %s: vmmtrace crashed; %.400s is incomplete (only the raw "
				 "format reads back after a crash)\n", cmd, fatal_sigs[i].name, path);
		sigaction(fatal_sigs[i].sig, &sa, &fatal_old[i]);
	}
}
