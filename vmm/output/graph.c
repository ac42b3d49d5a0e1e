// SPDX-License-Identifier: GPL-2.0
/*
 * --graph's text: the layout of the kernel's function_graph tracer
 * (kernel/trace/trace_functions_graph.c, default options: CPU, overhead
 * marks, durations; funcgraph-retval for --retval), from hooked entries and
 * the exit records of their returns.
 *
 * A call whose next event on its CPU is its own return is a leaf, printed on
 * one line ("func();" with its duration); otherwise its entry opens a block
 * ("func() {") that its return closes ("}" with the duration). Deciding
 * needs that next event, so an entry waits for it: its line comes out when
 * the CPU's next event arrives, after lines of other CPUs stamped earlier
 * than that event (function_graph peeks the same way, per CPU).
 *
 * Calls still running when the trace ends (the guest stopped, or an attach
 * detached) are listed at the end, each on a comment line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/output/vmevent.h"
#include "vmm/output/writer.h"

#define GRAPH_INDENT 2		/* TRACE_GRAPH_INDENT */
#define GRAPH_PROCINFO 14	/* TRACE_GRAPH_PROCINFO_LENGTH */

/* A call entered and not yet returned, on its task's list. */
struct graph_call {
	uint64_t func;
	uint32_t depth;
	uint16_t cpu;
};

/* A task with calls in flight: open addressing by task pointer. */
struct graph_task {
	uint64_t task;			/* 0: free */
	int32_t pid;
	char comm[16];
	struct graph_call *calls;
	unsigned n, cap;
};

struct graph_cpu {
	int pending;			/* an entry waits for its CPU's next event */
	struct ring_event entry;
	int32_t last_pid;		/* -1: no event yet */
	char last_comm[16];
	uint32_t depth;			/* of the last line, for events without a depth */
	uint64_t opened[VT_SHADOW_FRAMES];	/* the block opened at each depth (enter_funcs) */
};

struct trace_writer {
	FILE *out;
	struct trace_meta meta;
	struct graph_cpu *cpu;
	unsigned ncpus, cpu_width;
	struct graph_task *tasks;
	size_t ntasks, tasks_cap;	/* in use, slots (a power of two) */
	int error;
};

static void graph_puts(struct trace_writer *w, const char *line)
{
	if (!w->error && fputs(line, w->out) == EOF)
		w->error = errno ? errno : EIO;
}

static const char *graph_sym(const struct trace_writer *w, uint64_t addr, char *buf, size_t len)
{
	const struct symtab *syms = w->meta.syms;
	uint64_t off;
	const struct symbol *s = syms ? symtab_find_addr(syms, addr, &off) : NULL;

	if (s && !off)
		return symtab_name(syms, s);
	snprintf(buf, len, "0x%" PRIx64, addr);
	return buf;
}

/* ftrace's mark for a duration (trace_find_mark): how far past 10 µs it is. */
static char graph_mark(uint64_t ns)
{
	static const struct {
		uint64_t over;
		char mark;
	} marks[] = {
		{ 1000000000ULL, '$' }, { 100000000ULL, '@' }, { 10000000ULL, '*' },
		{ 1000000ULL, '#' }, { 100000ULL, '!' }, { 10000ULL, '+' },
	};

	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
		if (ns > marks[i].over)
			return marks[i].mark;
	return ' ';
}

/*
 * The duration column as trace_print_graph_duration fills it: µs with at
 * most 7 digits in all, " us ", then spaces to a width of 8, then "|  ".
 */
static int graph_duration(char *buf, size_t len, uint64_t ns)
{
	char us[24], frac[8] = "";
	int n = snprintf(us, sizeof(us), "%" PRIu64, ns / 1000), width = n;

	if (n < 7) {
		/* "%03lu" in min(5, 8 - n) bytes with the NUL: 3 decimals up to 4 digits, then fewer. */
		snprintf(frac, 8 - n < 5 ? (size_t)(8 - n) : 5, "%03" PRIu64, ns % 1000);
		width += 1 + (int)strlen(frac);
	}
	return snprintf(buf, len, "%c %s%s%s us %*s|  ", graph_mark(ns), us, *frac ? "." : "", frac,
			width < 8 ? 8 - width : 0, "");
}

static uint64_t graph_ns(const struct trace_writer *w, uint64_t ticks)
{
	uint64_t khz = w->meta.tsc_khz ? w->meta.tsc_khz : 1000000;

	return (uint64_t)((unsigned __int128)ticks * 1000000u / khz);
}

/* " %*d) ": the CPU, as wide as the largest CPU number (print_graph_cpu). */
static int graph_cpu_col(const struct trace_writer *w, char *buf, size_t len, unsigned cpu)
{
	return snprintf(buf, len, " %*u) ", (int)w->cpu_width, cpu);
}

/* The return value as funcgraph-retval prints it: an error code in decimal, else hex. */
static void graph_retval(char *buf, size_t len, uint64_t ret)
{
	int64_t err = (ret & 0x80000000ULL) && !(ret >> 32) ? (int64_t)(int32_t)ret : (int64_t)ret;

	if (ret && err < 0 && err >= -4095)	/* IS_ERR_VALUE: -MAX_ERRNO..-1 */
		snprintf(buf, len, "%" PRId64, err);
	else
		snprintf(buf, len, "0x%" PRIx64, ret);
}

static void graph_line(struct trace_writer *w, unsigned cpu, const char *dur, uint32_t depth, const char *text)
{
	char line[1024];
	int n = graph_cpu_col(w, line, sizeof(line), cpu);

	snprintf(line + n, sizeof(line) - n, "%s%*s%s\n", dur, (int)(depth * GRAPH_INDENT), "", text);
	graph_puts(w, line);
}

static const char *no_duration = "              |  ";

/* "comm-pid" centred in 14 columns, comm cut to 7 characters (print_graph_proc). */
static void graph_proc(char *buf, size_t len, const char *comm, int32_t pid)
{
	char s[40];
	int n = snprintf(s, sizeof(s), "%.7s-%d", *comm ? comm : "<...>", pid);
	int spaces = n < GRAPH_PROCINFO ? GRAPH_PROCINFO - n : 0;

	snprintf(buf, len, "%*s%s%*s", spaces / 2, "", s, spaces - spaces / 2, "");
}

/* The separator function_graph prints where a CPU switches tasks (verif_pid). */
static void graph_switch(struct trace_writer *w, const struct ring_event *ev)
{
	struct graph_cpu *c = &w->cpu[ev->cpu];
	char line[256], a[48], b[48];
	int n;

	if (!(ev->flags & VT_REC_FLAG_TASK) || c->last_pid == ev->pid)
		return;
	if (c->last_pid >= 0) {
		graph_proc(a, sizeof(a), c->last_comm, c->last_pid);
		graph_proc(b, sizeof(b), ev->comm, ev->pid);
		n = snprintf(line, sizeof(line), " ------------------------------------------\n");
		n += graph_cpu_col(w, line + n, sizeof(line) - n, ev->cpu);
		snprintf(line + n, sizeof(line) - n, "%s => %s\n ------------------------------------------\n\n",
			 a, b);
		graph_puts(w, line);
	}
	c->last_pid = ev->pid;
	memcpy(c->last_comm, ev->comm, sizeof(c->last_comm));
}

/* The list of calls in flight of ev's task (made when make); NULL: none, or out of memory. */
static struct graph_task *graph_task(struct trace_writer *w, const struct ring_event *ev, int make)
{
	uint64_t key = ev->task ? ev->task : 1;	/* calls of unknown tasks share one list */
	size_t mask = w->tasks_cap - 1, i;

	if (make && (w->ntasks + 1) * 2 > w->tasks_cap) {
		size_t cap = w->tasks_cap ? w->tasks_cap * 2 : 64;
		struct graph_task *t = calloc(cap, sizeof(*t));

		if (!t)
			return NULL;
		for (size_t j = 0; j < w->tasks_cap; j++) {
			if (!w->tasks[j].task)
				continue;
			for (i = (w->tasks[j].task * 0x9e3779b97f4a7c15ULL >> 32) & (cap - 1); t[i].task; i = (i + 1) & (cap - 1))
				;
			t[i] = w->tasks[j];
		}
		free(w->tasks);
		w->tasks = t;
		w->tasks_cap = cap;
		mask = cap - 1;
	}
	if (!w->tasks_cap)
		return NULL;
	for (i = (key * 0x9e3779b97f4a7c15ULL >> 32) & mask; w->tasks[i].task; i = (i + 1) & mask)
		if (w->tasks[i].task == key)
			return &w->tasks[i];
	if (!make)
		return NULL;
	w->tasks[i].task = key;
	w->ntasks++;
	return &w->tasks[i];
}

static void graph_enter(struct trace_writer *w, const struct ring_event *ev)
{
	struct graph_task *t = graph_task(w, ev, 1);
	char fb[32], text[360];

	if (!t)
		return;		/* out of memory: only the end's list of calls in flight misses it */
	/*
	 * Calls listed as deep or deeper never returned through the stub: their
	 * task left them (the stub dropped their frames), e.g. a task that
	 * exited inside do_exit, whose task_struct this call's task now reuses.
	 * Said where it is seen, with the task they were entered by.
	 */
	while (t->n && t->calls[t->n - 1].depth >= ev->depth) {
		const struct graph_call *call = &t->calls[--t->n];

		if (w->meta.graph_depth && call->depth >= w->meta.graph_depth)
			continue;
		snprintf(text, sizeof(text), "/* %s: return not recorded (%s-%d) */",
			 graph_sym(w, call->func, fb, sizeof(fb)), *t->comm ? t->comm : "<...>", t->pid);
		graph_line(w, ev->cpu, no_duration, call->depth, text);
	}
	if (t->n == t->cap) {
		unsigned cap = t->cap ? t->cap * 2 : 16;
		struct graph_call *c = realloc(t->calls, cap * sizeof(*c));

		if (!c)
			return;
		t->calls = c;
		t->cap = cap;
	}
	t->calls[t->n++] = (struct graph_call){ .func = ev->func, .depth = ev->depth, .cpu = ev->cpu };
	t->pid = ev->pid;
	memcpy(t->comm, ev->comm, sizeof(t->comm));
}

static void graph_leave(struct trace_writer *w, const struct ring_event *ev)
{
	struct graph_task *t = graph_task(w, ev, 0);

	while (t && t->n && t->calls[t->n - 1].depth >= ev->depth)
		t->n--;
}

/* The waiting entry of cpu as the head of a block: "func() {". */
static void graph_open_block(struct trace_writer *w, struct graph_cpu *c)
{
	char fb[32], text[300];

	if (!c->pending)
		return;
	c->pending = 0;
	snprintf(text, sizeof(text), "%s() {", graph_sym(w, c->entry.func, fb, sizeof(fb)));
	graph_line(w, c->entry.cpu, no_duration, c->entry.depth, text);
	c->opened[c->entry.depth] = c->entry.func;
	c->depth = c->entry.depth + 1;
}

static int graph_too_deep(const struct trace_writer *w, const struct ring_event *ev)
{
	return w->meta.graph_depth && ev->depth >= w->meta.graph_depth;
}

static void graph_exit(struct trace_writer *w, const struct ring_event *ev)
{
	struct graph_cpu *c = &w->cpu[ev->cpu];
	char fb[32], dur[64], text[360], ret[40] = "";
	const char *name = graph_sym(w, ev->func, fb, sizeof(fb));
	int leaf = c->pending && c->entry.func == ev->func && c->entry.depth == ev->depth &&
		   c->entry.task == ev->task;

	graph_leave(w, ev);
	if (graph_too_deep(w, ev))
		return;
	graph_duration(dur, sizeof(dur), graph_ns(w, ev->tsc - ev->calltime));
	if (w->meta.graph_retval)
		graph_retval(ret, sizeof(ret), ev->retval);
	if (leaf) {
		c->pending = 0;
		if (*ret)
			snprintf(text, sizeof(text), "%s(); /* = %s */", name, ret);
		else
			snprintf(text, sizeof(text), "%s();", name);
	} else {
		graph_open_block(w, c);
		/* Named when this CPU did not show the block open (the task moved, or the trace began inside it). */
		if (*ret)
			snprintf(text, sizeof(text), "} /* %s = %s */", name, ret);
		else if (c->opened[ev->depth] != ev->func)
			snprintf(text, sizeof(text), "} /* %s */", name);
		else
			snprintf(text, sizeof(text), "}");
		c->opened[ev->depth] = 0;
	}
	graph_line(w, ev->cpu, dur, ev->depth, text);
	c->depth = ev->depth;
}

/* Anything but a hooked call: a comment at the CPU's depth, as function_graph shows other events. */
static void graph_comment(struct trace_writer *w, const struct ring_event *ev)
{
	struct graph_cpu *c = &w->cpu[ev->cpu];
	char fb[32], body[200], text[300];

	if (vmev_is(ev)) {
		int n = vmev_format(ev, body, sizeof(body));

		while (n > 0 && n < (int)sizeof(body) && body[n - 1] == ' ')
			body[--n] = 0;
		snprintf(text, sizeof(text), "/* %s */", body);
	} else {
		/* The stub found no room for its return (or no task): entered, end unknown. */
		snprintf(text, sizeof(text), "%s(); /* return not recorded */",
			 graph_sym(w, ev->func, fb, sizeof(fb)));
	}
	graph_line(w, ev->cpu, no_duration, c->depth, text);
}

static int graph_event(struct trace_writer *w, const struct ring_event *ev)
{
	struct graph_cpu *c;

	if (ev->cpu >= w->ncpus)
		return 0;	/* the ring reader never gives one; a writer does not index past its table */
	c = &w->cpu[ev->cpu];
	/*
	 * The task's entry still waiting on another CPU (it moved there while
	 * inside the call): its block opens first, on its own CPU, so that no
	 * line of the task comes before its entry's.
	 */
	if (!vmev_is(ev) && ev->task)
		for (unsigned i = 0; i < w->ncpus; i++)
			if (i != ev->cpu && w->cpu[i].pending && w->cpu[i].entry.task == ev->task)
				graph_open_block(w, &w->cpu[i]);
	if (!vmev_is(ev) && (ev->flags & VT_REC_FLAG_EXIT)) {
		if (!c->pending || c->entry.func != ev->func || c->entry.depth != ev->depth ||
		    c->entry.task != ev->task) {
			graph_open_block(w, c);
			graph_switch(w, ev);
		}
		graph_exit(w, ev);
	} else {
		graph_open_block(w, c);
		if (!vmev_is(ev))
			graph_switch(w, ev);
		if (vmev_is(ev) || !(ev->flags & VT_REC_FLAG_HOOKED)) {
			graph_comment(w, ev);
		} else {
			graph_enter(w, ev);
			if (!graph_too_deep(w, ev)) {
				c->pending = 1;
				c->entry = *ev;
			}
		}
	}
	return w->error ? -w->error : 0;
}

static int graph_open(struct trace_writer **out_w, FILE *out, const struct trace_meta *meta, struct errbuf *err)
{
	struct trace_writer *w = calloc(1, sizeof(*w));
	unsigned ncpus = meta->ncpus ? meta->ncpus : 1;

	if (!w || !(w->cpu = calloc(ncpus, sizeof(*w->cpu)))) {
		free(w);
		return err_set(err, ENOMEM, "out of memory for the graph writer");
	}
	w->out = out;
	w->meta = *meta;
	w->ncpus = ncpus;
	w->cpu_width = (unsigned)snprintf(NULL, 0, "%u", ncpus - 1);
	for (unsigned i = 0; i < ncpus; i++)
		w->cpu[i].last_pid = -1;
	/* print_graph_headers_flags with CPU, overhead and duration. */
	fprintf(out, "# tracer: function_graph\n"
		"#\n"
		"# recorded by vmmtrace from outside the guest; #P:%u\n"
		"#\n"
		"# CPU  DURATION                  FUNCTION CALLS\n"
		"# |     |   |                     |   |   |   |\n", ncpus);
	*out_w = w;
	return 0;
}

static int graph_flush(struct trace_writer *w)
{
	if (!w->error && fflush(w->out))
		w->error = errno ? errno : EIO;
	return w->error ? -w->error : 0;
}

/* The calls still running at the end, innermost first, each task's in turn. */
static void graph_in_flight(struct trace_writer *w)
{
	char fb[32], who[40], text[360];

	for (size_t i = 0; i < w->tasks_cap; i++) {
		struct graph_task *t = &w->tasks[i];

		snprintf(who, sizeof(who), "%s-%d", *t->comm ? t->comm : "<...>", t->pid);
		while (t->task && t->n) {
			struct graph_call *call = &t->calls[--t->n];

			if (w->meta.graph_depth && call->depth >= w->meta.graph_depth)
				continue;
			snprintf(text, sizeof(text), "/* %s: still running when the trace ended (%s) */",
				 graph_sym(w, call->func, fb, sizeof(fb)), who);
			graph_line(w, call->cpu, no_duration, call->depth, text);
		}
	}
}

static int graph_close(struct trace_writer *w, const struct trace_stats *st, struct errbuf *err)
{
	int rc;

	(void)st;
	for (unsigned i = 0; i < w->ncpus; i++)
		graph_open_block(w, &w->cpu[i]);
	graph_in_flight(w);
	rc = graph_flush(w);
	for (size_t i = 0; i < w->tasks_cap; i++)
		free(w->tasks[i].calls);
	free(w->tasks);
	free(w->cpu);
	free(w);
	return rc ? err_set(err, -rc, "writing the graph trace: %s", strerror(-rc)) : 0;
}

const struct trace_writer_ops trace_writer_graph = {
	.name = "graph", .open = graph_open, .event = graph_event, .flush = graph_flush, .close = graph_close,
};
