// SPDX-License-Identifier: GPL-2.0
/*
 * The slices of --graph's calls in a Perfetto trace (perfetto-calls.h).
 * Depths are those of the task's shadow stack in the stub, so a call's
 * entry at depth d says that whatever the track had open at d or deeper
 * will never return through the stub (a task that exited inside them, or
 * whose frames the stub dropped): those slices end there, marked, and the
 * nesting the UI shows stays the calls' own.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/output/perfetto-calls.h"
#include "vmm/output/perfetto.h"

/* The stack of ev's track; made when make is set. NULL: none, or out of memory (*rc). */
static struct perfetto_stack *perfetto_calls_stack(struct perfetto_calls *c, const struct ring_event *ev,
						   int make, int *rc)
{
	uint64_t key = trace_perfetto_track(ev), idx;
	int fresh;

	*rc = 0;
	if (!make) {
		size_t s;

		if (!c->tracks.mask)
			return NULL;
		s = perfetto_intern_slot(&c->tracks, key);
		return c->tracks.iids[s] ? &c->stacks[c->tracks.iids[s] - 1] : NULL;
	}
	if (!c->next)
		c->next = 1;
	if ((*rc = perfetto_intern(&c->tracks, key, &c->next, &idx, &fresh)))
		return NULL;
	if (idx > c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		struct perfetto_stack *s = realloc(c->stacks, cap * sizeof(*s));

		if (!s) {
			*rc = -ENOMEM;
			return NULL;
		}
		memset(s + c->cap, 0, (cap - c->cap) * sizeof(*s));
		c->stacks = s;
		c->cap = cap;
	}
	return &c->stacks[idx - 1];
}

/* Ends the open calls of s at depth min_depth or deeper, as not returned, at ev's time. */
static int perfetto_calls_unwind(struct trace_writer *w, struct perfetto_stack *s, const struct ring_event *ev,
				 uint32_t min_depth)
{
	int rc = 0;

	while (!rc && s->n && s->f[s->n - 1].depth >= min_depth) {
		s->n--;
		rc = trace_perfetto_emit(w, TRACE_PERFETTO_FUNC_UNRETURNED, ev, NULL);
	}
	return rc;
}

int perfetto_calls_enter(struct trace_writer *w, struct perfetto_calls *c, const struct ring_event *ev)
{
	struct perfetto_stack *s;
	int rc;

	s = perfetto_calls_stack(c, ev, 1, &rc);
	if (!s)
		return rc;
	if ((rc = perfetto_calls_unwind(w, s, ev, ev->depth)))
		return rc;
	if (s->n == s->cap) {
		unsigned cap = s->cap ? 2 * s->cap : 16;
		struct perfetto_frame *f = realloc(s->f, cap * sizeof(*f));

		if (!f)
			return -ENOMEM;
		s->f = f;
		s->cap = cap;
	}
	s->f[s->n++] = (struct perfetto_frame){ .func = ev->func, .depth = ev->depth };
	return 0;
}

int perfetto_calls_exit(struct trace_writer *w, struct perfetto_calls *c, const struct ring_event *ev)
{
	int rc;
	struct perfetto_stack *s = perfetto_calls_stack(c, ev, 0, &rc);
	unsigned i;

	if (!s)
		return 0;
	/* Its own call, innermost first: an exit of a call not open here leaves the stack alone. */
	for (i = s->n; i && s->f[i - 1].depth > ev->depth; i--)
		;
	if (!i || s->f[i - 1].depth != ev->depth || s->f[i - 1].func != ev->func)
		return 0;
	if ((rc = perfetto_calls_unwind(w, s, ev, ev->depth + 1)))
		return rc;
	s->n--;
	return trace_perfetto_emit(w, TRACE_PERFETTO_FUNC_END, ev, NULL);
}

void perfetto_calls_free(struct perfetto_calls *c)
{
	for (size_t i = 0; i < c->cap; i++)
		free(c->stacks[i].f);
	free(c->stacks);
	perfetto_intern_free(&c->tracks);
	memset(c, 0, sizeof(*c));
}
