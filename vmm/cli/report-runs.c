// SPDX-License-Identifier: GPL-2.0
/*
 * vmmtrace report --stat RUN1 RUN2 ...: several recordings of the same
 * boot summed up side by side. Each function's calls per run, and with
 * --graph its total and self time per run, as the fewest, the median and
 * the most over the runs (a run that never called it counts 0): what
 * varies between boots that cannot be made reproducible, and by how much.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/cli/report.h"

/* One function's row of one run, for the merge by name. */
struct runs_row {
	const struct report_row *row;
	size_t run;
};

/* A function over the runs: min, median, max of its calls, total and self time (ns). */
struct runs_fn {
	const char *name;
	uint64_t calls[3], total[3], self[3];
};

/* One run's rows and what --stat says of it. */
struct runs_one {
	struct report_row *rows;
	size_t n;
	uint64_t events, read, dropped, lost, damaged;
	int timed, trailer, cut;
};

static int runs_row_cmp(const void *a, const void *b)
{
	const struct runs_row *x = a, *y = b;
	int c = strcmp(x->row->name, y->row->name);

	return c ? c : (x->run > y->run) - (x->run < y->run);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* v's min, median (the mean of the middle two for an even count) and max; sorts v. */
static void runs_spread(uint64_t *v, size_t n, uint64_t out[3])
{
	qsort(v, n, sizeof(*v), u64_cmp);
	out[0] = v[0];
	out[1] = n % 2 ? v[n / 2] : v[n / 2 - 1] / 2 + v[n / 2] / 2 + (v[n / 2 - 1] % 2 + v[n / 2] % 2) / 2;
	out[2] = v[n - 1];
}

static int runs_fn_cmp_timed(const void *a, const void *b)
{
	const struct runs_fn *x = a, *y = b;

	if (x->total[1] != y->total[1])
		return x->total[1] > y->total[1] ? -1 : 1;
	if (x->calls[1] != y->calls[1])
		return x->calls[1] > y->calls[1] ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int runs_fn_cmp(const void *a, const void *b)
{
	const struct runs_fn *x = a, *y = b;

	if (x->calls[1] != y->calls[1])
		return x->calls[1] > y->calls[1] ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Reads one run: its rows (times in ns) and its account. */
static int runs_read(const char *file, const struct report_opts *o, struct runs_one *one, struct errbuf *err)
{
	struct raw_reader *r = NULL;
	struct report_sel sel;
	int rc;

	if (raw_read_open(&r, file, err))
		return -EINVAL;
	if (report_sel_init(&sel, o, raw_read_meta(r))) {
		raw_read_close(r);
		return err_set(err, ENOMEM, "out of memory");
	}
	rc = report_stat_rows(r, &sel, &one->rows, &one->n, &one->events, &one->timed, err);
	if (rc && err->msg[0] && !strstr(err->msg, file)) {
		char msg[sizeof(err->msg)];

		snprintf(msg, sizeof(msg), "%s", err->msg);
		err_set(err, -rc, "%s: %s", file, msg);
	}
	for (size_t i = 0; !rc && i < one->n; i++) {
		struct trace_meta m = { .tsc_khz = raw_read_meta(r)->tsc_khz };

		one->rows[i].total = trace_meta_ns(&m, one->rows[i].total);
		one->rows[i].self = trace_meta_ns(&m, one->rows[i].self);
	}
	one->read = raw_read_report(r)->events;
	one->trailer = raw_read_report(r)->have_trailer;
	one->dropped = raw_read_report(r)->stats.dropped_stub;
	one->lost = raw_read_report(r)->stats.lost;
	one->damaged = raw_read_report(r)->damaged;
	one->cut = raw_read_report(r)->cut;
	report_sel_destroy(&sel);
	raw_read_close(r);
	return rc;
}

/* The functions of all runs, one per name, each with its spread over the runs. */
static struct runs_fn *runs_merge(const struct runs_one *runs, size_t nruns, size_t *nfn)
{
	size_t total = 0, k = 0, nf = 0;
	struct runs_row *all;
	struct runs_fn *fns;
	uint64_t *v;

	for (size_t i = 0; i < nruns; i++)
		total += runs[i].n;
	all = calloc(total + 1, sizeof(*all));
	fns = calloc(total + 1, sizeof(*fns));
	v = calloc(3 * nruns, sizeof(*v));
	if (!all || !fns || !v) {
		free(all);
		free(fns);
		free(v);
		return NULL;
	}
	for (size_t i = 0; i < nruns; i++)
		for (size_t j = 0; j < runs[i].n; j++)
			all[k++] = (struct runs_row){ .row = &runs[i].rows[j], .run = i };
	qsort(all, total, sizeof(*all), runs_row_cmp);
	for (size_t i = 0; i < total;) {
		struct runs_fn *f = &fns[nf++];

		memset(v, 0, 3 * nruns * sizeof(*v));
		f->name = all[i].row->name;
		for (; i < total && !strcmp(all[i].row->name, f->name); i++) {
			v[all[i].run] += all[i].row->n;
			v[nruns + all[i].run] += all[i].row->total;
			v[2 * nruns + all[i].run] += all[i].row->self;
		}
		runs_spread(v, nruns, f->calls);
		runs_spread(v + nruns, nruns, f->total);
		runs_spread(v + 2 * nruns, nruns, f->self);
	}
	free(all);
	free(v);
	*nfn = nf;
	return fns;
}

static const char *runs_us(uint64_t ns, char buf[32])
{
	snprintf(buf, 32, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
	return buf;
}

static void runs_print(FILE *out, const char *const *files, const struct runs_one *runs, size_t nruns,
		       struct runs_fn *fns, size_t nf, uint64_t top, int timed)
{
	size_t k = top && top < nf ? (size_t)top : nf;
	uint64_t ev[3], v[nruns];
	char a[32], b[32], c[32], d[32];

	for (size_t i = 0; i < nruns; i++)
		v[i] = runs[i].events;
	runs_spread(v, nruns, ev);
	fprintf(out, "runs: %zu:", nruns);
	for (size_t i = 0; i < nruns; i++)
		fprintf(out, " %s", files[i]);
	fprintf(out, "\nevents selected per run: %" PRIu64 " fewest, %" PRIu64 " median, %" PRIu64 " most\n", ev[0],
		ev[1], ev[2]);
	qsort(fns, nf, sizeof(*fns), timed ? runs_fn_cmp_timed : runs_fn_cmp);
	fprintf(out, "\nfunctions: %zu, top %zu by median %s; per run the fewest, the median and the most%s:\n", nf, k,
		timed ? "total time" : "events", timed ? " (time: calls that returned; self: less their traced callees)" : "");
	if (timed)
		fprintf(out, "%10s %10s %10s  %14s %14s %14s  %14s  %s\n", "CALLS MIN", "MEDIAN", "MAX", "TOTAL us MIN",
			"MEDIAN", "MAX", "SELF us MEDIAN", "FUNCTION");
	else
		fprintf(out, "%10s %10s %10s  %s\n", "EVENTS MIN", "MEDIAN", "MAX", "FUNCTION");
	for (size_t i = 0; i < k; i++) {
		const struct runs_fn *f = &fns[i];

		fprintf(out, "%10" PRIu64 " %10" PRIu64 " %10" PRIu64, f->calls[0], f->calls[1], f->calls[2]);
		if (timed)
			fprintf(out, "  %14s %14s %14s  %14s", runs_us(f->total[0], a), runs_us(f->total[1], b),
				runs_us(f->total[2], c), runs_us(f->self[1], d));
		fprintf(out, "  %s\n", f->name);
	}
	fprintf(out, "\ndrops:\n");
	for (size_t i = 0; i < nruns; i++) {
		if (runs[i].trailer)
			fprintf(out, "  %s: %" PRIu64 " dropped by the stub, %" PRIu64 " lost", files[i], runs[i].dropped,
				runs[i].lost);
		else
			fprintf(out, "  %s: unknown (%s: the recording did not end cleanly)", files[i],
				runs[i].cut ? "cut" : "no trailer");
		if (runs[i].damaged)
			fprintf(out, "; %" PRIu64 " damaged chunk(s) skipped", runs[i].damaged);
		fputc('\n', out);
	}
}

int report_stat_runs(const char *const *files, size_t nfiles, const struct report_opts *o, FILE *out,
		     struct errbuf *err)
{
	struct runs_one *runs = calloc(nfiles, sizeof(*runs));
	struct runs_fn *fns = NULL;
	size_t nf = 0;
	int rc = runs ? 0 : err_set(err, ENOMEM, "out of memory"), timed = 1;

	for (size_t i = 0; !rc && i < nfiles; i++) {
		rc = runs_read(files[i], o, &runs[i], err);
		timed &= runs[i].timed;
	}
	if (!rc && !(fns = runs_merge(runs, nfiles, &nf)))
		rc = err_set(err, ENOMEM, "out of memory for the table");
	if (!rc)
		runs_print(out, files, runs, nfiles, fns, nf, o->top, timed);
	free(fns);
	for (size_t i = 0; runs && i < nfiles; i++)
		report_rows_free(runs[i].rows, runs[i].n);
	free(runs);
	return rc;
}
