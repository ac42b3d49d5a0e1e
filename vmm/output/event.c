// SPDX-License-Identifier: GPL-2.0
/* An event's context as ftrace prints it (event.h). */
#include <stdio.h>

#include "vmm/output/event.h"

/* The generic preempt_count layout (include/linux/preempt.h). */
#define PC_PREEMPT_MASK	0x000000ffu
#define PC_SOFTIRQ_MASK	0x0000ff00u
#define PC_SOFTIRQ_OFFSET 0x00000100u
#define PC_HARDIRQ_MASK	0x000f0000u
#define PC_NMI_MASK	0x00f00000u

unsigned ring_event_ftrace_flags(const struct ring_event *ev)
{
	unsigned f = 0, pc = ev->preempt;

	if (ev->flags & VT_REC_FLAG_IRQS_OFF)
		f |= FTRACE_FLAG_IRQS_OFF;
	if (ev->flags & VT_REC_FLAG_NEED_RESCHED)
		f |= FTRACE_FLAG_NEED_RESCHED;
	if (ev->flags & VT_REC_FLAG_PREEMPT_RESCHED)
		f |= FTRACE_FLAG_PREEMPT_RESCHED;
	if (!(ev->flags & VT_REC_FLAG_CTX))
		return f;
	if (pc & PC_NMI_MASK)
		f |= FTRACE_FLAG_NMI;
	if (pc & PC_HARDIRQ_MASK)
		f |= FTRACE_FLAG_HARDIRQ;
	if (pc & PC_SOFTIRQ_OFFSET)		/* in_serving_softirq() */
		f |= FTRACE_FLAG_SOFTIRQ;
	if ((pc & PC_SOFTIRQ_MASK) >> 9)	/* softirq_count() >> (SOFTIRQ_SHIFT + 1) */
		f |= FTRACE_FLAG_BH_OFF;
	return f;
}

unsigned ring_event_ftrace_pc(const struct ring_event *ev)
{
	unsigned depth = (ev->flags & VT_REC_FLAG_CTX) ? ev->preempt & PC_PREEMPT_MASK : 0;
	unsigned migr = (ev->flags & VT_REC_MIGR_MASK) >> VT_REC_MIGR_SHIFT;

	return (depth > 15 ? 15 : depth) | migr << 4;
}

void ring_event_lat(const struct ring_event *ev, char out[6])
{
	unsigned f = ring_event_ftrace_flags(ev), pc = ring_event_ftrace_pc(ev);
	int nmi = f & FTRACE_FLAG_NMI, hard = f & FTRACE_FLAG_HARDIRQ, soft = f & FTRACE_FLAG_SOFTIRQ;
	static const char hex[] = "0123456789abcdef";

	out[0] = (f & FTRACE_FLAG_IRQS_OFF) && (f & FTRACE_FLAG_BH_OFF) ? 'D' :
		 (f & FTRACE_FLAG_IRQS_OFF) ? 'd' : (f & FTRACE_FLAG_BH_OFF) ? 'b' : '.';
	switch (f & (FTRACE_FLAG_NEED_RESCHED | FTRACE_FLAG_PREEMPT_RESCHED)) {
	case FTRACE_FLAG_NEED_RESCHED | FTRACE_FLAG_PREEMPT_RESCHED: out[1] = 'N'; break;
	case FTRACE_FLAG_NEED_RESCHED: out[1] = 'n'; break;
	case FTRACE_FLAG_PREEMPT_RESCHED: out[1] = 'p'; break;
	default: out[1] = '.'; break;
	}
	out[2] = nmi && hard ? 'Z' : nmi ? 'z' : hard && soft ? 'H' : hard ? 'h' : soft ? 's' : '.';
	out[3] = pc & 0xf ? hex[pc & 0xf] : '.';
	out[4] = pc & 0xf0 ? hex[pc >> 4] : '.';
	out[5] = 0;
}

const char *ring_event_comm(const struct ring_event *ev, char buf[24])
{
	if (!(ev->flags & VT_REC_FLAG_TASK))
		return "<...>";
	if (ev->pid == 0) {
		snprintf(buf, 24, "swapper/%u", ev->cpu);
		return buf;
	}
	return ev->comm[0] ? ev->comm : "<...>";
}
