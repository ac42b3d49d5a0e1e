/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A last line when vmmtrace itself dies of a fault (SIGSEGV, SIGBUS, SIGILL,
 * SIGFPE) or an abort: what the trace file holds. The process then dies of
 * the same signal, as it would have without this (status 128+N, a core if
 * enabled; an AddressSanitizer build still reports the fault).
 */
#ifndef VMM_CLI_FATAL_H
#define VMM_CLI_FATAL_H

/*
 * Installs the handler; path: the trace file (NULL: stdout, or no trace),
 * raw: whether it is in the raw format (which reads back after a crash).
 */
void fatal_signals_install(const char *cmd, const char *path, int raw);

#endif
