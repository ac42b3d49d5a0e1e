/* SPDX-License-Identifier: GPL-2.0 */
/* vmmtrace boot's live progress line on a terminal (progress.c). */
#ifndef VMM_CLI_PROGRESS_H
#define VMM_CLI_PROGRESS_H

struct progress;
struct tracer;

/*
 * Refreshes one status line on stderr a few times per second while the
 * guest runs: guest time, events, events per second, drops, phase. Does
 * nothing (*p = NULL, returns 0) when stderr is not a terminal.
 */
int progress_start(struct progress **p, struct tracer *t);
/* Stops and erases the line (p may be NULL). */
void progress_stop(struct progress *p);

#endif
