// SPDX-License-Identifier: GPL-2.0
/*
 * The boot's stages (vmm/output/stages.c) and the chart drawn from them
 * (chart.c, chart-svg.c), on tests/unit/graph-fixture.h's boot, whose
 * every marking event's time is known: each stage found, in order, from
 * its marking call's entry to its return (or to where the next stage of
 * its row begins); initcall levels from the kernel's initcall table, by
 * the initcall's own call or do_one_initcall's argument; VM events
 * counted per stage. The SVG is parsed back: every stage span's start and
 * end are the times of its marking events, and its x and width are those
 * times on the chart's axis; the lanes, the calls and the VM ticks are
 * there; names are escaped. Without returns, stages end where the next
 * begins. The initcall symbol parser on the kernel's name forms.
 */
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check.h"
#include "tests/unit/graph-fixture.h"
#include "vmm/output/chart.h"
#include "vmm/output/stages.h"

static struct symtab syms;
static struct gf_trace gf;

struct want_stage {
	const char *label;
	uint64_t start, end;
	const char *start_event, *end_event;
	uint64_t vm;
};

static const struct want_stage want[] = {
	{ "start_kernel", 1000, 8000, "entry of start_kernel", "entry of rest_init", 3 },
	{ "setup_arch", 2000, 5000, "entry of setup_arch", "return of setup_arch", 2 },
	{ "sched_init", 6000, 7000, "entry of sched_init", "return of sched_init", 1 },
	{ "rest_init", 8000, 9000, "entry of rest_init", "entry of kernel_init", 0 },
	{ "kernel_init", 9000, 12000, "entry of kernel_init", "return of kernel_init", 2 },
	{ "initcalls: pure", 9300, 9400, "entry of foo_init", "return of foo_init", 0 },
	{ "smp_init", 9600, 9900, "entry of smp_init", "return of smp_init", 1 },
	{ "initcalls: core", 10100, 10300, "entry of bar_init", "return of bar_init", 0 },
	{ "initcalls: device", 10500, 10800, "entry of do_one_initcall", "return of do_one_initcall", 1 },
	{ "init process", 11100, 11500, "entry of run_init_process", "return of run_init_process", 0 },
};
#define NWANT (sizeof(want) / sizeof(want[0]))

static void test_initcall_names(void)
{
	const char *fn;
	size_t n;

	n = stages_initcall_fn("__initcall__kmod_core__300_2229_init_hw_perf_eventsearly", "early", &fn);
	CHECK(n == 19 && !strncmp(fn, "init_hw_perf_events", 19), "initcall name: the 6.1 form, early");
	n = stages_initcall_fn("__initcall__kmod_fs_writeback__563_2439_start_dirtytime_writeback6", "6", &fn);
	CHECK(n == 25 && !strncmp(fn, "start_dirtytime_writeback", 25), "initcall name: a module name with '_'");
	n = stages_initcall_fn("__initcall__kmod_bar_baz__5_6_bar_init1s", "1s", &fn);
	CHECK(n == 8 && !strncmp(fn, "bar_init", 8), "initcall name: a sync level (1s)");
	n = stages_initcall_fn("__initcall_populate_rootfsrootfs", "rootfs", &fn);
	CHECK(n == 15 && !strncmp(fn, "populate_rootfs", 15), "initcall name: the older form, rootfs");
	CHECK(!stages_initcall_fn("__initcall0_start", "0", &fn) && !stages_initcall_fn("__initcall_foo6", "7", &fn) &&
	      !stages_initcall_fn("__initcall__kmod_x__y_fn6", "6", &fn) && !stages_initcall_fn("foo6", "6", &fn),
	      "initcall name: level markers, another level's suffix, malformed names: none");
}

/* Stages of the fixture, without its hooked calls' returns when plain. */
static size_t find_stages(struct stage *out, int plain)
{
	struct trace_meta m = gf_meta(&syms);
	struct stage_finder *f;
	size_t n = 0;

	if (stage_finder_new(&f, &m))
		return 0;
	for (size_t i = 0; i < gf.n; i++) {
		struct ring_event ev = gf.ev[i];

		if (plain && (ev.flags & VT_REC_FLAG_EXIT))
			continue;
		if (plain)
			ev.flags &= (uint16_t)~VT_REC_FLAG_HOOKED;
		stage_finder_event(f, &ev);
	}
	n = stage_finder_result(f, out, STAGES_MAX);
	for (size_t i = 0; i < gf.n; i++)
		if (vmev_is(&gf.ev[i]))
			stages_count_vm(out, n, &gf.ev[i]);
	stage_finder_free(f);
	return n;
}

static void test_stages(void)
{
	struct stage s[STAGES_MAX];
	size_t n = find_stages(s, 0), ok = 0;

	for (size_t i = 0; i < n && i < NWANT; i++) {
		uint64_t vm = 0;

		for (unsigned k = 0; k < VMEV_NKINDS; k++)
			vm += s[i].vm[k];
		ok += CHECK_QUIET(!strcmp(s[i].label, want[i].label) && s[i].start == want[i].start &&
				  s[i].end == want[i].end && vm == want[i].vm, "stage %zu: %s %llu-%llu (%llu VM events), want %s",
				  i, s[i].label, (unsigned long long)s[i].start, (unsigned long long)s[i].end,
				  (unsigned long long)vm, want[i].label);
	}
	CHECK(n == NWANT && ok == NWANT, "stages: %zu found, each from its marking entry to its return or to the next "
	      "phase, initcall levels by the initcall table, VM events per stage", n);
	n = find_stages(s, 1);
	CHECK(n == NWANT && s[1].end == 6000 && s[1].end_kind == STAGE_END_NEXT && s[4].end == 13000 &&
	      s[4].end_kind == STAGE_END_TRACE && s[5].end == 9600,
	      "stages without returns: each ends where the next begins (setup_arch at sched_init), the last phase at the trace's end");
}

/* The chart of the fixture (its events handed over twice), as text. */
static char *chart_svg(const struct trace_meta *m, uint64_t min_ns, size_t *len)
{
	struct chart_opts o = { .min_ns = min_ns };
	struct chart *c;
	struct errbuf err;
	char *buf = NULL;
	FILE *f;
	int rc;

	if (chart_new(&c, m, &o))
		return NULL;
	do {
		for (size_t i = 0; i < gf.n; i++)
			chart_event(c, &gf.ev[i]);
	} while ((rc = chart_end_pass(c)) == 1);
	f = open_memstream(&buf, len);
	if (!rc && f)
		rc = chart_write_svg(c, f, "fixture <&> \"boot\"", &err);
	if (f)
		fclose(f);
	chart_free(c);
	if (rc) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The value of attribute name in the element starting at el, or NULL; copied into buf. */
static const char *attr(const char *el, const char *name, char *buf, size_t len)
{
	const char *end = strchr(el, '>'), *p;
	char key[64];

	snprintf(key, sizeof(key), " %s=\"", name);
	p = strstr(el, key);
	if (!p || !end || p > end)
		return NULL;
	p += strlen(key);
	snprintf(buf, len, "%.*s", (int)(strchr(p, '"') - p), p);
	return buf;
}

static double num(const char *el, const char *name)
{
	char b[64];

	return attr(el, name, b, sizeof(b)) ? strtod(b, NULL) : -1;
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (; (s = strstr(s, what)); s++)
		n++;
	return n;
}

static void test_chart_geometry(const char *svg)
{
	double t0 = num(svg + 0, "data-t0-ns"), t1, px, pw;
	const char *root = strstr(svg, "<svg ");
	const char *el = svg;
	size_t i = 0, ok = 0;
	char b[128], c[128];

	t0 = num(root, "data-t0-ns");
	t1 = num(root, "data-t1-ns");
	px = num(root, "data-plot-x");
	pw = num(root, "data-plot-width");
	CHECK(t0 == 1000 && t1 == 13000 && px > 0 && pw > 0, "chart: the axis runs from the first event (1000 ns) to "
	      "the last (13000 ns) over %.0f px from x=%.0f", pw, px);
	while ((el = strstr(el, "<rect class=\"stage\"")) && i < NWANT) {
		const struct want_stage *w = &want[i];
		double x = num(el, "x"), wd = num(el, "width");
		double wx = px + (w->start - t0) * pw / (t1 - t0), ww = (double)(w->end - w->start) * pw / (t1 - t0);

		ok += CHECK_QUIET(attr(el, "data-stage", b, sizeof(b)) && !strcmp(b, w->label) &&
				  num(el, "data-start-ns") == w->start && num(el, "data-end-ns") == w->end &&
				  attr(el, "data-start-event", b, sizeof(b)) && !strcmp(b, w->start_event) &&
				  attr(el, "data-end-event", c, sizeof(c)) && !strcmp(c, w->end_event) &&
				  x > wx - 0.001 && x < wx + 0.001 && wd > ww - 0.002 && wd < ww + 0.002,
				  "chart: stage %zu (%s) at x %.3f width %.3f, want %s %llu-%llu (%s, %s) at %.3f width %.3f",
				  i, w->label, x, wd, w->label, (unsigned long long)w->start, (unsigned long long)w->end,
				  w->start_event, w->end_event, wx, ww);
		i++;
		el++;
	}
	CHECK(ok == NWANT && !strstr(el ? el : "", "<rect class=\"stage\""), "chart: every stage span (%zu) starts and ends "
	      "at its marking events' times, and its x and width are those times on the axis", ok);
}

static void test_chart(void)
{
	struct trace_meta m = gf_meta(&syms);
	size_t len;
	char *svg = chart_svg(&m, 0, &len);

	if (!svg) {
		CHECK(0, "chart: drawn");
		return;
	}
	CHECK(!strncmp(svg, "<?xml version=\"1.0\"", 19) && strstr(svg, "</svg>\n") && !strstr(svg, "<script") &&
	      !strstr(svg, "href"), "chart: an SVG document, no script, nothing fetched (%zu bytes)", len);
	test_chart_geometry(svg);
	CHECK(strstr(svg, "data-lane=\"vCPU 0\"") && strstr(svg, "data-lane=\"vCPU 1\"") && strstr(svg, "data-lane=\"init-1\"") &&
	      strstr(svg, "data-lane=\"sched-2\"") && strstr(svg, ">init-1</text>"),
	      "chart: a lane per vCPU and per task, named as last seen (init-1)");
	CHECK(count(svg, "<rect class=\"call\"") == 17 && strstr(svg, "<title>kernel_init_freeable: 1.900 us from") &&
	      count(svg, "stroke-dasharray=\"2,2\" fill-opacity") == 5,
	      "chart: every call at least a thousandth of the trace long (17), with its length; the 5 dropped or "
	      "still running marked (%zu)",
	      count(svg, "<rect class=\"call\""));
	CHECK(count(svg, "data-kind=\"kvm:pio\"") == 3 && count(svg, "data-kind=\"kvm:msr\"") == 1 &&
	      count(svg, "data-kind=\"kvm:mmio\"") == 1 && count(svg, "data-kind=\"kvm:exit\"") == 1,
	      "chart: VM events as ticks on their vCPU's lane, by kind");
	CHECK(count(svg, "<g class=\"table-row\"") == NWANT && strstr(svg, "fixture &lt;&amp;&gt; &quot;boot&quot;"),
	      "chart: a table row per stage; the title escaped");
	free(svg);
	svg = chart_svg(&m, 250, &len);
	CHECK(svg && count(svg, "<rect class=\"call\"") == 13, "chart: --chart-min 250ns keeps the 13 calls that long (%zu)",
	      svg ? count(svg, "<rect class=\"call\"") : 0);
	free(svg);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (gf_symtab(&syms)) {
		printf("FAIL: the fixture's symbols\n");
		return 1;
	}
	gf_boot(&gf);
	test_initcall_names();
	test_stages();
	test_chart();
	symtab_destroy(&syms);
	return check_exit();
}
