/* SPDX-License-Identifier: GPL-2.0 */
/* The boot chart's model, between its builder (chart.c) and its drawing (chart-svg.c). */
#ifndef VMM_OUTPUT_CHART_MODEL_H
#define VMM_OUTPUT_CHART_MODEL_H

#include "vmm/output/calls.h"
#include "vmm/output/chart.h"

#define CHART_BINS		400	/* activity and VM-event columns across the trace */
#define CHART_MAX_KEYS		4096	/* lanes told apart; events of others go to "other tasks" */
#define CHART_MAX_VCPU_LANES	64
#define CHART_MAX_TASK_LANES	40
#define CHART_ROWS		10	/* call depths drawn per lane */

enum chart_lane_kind { CHART_LANE_VCPU, CHART_LANE_TASK, CHART_LANE_OTHER };

struct chart_lane {
	uint64_t key;			/* chart_lane_key() */
	enum chart_lane_kind kind;
	uint32_t id;			/* the vCPU or the pid */
	char label[40];			/* "vCPU 0", "init-1" (the comm of its last event) */
	char comm[16];
	uint64_t events, calls;		/* function events; calls kept (pass 1) */
	uint64_t longest;		/* its longest kept call, TSC ticks */
	unsigned rows;			/* call depths drawn */
	int drawn;
	uint32_t *act;			/* drawn lanes: function events per column (pass 2) */
	uint32_t *vm;			/* vCPU lanes: VM events per column and kind (pass 2) */
};

struct chart_call {
	uint64_t start, end, func, lane;
	uint32_t depth;
	uint8_t how;			/* enum call_end */
	int32_t pid;
	uint16_t cpu;
	char comm[16];
};

struct chart {
	const struct trace_meta *meta;
	struct chart_opts o;
	int pass;
	struct stage_finder *finder;
	struct call_tracker *tracker;
	struct chart_call *calls;	/* pass 1: a min-heap by length; then by start */
	size_t ncalls;
	uint64_t min_ticks;		/* --chart-min in ticks (0: none) */
	struct chart_lane *lanes;	/* the lanes told apart */
	size_t nlanes, lanes_cap;
	struct chart_lane other;	/* the rest, as one */
	uint64_t *lane_keys;		/* open addressing: key -> 1 + lane index */
	uint32_t *lane_idx;
	size_t lane_mask;
	struct chart_lane **drawn;	/* in drawing order */
	size_t ndrawn;
	struct stage stages[STAGES_MAX];
	size_t nstages;
	uint64_t first, last;		/* TSC of the first and last events */
	uint64_t ns0, ns1;		/* the same in ns: the time axis */
	uint64_t events, vm_events;
	unsigned vm_kinds;		/* VMEV_MASK of the kinds the trace has */
	int seen;
};

/* The lane an event goes on: its task's (pid above 0), else its vCPU's. */
static inline uint64_t chart_lane_key(int32_t pid, uint16_t cpu)
{
	return pid > 0 ? (uint64_t)(uint32_t)pid : 1ull << 32 | cpu;
}

#endif
