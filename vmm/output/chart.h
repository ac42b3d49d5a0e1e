/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A boot chart: where a boot's time goes, as one self-contained SVG
 * (`vmmtrace report FILE --chart OUT.svg`; docs/TRACING.md "Boot chart").
 * Guest time runs left to right; under the boot's stages (stages.h) each
 * vCPU and each task has a lane with how busy its traced functions were,
 * its longest calls nested by depth (with --graph's returns) and, on a
 * vCPU's lane, its VM events as ticks coloured by kind; a legend and a
 * table of the stages (duration, share of the boot, VM exits) follow.
 *
 * The model is built in two passes over the trace (chart.c): the first
 * finds the span, the lanes, the stages and the longest calls, the second
 * bins activity and VM events on that span; chart-svg.c draws it.
 */
#ifndef VMM_OUTPUT_CHART_H
#define VMM_OUTPUT_CHART_H

#include <stdint.h>
#include <stdio.h>

#include "vmm/output/stages.h"
#include "vmm/output/writer.h"

struct chart_opts {
	uint64_t min_ns;	/* --chart-min: calls at least this long; 0: a thousandth of the trace */
	unsigned max_calls;	/* the longest calls kept at most; 0: 4000 */
};

struct chart;

int chart_new(struct chart **c, const struct trace_meta *meta, const struct chart_opts *o);
void chart_free(struct chart *c);
/* One event of the trace, in the trace's order, in each pass. */
int chart_event(struct chart *c, const struct ring_event *ev);
/* Ends a pass over the trace: 1 when another is needed, 0 when the model is done, or -errno. */
int chart_end_pass(struct chart *c);
/* Writes the SVG; title names the trace. 0 or -errno (err says why). */
int chart_write_svg(const struct chart *c, FILE *out, const char *title, struct errbuf *err);
/* The stages the chart shows (valid once the passes are done). */
const struct stage *chart_stages(const struct chart *c, size_t *n);

#endif
