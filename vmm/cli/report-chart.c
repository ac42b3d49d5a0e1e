// SPDX-License-Identifier: GPL-2.0
/*
 * vmmtrace report --chart: the boot chart (vmm/output/chart.h) of the
 * selected events, two passes over the recording, written to its own
 * file; and the durations its --chart-min takes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/cli/report.h"
#include "vmm/output/chart.h"

int report_parse_duration(const char *s, uint64_t *ns)
{
	static const struct { const char *unit; uint64_t ns; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
	};
	uint64_t whole = 0, frac = 0, scale = 1;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (whole > UINT64_MAX / 10 / 1000000000)
			return -EINVAL;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			if (scale < 1000000000) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				scale *= 10;
			}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(p, units[i].unit)) {
			*ns = whole * units[i].ns + frac * units[i].ns / scale;
			return 0;
		}
	return -EINVAL;
}

struct report_chart_feed {
	struct report_sel *sel;
	struct chart *c;
};

static int report_chart_event(void *opaque, const struct ring_event *ev)
{
	struct report_chart_feed *f = opaque;

	return report_sel_match(f->sel, ev) ? chart_event(f->c, ev) : 0;
}

int report_chart(struct raw_reader *r, struct report_sel *sel, const struct report_opts *o, struct errbuf *err)
{
	struct chart_opts copts = { .min_ns = o->chart_min_ns };
	struct report_chart_feed feed = { .sel = sel };
	const struct trace_meta *meta = raw_read_meta(r);
	const char *base = strrchr(o->file, '/');
	char title[512];
	FILE *out;
	int rc;

	if ((rc = chart_new(&feed.c, meta, &copts)))
		return err_set(err, -rc, "out of memory for the chart");
	do {
		rc = raw_read_replay(r, report_chart_event, &feed);
		if (!rc)
			rc = chart_end_pass(feed.c);
	} while (rc == 1);
	if (rc < 0) {
		chart_free(feed.c);
		return err_set(err, -rc, "building the chart: %s", strerror(-rc));
	}
	snprintf(title, sizeof(title), "%s (%s)", base ? base + 1 : o->file, meta->kernel ? meta->kernel : "kernel unknown");
	out = fopen(o->chart, "w");
	if (!out)
		rc = err_set(err, errno, "--chart %s: %s", o->chart, strerror(errno));
	else
		rc = chart_write_svg(feed.c, out, title, err);
	if (out && fclose(out) && !rc)
		rc = err_set(err, errno, "writing %s: %s", o->chart, strerror(errno));
	chart_free(feed.c);
	return rc;
}
