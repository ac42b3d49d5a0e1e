/* SPDX-License-Identifier: GPL-2.0 */
/* vmmtrace diff's options and its report (diff-print.c) of the model in vmm/output/diff.h. */
#ifndef VMM_CLI_DIFF_PRINT_H
#define VMM_CLI_DIFF_PRINT_H

#include <stdio.h>

#include "vmm/output/diff.h"
#include "vmm/trace/filter.h"

struct diff_opts {
	unsigned context, top;
	int json, force;
	struct filter ignore;		/* --ignore */
};

void diff_print_text(FILE *out, struct diff_side *a, struct diff_side *b, const struct diff_part *parts, size_t n,
		     const struct diff_opts *o);
void diff_print_json(FILE *out, struct diff_side *a, struct diff_side *b, const struct diff_part *parts, size_t n,
		     const struct diff_opts *o);
/* Several runs of each side (diff-runs-print.c). */
void diff_runs_print_text(FILE *out, const struct diff_runs *r, const struct diff_opts *o);
void diff_runs_print_json(FILE *out, const struct diff_runs *r, const struct diff_opts *o);
/* Nanoseconds as the text output's seconds, "12.345678". */
const char *diff_time(uint64_t ns, char buf[32]);
/* A JSON string: quotes, backslashes and anything not printable ASCII escaped. */
void diff_json_str(FILE *out, const char *s);

#endif
