// SPDX-License-Identifier: GPL-2.0
/*
 * The boot chart's model (chart.h). Pass 1 sees the trace's span, its
 * lanes (vCPUs and tasks, by pid), its stages and, with returns, its
 * longest calls (a min-heap of the chart's budget, so memory stays
 * bounded whatever the trace); pass 2 bins every lane's function events
 * and every vCPU's VM events into columns of the span, and counts each
 * stage's VM events. Inputs are untrusted: the number of lanes told apart
 * is bounded (the rest share one), and so is everything drawn.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/output/chart-model.h"

static int chart_call_fn(void *opaque, const struct call *c);

int chart_new(struct chart **out, const struct trace_meta *meta, const struct chart_opts *o)
{
	struct chart *c = calloc(1, sizeof(*c));
	int rc = -ENOMEM;

	if (!c)
		return rc;
	c->meta = meta;
	c->o = *o;
	if (!c->o.max_calls)
		c->o.max_calls = 4000;
	c->min_ticks = (uint64_t)((unsigned __int128)o->min_ns * (meta->tsc_khz ? meta->tsc_khz : 1000000) / 1000000);
	c->lane_mask = 2 * CHART_MAX_KEYS - 1;
	c->lane_keys = calloc(c->lane_mask + 1, sizeof(*c->lane_keys));
	c->lane_idx = calloc(c->lane_mask + 1, sizeof(*c->lane_idx));
	c->calls = calloc(c->o.max_calls, sizeof(*c->calls));
	if (c->lane_keys && c->lane_idx && c->calls && !stage_finder_new(&c->finder, meta))
		rc = meta->graph ? call_tracker_new(&c->tracker, chart_call_fn, c) : 0;
	if (rc) {
		chart_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void chart_free(struct chart *c)
{
	if (!c)
		return;
	stage_finder_free(c->finder);
	call_tracker_free(c->tracker);
	for (size_t i = 0; i < c->nlanes; i++) {
		free(c->lanes[i].vm);
		free(c->lanes[i].act);
	}
	free(c->other.act);
	free(c->lanes);
	free(c->lane_keys);
	free(c->lane_idx);
	free(c->drawn);
	free(c->calls);
	free(c);
}

/* The lane of key (made in pass 1 when there is room), else the shared one. */
static struct chart_lane *chart_lane(struct chart *c, uint64_t key, const struct ring_event *ev)
{
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & c->lane_mask;
	struct chart_lane *l;

	for (; c->lane_keys[i]; i = (i + 1) & c->lane_mask)
		if (c->lane_keys[i] == key + 1)
			return &c->lanes[c->lane_idx[i]];
	if (c->pass || c->nlanes == CHART_MAX_KEYS || !ev)
		return &c->other;
	if (c->nlanes == c->lanes_cap) {
		size_t cap = c->lanes_cap ? 2 * c->lanes_cap : 16;
		struct chart_lane *n = realloc(c->lanes, cap * sizeof(*n));

		if (!n)
			return &c->other;	/* out of memory: counted with the rest */
		c->lanes = n;
		c->lanes_cap = cap;
	}
	c->lane_keys[i] = key + 1;
	c->lane_idx[i] = (uint32_t)c->nlanes;
	l = &c->lanes[c->nlanes++];
	memset(l, 0, sizeof(*l));
	l->key = key;
	l->kind = key >> 32 ? CHART_LANE_VCPU : CHART_LANE_TASK;
	l->id = (uint32_t)key;
	if (l->kind == CHART_LANE_VCPU)
		snprintf(l->label, sizeof(l->label), "vCPU %u", l->id);
	else
		snprintf(l->label, sizeof(l->label), "%.16s-%u", ev->comm, l->id);
	return l;
}

static uint64_t chart_call_len(const struct chart_call *k)
{
	return k->end > k->start ? k->end - k->start : 0;
}

static void chart_heap_down(struct chart_call *h, size_t n, size_t i)
{
	for (;;) {
		size_t m = i, l = 2 * i + 1, r = l + 1;
		struct chart_call t;

		if (l < n && chart_call_len(&h[l]) < chart_call_len(&h[m]))
			m = l;
		if (r < n && chart_call_len(&h[r]) < chart_call_len(&h[m]))
			m = r;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static void chart_heap_up(struct chart_call *h, size_t i)
{
	while (i && chart_call_len(&h[(i - 1) / 2]) > chart_call_len(&h[i])) {
		struct chart_call t = h[i];

		h[i] = h[(i - 1) / 2];
		h[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

/* A call whose end is known: kept when it is among the longest. */
static int chart_call_fn(void *opaque, const struct call *call)
{
	struct chart *c = opaque;
	struct chart_call k = {
		.start = call->start, .end = call->end, .func = call->func, .depth = call->depth,
		.how = call->how, .pid = call->pid, .cpu = call->cpu, .lane = chart_lane_key(call->pid, call->cpu),
	};

	if (call_ticks(call) < c->min_ticks || !call->entered)
		return 0;
	memcpy(k.comm, call->comm, sizeof(k.comm));
	if (c->ncalls < c->o.max_calls) {
		c->calls[c->ncalls++] = k;
		chart_heap_up(c->calls, c->ncalls - 1);
	} else if (chart_call_len(&k) > chart_call_len(&c->calls[0])) {
		c->calls[0] = k;
		chart_heap_down(c->calls, c->ncalls, 0);
	}
	return 0;
}

static void chart_bin_event(struct chart *c, const struct ring_event *ev)
{
	uint64_t ns = trace_meta_ns(c->meta, ev->tsc), span = c->ns1 - c->ns0 + 1;
	size_t bin = ns < c->ns0 ? 0 : (size_t)((unsigned __int128)(ns - c->ns0) * CHART_BINS / span);
	struct chart_lane *l;

	if (bin >= CHART_BINS)
		bin = CHART_BINS - 1;
	if (vmev_is(ev)) {
		unsigned kind = vmev_kind_of(ev);

		stages_count_vm(c->stages, c->nstages, ev);
		l = chart_lane(c, chart_lane_key(0, ev->cpu), NULL);
		if (l->drawn && l->vm && kind < VMEV_NKINDS)
			l->vm[bin * VMEV_NKINDS + kind]++;
		return;
	}
	l = chart_lane(c, chart_lane_key((ev->flags & VT_REC_FLAG_TASK) ? ev->pid : 0, ev->cpu), NULL);
	if (!l->drawn)
		l = &c->other;
	if (l->act)
		l->act[bin]++;
}

int chart_event(struct chart *c, const struct ring_event *ev)
{
	struct chart_lane *l;

	if (c->pass == 1) {
		chart_bin_event(c, ev);
		return 0;
	}
	if (c->pass)
		return 0;
	if (!c->seen || ev->tsc < c->first)
		c->first = ev->tsc;
	if (!c->seen || ev->tsc > c->last)
		c->last = ev->tsc;
	c->seen = 1;
	stage_finder_event(c->finder, ev);
	if (vmev_is(ev)) {
		c->vm_events++;
		c->vm_kinds |= vmev_kind_of(ev) < VMEV_NKINDS ? VMEV_MASK(vmev_kind_of(ev)) : 0;
		chart_lane(c, chart_lane_key(0, ev->cpu), ev);
		return 0;
	}
	c->events++;
	l = chart_lane(c, chart_lane_key((ev->flags & VT_REC_FLAG_TASK) ? ev->pid : 0, ev->cpu), ev);
	l->events++;
	/* A task's lane is named as it was last seen: init-1, not the swapper/0 it was forked as. */
	if (l->kind == CHART_LANE_TASK && (ev->flags & VT_REC_FLAG_TASK) && memcmp(l->comm, ev->comm, sizeof(l->comm))) {
		memcpy(l->comm, ev->comm, sizeof(l->comm));
		snprintf(l->label, sizeof(l->label), "%.16s-%u", ev->comm, l->id);
	}
	return c->tracker ? call_tracker_event(c->tracker, ev) : 0;
}

static int chart_call_by_start(const void *a, const void *b)
{
	const struct chart_call *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

/* Task lanes first with calls to draw, the longest first, then by events; vCPU lanes by number. */
static int chart_lane_rank(const void *a, const void *b)
{
	const struct chart_lane *x = *(struct chart_lane *const *)a, *y = *(struct chart_lane *const *)b;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->kind == CHART_LANE_VCPU)
		return x->id < y->id ? -1 : x->id > y->id;
	if (!!x->calls != !!y->calls)
		return x->calls ? -1 : 1;
	if (x->longest != y->longest)
		return x->longest > y->longest ? -1 : 1;
	if (x->events != y->events)
		return x->events > y->events ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int chart_lane_order(const void *a, const void *b)
{
	const struct chart_lane *x = *(struct chart_lane *const *)a, *y = *(struct chart_lane *const *)b;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Keeps the calls at least min_ticks long (the auto threshold), by start; counts them per lane. */
static void chart_keep_calls(struct chart *c, uint64_t min_ticks)
{
	size_t n = 0;

	for (size_t i = 0; i < c->ncalls; i++) {
		struct chart_lane *l = chart_lane(c, c->calls[i].lane, NULL);

		if (chart_call_len(&c->calls[i]) < min_ticks || l == &c->other)
			continue;
		l->calls++;
		if (chart_call_len(&c->calls[i]) > l->longest)
			l->longest = chart_call_len(&c->calls[i]);
		c->calls[n++] = c->calls[i];
	}
	c->ncalls = n;
	qsort(c->calls, n, sizeof(*c->calls), chart_call_by_start);
}

/* The lanes drawn: every vCPU's (up to a bound), the tasks with the longest calls or the most events, the rest as one. */
static int chart_pick_lanes(struct chart *c)
{
	struct chart_lane *other = &c->other;
	size_t nv = 0, nt = 0, rest = 0;

	c->drawn = calloc(c->nlanes + 1, sizeof(*c->drawn));
	if (!c->drawn)
		return -ENOMEM;
	for (size_t i = 0; i < c->nlanes; i++)
		c->drawn[i] = &c->lanes[i];
	qsort(c->drawn, c->nlanes, sizeof(*c->drawn), chart_lane_rank);
	for (size_t i = 0; i < c->nlanes; i++) {
		struct chart_lane *l = c->drawn[i];

		if (l->kind == CHART_LANE_VCPU ? nv < CHART_MAX_VCPU_LANES : nt < CHART_MAX_TASK_LANES) {
			*(l->kind == CHART_LANE_VCPU ? &nv : &nt) += 1;
			l->drawn = 1;
			c->drawn[c->ndrawn++] = l;
		} else {
			rest++;
		}
	}
	qsort(c->drawn, c->ndrawn, sizeof(*c->drawn), chart_lane_order);
	if (rest || other->events) {
		other->kind = CHART_LANE_OTHER;
		other->drawn = 1;
		snprintf(other->label, sizeof(other->label), "%zu other lanes", rest + !!other->events);
		c->drawn[c->ndrawn++] = other;
	}
	for (size_t i = 0; i < c->ndrawn; i++) {
		if (!(c->drawn[i]->act = calloc(CHART_BINS, sizeof(uint32_t))))
			return -ENOMEM;
		if (c->drawn[i]->kind == CHART_LANE_VCPU &&
		    !(c->drawn[i]->vm = calloc((size_t)CHART_BINS * VMEV_NKINDS, sizeof(uint32_t))))
			return -ENOMEM;
	}
	return 0;
}

/* Rows per lane: the depths of its calls, at most CHART_ROWS; deeper calls are not drawn. */
static void chart_rows(struct chart *c)
{
	for (size_t i = 0; i < c->ncalls; i++) {
		struct chart_lane *l = chart_lane(c, c->calls[i].lane, NULL);

		if (l->drawn && c->calls[i].depth < CHART_ROWS && c->calls[i].depth + 1 > l->rows)
			l->rows = c->calls[i].depth + 1;
	}
}

static int chart_end_model(struct chart *c)
{
	uint64_t auto_min;
	int rc;

	if (c->tracker && (rc = call_tracker_finish(c->tracker, c->last)))
		return rc;
	c->nstages = stage_finder_result(c->finder, c->stages, STAGES_MAX);
	c->ns0 = trace_meta_ns(c->meta, c->first);
	c->ns1 = trace_meta_ns(c->meta, c->last);
	/* A thousandth of the trace: about a pixel of the plot, unless --chart-min says otherwise. */
	auto_min = c->o.min_ns ? c->min_ticks : (c->last - c->first) / 1000;
	chart_keep_calls(c, auto_min);
	if ((rc = chart_pick_lanes(c)))
		return rc;
	/* Calls on lanes not drawn are not drawn either. */
	for (size_t i = 0, n = c->ncalls; i < n; i++)
		if (!chart_lane(c, c->calls[i].lane, NULL)->drawn)
			c->calls[i].depth = CHART_ROWS;
	chart_rows(c);
	return 0;
}

int chart_end_pass(struct chart *c)
{
	int rc;

	if (c->pass == 0) {
		if ((rc = chart_end_model(c)))
			return rc;
		c->pass = 1;
		return 1;
	}
	c->pass = 2;
	return 0;
}

const struct stage *chart_stages(const struct chart *c, size_t *n)
{
	*n = c->nstages;
	return c->stages;
}
