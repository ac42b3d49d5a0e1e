// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/output/text.h"
#include "vmm/output/vmevent.h"
#include "vmm/output/writer.h"

void trace_text_init(struct trace_text *t, FILE *out, const struct symtab *syms, uint64_t tsc_khz)
{
	t->out = out;
	t->syms = syms;
	t->tsc_khz = tsc_khz ? tsc_khz : 1000000;
	t->tsc_base = 0;
	t->fnargs = NULL;
	t->error = 0;
}

void trace_text_header(struct trace_text *t, unsigned ncpus)
{
	fprintf(t->out,
		"# tracer: function\n"
		"#\n"
		"# recorded by vmmtrace from outside the guest; #P:%u\n"
		"#\n"
		"#                                _-----=> irqs-off/BH-disabled\n"
		"#                               / _----=> need-resched\n"
		"#                              | / _---=> hardirq/softirq\n"
		"#                              || / _--=> preempt-depth\n"
		"#                              ||| / _-=> migrate-disable\n"
		"#                              |||| /     delay\n"
		"#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
		"#              | |         |   |||||     |         |\n", ncpus);
}

/* A symbol's name when addr lies inside it (the nearest symbol can be far off). */
static const char *trace_text_sym(const struct trace_text *t, uint64_t addr, uint64_t *off)
{
	const struct symbol *s = t->syms ? symtab_find_addr(t->syms, addr, off) : NULL;

	if (!s || *off >= symtab_extent(t->syms, s))
		return NULL;
	return symtab_name(t->syms, s);
}

/*
 * A VM event: the host tracepoint's name and fields where ftrace puts the
 * function, then where the guest was, as [function+0xoff] (or its address).
 */
static void trace_text_vmev(const struct trace_text *t, const struct ring_event *ev, char *buf, size_t len,
			    uint64_t sec, uint64_t usec)
{
	char body[160], where[160];
	const char *func;
	uint64_t off;
	int n = vmev_format(ev, body, sizeof(body));

	while (n > 0 && n < (int)sizeof(body) && body[n - 1] == ' ')
		body[--n] = 0;	/* kvm_pio's "%s" for rep counts leaves a space */
	func = trace_text_sym(t, ev->func, &off);
	if (vmev_kind_of(ev) == VMEV_CPUID) {	/* a boot record: no guest RIP */
		snprintf(buf, len, "           <...>-0       [%03u] .....  %5" PRIu64 ".%06" PRIu64 ": %s",
			 ev->cpu, sec, usec, body);
		return;
	}
	if (func)
		snprintf(where, sizeof(where), "%s+0x%" PRIx64, func, off);
	else
		snprintf(where, sizeof(where), "0x%" PRIx64, ev->func);
	if (vmev_kind_of(ev) == VMEV_MSR && vmev_msr_caller(ev)) {
		/* Who called the MSR accessor, named as a function event's parent. */
		const char *caller = trace_text_sym(t, vmev_msr_caller(ev), &off);
		size_t w = strlen(where);

		if (caller)
			snprintf(where + w, sizeof(where) - w, " <-%s", caller);
		else
			snprintf(where + w, sizeof(where) - w, " <-0x%" PRIx64, vmev_msr_caller(ev));
	}
	snprintf(buf, len, "           <...>-0       [%03u] %c....  %5" PRIu64 ".%06" PRIu64 ": %s [%s]",
		 ev->cpu, (ev->flags & VMEV_FLAG_IRQS_OFF) ? 'd' : '.', sec, usec, body, where);
}

void trace_text_format(const struct trace_text *t, const struct ring_event *ev, char *buf, size_t len)
{
	/* TSC ticks to ns with the guest's TSC frequency (kHz): ns = tsc * 1e6 / khz. */
	uint64_t ticks = ev->tsc > t->tsc_base ? ev->tsc - t->tsc_base : 0;
	unsigned __int128 ns = (unsigned __int128)ticks * 1000000u / t->tsc_khz;
	/* To the nearest µs, as the kernel's trace file and trace-cmd report print it. */
	unsigned __int128 us = (ns + 500) / 1000;
	uint64_t sec = (uint64_t)(us / 1000000), usec = (uint64_t)(us % 1000000);
	char fbuf[32], pbuf[32], cbuf[24], lat[6], args[384] = "";
	const char *func, *parent;
	uint64_t off;

	if (vmev_is(ev)) {
		trace_text_vmev(t, ev, buf, len, sec, usec);
		return;
	}
	func = trace_text_sym(t, ev->func, &off);
	if (!func || off) {
		snprintf(fbuf, sizeof(fbuf), "0x%" PRIx64, ev->func);
		func = fbuf;
	}
	if (t->fnargs && (ev->flags & VT_REC_FLAG_ARGS)) {
		struct kbtf_proto proto;
		int known = fnargs_lookup(t->fnargs, ev->func, func == fbuf ? NULL : func, &proto);

		fnargs_format(known ? &proto : NULL, ev->args, args, sizeof(args));
	}
	parent = trace_text_sym(t, ev->parent, &off);
	if (!parent) {
		snprintf(pbuf, sizeof(pbuf), "0x%" PRIx64, ev->parent);
		parent = pbuf;
	}
	ring_event_lat(ev, lat);
	/* ftrace's "%16s-%-7d [%03d] " (kernel/trace/trace_output.c, lat_print_generic's sibling). */
	snprintf(buf, len, "%16s-%-7d [%03u] %s  %5" PRIu64 ".%06" PRIu64 ": %s%s <-%s",
		 ring_event_comm(ev, cbuf), (ev->flags & VT_REC_FLAG_TASK) ? ev->pid : 0, ev->cpu, lat,
		 sec, usec, func, args, parent);
}

int trace_text_event(void *opaque, const struct ring_event *ev)
{
	struct trace_text *t = opaque;
	char line[1024];

	trace_text_format(t, ev, line, sizeof(line));
	if (fprintf(t->out, "%s\n", line) < 0 && !t->error)
		t->error = errno ? errno : EIO;
	return 0;
}

/* The text format as a trace_writer (writer.h). */
struct trace_writer {
	struct trace_text text;
};

static int text_open(struct trace_writer **out_w, FILE *out, const struct trace_meta *meta,
		     struct errbuf *err)
{
	struct trace_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return err_set(err, ENOMEM, "out of memory for the text writer");
	trace_text_init(&w->text, out, meta->syms, meta->tsc_khz);
	w->text.tsc_base = meta->tsc_base;
	w->text.fnargs = meta->fnargs;
	trace_text_header(&w->text, meta->ncpus);
	*out_w = w;
	return 0;
}

static int text_event(struct trace_writer *w, const struct ring_event *ev)
{
	trace_text_event(&w->text, ev);
	return w->text.error ? -w->text.error : 0;
}

static int text_flush(struct trace_writer *w)
{
	/* Not after an error: stdio would retry what it holds, behind a gap. */
	if (!w->text.error && fflush(w->text.out))
		w->text.error = errno ? errno : EIO;
	return w->text.error ? -w->text.error : 0;
}

static int text_close(struct trace_writer *w, const struct trace_stats *st, struct errbuf *err)
{
	int rc = text_flush(w);

	(void)st;
	free(w);
	return rc ? err_set(err, -rc, "writing the text trace: %s", strerror(-rc)) : 0;
}

const struct trace_writer_ops trace_writer_text = {
	.name = "text", .open = text_open, .event = text_event, .flush = text_flush, .close = text_close,
};
