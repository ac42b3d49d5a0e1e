// SPDX-License-Identifier: GPL-2.0
/*
 * The boot chart drawn as SVG (chart.h): plain elements with fill
 * attributes and <title> children for the hover texts, no script, no
 * font or style sheet from anywhere, so that it opens the same in any
 * browser and in a bug tracker's viewer. The root element carries the
 * time axis (data-t0-ns, data-t1-ns over data-plot-x, data-plot-width)
 * and each stage its marking events' times, so that a program can check
 * the drawing against the trace.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/output/chart-model.h"

#define SVG_WIDTH	1400
#define SVG_PLOT_X	190
#define SVG_PLOT_W	(SVG_WIDTH - SVG_PLOT_X - 20)
#define SVG_ROW_H	12	/* a call depth */
#define SVG_ACT_H	8	/* the activity strip */
#define SVG_TICK_H	8	/* the VM events strip */
#define SVG_STAGE_H	20
#define SVG_TABLE_ROW	16

static const char *const svg_stage_colors[] = {
	"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
	"#b07aa1", "#ff9da7", "#9c755f", "#86bcb6", "#d37295", "#a0cbe8",
};
static const char *const svg_vm_colors[VMEV_NKINDS] = {
	"#7f7f7f", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
};

struct svg {
	FILE *out;
	const struct chart *c;
	uint64_t ns0, span;		/* the axis: ns0 at SVG_PLOT_X, ns0 + span at its end */
	uint64_t boot_ns;		/* the stages' share is of this: first to last event */
};

/* Text for an attribute or an element: &, <, >, quotes escaped; anything else not printable as '?'. */
static void svg_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default: fputc(*s >= 0x20 && *s < 0x7f ? *s : '?', f); break;
		}
	}
}

static double svg_x(const struct svg *g, uint64_t ns)
{
	if (ns < g->ns0)
		ns = g->ns0;
	return SVG_PLOT_X + (double)(ns - g->ns0) * SVG_PLOT_W / (double)g->span;
}

static uint64_t svg_ns(const struct svg *g, uint64_t tsc)
{
	return trace_meta_ns(g->c->meta, tsc);
}

/* A duration as "12.345 ms" (3 significant decimals in the unit that fits). */
static const char *svg_dur(uint64_t ns, char buf[32])
{
	if (ns >= 1000000000ull)
		snprintf(buf, 32, "%.3f s", ns / 1e9);
	else if (ns >= 1000000)
		snprintf(buf, 32, "%.3f ms", ns / 1e6);
	else if (ns >= 1000)
		snprintf(buf, 32, "%.3f us", ns / 1e3);
	else
		snprintf(buf, 32, "%" PRIu64 " ns", ns);
	return buf;
}

/* A time on the guest's clock, seconds since it started. */
static const char *svg_time(uint64_t ns, char buf[32])
{
	snprintf(buf, 32, "%" PRIu64 ".%06" PRIu64 " s", ns / 1000000000, ns / 1000 % 1000000);
	return buf;
}

static const char *svg_func(const struct chart *c, uint64_t addr, char buf[32])
{
	uint64_t off;
	const struct symbol *s = c->meta->syms ? symtab_find_addr(c->meta->syms, addr, &off) : NULL;

	if (s && !off)
		return symtab_name(c->meta->syms, s);
	snprintf(buf, 32, "0x%" PRIx64, addr);
	return buf;
}

static unsigned svg_lane_height(const struct chart_lane *l)
{
	return 6 + SVG_ACT_H + l->rows * SVG_ROW_H + (l->kind == CHART_LANE_VCPU ? SVG_TICK_H + 2 : 0) + 6;
}

/* A step for about eight ticks: 1, 2 or 5 times a power of ten ns. */
static uint64_t svg_tick_step(uint64_t span)
{
	uint64_t step = 1;

	while (step * 10 <= span / 8 + 1)
		step *= 10;
	if (step * 5 <= span / 8)
		return step * 5;
	if (step * 2 <= span / 8)
		return step * 2;
	return step;
}

/* The grid and the time labels, from y to bottom. */
static void svg_axis(const struct svg *g, unsigned y, unsigned bottom)
{
	uint64_t step = svg_tick_step(g->span), t = (g->ns0 + step - 1) / step * step;
	int decimals = 0;

	for (uint64_t s = step; s < 1000000000ull && decimals < 6; s *= 10)
		decimals++;
	fprintf(g->out, "<g class=\"axis\" font-size=\"10\" fill=\"#444\">\n");
	for (; t <= g->ns0 + g->span; t += step) {
		double x = svg_x(g, t);

		fprintf(g->out, "<line x1=\"%.3f\" y1=\"%u\" x2=\"%.3f\" y2=\"%u\" stroke=\"#ddd\"/>"
			"<text x=\"%.3f\" y=\"%u\" text-anchor=\"middle\">%.*f s</text>\n",
			x, y, x, bottom, x, y - 4, decimals, t / 1e9);
	}
	fprintf(g->out, "<line x1=\"%d\" y1=\"%u\" x2=\"%d\" y2=\"%u\" stroke=\"#888\"/></g>\n", SVG_PLOT_X, y,
		SVG_PLOT_X + SVG_PLOT_W, y);
}

static void svg_vm_summary(const uint64_t vm[VMEV_NKINDS], char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = 0;
	for (unsigned k = 1; k < VMEV_NKINDS && used < len; k++)
		if (vm[k])
			used += (size_t)snprintf(buf + used, len - used, "%s%s %" PRIu64, used ? ", " : "",
						 vmev_name(k) + 4, vm[k]);
}

/*
 * A stage's VM exits: its kvm:exit events when the trace records them
 * (every exit to the VMM, whatever its reason), else its port, MMIO, MSR
 * and hypercall events, each of which is an exit of its own.
 */
static uint64_t svg_vm_total(const struct svg *g, const uint64_t vm[VMEV_NKINDS])
{
	uint64_t n = 0;

	if (g->c->vm_kinds & VMEV_MASK(VMEV_EXIT))
		return vm[VMEV_EXIT];
	for (unsigned k = 0; k < VMEV_NKINDS; k++)
		n += k == VMEV_CPUID ? 0 : vm[k];
	return n;
}

static const char *svg_end_what(const struct stage *s)
{
	return s->end_kind == STAGE_END_RETURN ? "return of " : s->end_kind == STAGE_END_NEXT ? "entry of " : "last event";
}

static void svg_stage_title(const struct svg *g, const struct stage *s, size_t i, FILE *f)
{
	uint64_t a = svg_ns(g, s->start), b = svg_ns(g, s->end);
	char t0[32], t1[32], d[32], kinds[160];

	svg_vm_summary(s->vm, kinds, sizeof(kinds));
	fprintf(f, "[%zu] %s: %s to %s, %s, %.1f %% of the boot; from the entry of ", i + 1, s->label,
		svg_time(a, t0), svg_time(b, t1), svg_dur(b - a, d), g->boot_ns ? 100.0 * (double)(b - a) / g->boot_ns : 0.0);
	svg_text(f, s->marker);
	fprintf(f, " (vCPU %u, ", s->cpu);
	svg_text(f, *s->comm ? s->comm : "?");
	fprintf(f, "-%d) to the %s", s->pid, svg_end_what(s));
	svg_text(f, s->end_kind == STAGE_END_TRACE ? "" : s->end_marker);
	fprintf(f, "; VM exits: %" PRIu64 "%s%s%s", svg_vm_total(g, s->vm), *kinds ? " (" : "", kinds, *kinds ? ")" : "");
}

/* One stage's span, with its marking events' times and names for programs, and its label if it fits. */
static void svg_stage(const struct svg *g, const struct stage *s, size_t i, unsigned y)
{
	uint64_t a = svg_ns(g, s->start), b = svg_ns(g, s->end);
	double x0 = svg_x(g, a), x1 = svg_x(g, b);
	unsigned ry = y + (s->level ? SVG_STAGE_H + 2 : 0);
	FILE *f = g->out;
	char num[24];

	fprintf(f, "<rect class=\"stage\" data-stage=\"%s\" data-level=\"%u\" data-start-ns=\"%" PRIu64
		"\" data-end-ns=\"%" PRIu64 "\" data-start-event=\"entry of ", s->label, s->level, a, b);
	svg_text(f, s->marker);
	fprintf(f, "\" data-end-event=\"%s", svg_end_what(s));
	svg_text(f, s->end_kind == STAGE_END_TRACE ? "" : s->end_marker);
	fprintf(f, "\" x=\"%.3f\" y=\"%u\" width=\"%.3f\" height=\"%d\" fill=\"%s\" stroke=\"#333\" "
		"stroke-width=\"0.5\"><title>", x0, ry, x1 - x0, SVG_STAGE_H,
		svg_stage_colors[i % (sizeof(svg_stage_colors) / sizeof(svg_stage_colors[0]))]);
	svg_stage_title(g, s, i, f);
	fprintf(f, "</title></rect>\n");
	snprintf(num, sizeof(num), "[%zu]", i + 1);
	if (x1 - x0 > 7.0 * (double)strlen(s->label) + 6)
		fprintf(f, "<text class=\"stage-label\" x=\"%.3f\" y=\"%u\">%s</text>\n", x0 + 3, ry + 14, s->label);
	else if (x1 - x0 > 7.0 * (double)strlen(num) + 2)
		fprintf(f, "<text class=\"stage-label\" x=\"%.3f\" y=\"%u\">%s</text>\n", x0 + 1, ry + 14, num);
}

/* The stages: phases on the first row, their parts on the second. */
static void svg_stages(const struct svg *g, unsigned y)
{
	fprintf(g->out, "<g class=\"stages\">\n<text x=\"8\" y=\"%u\" font-weight=\"bold\">boot stages</text>\n"
		"<text x=\"8\" y=\"%u\" fill=\"#666\" font-size=\"10\">phases / their parts</text>\n", y + 14, y + 36);
	for (size_t i = 0; i < g->c->nstages; i++)
		svg_stage(g, &g->c->stages[i], i, y);
	fprintf(g->out, "</g>\n");
}

static double svg_bin_x(unsigned bin)
{
	return SVG_PLOT_X + (double)bin * SVG_PLOT_W / CHART_BINS;
}

/* The time range of a column, "0.100000 s to 0.103750 s". */
static void svg_bin_range(const struct svg *g, unsigned bin, FILE *f)
{
	char a[32], b[32];
	uint64_t t0 = g->ns0 + (uint64_t)((unsigned __int128)g->span * bin / CHART_BINS);
	uint64_t t1 = g->ns0 + (uint64_t)((unsigned __int128)g->span * (bin + 1) / CHART_BINS);

	fprintf(f, "%s to %s", svg_time(t0, a), svg_time(t1, b));
}

/* log2(n + 1), to a quarter: the activity's shades (no libm). */
static double svg_log2(uint32_t n)
{
	double r = 0;

	for (uint64_t v = (uint64_t)n + 1; v > 1; v >>= 1)
		r += 1;
	return r ? r : 1;
}

/* How many traced functions ran in each column: darker for more (log scale). */
static void svg_lane_activity(const struct svg *g, const struct chart_lane *l, unsigned y, uint32_t max)
{
	for (unsigned b = 0; b < CHART_BINS; b++) {
		if (!l->act[b])
			continue;
		fprintf(g->out, "<rect class=\"act\" x=\"%.2f\" y=\"%u\" width=\"%.2f\" height=\"%d\" fill=\"#555\" "
			"fill-opacity=\"%.2f\"><title>%" PRIu32 " traced function events, ", svg_bin_x(b), y,
			(double)SVG_PLOT_W / CHART_BINS, SVG_ACT_H, 0.15 + 0.85 * svg_log2(l->act[b]) / svg_log2(max), l->act[b]);
		svg_bin_range(g, b, g->out);
		fprintf(g->out, "</title></rect>\n");
	}
}

static void svg_call(const struct svg *g, const struct chart_call *k, unsigned y)
{
	static const char *const how[] = { "returned", "its return was not recorded (its task went on below it)",
					   "still running when the trace ended" };
	uint64_t a = svg_ns(g, k->start), b = svg_ns(g, k->end), h = 5381;
	double x0 = svg_x(g, a), x1 = svg_x(g, b);
	char fb[32], t[32], d[32];
	const char *name = svg_func(g->c, k->func, fb);

	for (const char *p = name; *p; p++)
		h = h * 33 + (unsigned char)*p;
	fprintf(g->out, "<rect class=\"call\" x=\"%.3f\" y=\"%u\" width=\"%.3f\" height=\"%d\" fill=\"hsl(%u,75%%,62%%)\"%s>"
		"<title>", x0, y, x1 - x0 > 0.5 ? x1 - x0 : 0.5, SVG_ROW_H - 2, (unsigned)(h % 50),
		k->how == CALL_RETURNED ? "" : " stroke=\"#333\" stroke-dasharray=\"2,2\" fill-opacity=\"0.6\"");
	svg_text(g->out, name);
	fprintf(g->out, ": %s from %s, depth %u, vCPU %u, ", svg_dur(b - a, d), svg_time(a, t), k->depth, k->cpu);
	svg_text(g->out, *k->comm ? k->comm : "?");
	fprintf(g->out, "-%d; %s</title></rect>\n", k->pid, how[k->how < 3 ? k->how : 0]);
	if (x1 - x0 > 6.5 * (double)strlen(name) + 4) {
		fprintf(g->out, "<text class=\"call-label\" x=\"%.3f\" y=\"%u\" font-size=\"9\">", x0 + 2, y + SVG_ROW_H - 4);
		svg_text(g->out, name);
		fprintf(g->out, "</text>\n");
	}
}

/* VM events per column, a thin row per kind. */
static void svg_lane_vm(const struct svg *g, const struct chart_lane *l, unsigned y)
{
	for (unsigned b = 0; b < CHART_BINS; b++)
		for (unsigned k = 1; k < VMEV_NKINDS; k++) {
			uint32_t n = l->vm[b * VMEV_NKINDS + k];

			if (!n)
				continue;
			fprintf(g->out, "<rect class=\"vm\" data-kind=\"%s\" x=\"%.2f\" y=\"%u\" width=\"%.2f\" height=\"2\" "
				"fill=\"%s\"><title>%s: %" PRIu32 " on %s, ", vmev_name(k), svg_bin_x(b), y + 2 * (k - 1),
				(double)SVG_PLOT_W / CHART_BINS, svg_vm_colors[k], vmev_name(k), n, l->label);
			svg_bin_range(g, b, g->out);
			fprintf(g->out, "</title></rect>\n");
		}
}

static unsigned svg_lanes(const struct svg *g, unsigned y)
{
	const struct chart *c = g->c;
	uint32_t max = 1;

	for (size_t i = 0; i < c->ndrawn; i++)
		for (unsigned b = 0; b < CHART_BINS; b++)
			max = c->drawn[i]->act[b] > max ? c->drawn[i]->act[b] : max;
	for (size_t i = 0; i < c->ndrawn; i++) {
		const struct chart_lane *l = c->drawn[i];
		unsigned h = svg_lane_height(l), yc = y + 4 + SVG_ACT_H + 2;

		fprintf(g->out, "<g class=\"lane\" data-lane=\"");
		svg_text(g->out, l->label);
		fprintf(g->out, "\">\n<rect x=\"0\" y=\"%u\" width=\"%d\" height=\"%u\" fill=\"%s\"/>\n"
			"<text class=\"lane-label\" x=\"8\" y=\"%u\">", y, SVG_WIDTH, h, i % 2 ? "#ffffff" : "#f4f4f4", y + 14);
		svg_text(g->out, l->label);
		fprintf(g->out, "</text>\n");
		svg_lane_activity(g, l, y + 4, max);
		for (size_t k = 0; k < c->ncalls; k++)
			if (c->calls[k].depth < l->rows && chart_lane_key(c->calls[k].pid, c->calls[k].cpu) == l->key &&
			    l->kind != CHART_LANE_OTHER)
				svg_call(g, &c->calls[k], yc + c->calls[k].depth * SVG_ROW_H);
		if (l->vm)
			svg_lane_vm(g, l, yc + l->rows * SVG_ROW_H);
		fprintf(g->out, "</g>\n");
		y += h;
	}
	return y;
}

static unsigned svg_legend(const struct svg *g, unsigned y)
{
	unsigned x = SVG_PLOT_X;
	int kinds = 0;

	for (size_t i = 0; i < g->c->ndrawn; i++)
		for (unsigned b = 0; g->c->drawn[i]->vm && b < CHART_BINS * VMEV_NKINDS; b++)
			kinds |= g->c->drawn[i]->vm[b] ? 1 << (b % VMEV_NKINDS) : 0;
	fprintf(g->out, "<g class=\"legend\" font-size=\"11\">\n<text x=\"8\" y=\"%u\" font-weight=\"bold\">legend</text>\n"
		"<rect x=\"%u\" y=\"%u\" width=\"14\" height=\"10\" fill=\"%s\" stroke=\"#333\" stroke-width=\"0.5\"/>"
		"<text x=\"%u\" y=\"%u\">boot stage (top: phases; below: their parts)</text>\n"
		"<rect x=\"%u\" y=\"%u\" width=\"14\" height=\"10\" fill=\"hsl(25,75%%,62%%)\"/>"
		"<text x=\"%u\" y=\"%u\">a call (with --graph), nested by depth</text>\n"
		"<rect x=\"%u\" y=\"%u\" width=\"14\" height=\"10\" fill=\"hsl(25,75%%,62%%)\" fill-opacity=\"0.6\" stroke=\"#333\" "
		"stroke-dasharray=\"2,2\"/><text x=\"%u\" y=\"%u\">still running at the end, or return not recorded</text>\n"
		"<rect x=\"%u\" y=\"%u\" width=\"14\" height=\"10\" fill=\"#555\" fill-opacity=\"0.5\"/>"
		"<text x=\"%u\" y=\"%u\">traced function events</text>\n",
		y + 10, x, y, svg_stage_colors[0], x + 18, y + 9, x + 290, y, x + 308, y + 9, x + 560, y, x + 578, y + 9,
		x + 880, y, x + 898, y + 9);
	y += 16;
	for (unsigned k = 1, n = 0; k < VMEV_NKINDS; k++)
		if (kinds & (1 << k))
			fprintf(g->out, "<rect x=\"%u\" y=\"%u\" width=\"14\" height=\"4\" fill=\"%s\"/>"
				"<text x=\"%u\" y=\"%u\">%s (VM event, on its vCPU)</text>\n", x + 240 * n, y + 3,
				svg_vm_colors[k], x + 240 * n + 18, y + 9, vmev_name(k)), n++;
	fprintf(g->out, "</g>\n");
	return y + 20;
}

/* The table of the stages: start, duration, share of the boot, VM exits. */
static unsigned svg_table(const struct svg *g, unsigned y)
{
	static const unsigned col[] = { 8, 36, 190, 300, 400, 480, 560 };
	char t[32], d[32], kinds[160];

	fprintf(g->out, "<g class=\"table\" font-size=\"11\">\n<text x=\"%u\" y=\"%u\" font-weight=\"bold\">#</text>"
		"<text x=\"%u\" y=\"%u\" font-weight=\"bold\">stage</text><text x=\"%u\" y=\"%u\" font-weight=\"bold\">start</text>"
		"<text x=\"%u\" y=\"%u\" font-weight=\"bold\">duration</text><text x=\"%u\" y=\"%u\" font-weight=\"bold\">share</text>"
		"<text x=\"%u\" y=\"%u\" font-weight=\"bold\">VM exits</text><text x=\"%u\" y=\"%u\" font-weight=\"bold\">"
		"by kind; marked by</text>\n", col[0], y, col[1], y, col[2], y, col[3], y, col[4], y, col[5], y, col[6], y);
	for (size_t i = 0; i < g->c->nstages; i++) {
		const struct stage *s = &g->c->stages[i];
		uint64_t a = svg_ns(g, s->start), b = svg_ns(g, s->end);

		y += SVG_TABLE_ROW;
		svg_vm_summary(s->vm, kinds, sizeof(kinds));
		fprintf(g->out, "<g class=\"table-row\" data-stage=\"%s\"><text x=\"%u\" y=\"%u\">%zu</text>"
			"<text x=\"%u\" y=\"%u\">%s%s</text><text x=\"%u\" y=\"%u\">%s</text><text x=\"%u\" y=\"%u\">%s</text>"
			"<text x=\"%u\" y=\"%u\">%.1f %%</text><text x=\"%u\" y=\"%u\">%" PRIu64 "</text><text x=\"%u\" y=\"%u\">%s%s",
			s->label, col[0], y, i + 1, col[1], y, s->level ? "  " : "", s->label, col[2], y, svg_time(a, t),
			col[3], y, svg_dur(b - a, d), col[4], y, g->boot_ns ? 100.0 * (double)(b - a) / g->boot_ns : 0.0,
			col[5], y, svg_vm_total(g, s->vm), col[6], y, kinds, *kinds ? "; " : "");
		fprintf(g->out, "entry of ");
		svg_text(g->out, s->marker);
		fprintf(g->out, " to the %s", svg_end_what(s));
		svg_text(g->out, s->end_kind == STAGE_END_TRACE ? "" : s->end_marker);
		fprintf(g->out, "</text></g>\n");
	}
	if (!g->c->nstages)
		fprintf(g->out, "<text x=\"%u\" y=\"%u\">no stage found: the trace holds none of the functions that mark "
			"them (start_kernel, setup_arch, sched_init, rest_init, kernel_init, initcalls...)</text>\n",
			col[1], y += SVG_TABLE_ROW);
	fprintf(g->out, "</g>\n");
	return y + 12;
}

static void svg_head(const struct svg *g, unsigned height, const char *title)
{
	const struct chart *c = g->c;
	char d[32];

	fprintf(g->out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%u\" viewBox=\"0 0 %d %u\" "
		"font-family=\"sans-serif\" font-size=\"11\" data-t0-ns=\"%" PRIu64 "\" data-t1-ns=\"%" PRIu64 "\" "
		"data-plot-x=\"%d\" data-plot-width=\"%d\">\n<title>vmmtrace boot chart: ", SVG_WIDTH, height, SVG_WIDTH,
		height, g->ns0, g->ns0 + g->span, SVG_PLOT_X, SVG_PLOT_W);
	svg_text(g->out, title);
	fprintf(g->out, "</title>\n<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n"
		"<text x=\"8\" y=\"20\" font-size=\"15\" font-weight=\"bold\">where the boot's time goes: ");
	svg_text(g->out, title);
	fprintf(g->out, "</text>\n<text x=\"8\" y=\"36\" fill=\"#444\">%" PRIu64 " function events, %" PRIu64
		" VM events on %u vCPU%s; guest time %s, %s in all%s; hover for details</text>\n", c->events,
		c->vm_events, c->meta->ncpus, c->meta->ncpus == 1 ? "" : "s", svg_time(g->ns0, (char[32]){ 0 }),
		svg_dur(g->boot_ns, d), c->meta->graph ? "; calls drawn from --graph's returns" : "");
}

int chart_write_svg(const struct chart *c, FILE *out, const char *title, struct errbuf *err)
{
	struct svg g = { .out = out, .c = c, .ns0 = c->ns0, .span = c->ns1 > c->ns0 ? c->ns1 - c->ns0 : 1,
			 .boot_ns = c->ns1 - c->ns0 };
	unsigned axis_y = 62, stages_y = 70, lanes_y = stages_y + 2 * (SVG_STAGE_H + 2) + 8, y = lanes_y, height;

	for (size_t i = 0; i < c->ndrawn; i++)
		y += svg_lane_height(c->drawn[i]);
	height = y + 16 + 40 + SVG_TABLE_ROW * (unsigned)(c->nstages + 2) + 24;
	svg_head(&g, height, title);
	svg_axis(&g, axis_y, y);
	svg_stages(&g, stages_y);
	y = svg_lanes(&g, lanes_y);
	y = svg_legend(&g, y + 16);
	svg_table(&g, y + 16);
	fprintf(out, "</svg>\n");
	if (ferror(out))
		return err_set(err, EIO, "writing the chart: %s", strerror(errno ? errno : EIO));
	return 0;
}
