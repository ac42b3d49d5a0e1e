// SPDX-License-Identifier: GPL-2.0
/*
 * vmmtrace diff's report (vmm/output/diff.h's model), as text or as JSON with the same
 * content. The text's first line says whether the boots part and where
 * first, the second which calls part there and from which callers; then
 * a hunk per task as diff -u marks one, and the tables.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/cli/diff-print.h"

/* A function's counts and times in both recordings, for the tables. */
struct diff_row {
	uint32_t id;
	uint64_t a, b;
	int64_t delta;
};

static uint64_t diff_at(const uint64_t *v, size_t cap, uint32_t id)
{
	return id < cap ? v[id] : 0;
}

static int diff_row_cmp(const void *x, const void *y)
{
	const struct diff_row *p = x, *q = y;
	uint64_t dp = p->delta < 0 ? -(uint64_t)p->delta : (uint64_t)p->delta;
	uint64_t dq = q->delta < 0 ? -(uint64_t)q->delta : (uint64_t)q->delta;

	if (dp != dq)
		return dp > dq ? -1 : 1;
	return p->id < q->id ? -1 : p->id > q->id;
}

/*
 * The functions whose value differs, largest difference first: counts
 * (times 0) or total times (1); only 1: called in A and never in B, 2:
 * the other way. Returns how many (*rows malloc'ed; NULL when none or out
 * of memory).
 */
static size_t diff_rows(const struct diff_side *a, const struct diff_side *b, int times, int only, struct diff_row **rows)
{
	size_t n = 0;

	*rows = calloc(a->names->n + 1, sizeof(**rows));
	for (uint32_t id = 0; *rows && id < a->names->n; id++) {
		struct diff_row r = { .id = id };

		r.a = diff_at(times ? a->total_ns : a->count, a->funcs_cap, id);
		r.b = diff_at(times ? b->total_ns : b->count, b->funcs_cap, id);
		r.delta = (int64_t)(r.b - r.a);
		if (only == 1 ? r.a && !diff_at(b->count, b->funcs_cap, id) :
		    only == 2 ? r.b && !diff_at(a->count, a->funcs_cap, id) : r.a != r.b)
			(*rows)[n++] = r;
	}
	if (*rows)
		qsort(*rows, n, sizeof(**rows), diff_row_cmp);
	return n;
}

const char *diff_time(uint64_t ns, char buf[32])
{
	snprintf(buf, 32, "%" PRIu64 ".%06" PRIu64, ns / 1000000000, ns / 1000 % 1000000);
	return buf;
}

static const char *diff_caller(const struct diff_side *s, uint64_t parent, char buf[32])
{
	return diff_name_of(s->meta, parent, 0, buf);
}

/* One call of a hunk, marked ' ', '-' or '+'. */
static void diff_text_call(FILE *out, char mark, const struct diff_side *s, const struct diff_call *c)
{
	char t[32], pb[32];

	fprintf(out, "%c %s [%03u] %*s%s <- %s\n", mark, diff_time(c->ns, t), c->cpu, c->hooked ? (int)(2 * c->depth) : 0,
		"", s->names->names[c->id], diff_caller(s, c->parent, pb));
}

static const struct diff_call *diff_shown(const struct diff_task *t, size_t i)
{
	return t && t->shown && i >= t->want_lo && i < t->want_hi ? &t->shown[i - t->want_lo] : NULL;
}

static void diff_text_hunk(FILE *out, const struct diff_side *a, const struct diff_side *b, const struct diff_part *pt)
{
	const struct diff_task *ta = pt->a, *tb = pt->b, *t = ta ? ta : tb;
	size_t lo = t->want_lo;

	fprintf(out, "@@ %s: ", t->label);
	if (ta && tb)
		fprintf(out, "call %zu of %zu in A, of %zu in B", pt->prefix + 1, ta->n, tb->n);
	else
		fprintf(out, "only in %s (%zu calls)", ta ? "A" : "B", t->n);
	fprintf(out, "%s @@\n", pt->met || !ta || !tb ? "" : "; they do not meet again within 200 calls");
	for (size_t i = lo; ta && i < pt->prefix; i++)
		if (diff_shown(ta, i))
			diff_text_call(out, ' ', a, diff_shown(ta, i));
	for (size_t i = pt->prefix; ta && i < pt->prefix + pt->del; i++)
		if (diff_shown(ta, i))
			diff_text_call(out, '-', a, diff_shown(ta, i));
	for (size_t i = pt->prefix; tb && i < pt->prefix + pt->add; i++)
		if (diff_shown(tb, i))
			diff_text_call(out, '+', b, diff_shown(tb, i));
	for (size_t i = pt->prefix + pt->del; pt->met && ta && i < ta->want_hi; i++)
		if (diff_shown(ta, i))
			diff_text_call(out, ' ', a, diff_shown(ta, i));
}

static size_t diff_nparted(const struct diff_part *parts, size_t n)
{
	size_t k = 0;

	while (k < n && !parts[k].agree)
		k++;
	return k;
}

/* The two lines that say whether and where the boots part, the calls there and their callers. */
static void diff_text_first(FILE *out, const struct diff_side *a, const struct diff_side *b,
			    const struct diff_part *parts, size_t n)
{
	size_t np = diff_nparted(parts, n);
	const struct diff_part *p = parts;
	const struct diff_call *ca, *cb;
	char t[32], u[32], pa[32], pb[32];

	if (!np) {
		fprintf(out, "vmmtrace diff: the boots agree: each of the %zu tasks made the same calls in the same order "
			"(%" PRIu64 " calls)\n", n, a->calls);
		return;
	}
	ca = diff_shown(p->a, p->prefix);
	cb = diff_shown(p->b, p->prefix);
	fprintf(out, "vmmtrace diff: the boots part in %zu of %zu tasks; first in %s at call %zu (A %s s, B %s s)\n", np, n,
		(p->a ? p->a : p->b)->label, p->prefix + 1, ca ? diff_time(ca->ns, t) : "-", cb ? diff_time(cb->ns, u) : "-");
	fprintf(out, "first parting point: ");
	if (!p->a || !p->b)
		fprintf(out, "the task is only in %s, whose first call is ", p->a ? "A" : "B");
	else
		fprintf(out, "A calls ");
	if (ca)
		fprintf(out, "%s <- %s", a->names->names[ca->id], diff_caller(a, ca->parent, pa));
	else if (p->a)
		fprintf(out, "nothing more");
	if (p->a && p->b)
		fprintf(out, ", B calls ");
	if (cb)
		fprintf(out, "%s <- %s", b->names->names[cb->id], diff_caller(b, cb->parent, pb));
	else if (p->b)
		fprintf(out, "nothing more");
	fputc('\n', out);
}

static void diff_text_side(FILE *out, const char *mark, const char *which, const struct diff_side *s)
{
	fprintf(out, "%s %s: %s (kernel %s, %u vCPU%s, %" PRIu64 " calls in %zu tasks%s)\n", mark, which, s->path,
		s->meta->kernel ? s->meta->kernel : "unknown", s->meta->ncpus, s->meta->ncpus == 1 ? "" : "s", s->calls,
		s->ntasks, s->meta->graph ? ", with returns" : "");
}

static void diff_text_only(FILE *out, const struct diff_side *a, const struct diff_side *b, const struct diff_opts *o)
{
	for (int only = 1; only <= 2; only++) {
		struct diff_row *rows;
		size_t n = diff_rows(a, b, 0, only, &rows), top = o->top && o->top < n ? o->top : n;

		fprintf(out, "\nfunctions called in %s only: %zu%s\n", only == 1 ? "A" : "B", n, n > top ? ", the most called:" : "");
		for (size_t i = 0; i < top; i++)
			fprintf(out, "  %10" PRIu64 "  %s\n", only == 1 ? rows[i].a : rows[i].b, a->names->names[rows[i].id]);
		free(rows);
	}
}

static void diff_text_deltas(FILE *out, const struct diff_side *a, const struct diff_side *b, const struct diff_opts *o)
{
	for (int times = 0; times <= (a->meta->graph && b->meta->graph); times++) {
		struct diff_row *rows;
		size_t n = diff_rows(a, b, times, 0, &rows), top = o->top && o->top < n ? o->top : n;
		char x[32], y[32];

		fprintf(out, "\n%s: %zu functions differ%s\n%14s  %14s  %14s  FUNCTION\n",
			times ? "total time of the calls that returned, in seconds" : "calls", n,
			n > top ? ", the largest differences:" : "", "A", "B", "B - A");
		for (size_t i = 0; i < top; i++) {
			uint64_t d = rows[i].delta < 0 ? -(uint64_t)rows[i].delta : (uint64_t)rows[i].delta;

			char z[32];

			snprintf(z, sizeof(z), "%c%s", rows[i].delta < 0 ? '-' : '+', diff_time(d, (char[32]){ 0 }));
			if (times)
				fprintf(out, "%14s  %14s  %14s  %s\n", diff_time(rows[i].a, x), diff_time(rows[i].b, y), z,
					a->names->names[rows[i].id]);
			else
				fprintf(out, "%14" PRIu64 "  %14" PRIu64 "  %+14" PRId64 "  %s\n", rows[i].a, rows[i].b,
					rows[i].delta, a->names->names[rows[i].id]);
		}
		free(rows);
	}
}

static const struct stage *diff_stage(const struct diff_side *s, const char *label)
{
	for (size_t i = 0; i < s->nstages; i++)
		if (!strcmp(s->stages[i].label, label))
			return &s->stages[i];
	return NULL;
}

static uint64_t diff_stage_ns(const struct diff_side *s, const struct stage *st)
{
	return trace_meta_ns(&(struct trace_meta){ .tsc_khz = s->meta->tsc_khz }, st->end - st->start);
}

/* The stages of both, A's order first: label, and each side's stage or NULL; calls fn for each. */
static void diff_stages_each(const struct diff_side *a, const struct diff_side *b,
			     void (*fn)(void *, const char *, const struct stage *, const struct stage *), void *opaque)
{
	for (size_t i = 0; i < a->nstages; i++)
		fn(opaque, a->stages[i].label, &a->stages[i], diff_stage(b, a->stages[i].label));
	for (size_t i = 0; i < b->nstages; i++)
		if (!diff_stage(a, b->stages[i].label))
			fn(opaque, b->stages[i].label, NULL, &b->stages[i]);
}

struct diff_print {
	FILE *out;
	const struct diff_side *a, *b;
	int first;
};

static void diff_text_stage(void *opaque, const char *label, const struct stage *x, const struct stage *y)
{
	struct diff_print *p = opaque;
	char s1[32] = "-", s2[32] = "-", s3[32] = "";
	uint64_t da = x ? diff_stage_ns(p->a, x) : 0, db = y ? diff_stage_ns(p->b, y) : 0;

	if (x)
		diff_time(da, s1);
	if (y)
		diff_time(db, s2);
	if (x && y)
		snprintf(s3, sizeof(s3), "%c%s", db < da ? '-' : '+', diff_time(db < da ? da - db : db - da, (char[32]){ 0 }));
	fprintf(p->out, "  %-22s  %14s  %14s  %14s\n", label, s1, s2, s3);
}

void diff_print_text(FILE *out, struct diff_side *a, struct diff_side *b, const struct diff_part *parts, size_t n,
		     const struct diff_opts *o)
{
	struct diff_print p = { .out = out, .a = a, .b = b };
	size_t np = diff_nparted(parts, n), only_a = 0, only_b = 0;

	diff_text_first(out, a, b, parts, n);
	diff_text_side(out, "---", "A", a);
	diff_text_side(out, "+++", "B", b);
	for (size_t i = 0; i < np; i++) {
		only_a += !parts[i].b;
		only_b += !parts[i].a;
		diff_text_hunk(out, a, b, &parts[i]);
	}
	fprintf(out, "\ntasks: %zu in A, %zu in B: %zu agree, %zu part, %zu only in A, %zu only in B\n", a->ntasks,
		b->ntasks, n - np, np - only_a - only_b, only_a, only_b);
	diff_text_only(out, a, b, o);
	diff_text_deltas(out, a, b, o);
	fprintf(out, "\nstages, in seconds:\n  %-22s  %14s  %14s  %14s\n", "STAGE", "A", "B", "B - A");
	diff_stages_each(a, b, diff_text_stage, &p);
}

void diff_json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void diff_json_side(FILE *out, const struct diff_side *s)
{
	fprintf(out, "{\"path\": ");
	diff_json_str(out, s->path);
	fprintf(out, ", \"kernel\": ");
	diff_json_str(out, s->meta->kernel ? s->meta->kernel : "");
	fprintf(out, ", \"cpus\": %u, \"events\": %" PRIu64 ", \"calls\": %" PRIu64 ", \"tasks\": %zu, \"returns\": %s}",
		s->meta->ncpus, s->events, s->calls, s->ntasks, s->meta->graph ? "true" : "false");
}

static void diff_json_call(FILE *out, const char *op, const struct diff_side *s, const struct diff_call *c, int *first)
{
	char pb[32];

	fprintf(out, "%s\n      {\"op\": \"%s\", \"time_ns\": %" PRIu64 ", \"cpu\": %u, \"depth\": %u, \"func\": ",
		*first ? "" : ",", op, c->ns, c->cpu, c->hooked ? c->depth : 0);
	diff_json_str(out, s->names->names[c->id]);
	fprintf(out, ", \"caller\": ");
	diff_json_str(out, diff_caller(s, c->parent, pb));
	fputc('}', out);
	*first = 0;
}

static void diff_json_range(FILE *out, const char *op, const struct diff_side *s, const struct diff_task *t, size_t lo,
			    size_t hi, int *first)
{
	for (size_t i = lo; t && i < hi; i++)
		if (diff_shown(t, i))
			diff_json_call(out, op, s, diff_shown(t, i), first);
}

static void diff_json_part(FILE *out, const struct diff_side *a, const struct diff_side *b, const struct diff_part *pt)
{
	const struct diff_task *t = pt->a ? pt->a : pt->b;
	int first = 1;

	fprintf(out, "    {\"task\": ");
	diff_json_str(out, t->label);
	fprintf(out, ", \"only_in\": %s, \"call\": %zu, \"a_calls\": %zu, \"b_calls\": %zu, \"met\": %s, \"time_ns\": %" PRIu64
		", \"hunk\": [", !pt->a ? "\"b\"" : !pt->b ? "\"a\"" : "null", pt->prefix + 1, pt->a ? pt->a->n : 0,
		pt->b ? pt->b->n : 0, pt->met ? "true" : "false", pt->ns);
	diff_json_range(out, "=", a, pt->a, t->want_lo, pt->prefix, &first);
	diff_json_range(out, "-", a, pt->a, pt->prefix, pt->prefix + pt->del, &first);
	diff_json_range(out, "+", b, pt->b, pt->prefix, pt->prefix + pt->add, &first);
	if (pt->met && pt->a)
		diff_json_range(out, "=", a, pt->a, pt->prefix + pt->del, pt->a->want_hi, &first);
	fprintf(out, "]}");
}

static void diff_json_rows(FILE *out, const char *key, const struct diff_side *a, const struct diff_side *b, int times,
			   int only, unsigned top)
{
	struct diff_row *rows;
	size_t n = diff_rows(a, b, times, only, &rows), k = top && top < n ? top : n;

	fprintf(out, ",\n  \"%s\": {\"functions\": %zu, \"top\": [", key, n);
	for (size_t i = 0; i < k; i++) {
		fprintf(out, "%s\n    {\"func\": ", i ? "," : "");
		diff_json_str(out, a->names->names[rows[i].id]);
		fprintf(out, ", \"a\": %" PRIu64 ", \"b\": %" PRIu64 ", \"delta\": %" PRId64 "}", rows[i].a, rows[i].b,
			rows[i].delta);
	}
	fprintf(out, "]}");
	free(rows);
}

static void diff_json_stage(void *opaque, const char *label, const struct stage *x, const struct stage *y)
{
	struct diff_print *p = opaque;

	fprintf(p->out, "%s\n    {\"stage\": ", p->first ? "" : ",");
	diff_json_str(p->out, label);
	fprintf(p->out, ", \"a_ns\": ");
	x ? fprintf(p->out, "%" PRIu64, diff_stage_ns(p->a, x)) : fprintf(p->out, "null");
	fprintf(p->out, ", \"b_ns\": ");
	y ? fprintf(p->out, "%" PRIu64, diff_stage_ns(p->b, y)) : fprintf(p->out, "null");
	fputc('}', p->out);
	p->first = 0;
}

void diff_print_json(FILE *out, struct diff_side *a, struct diff_side *b, const struct diff_part *parts, size_t n,
		     const struct diff_opts *o)
{
	struct diff_print p = { .out = out, .a = a, .b = b, .first = 1 };
	size_t np = diff_nparted(parts, n);

	fprintf(out, "{\n  \"a\": ");
	diff_json_side(out, a);
	fprintf(out, ",\n  \"b\": ");
	diff_json_side(out, b);
	fprintf(out, ",\n  \"agree\": %s,\n  \"tasks\": %zu,\n  \"parted\": [\n", np ? "false" : "true", n);
	for (size_t i = 0; i < np; i++) {
		diff_json_part(out, a, b, &parts[i]);
		fprintf(out, "%s\n", i + 1 < np ? "," : "");
	}
	fprintf(out, "  ]");
	diff_json_rows(out, "only_in_a", a, b, 0, 1, o->top);
	diff_json_rows(out, "only_in_b", a, b, 0, 2, o->top);
	diff_json_rows(out, "calls", a, b, 0, 0, o->top);
	if (a->meta->graph && b->meta->graph)
		diff_json_rows(out, "total_ns", a, b, 1, 0, o->top);
	fprintf(out, ",\n  \"stages\": [");
	diff_stages_each(a, b, diff_json_stage, &p);
	fprintf(out, "]\n}\n");
}
