// SPDX-License-Identifier: GPL-2.0
/*
 * Rebuilding calls from --graph's hooked entries and exits (calls.h).
 * Depths are the task's shadow-stack depths in the stub (docs/TRACING.md,
 * "Call graphs"), so an entry at depth d tells that the task's calls at d
 * or deeper ended without a return the stub saw; an exit matches the
 * task's open call of its depth and function. An exit without its entry
 * (the trace began inside the call) is still a whole call: the exit
 * carries the time its call began.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/output/calls.h"

struct call_stack {
	uint64_t key;			/* 0: free slot */
	struct call *calls;
	unsigned n, cap;
};

struct call_tracker {
	call_fn *fn;
	void *opaque;
	struct call_stack *tasks;	/* open addressing by key */
	size_t ntasks, cap;		/* cap: a power of two */
};

int call_tracker_new(struct call_tracker **out, call_fn *fn, void *opaque)
{
	struct call_tracker *t = calloc(1, sizeof(*t));

	if (t)
		t->tasks = calloc(64, sizeof(*t->tasks));
	if (!t || !t->tasks) {
		free(t);
		return -ENOMEM;
	}
	t->fn = fn;
	t->opaque = opaque;
	t->cap = 64;
	*out = t;
	return 0;
}

void call_tracker_free(struct call_tracker *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->cap; i++)
		free(t->tasks[i].calls);
	free(t->tasks);
	free(t);
}

static size_t call_slot(const struct call_stack *tasks, size_t cap, uint64_t key)
{
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 29) & (cap - 1);

	while (tasks[i].key && tasks[i].key != key)
		i = (i + 1) & (cap - 1);
	return i;
}

static int call_grow(struct call_tracker *t)
{
	size_t cap = 2 * t->cap;
	struct call_stack *n = calloc(cap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++)
		if (t->tasks[i].key)
			n[call_slot(n, cap, t->tasks[i].key)] = t->tasks[i];
	free(t->tasks);
	t->tasks = n;
	t->cap = cap;
	return 0;
}

/* The open calls of key; made when make. NULL: none (or out of memory when make). */
static struct call_stack *call_stack_of(struct call_tracker *t, uint64_t key, int make)
{
	size_t i = call_slot(t->tasks, t->cap, key);

	if (t->tasks[i].key || !make)
		return t->tasks[i].key ? &t->tasks[i] : NULL;
	if (2 * (t->ntasks + 1) > t->cap) {
		if (call_grow(t))
			return NULL;
		i = call_slot(t->tasks, t->cap, key);
	}
	t->tasks[i].key = key;
	t->ntasks++;
	return &t->tasks[i];
}

/* Pops the top call of s, ended at end as how, and hands it on; its length goes to its caller's. */
static int call_pop(struct call_tracker *t, struct call_stack *s, uint64_t end, enum call_end how)
{
	struct call c = s->calls[--s->n];

	c.end = end;
	c.how = (uint8_t)how;
	if (how == CALL_RETURNED && s->n)
		s->calls[s->n - 1].child += call_ticks(&c);
	return t->fn(t->opaque, &c);
}

static struct call call_of(const struct ring_event *ev)
{
	struct call c = {
		.func = ev->func, .parent = ev->parent, .start = ev->tsc, .task = calls_task_key(ev),
		.depth = ev->depth, .cpu = ev->cpu, .entered = 1,
	};

	if (ev->flags & VT_REC_FLAG_TASK) {
		c.pid = ev->pid;
		memcpy(c.comm, ev->comm, sizeof(c.comm));
	}
	return c;
}

static int call_enter(struct call_tracker *t, const struct ring_event *ev)
{
	struct call_stack *s = call_stack_of(t, calls_task_key(ev), 1);
	int rc = 0;

	if (!s)
		return -ENOMEM;
	while (!rc && s->n && s->calls[s->n - 1].depth >= ev->depth)
		rc = call_pop(t, s, ev->tsc, CALL_UNRETURNED);
	if (rc)
		return rc;
	if (s->n == s->cap) {
		unsigned cap = s->cap ? 2 * s->cap : 16;
		struct call *n = realloc(s->calls, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->calls = n;
		s->cap = cap;
	}
	s->calls[s->n++] = call_of(ev);
	return 0;
}

static int call_exit(struct call_tracker *t, const struct ring_event *ev)
{
	struct call_stack *s = call_stack_of(t, calls_task_key(ev), 0);
	unsigned i = s ? s->n : 0;
	struct call c;
	int rc = 0;

	while (i && s->calls[i - 1].depth > ev->depth)
		i--;
	if (i && s->calls[i - 1].depth == ev->depth && s->calls[i - 1].func == ev->func) {
		while (!rc && s->n > i)
			rc = call_pop(t, s, ev->tsc, CALL_UNRETURNED);
		s->calls[s->n - 1].retval = ev->retval;
		return rc ? rc : call_pop(t, s, ev->tsc, CALL_RETURNED);
	}
	/* Begun before the trace: the exit alone says when. */
	c = call_of(ev);
	c.parent = 0;
	c.entered = 0;
	c.start = ev->calltime;
	c.end = ev->tsc;
	c.retval = ev->retval;
	c.how = CALL_RETURNED;
	if (i && s->calls[i - 1].depth < ev->depth)
		s->calls[i - 1].child += call_ticks(&c);
	return t->fn(t->opaque, &c);
}

int call_tracker_event(struct call_tracker *t, const struct ring_event *ev)
{
	if (ev->flags & RING_EV_VM)
		return 0;
	if (ev->flags & VT_REC_FLAG_EXIT)
		return call_exit(t, ev);
	if (ev->flags & VT_REC_FLAG_HOOKED)
		return call_enter(t, ev);
	return 0;
}

int call_tracker_finish(struct call_tracker *t, uint64_t end_tsc)
{
	int rc = 0;

	for (size_t i = 0; !rc && i < t->cap; i++)
		while (!rc && t->tasks[i].key && t->tasks[i].n)
			rc = call_pop(t, &t->tasks[i], end_tsc, CALL_RUNNING);
	return rc;
}
