/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Text output in the layout of ftrace's `trace` file (function tracer):
 *   TASK-PID [CPU] FLAGS TIMESTAMP: function <-parent
 * with --args, function(name=value, ...) as ftrace's func-args option prints
 * it (fnargs.h). docs/TRACING.md, docs/TASKS.md.
 */
#ifndef VMM_OUTPUT_TEXT_H
#define VMM_OUTPUT_TEXT_H

#include <stdint.h>
#include <stdio.h>

#include "vmm/output/fnargs.h"
#include "vmm/output/event.h"
#include "vmm/image/symtab.h"

struct trace_text {
	FILE *out;
	const struct symtab *syms;
	uint64_t tsc_khz;
	uint64_t tsc_base;	/* guest TSC when the guest started: time zero */
	struct fnargs *fnargs;	/* --args: the prototypes; NULL prints no arguments */
	int error;		/* errno of the first failed write */
};

void trace_text_init(struct trace_text *t, FILE *out, const struct symtab *syms, uint64_t tsc_khz);
void trace_text_header(struct trace_text *t, unsigned ncpus);
/* trace_emit_fn: opaque is the trace_text. */
int trace_text_event(void *opaque, const struct ring_event *ev);
/* Formats one event line (no newline) into buf; for tests. */
void trace_text_format(const struct trace_text *t, const struct ring_event *ev, char *buf, size_t len);

#endif
