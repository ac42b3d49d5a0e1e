// SPDX-License-Identifier: GPL-2.0
/* The flight recorder's ring of events (flightrec.h). */
#include <inttypes.h>
#include <stdlib.h>

#include "vmm/output/flightrec.h"
#include "vmm/output/text.h"

struct flightrec {
	unsigned cap;
	uint64_t seen;			/* events[seen % cap] is the next slot */
	struct ring_event ev[];
};

struct flightrec *flightrec_new(unsigned n)
{
	struct flightrec *fr;

	if (!n || n > FLIGHTREC_MAX)
		return NULL;
	fr = calloc(1, sizeof(*fr) + (size_t)n * sizeof(fr->ev[0]));
	if (fr)
		fr->cap = n;
	return fr;
}

void flightrec_free(struct flightrec *fr)
{
	free(fr);
}

void flightrec_event(struct flightrec *fr, const struct ring_event *ev)
{
	fr->ev[fr->seen++ % fr->cap] = *ev;
}

uint64_t flightrec_seen(const struct flightrec *fr)
{
	return fr->seen;
}

unsigned flightrec_print(const struct flightrec *fr, const struct trace_meta *meta, FILE *out)
{
	uint64_t kept = fr->seen < fr->cap ? fr->seen : fr->cap, first = fr->seen - kept;
	struct trace_text t;
	char line[1024];

	trace_text_init(&t, out, meta->syms, meta->tsc_khz);
	t.tsc_base = meta->tsc_base;
	t.fnargs = meta->fnargs;	/* --args: the calls' arguments too */
	fprintf(out, "vmmtrace: flight recorder: the last %" PRIu64 " of %" PRIu64 " events, oldest first:\n",
		kept, fr->seen);
	for (uint64_t i = first; i < fr->seen; i++) {
		trace_text_format(&t, &fr->ev[i % fr->cap], line, sizeof(line));
		fprintf(out, "%s\n", line);
	}
	return (unsigned)kept;
}
