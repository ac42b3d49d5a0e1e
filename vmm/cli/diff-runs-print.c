// SPDX-License-Identifier: GPL-2.0
/*
 * vmmtrace diff A1 A2 ... -- B1 B2 ...: the report of several runs of each
 * side (vmm/output/diff.h's diff_runs), as text or as JSON with the same
 * content. The first line says whether a parting holds in every run and
 * how many places were set aside as noise; then a line per parting: the
 * call with its callers outward (as the text output's "func <- caller"),
 * its calls per run on each side, and where it was first called.
 */
#include <inttypes.h>
#include <string.h>

#include "vmm/cli/diff-print.h"

/* Calls per run, "3" or "2..5". */
static const char *diff_range(uint32_t lo, uint32_t hi, char buf[32])
{
	if (lo == hi)
		snprintf(buf, 32, "%" PRIu32, lo);
	else
		snprintf(buf, 32, "%" PRIu32 "..%" PRIu32, lo, hi);
	return buf;
}

/*
 * At most how often a place whose calls per run vary at random, alike on
 * both sides, has all of A's runs on one side of all of B's: 2 of the
 * C(m + n, m) orders of m + n values (ties only make it rarer).
 */
static double diff_runs_chance(const struct diff_runs *r)
{
	double c = 1.0;

	for (size_t i = 1; i <= r->nside[1]; i++)
		c = c * (double)(r->nside[0] + i) / (double)i;
	return c > 2.0 ? 2.0 / c : 1.0;
}

/* The call and its callers outward: "f <- g <- h" (a caller-keyed path ends at its caller). */
static void diff_text_path(FILE *out, const struct diff_runs *r, uint32_t p)
{
	fputs(diff_runs_func(r, p), out);
	for (uint32_t q = r->paths[p].parent; q; q = r->paths[q - 1].parent)
		fprintf(out, " <- %s", diff_runs_func(r, q - 1));
}

/* An order place: the same calls in another order, and where the first runs of A and B part. */
static void diff_text_order(FILE *out, const struct diff_runs *r, const struct diff_place *pl)
{
	const struct diff_run *a = &r->runs[0], *b = &r->runs[r->nside[0]];

	if (!pl->holds) {
		fprintf(out, "\n    the same calls per run, in an order that differs between runs of a side\n");
		return;
	}
	fprintf(out, "\n    the same calls per run in another order");
	if (pl->kid[0] != DIFF_PATH_NONE && pl->kid[1] != DIFF_PATH_NONE && pl->kid[0] != pl->kid[1])
		fprintf(out, ": first apart where A calls %s and B calls %s", diff_runs_func(r, pl->kid[0]),
			diff_runs_func(r, pl->kid[1]));
	else if (pl->kid[0] != DIFF_PATH_NONE)
		fprintf(out, ": first apart at %s, the call #%" PRIu32 " in it in A, #%" PRIu32 " in B",
			diff_runs_func(r, pl->kid[0]), pl->kid[0] < a->nrank ? a->rank[pl->kid[0]] : 0,
			pl->kid[0] < b->nrank ? b->rank[pl->kid[0]] : 0);
	else
		fprintf(out, " (the first call of each function in it comes alike)");
	fputc('\n', out);
}

static void diff_text_place(FILE *out, const struct diff_runs *r, const struct diff_place *pl)
{
	char x[32], y[32], t[32];

	if (pl->order) {
		fputs(pl->holds ? "= in " : "~ in ", out);
		diff_text_path(out, r, pl->path);
		diff_text_order(out, r, pl);
		return;
	}
	fputc(!pl->holds ? '~' : pl->min[0] > pl->max[1] ? '-' : '+', out);
	fputc(' ', out);
	diff_text_path(out, r, pl->path);
	fprintf(out, "\n    calls per run: A %s, B %s", diff_range(pl->min[0], pl->max[0], x),
		diff_range(pl->min[1], pl->max[1], y));
	if (pl->under)
		fprintf(out, "; %zu call path%s nested in it differ%s too", pl->under, pl->under == 1 ? "" : "s",
			pl->under == 1 ? "s" : "");
	if (pl->noisy_name)
		fprintf(out, "; its function differs between runs elsewhere");
	if (pl->first)
		fprintf(out, "; first in %s at %s s (%s)", pl->first->task, diff_time(pl->first->ns, t), pl->first_run);
	fputc('\n', out);
}

static void diff_text_runs_side(FILE *out, const char *mark, const char *which, const struct diff_runs *r, int side)
{
	const struct diff_run *runs = &r->runs[side ? r->nside[0] : 0];
	uint64_t lo = UINT64_MAX, hi = 0;
	char x[32];

	fprintf(out, "%s %s: %zu run%s:", mark, which, r->nside[side], r->nside[side] == 1 ? "" : "s");
	for (size_t i = 0; i < r->nside[side]; i++) {
		fprintf(out, " %s", runs[i].path);
		lo = runs[i].calls < lo ? runs[i].calls : lo;
		hi = runs[i].calls > hi ? runs[i].calls : hi;
	}
	if (lo == hi)
		snprintf(x, sizeof(x), "%" PRIu64, lo);
	else
		snprintf(x, sizeof(x), "%" PRIu64 "..%" PRIu64, lo, hi);
	fprintf(out, " (%u vCPU%s, %s calls%s)\n", runs[0].ncpus, runs[0].ncpus == 1 ? "" : "s", x,
		runs[0].graph ? ", with returns" : "");
}

void diff_runs_print_text(FILE *out, const struct diff_runs *r, const struct diff_opts *o)
{
	size_t noise = r->nplaces - r->nholds, top = o->top && o->top < noise ? o->top : noise;

	if (r->nholds)
		fprintf(out, "vmmtrace diff: the boots part in %zu place%s in every run (%zu of A against %zu of B)",
			r->nholds, r->nholds == 1 ? "" : "s", r->nside[0], r->nside[1]);
	else
		fprintf(out, "vmmtrace diff: the boots agree in every run (%zu of A against %zu of B)", r->nside[0],
			r->nside[1]);
	fprintf(out, "; %zu place%s where runs differ set aside as noise\n", noise, noise == 1 ? "" : "s");
	diff_text_runs_side(out, "---", "A", r, 0);
	diff_text_runs_side(out, "+++", "B", r, 1);
	if (diff_runs_chance(r) < 1.0)
		fprintf(out, "chance: with %zu run%s against %zu, a place whose calls vary only at random passes for a "
			"parting at most 1 time in %.0f; more runs make that rarer\n", r->nside[0], r->nside[0] == 1 ? "" : "s",
			r->nside[1], 1.0 / diff_runs_chance(r));
	else
		fprintf(out, "chance: with one run of each side any difference passes for a parting: give a side runs "
			"enough to show its noise\n");
	if (r->nholds)
		fprintf(out, "\npartings (-: fewer calls in B than in A, +: more, =: the same calls in another order), "
			"earliest first:\n");
	for (size_t i = 0; i < r->nholds; i++)
		diff_text_place(out, r, &r->places[i]);
	if (!noise)
		fprintf(out, "\nnoise: none: the runs of each side made every call alike\n");
	else
		fprintf(out, "\nnoise: %zu place%s whose calls per run in A and in B overlap, whose function differs "
			"between runs elsewhere, or whose calls' order differs between runs of a side%s\n", noise,
			noise == 1 ? "" : "s", top < noise ? "; the first:" : "");
	for (size_t i = 0; i < top; i++)
		diff_text_place(out, r, &r->places[r->nholds + i]);
}

static void diff_runs_json_place(FILE *out, const struct diff_runs *r, const struct diff_place *pl, int first)
{
	fprintf(out, "%s\n    {\"func\": ", first ? "" : ",");
	diff_json_str(out, diff_runs_func(r, pl->path));
	fprintf(out, ", \"callers\": [");
	for (uint32_t q = r->paths[pl->path].parent; q; q = r->paths[q - 1].parent) {
		diff_json_str(out, diff_runs_func(r, q - 1));
		if (r->paths[q - 1].parent)
			fputs(", ", out);
	}
	fprintf(out, "], \"a\": [%" PRIu32 ", %" PRIu32 "], \"b\": [%" PRIu32 ", %" PRIu32 "], \"nested\": %zu, "
		"\"noisy_elsewhere\": %s, \"order\": %s", pl->min[0], pl->max[0], pl->min[1], pl->max[1], pl->under,
		pl->noisy_name ? "true" : "false", pl->order ? "true" : "false");
	for (int side = 0; side < 2 && pl->order && pl->holds; side++) {
		fprintf(out, side ? ", \"b_first\": " : ", \"a_first\": ");
		if (pl->kid[side] == DIFF_PATH_NONE)
			fputs("null", out);
		else
			diff_json_str(out, diff_runs_func(r, pl->kid[side]));
	}
	if (pl->first) {
		fprintf(out, ", \"task\": ");
		diff_json_str(out, pl->first->task);
		fprintf(out, ", \"time_ns\": %" PRIu64 ", \"run\": ", pl->first->ns);
		diff_json_str(out, pl->first_run);
	}
	fputc('}', out);
}

static void diff_runs_json_side(FILE *out, const struct diff_runs *r, int side)
{
	const struct diff_run *runs = &r->runs[side ? r->nside[0] : 0];

	fprintf(out, "[");
	for (size_t i = 0; i < r->nside[side]; i++) {
		fprintf(out, "%s{\"path\": ", i ? ", " : "");
		diff_json_str(out, runs[i].path);
		fprintf(out, ", \"cpus\": %u, \"events\": %" PRIu64 ", \"calls\": %" PRIu64 ", \"tasks\": %zu, "
			"\"returns\": %s}", runs[i].ncpus, runs[i].events, runs[i].calls, runs[i].ntasks,
			runs[i].graph ? "true" : "false");
	}
	fprintf(out, "]");
}

void diff_runs_print_json(FILE *out, const struct diff_runs *r, const struct diff_opts *o)
{
	size_t noise = r->nplaces - r->nholds, top = o->top && o->top < noise ? o->top : noise;

	fprintf(out, "{\n  \"a\": ");
	diff_runs_json_side(out, r, 0);
	fprintf(out, ",\n  \"b\": ");
	diff_runs_json_side(out, r, 1);
	fprintf(out, ",\n  \"agree\": %s,\n  \"chance\": %.6f,\n  \"parted\": [", r->nholds ? "false" : "true",
		diff_runs_chance(r));
	for (size_t i = 0; i < r->nholds; i++)
		diff_runs_json_place(out, r, &r->places[i], !i);
	fprintf(out, "],\n  \"noise\": %zu,\n  \"noise_places\": [", noise);
	for (size_t i = 0; i < top; i++)
		diff_runs_json_place(out, r, &r->places[r->nholds + i], !i);
	fprintf(out, "]\n}\n");
}
