/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmmtrace report's pieces beside its command line (cmd-report.c): the
 * options, which events they select, and the --stat and --flame outputs
 * (report-stat.c).
 */
#ifndef VMM_CLI_REPORT_H
#define VMM_CLI_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "vmm/trace/filter.h"
#include "vmm/output/raw-read.h"
#include "vmm/output/writer.h"

struct report_opts {
	const char *file, *out_path, *format;
	const char *const *files;	/* --stat of several runs: all of them (file is the first) */
	size_t nfiles;
	const struct trace_writer_ops *ops;
	struct filter filter;		/* --trace, --notrace (as !GLOB) */
	uint64_t cpu, pid, top;
	uint64_t from_us, to_us;	/* printed timestamps, in microseconds */
	int have_cpu, have_pid, have_from, have_to, have_top;
	int stat, flame;
	const char *chart;		/* --chart OUT.svg */
	uint64_t chart_min_ns;		/* --chart-min; 0: the chart's own threshold */
	int have_chart_min;
};

/* A decimal below or at max; -EINVAL otherwise. */
int report_parse_u64(const char *s, uint64_t max, uint64_t *v);
/* Seconds as the text output prints them ("1.5", "2.250000") into microseconds. */
int report_parse_time(const char *s, uint64_t *us);
/* A duration with its unit ("500us", "2ms", "0.25s", "100ns") into ns; -EINVAL otherwise. */
int report_parse_duration(const char *s, uint64_t *ns);

/* Small open-addressing map from an address pair to a count. */
struct report_map_ent {
	uint64_t a, b, n;
	int used;
};
struct report_map {
	struct report_map_ent *ents;
	size_t mask, count;
};

/* The events the options select; caches each function's filter verdict. */
struct report_sel {
	const struct report_opts *o;
	const struct trace_meta *meta;
	struct report_map verdict;	/* func -> 1 + match */
	int oom;
};

int report_sel_init(struct report_sel *sel, const struct report_opts *o, const struct trace_meta *meta);
void report_sel_destroy(struct report_sel *sel);
int report_sel_match(struct report_sel *sel, const struct ring_event *ev);

/*
 * An address as the text output names it: a function only at its first
 * byte (exact), a caller anywhere inside its symbol; hexadecimal otherwise.
 */
const char *report_name(const struct trace_meta *meta, uint64_t addr, int exact, char *buf, size_t len);

/* A row of a --stat or --flame table; total and self time (TSC ticks) when returns are recorded. */
struct report_row {
	char *name;
	uint64_t n, total, self;
};

/* --stat's function rows of one recording, one per name, sorted by name; timed: with total and self time. */
int report_stat_rows(struct raw_reader *r, struct report_sel *sel, struct report_row **rows, size_t *n,
		     uint64_t *events, int *timed, struct errbuf *err);
void report_rows_free(struct report_row *rows, size_t n);
/* --stat of several runs (report-runs.c): each function's calls and times as min, median and max. */
int report_stat_runs(const char *const *files, size_t nfiles, const struct report_opts *o, FILE *out,
		     struct errbuf *err);

int report_stat(struct raw_reader *r, struct report_sel *sel, const struct report_opts *o, FILE *out,
		struct errbuf *err);
int report_flame(struct raw_reader *r, struct report_sel *sel, FILE *out, struct errbuf *err);
/* --chart: the boot chart of the selected events into o->chart (report-chart.c). */
int report_chart(struct raw_reader *r, struct report_sel *sel, const struct report_opts *o, struct errbuf *err);

#endif
