// SPDX-License-Identifier: GPL-2.0
/*
 * vmmtrace report's selection of events and its two summaries: --stat
 * (counts per function, CPU, phase; the drops) and --flame (collapsed
 * stacks). Names are the ones the text output prints, so that a filter or
 * a count agrees with a grep of `vmmtrace report FILE`.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/cli/report.h"
#include "vmm/output/calls.h"

int report_parse_u64(const char *s, uint64_t max, uint64_t *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end || *v > max ? -EINVAL : 0;
}

int report_parse_time(const char *s, uint64_t *us)
{
	uint64_t sec = 0, frac = 0;
	unsigned digits = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (sec > (UINT64_MAX / 1000000 - 9) / 10)
			return -EINVAL;
		sec = sec * 10 + (uint64_t)(*s - '0');
	}
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++, digits++)
			if (digits < 6)
				frac = frac * 10 + (uint64_t)(*s - '0');
	if (*s || digits > 6)
		return -EINVAL;
	while (digits++ < 6)
		frac *= 10;
	*us = sec * 1000000 + frac;
	return 0;
}

static int report_map_init(struct report_map *m, size_t size)
{
	m->ents = calloc(size, sizeof(*m->ents));
	m->mask = size - 1;
	m->count = 0;
	return m->ents ? 0 : -ENOMEM;
}

static struct report_map_ent *report_map_slot(struct report_map *m, uint64_t a, uint64_t b)
{
	uint64_t h = (a * 0x9e3779b97f4a7c15ull) ^ (b * 0xc2b2ae3d27d4eb4full);
	size_t i = (size_t)(h ^ (h >> 29)) & m->mask;

	while (m->ents[i].used && (m->ents[i].a != a || m->ents[i].b != b))
		i = (i + 1) & m->mask;
	return &m->ents[i];
}

/* The entry for (a, b), made if new; NULL when out of memory. */
static struct report_map_ent *report_map_get(struct report_map *m, uint64_t a, uint64_t b)
{
	struct report_map_ent *e = report_map_slot(m, a, b);

	if (e->used)
		return e;
	if (2 * (m->count + 1) > m->mask + 1) {
		struct report_map old = *m;

		if (report_map_init(m, 2 * (old.mask + 1))) {
			*m = old;
			return NULL;
		}
		for (size_t i = 0; i <= old.mask; i++)
			if (old.ents[i].used)
				*report_map_slot(m, old.ents[i].a, old.ents[i].b) = old.ents[i];
		m->count = old.count;
		free(old.ents);
		e = report_map_slot(m, a, b);
	}
	e->used = 1;
	e->a = a;
	e->b = b;
	e->n = 0;
	m->count++;
	return e;
}

const char *report_name(const struct trace_meta *meta, uint64_t addr, int exact, char *buf, size_t len)
{
	uint64_t off = 0;
	const struct symbol *s = meta->syms ? symtab_find_addr(meta->syms, addr, &off) : NULL;

	/* As trace-text.c: inside the symbol, and at its start for a function. */
	if (s && off < symtab_extent(meta->syms, s) && (!exact || !off))
		return symtab_name(meta->syms, s);
	snprintf(buf, len, "0x%" PRIx64, addr);
	return buf;
}

int report_sel_init(struct report_sel *sel, const struct report_opts *o, const struct trace_meta *meta)
{
	memset(sel, 0, sizeof(*sel));
	sel->o = o;
	sel->meta = meta;
	return report_map_init(&sel->verdict, 1024);
}

void report_sel_destroy(struct report_sel *sel)
{
	free(sel->verdict.ents);
}

int report_sel_match(struct report_sel *sel, const struct ring_event *ev)
{
	const struct report_opts *o = sel->o;
	struct report_map_ent *e;
	char buf[32];

	if (o->have_cpu && ev->cpu != o->cpu)
		return 0;
	/* The pid the TASK column shows: 0 for VM events and unknown tasks. */
	if (o->have_pid && o->pid != (uint64_t)(!(ev->flags & RING_EV_VM) && (ev->flags & VT_REC_FLAG_TASK) ? ev->pid : 0))
		return 0;
	if (o->have_from || o->have_to) {
		uint64_t us = trace_meta_ns(sel->meta, ev->tsc) / 1000;

		if ((o->have_from && us < o->from_us) || (o->have_to && us > o->to_us))
			return 0;
	}
	if (filter_selects_all(&o->filter))
		return 1;
	if (ev->flags & RING_EV_VM)
		return 0;	/* --trace/--notrace select functions: VM events only without them */
	e = report_map_get(&sel->verdict, ev->func, 0);
	if (!e) {
		sel->oom = 1;
		return filter_match(&o->filter, report_name(sel->meta, ev->func, 1, buf, sizeof(buf)));
	}
	if (!e->n)
		e->n = 1 + !!filter_match(&o->filter, report_name(sel->meta, ev->func, 1, buf, sizeof(buf)));
	return e->n == 2;
}

/* What --stat and --flame count, over the selected events. */
struct report_count {
	struct report_sel *sel;
	struct report_map map;		/* (func, 0) or (func, parent) -> events */
	uint64_t *per_cpu;		/* 65536: every cpu value the guest may write */
	uint64_t events, early;
	int pairs, have_phase, oom;
	uint64_t phase_tsc;
	/* --stat of a --graph trace: its calls, and (func, 0) total, (func, 1) self TSC ticks. */
	struct call_tracker *calls;
	struct report_map times;
};

/* A call of a --graph trace whose return was recorded: its total and self time. */
static int report_count_call(void *opaque, const struct call *call)
{
	struct report_count *c = opaque;
	struct report_map_ent *total, *self;
	uint64_t ticks = call_ticks(call);

	if (call->how != CALL_RETURNED)
		return 0;
	total = report_map_get(&c->times, call->func, 0);
	if (!total)
		return -ENOMEM;
	total->n += ticks;
	self = report_map_get(&c->times, call->func, 1);	/* may move the map's entries: total is done */
	if (!self)
		return -ENOMEM;
	self->n += ticks > call->child ? ticks - call->child : 0;
	return 0;
}

static int report_count_event(void *opaque, const struct ring_event *ev)
{
	struct report_count *c = opaque;
	struct report_map_ent *e = NULL;
	int rc;

	/* --stat and --flame count function calls; VM events are not calls. */
	if ((ev->flags & RING_EV_VM) || !report_sel_match(c->sel, ev))
		return 0;
	if (c->calls && (rc = call_tracker_event(c->calls, ev)))
		return rc;
	/* A return is its call's second event: the call was counted at its entry. */
	if (!c->calls || !(ev->flags & VT_REC_FLAG_EXIT)) {
		e = report_map_get(&c->map, ev->func, c->pairs ? ev->parent : 0);
		if (!e)
			return -ENOMEM;
		e->n++;
	}
	c->events++;
	if (c->per_cpu)
		c->per_cpu[ev->cpu]++;
	if (c->have_phase && ev->tsc < c->phase_tsc)
		c->early++;
	return 0;
}

static int report_count_run(struct raw_reader *r, struct report_count *c, struct errbuf *err)
{
	int rc = report_map_init(&c->map, 4096);

	if (!rc && c->calls)
		rc = report_map_init(&c->times, 4096);
	if (!rc)
		rc = raw_read_replay(r, report_count_event, c);
	if (!rc && c->sel->oom)
		rc = -ENOMEM;
	return rc ? err_set(err, -rc, "counting events: %s", strerror(-rc)) : 0;
}

static int report_row_by_count(const void *a, const void *b)
{
	const struct report_row *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int report_row_by_time(const void *a, const void *b)
{
	const struct report_row *x = a, *y = b;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return report_row_by_count(a, b);
}

static int report_row_by_name(const void *a, const void *b)
{
	return strcmp(((const struct report_row *)a)->name, ((const struct report_row *)b)->name);
}

/* The map's entries as named rows (one per name: aliases and call sites merge). */
static struct report_row *report_rows(const struct report_count *c, size_t *nrows)
{
	const struct trace_meta *meta = c->sel->meta;
	struct report_row *rows = calloc(c->map.count + 1, sizeof(*rows));
	char fb[32], pb[32];
	size_t n = 0, k = 0;

	if (!rows)
		return NULL;
	for (size_t i = 0; i <= c->map.mask; i++) {
		const struct report_map_ent *e = &c->map.ents[i];
		const char *f;

		if (!e->used)
			continue;
		f = report_name(meta, e->a, 1, fb, sizeof(fb));
		if (c->pairs) {
			const char *p = report_name(meta, e->b, 0, pb, sizeof(pb));

			if (asprintf(&rows[n].name, "%s;%s", p, f) < 0)
				rows[n].name = NULL;
		} else {
			rows[n].name = strdup(f);
		}
		rows[n].n = e->n;
		if (c->calls) {
			rows[n].total = report_map_slot((struct report_map *)&c->times, e->a, 0)->n;
			rows[n].self = report_map_slot((struct report_map *)&c->times, e->a, 1)->n;
		}
		if (!rows[n++].name)
			goto oom;
	}
	qsort(rows, n, sizeof(*rows), report_row_by_name);
	for (size_t i = 0; i < n; i++) {
		if (k && !strcmp(rows[k - 1].name, rows[i].name)) {
			rows[k - 1].n += rows[i].n;
			rows[k - 1].total += rows[i].total;
			rows[k - 1].self += rows[i].self;
			free(rows[i].name);
		} else {
			rows[k++] = rows[i];
		}
	}
	*nrows = k;
	return rows;
oom:
	while (n--)
		free(rows[n].name);
	free(rows);
	return NULL;
}

void report_rows_free(struct report_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(rows[i].name);
	free(rows);
}

int report_stat_rows(struct raw_reader *r, struct report_sel *sel, struct report_row **rows, size_t *n,
		     uint64_t *events, int *timed, struct errbuf *err)
{
	struct report_count c = { .sel = sel };
	int rc = 0;

	*rows = NULL;
	*n = 0;
	if (raw_read_meta(r)->graph && call_tracker_new(&c.calls, report_count_call, &c))
		rc = err_set(err, ENOMEM, "out of memory");
	if (!rc)
		rc = report_count_run(r, &c, err);
	if (!rc && !(*rows = report_rows(&c, n)))
		rc = err_set(err, ENOMEM, "out of memory for the table");
	*events = c.events;
	*timed = !!c.calls;
	call_tracker_free(c.calls);
	free(c.times.ents);
	free(c.map.ents);
	return rc;
}

int report_flame(struct raw_reader *r, struct report_sel *sel, FILE *out, struct errbuf *err)
{
	struct report_count c = { .sel = sel, .pairs = 1 };
	struct report_row *rows = NULL;
	size_t n = 0;
	int rc = report_count_run(r, &c, err);

	if (!rc && !(rows = report_rows(&c, &n)))
		rc = err_set(err, ENOMEM, "out of memory for the stacks");
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s %" PRIu64 "\n", rows[i].name, rows[i].n);
	report_rows_free(rows, n);
	free(c.map.ents);
	return rc;
}

static void report_stat_tail(const struct report_count *c, const struct raw_read_report *rep, FILE *out)
{
	fprintf(out, "\ncpus:\n%10s  %s\n", "EVENTS", "CPU");
	for (unsigned cpu = 0; cpu <= UINT16_MAX; cpu++)
		if (c->per_cpu[cpu])
			fprintf(out, "%10" PRIu64 "  %u\n", c->per_cpu[cpu], cpu);
	if (c->have_phase)
		fprintf(out, "\nphases:\n%10" PRIu64 "  before ftrace_init\n%10" PRIu64 "  after\n",
			c->early, c->events - c->early);
	else
		fprintf(out, "\nphases: not recorded (this trace does not mark the ftrace_init boundary)\n");
	if (rep->have_trailer)
		fprintf(out, "\ndrops: %" PRIu64 " dropped by the stub, %" PRIu64 " lost\n",
			rep->stats.dropped_stub, rep->stats.lost);
	else
		fprintf(out, "\ndrops: unknown (no trailer: the recording did not end cleanly)\n");
}

/* TSC ticks as microseconds with three decimals, "1234.567". */
static const char *report_us(const struct trace_meta *meta, uint64_t ticks, char buf[32])
{
	uint64_t ns = trace_meta_ns(&(struct trace_meta){ .tsc_khz = meta->tsc_khz }, ticks);

	snprintf(buf, 32, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
	return buf;
}

/* The functions table: by events, or (--graph) by total time with calls, total and self time. */
static void report_stat_functions(const struct report_count *c, struct report_row *rows, size_t n, size_t top,
				  FILE *out)
{
	char t[32], sf[32];

	if (!c->calls) {
		qsort(rows, n, sizeof(*rows), report_row_by_count);
		fprintf(out, "\nfunctions: %zu, top %zu:\n%10s  %s\n", n, top, "EVENTS", "FUNCTION");
		for (size_t i = 0; i < top; i++)
			fprintf(out, "%10" PRIu64 "  %s\n", rows[i].n, rows[i].name);
		return;
	}
	qsort(rows, n, sizeof(*rows), report_row_by_time);
	fprintf(out, "\nfunctions: %zu, top %zu by total time (calls that returned; self: less their traced "
		"callees):\n%10s  %16s  %16s  %s\n", n, top, "CALLS", "TOTAL us", "SELF us", "FUNCTION");
	for (size_t i = 0; i < top; i++)
		fprintf(out, "%10" PRIu64 "  %16s  %16s  %s\n", rows[i].n, report_us(c->sel->meta, rows[i].total, t),
			report_us(c->sel->meta, rows[i].self, sf), rows[i].name);
}

int report_stat(struct raw_reader *r, struct report_sel *sel, const struct report_opts *o, FILE *out,
		struct errbuf *err)
{
	const struct raw_read_report *rep = raw_read_report(r);
	struct report_count c = { .sel = sel };
	struct report_row *rows = NULL;
	size_t n = 0;
	int rc = 0;

	c.have_phase = rep->have_phase;
	c.phase_tsc = rep->ftrace_init_tsc;
	c.per_cpu = calloc(UINT16_MAX + 1, sizeof(*c.per_cpu));
	if (raw_read_meta(r)->graph && call_tracker_new(&c.calls, report_count_call, &c))
		rc = err_set(err, ENOMEM, "out of memory");
	if (!rc)
		rc = c.per_cpu ? report_count_run(r, &c, err) : err_set(err, ENOMEM, "out of memory");
	if (!rc && !(rows = report_rows(&c, &n)))
		rc = err_set(err, ENOMEM, "out of memory for the table");
	if (!rc) {
		fprintf(out, "events: %" PRIu64 " selected of %" PRIu64 " read\n", c.events, rep->events);
		report_stat_functions(&c, rows, n, o->top && o->top < n ? (size_t)o->top : n, out);
		report_stat_tail(&c, rep, out);
	}
	report_rows_free(rows, n);
	call_tracker_free(c.calls);
	free(c.times.ents);
	free(c.map.ents);
	free(c.per_cpu);
	return rc;
}
