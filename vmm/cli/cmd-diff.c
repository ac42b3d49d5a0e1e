// SPDX-License-Identifier: GPL-2.0
/*
 * vmmtrace diff A B: where two boots' recordings part (vmm/output/diff.h);
 * vmmtrace diff A1 A2 ... -- B1 B2 ...: the partings that hold in every run
 * of one side against every run of the other, the rest set aside as noise. Exit
 * status as diff(1)'s: 0 when every task made the same calls in the same
 * order, 1 when they part, 2 on bad input (an option, a file that is not a
 * whole recording, recordings of two kernels without --force) or any
 * failure.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/cli/cmd.h"
#include "vmm/cli/diff-print.h"
#include "vmm/cli/report.h"

#define DIFF_PARTED	1
#define DIFF_TROUBLE	2

static const char diff_usage[] =
	"usage: vmmtrace diff A B [options]\n"
	"       vmmtrace diff A1 A2 ... -- B1 B2 ... [options]\n"
	"  A, B               two raw recordings of boots (vmmtrace boot -o FILE.raw),\n"
	"                     best with --graph; the same kernel unless --force\n"
	"  A1 ... -- B1 ...   several runs of each: for boots that are not\n"
	"                     reproducible (KVM; QEMU without --deterministic), a\n"
	"                     call path whose calls per run differ alike in every\n"
	"                     run of A against every run of B is a parting, one\n"
	"                     whose runs differ among themselves is noise; a path\n"
	"                     whose calls come alike in number but in another\n"
	"                     order is one too (=)\n"
	"  --context N        calls shown around where a task's sequences part (3;\n"
	"                     two recordings only)\n"
	"  --top N            rows of each table, places of noise listed (20; 0: all)\n"
	"  --ignore GLOB      leave out calls of these functions (ftrace glob,\n"
	"                     repeatable), with --graph everything they call too:\n"
	"                     noise such as timer interrupts and idle\n"
	"  --format text|json text (default) or JSON for scripts\n"
	"  --force            compare recordings of two kernels, or cut ones\n"
	"exit status: 0 the boots agree, 1 they part, 2 bad input or trouble\n";

/* Stands for "--" among the recordings: getopt would take it for the end of the options. */
static const char diff_sep[] = "\001--";

/* The recordings: A and B, or the runs of each side (nb set). */
struct diff_files {
	const char **a, **b;
	size_t na, nb;
	int runs, context_set;
};

static int diff_fail(const char *fmt, const char *arg)
{
	return cmd_fail("diff", DIFF_TROUBLE, fmt, arg);
}

/* The recordings after the options: A B, or A1 ... -- B1 .... */
static int diff_operands(int argc, char **argv, struct diff_files *f)
{
	int sep = -1;

	for (int i = optind; i < argc; i++)
		if (argv[i] == diff_sep)
			sep = sep < 0 ? i : sep;
	if (sep < 0) {
		if (argc - optind != 2)
			return diff_fail("%s (see --help)", argc - optind < 2 ? "two recordings, A and B, are needed" :
					 "more than two recordings given; several runs of each go as A1 A2 -- B1 B2");
		f->a = (const char **)&argv[optind];
		f->b = (const char **)&argv[optind + 1];
		f->na = f->nb = 1;
		return 0;
	}
	f->runs = 1;
	f->a = (const char **)&argv[optind];
	f->na = (size_t)(sep - optind);
	f->b = (const char **)&argv[sep + 1];
	f->nb = (size_t)(argc - sep - 1);
	for (size_t i = 0; i < f->nb; i++)
		if (f->b[i] == diff_sep)
			return diff_fail("'%s': one -- parts the runs of A from those of B", "--");
	if (!f->na || !f->nb)
		return diff_fail("%s: a run of each side is needed around --", !f->na ? "no run of A" : "no run of B");
	if (f->context_set)
		return diff_fail("--context%s goes with two recordings: several runs are compared by call path", "");
	return 0;
}

/* 0, -1 after --help, or an exit status. */
static int diff_parse(int argc, char **argv, struct diff_opts *o, struct diff_files *f)
{
	static const struct option longopts[] = {
		{ "context", required_argument, NULL, 'c' }, { "top", required_argument, NULL, 't' },
		{ "ignore", required_argument, NULL, 'i' }, { "format", required_argument, NULL, 'f' },
		{ "force", no_argument, NULL, 'F' }, { "help", no_argument, NULL, 'h' }, { 0 },
	};
	struct errbuf err;
	uint64_t v;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
		case 't':
			if (report_parse_u64(optarg, c == 'c' ? 1000 : UINT32_MAX, &v))
				return diff_fail(c == 'c' ? "--context '%s': not a count from 0 to 1000" :
					 "--top '%s': not a count", optarg);
			*(c == 'c' ? &o->context : &o->top) = (unsigned)v;
			f->context_set |= c == 'c';
			break;
		case 'i':
			if (filter_add(&o->ignore, optarg, &err))
				return cmd_fail("diff", DIFF_TROUBLE, "--ignore: %s", err.msg);
			break;
		case 'f':
			if (strcmp(optarg, "text") && strcmp(optarg, "json"))
				return diff_fail("--format '%s': text or json", optarg);
			o->json = !strcmp(optarg, "json");
			break;
		case 'F': o->force = 1; break;
		case 'h': fputs(diff_usage, stdout); return -1;
		default: return diff_fail("unknown or incomplete option '%s' (see --help)", argv[optind - 1]);
		}
	}
	return diff_operands(argc, argv, f);
}

/* Opens and reads both; whether they can be compared. 0 or an exit status. */
static int diff_load(struct diff_side *a, struct diff_side *b, const char *pa, const char *pb,
		     struct diff_names *nm, const struct diff_opts *o)
{
	struct errbuf err;
	char why[512];

	if (diff_side_open(a, pa, nm, &err) || diff_side_open(b, pb, nm, &err))
		return cmd_fail("diff", DIFF_TROUBLE, "%s", err.msg);
	for (int i = 0; i < 2 && !o->force; i++)
		if (diff_side_incomplete(i ? b : a, why, sizeof(why)))
			return cmd_fail("diff", DIFF_TROUBLE, "%s; --force compares what it holds", why);
	if (!o->force && !diff_same_kernel(a, b, why, sizeof(why)))
		return cmd_fail("diff", DIFF_TROUBLE, "%s and %s are recordings of different kernels: %s; --force "
				"compares them by function name", pa, pb, why);
	if (diff_side_read(a, &err) || diff_side_read(b, &err))
		return cmd_fail("diff", DIFF_TROUBLE, "%s", err.msg);
	return 0;
}

static int diff_ignore(void *opaque, const char *name)
{
	const struct filter *f = opaque;

	return !filter_selects_all(f) && filter_match(f, name);
}

static int diff_run(const struct diff_opts *o, const char *pa, const char *pb)
{
	struct diff_side a = { 0 }, b = { 0 };
	struct diff_part *parts = NULL;
	struct diff_names nm;
	struct errbuf err;
	size_t n = 0;
	int rc;

	if (diff_names_init(&nm, diff_ignore, (void *)&o->ignore))
		return cmd_fail("diff", DIFF_TROUBLE, "out of memory");
	rc = diff_load(&a, &b, pa, pb, &nm, o);
	if (!rc && diff_parts(&a, &b, o->context, &parts, &n))
		rc = cmd_fail("diff", DIFF_TROUBLE, "out of memory");
	if (!rc && (diff_side_details(&a, &err) || diff_side_details(&b, &err)))
		rc = cmd_fail("diff", DIFF_TROUBLE, "%s", err.msg);
	if (!rc) {
		diff_parts_order(parts, n);
		(o->json ? diff_print_json : diff_print_text)(stdout, &a, &b, parts, n, o);
		rc = n && !parts[0].agree ? DIFF_PARTED : EXIT_OK;
		if (fflush(stdout) || ferror(stdout))
			rc = cmd_fail("diff", DIFF_TROUBLE, "writing the report: %s", strerror(errno ? errno : EIO));
	}
	free(parts);
	diff_side_close(&a);
	diff_side_close(&b);
	diff_names_destroy(&nm);
	return rc;
}

static int diff_runs_run(const struct diff_opts *o, const struct diff_files *f)
{
	struct diff_names nm;
	struct diff_runs r;
	struct errbuf err;
	int rc = 0;

	if (diff_names_init(&nm, diff_ignore, (void *)&o->ignore))
		return cmd_fail("diff", DIFF_TROUBLE, "out of memory");
	if (diff_runs_init(&r, &nm)) {
		diff_names_destroy(&nm);
		return cmd_fail("diff", DIFF_TROUBLE, "out of memory");
	}
	for (size_t i = 0; !rc && i < f->na + f->nb; i++)
		if (diff_runs_add(&r, i >= f->na, i < f->na ? f->a[i] : f->b[i - f->na], o->force, &err))
			rc = cmd_fail("diff", DIFF_TROUBLE, "%s", err.msg);
	if (!rc && diff_runs_compare(&r))
		rc = cmd_fail("diff", DIFF_TROUBLE, "out of memory");
	if (!rc) {
		(o->json ? diff_runs_print_json : diff_runs_print_text)(stdout, &r, o);
		rc = r.nholds ? DIFF_PARTED : EXIT_OK;
		if (fflush(stdout) || ferror(stdout))
			rc = cmd_fail("diff", DIFF_TROUBLE, "writing the report: %s", strerror(errno ? errno : EIO));
	}
	diff_runs_destroy(&r);
	diff_names_destroy(&nm);
	return rc;
}

int cmd_diff(int argc, char **argv)
{
	struct diff_opts o = { .context = 3, .top = 20 };
	struct diff_files f = { 0 };
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	int rc;

	if (!args)
		return cmd_fail("diff", DIFF_TROUBLE, "out of memory");
	/* "--" parts the runs of A from B's (diff_operands refuses a second one). */
	for (int i = 0; i < argc; i++)
		args[i] = i && !strcmp(argv[i], "--") ? (char *)diff_sep : argv[i];
	filter_init(&o.ignore);
	rc = diff_parse(argc, args, &o, &f);
	if (!rc)
		rc = f.runs ? diff_runs_run(&o, &f) : diff_run(&o, f.a[0], f.b[0]);
	filter_destroy(&o.ignore);
	free(args);
	return rc < 0 ? EXIT_OK : rc;
}
