/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --graph in a Perfetto trace: each hooked call is a slice on its track,
 * begun at its entry and ended at its return (perfetto-calls.c). A slice
 * end closes the innermost open slice of its track, so the writer keeps
 * each track's open calls and ends them in order.
 */
#ifndef VMM_OUTPUT_PERFETTO_CALLS_H
#define VMM_OUTPUT_PERFETTO_CALLS_H

#include <stdint.h>

#include "vmm/output/perfetto-intern.h"
#include "vmm/output/writer.h"

struct perfetto_frame {
	uint64_t func;
	uint32_t depth;
};

struct perfetto_stack {
	struct perfetto_frame *f;
	unsigned n, cap;
};

/* Each track's open calls: track uuid -> 1 + index in stacks. */
struct perfetto_calls {
	struct perfetto_intern tracks;
	uint64_t next;			/* 1 + the next stack's index */
	struct perfetto_stack *stacks;
	size_t cap;
};

/*
 * A hooked entry: first ends, as not returned, the calls of its track as
 * deep or deeper (the stub dropped their frames: the task went on below
 * them), then opens the call. The caller writes its slice's begin.
 */
int perfetto_calls_enter(struct trace_writer *w, struct perfetto_calls *c, const struct ring_event *ev);
/*
 * An exit: ends the calls of its track deeper than it as not returned, then
 * its own call's slice, with its return value. An exit whose call is not
 * open on its track (the trace began inside it) writes nothing.
 */
int perfetto_calls_exit(struct trace_writer *w, struct perfetto_calls *c, const struct ring_event *ev);
void perfetto_calls_free(struct perfetto_calls *c);

#endif
