// SPDX-License-Identifier: GPL-2.0
/*
 * vmmtrace report: reads a raw trace (vmm/output/raw-read.h) and converts it
 * to another format, filtered, or sums it up (--stat) or folds it into
 * collapsed stacks (--flame), as trace-cmd report does for trace.dat. A
 * file cut by a kill is no error: what it holds is reported, and one line
 * on stderr says how much was cut.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/cli/cmd.h"
#include "vmm/cli/report.h"
#include "vmm/output/raw-read.h"

static const char report_usage[] =
	"usage: vmmtrace report FILE [options]\n"
	"       vmmtrace report --stat RUN1 RUN2 ... [options]\n"
	"  FILE               a raw trace (vmmtrace's own format); a file cut by a\n"
	"                     kill is read up to its last complete chunk\n"
	"  --format FMT       output format: text (default; ftrace's trace layout,\n"
	"                     as boot writes it), dat (trace-cmd's trace.dat, for\n"
	"                     trace-cmd report and KernelShark), perfetto (for the\n"
	"                     Perfetto UI) or raw (a filtered copy)\n"
	"  -o, --output FILE  write there instead of stdout\n"
	"  --trace GLOB       only these functions (ftrace glob syntax, repeatable,\n"
	"                     !GLOB excludes); names as the text output prints them\n"
	"  --notrace GLOB     not these functions (repeatable)\n"
	"  --cpu N            only events of CPU N\n"
	"  --pid N            only events of task N (0: the idle and boot tasks,\n"
	"                     VM events and events whose task is unknown)\n"
	"  --from T, --to T   only events whose printed timestamp (seconds, e.g.\n"
	"                     1.5 or 2.250000) is within [T, T], bounds included\n"
	"  --stat             events per function (top N), per CPU, per boot phase\n"
	"                     when the trace records it, and the drops\n"
	"                     (of several runs of a boot: each function's calls\n"
	"                     and times as the fewest, the median and the most)\n"
	"  --top N            functions --stat lists (default 20; 0: all)\n"
	"  --flame            collapsed stacks for flamegraph.pl: 'parent;func count'\n"
	"                     lines; entry events know only their caller, so every\n"
	"                     stack is two frames deep\n"
	"  --chart OUT.svg    a boot chart: the boot's stages, a lane per vCPU and\n"
	"                     task, the longest calls by depth (--graph recordings)\n"
	"                     and VM events (--event), a table of the stages\n"
	"  --chart-min DUR    calls drawn at least this long: 100us, 2ms, 0.5s\n"
	"                     (default: a thousandth of the trace)\n"
	"  a --graph recording converts to each format with its returns (text as\n"
	"  function_graph prints it), and --stat adds total and self time\n";

/* 0, -1 after --help, or an exit status. */
static int report_parse_opt(struct report_opts *o, int c, const char *arg)
{
	struct errbuf err;
	char pat[4096];

	switch (c) {
	case 'F': o->format = arg; return 0;
	case 'o': o->out_path = arg; return 0;
	case 't':
	case 'n':
		snprintf(pat, sizeof(pat), "%s%s", c == 'n' ? "!" : "", arg);
		if (filter_add(&o->filter, pat, &err))
			return cmd_fail("report", EXIT_BAD_INPUT, "%s", err.msg);
		return 0;
	case 'c':
		if (report_parse_u64(arg, UINT16_MAX, &o->cpu))
			return cmd_fail("report", EXIT_BAD_INPUT, "--cpu '%s': not a CPU number", arg);
		o->have_cpu = 1;
		return 0;
	case 'p':
		if (report_parse_u64(arg, UINT32_MAX, &o->pid))
			return cmd_fail("report", EXIT_BAD_INPUT, "--pid '%s': not a pid", arg);
		o->have_pid = 1;
		return 0;
	case 'f':
	case 'T':
		if (report_parse_time(arg, c == 'f' ? &o->from_us : &o->to_us))
			return cmd_fail("report", EXIT_BAD_INPUT,
					"%s '%s': not a time in seconds (e.g. 1.5, at most 6 decimals)",
					c == 'f' ? "--from" : "--to", arg);
		*(c == 'f' ? &o->have_from : &o->have_to) = 1;
		return 0;
	case 's': o->stat = 1; return 0;
	case 'k':
		if (report_parse_u64(arg, UINT32_MAX, &o->top))
			return cmd_fail("report", EXIT_BAD_INPUT, "--top '%s': not a count", arg);
		o->have_top = 1;
		return 0;
	case 'g': o->flame = 1; return 0;
	case 'C': o->chart = arg; return 0;
	case 'M':
		if (report_parse_duration(arg, &o->chart_min_ns))
			return cmd_fail("report", EXIT_BAD_INPUT, "--chart-min '%s': not a duration (100us, 2ms, 0.5s)", arg);
		o->have_chart_min = 1;
		return 0;
	case 'h': fputs(report_usage, stdout); return -1;
	}
	return cmd_fail("report", EXIT_BAD_INPUT, "unknown or incomplete option (see --help)");
}

static int report_check_opts(struct report_opts *o)
{
	if (o->stat && o->flame)
		return cmd_fail("report", EXIT_BAD_INPUT, "--stat and --flame are exclusive");
	if (o->have_top && !o->stat)
		return cmd_fail("report", EXIT_BAD_INPUT, "--top goes with --stat");
	if (o->format && (o->stat || o->flame))
		return cmd_fail("report", EXIT_BAD_INPUT, "--format does not go with --stat or --flame");
	if (o->chart && (o->stat || o->flame || o->format || o->out_path))
		return cmd_fail("report", EXIT_BAD_INPUT, "--chart writes its own file: not with --stat, --flame, --format or -o");
	if (o->have_chart_min && !o->chart)
		return cmd_fail("report", EXIT_BAD_INPUT, "--chart-min goes with --chart");
	if (o->have_from && o->have_to && o->from_us > o->to_us)
		return cmd_fail("report", EXIT_BAD_INPUT, "--from is after --to");
	o->ops = trace_writer_find(o->format ? o->format : "text");
	if (!o->ops)
		return cmd_fail("report", EXIT_BAD_INPUT, "unknown format '%s' (text, dat, perfetto, raw)", o->format);
	return 0;
}

static int report_parse(int argc, char **argv, struct report_opts *o)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'F' },
		{ "output", required_argument, NULL, 'o' },
		{ "trace", required_argument, NULL, 't' },
		{ "notrace", required_argument, NULL, 'n' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "pid", required_argument, NULL, 'p' },
		{ "from", required_argument, NULL, 'f' },
		{ "to", required_argument, NULL, 'T' },
		{ "stat", no_argument, NULL, 's' },
		{ "top", required_argument, NULL, 'k' },
		{ "flame", no_argument, NULL, 'g' },
		{ "chart", required_argument, NULL, 'C' },
		{ "chart-min", required_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		if (c == '?' || c == ':')
			return cmd_fail("report", EXIT_BAD_INPUT,
					"unknown or incomplete option '%s' (see --help)", argv[optind - 1]);
		rc = report_parse_opt(o, c, optarg);
		if (rc)
			return rc;
	}
	if (optind >= argc)
		return cmd_fail("report", EXIT_BAD_INPUT, "FILE is missing (see --help)");
	o->file = argv[optind];
	o->files = (const char *const *)&argv[optind];
	o->nfiles = (size_t)(argc - optind);
	if (o->nfiles > 1 && !o->stat)
		return cmd_fail("report", EXIT_BAD_INPUT, "unexpected argument '%s': several recordings go with --stat "
				"(see --help)", argv[optind + 1]);
	return report_check_opts(o);
}

/* Converts the selected events through the chosen writer. */
struct report_convert {
	struct report_sel *sel;
	const struct trace_writer_ops *ops;
	struct trace_writer *w;
	uint64_t events;
};

static int report_convert_event(void *opaque, const struct ring_event *ev)
{
	struct report_convert *cv = opaque;

	if (!report_sel_match(cv->sel, ev))
		return 0;
	cv->events++;
	return cv->ops->event(cv->w, ev);
}

static int report_convert(struct raw_reader *r, struct report_sel *sel,
			  const struct trace_writer_ops *ops, FILE *out, struct errbuf *err)
{
	struct report_convert cv = { .sel = sel, .ops = ops };
	struct trace_stats st;
	int rc, rc2;

	rc = ops->open(&cv.w, out, raw_read_meta(r), err);
	if (rc)
		return rc;
	rc = raw_read_replay(r, report_convert_event, &cv);
	if (rc)
		err_set(err, -rc, "writing the %s output: %s", ops->name, strerror(-rc));
	st = raw_read_report(r)->stats;
	st.events = cv.events;
	rc2 = ops->close(cv.w, &st, rc ? NULL : err);
	return rc ? rc : rc2;
}

/* One line each for what the file lacked: a cut, damage, no trailer. */
static void report_warn(const char *file, const struct raw_read_report *rep)
{
	if (rep->damaged) {
		char offs[256] = "";
		size_t used = 0;

		for (unsigned i = 0; i < rep->ndamage && used < sizeof(offs) - 24; i++)
			used += (size_t)snprintf(offs + used, sizeof(offs) - used, "%s%" PRIu64 " (%s)",
						 i ? ", " : "", rep->damage[i].offset, rep->damage[i].why);
		cmd_fail("report", EXIT_OK, "%s: %" PRIu64 " damaged chunk(s) skipped, at offset %s%s",
			 file, rep->damaged, offs, rep->damaged > rep->ndamage ? ", ..." : "");
	}
	if (rep->cut)
		cmd_fail("report", EXIT_OK,
			 "%s: cut at offset %" PRIu64 " (%" PRIu64 " bytes after the last complete chunk "
			 "dropped): the recording did not end cleanly; %" PRIu64 " events in %" PRIu64
			 " complete chunks read", file, rep->cut_offset, rep->cut_bytes, rep->events,
			 rep->chunks);
	else if (!rep->have_trailer)
		cmd_fail("report", EXIT_OK,
			 "%s: no closing account (trailer): the recording did not end cleanly; %" PRIu64
			 " events in %" PRIu64 " complete chunks read", file, rep->events, rep->chunks);
}

static int report_run(struct report_opts *o, struct raw_reader *r, FILE *out)
{
	struct report_sel sel;
	struct errbuf err;
	int rc;

	rc = report_sel_init(&sel, o, raw_read_meta(r));
	if (rc)
		return cmd_fail("report", EXIT_FAILURE_RUN, "out of memory");
	/* A --graph recording's text is function_graph's, as the boot wrote it. */
	if (o->ops == &trace_writer_text && raw_read_meta(r)->graph)
		o->ops = &trace_writer_graph;
	if (o->stat)
		rc = report_stat(r, &sel, o, out, &err);
	else if (o->flame)
		rc = report_flame(r, &sel, out, &err);
	else if (o->chart)
		rc = report_chart(r, &sel, o, &err);
	else
		rc = report_convert(r, &sel, o->ops, out, &err);
	report_sel_destroy(&sel);
	if (!rc && fflush(out))
		rc = err_set(&err, errno, "writing %s: %s", o->out_path ? o->out_path : "stdout",
			     strerror(errno));
	if (rc)
		return cmd_fail("report", EXIT_FAILURE_RUN, "%s", err.msg);
	report_warn(o->file, raw_read_report(r));
	return EXIT_OK;
}

/* --stat of several runs: one line for a run that cannot be read, and for what a run lacked. */
static int report_runs(struct report_opts *o)
{
	FILE *out = o->out_path ? fopen(o->out_path, "w") : stdout;
	struct errbuf err;
	int rc;

	if (!out)
		return cmd_fail("report", EXIT_BAD_INPUT, "-o %s: %s", o->out_path, strerror(errno));
	rc = report_stat_runs(o->files, o->nfiles, o, out, &err);
	if (!rc && fflush(out))
		rc = err_set(&err, errno, "writing %s: %s", o->out_path ? o->out_path : "stdout", strerror(errno));
	if (out != stdout && fclose(out) && !rc)
		rc = err_set(&err, errno, "writing %s: %s", o->out_path, strerror(errno));
	if (rc && out != stdout)
		unlink(o->out_path);	/* no table, not a part of one */
	return rc ? cmd_fail("report", rc == -EINVAL ? EXIT_BAD_INPUT : EXIT_FAILURE_RUN, "%s", err.msg) : EXIT_OK;
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o;
	struct raw_reader *r = NULL;
	struct errbuf err;
	FILE *out = stdout;
	int rc;

	memset(&o, 0, sizeof(o));
	o.top = 20;
	filter_init(&o.filter);
	rc = report_parse(argc, argv, &o);
	if (rc)
		goto out;
	if (o.nfiles > 1) {
		rc = report_runs(&o);
		goto out;
	}
	if (raw_read_open(&r, o.file, &err)) {
		rc = cmd_fail("report", EXIT_BAD_INPUT, "%s", err.msg);
		goto out;
	}
	if (o.out_path && !(out = fopen(o.out_path, "w"))) {
		rc = cmd_fail("report", EXIT_BAD_INPUT, "-o %s: %s", o.out_path, strerror(errno));
		goto out;
	}
	rc = report_run(&o, r, out);
	if (out != stdout && fclose(out) && rc == EXIT_OK)
		rc = cmd_fail("report", EXIT_FAILURE_RUN, "writing %s: %s", o.out_path, strerror(errno));
out:
	raw_read_close(r);
	filter_destroy(&o.filter);
	return rc < 0 ? EXIT_OK : rc;
}
