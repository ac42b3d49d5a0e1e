// SPDX-License-Identifier: GPL-2.0
/*
 * The event types a trace.dat of vmmtrace declares, one table entry each.
 * Format texts follow the kernel's events/<system>/<name>/format files of
 * the 6.1 guests vmmtrace traces (readers parse the payload from them, so
 * field offsets and sizes must match what the encoder writes).
 */
#include "vmm/trace/trace-dat.h"

/* The kernel's struct trace_entry, the first fields of every event. */
static const struct trace_dat_field dat_common_fields[] = {
	{ "unsigned short common_type", 0, 2, 0 },
	{ "unsigned char common_flags", 2, 1, 0 },
	{ "unsigned char common_preempt_count", 3, 1, 0 },
	{ "int common_pid", 4, 4, 1 },
};

/* ftrace:function, the function tracer's entry event. */
static const struct trace_dat_field dat_function_fields[] = {
	{ "unsigned long ip", 8, 8, 0 },
	{ "unsigned long parent_ip", 16, 8, 0 },
};

static void dat_function_encode(const struct ring_event *ev, uint8_t *payload)
{
	trace_dat_put_le64(payload + 8, ev->func);
	trace_dat_put_le64(payload + 16, ev->parent);
}

/* Index 0 must stay ftrace:function, the event every record is today. */
const struct trace_dat_event trace_dat_events[] = {
	{
		.id = 1, .system = "ftrace", .name = "function",
		.fields = dat_function_fields,
		.nfields = sizeof(dat_function_fields) / sizeof(dat_function_fields[0]),
		.print_fmt = "\" %ps <-- %ps\", (void *)REC->ip, (void *)REC->parent_ip",
		.size = 24, .encode = dat_function_encode,
	},
};
const size_t trace_dat_nevents = sizeof(trace_dat_events) / sizeof(trace_dat_events[0]);

const struct trace_dat_event *trace_dat_event_pick(const struct ring_event *ev)
{
	/* The stub records function entries only (returns and VM events will follow). */
	(void)ev;
	return &trace_dat_events[0];
}

static void dat_field_print(const struct trace_dat_field *f, FILE *out)
{
	fprintf(out, "\tfield:%s;\toffset:%u;\tsize:%u;\tsigned:%d;\n",
		f->decl, f->offset, f->size, f->is_signed);
}

void trace_dat_event_format(const struct trace_dat_event *e, FILE *out)
{
	fprintf(out, "name: %s\nID: %u\nformat:\n", e->name, e->id);
	for (size_t i = 0; i < sizeof(dat_common_fields) / sizeof(dat_common_fields[0]); i++)
		dat_field_print(&dat_common_fields[i], out);
	fputc('\n', out);
	for (size_t i = 0; i < e->nfields; i++)
		dat_field_print(&e->fields[i], out);
	fprintf(out, "\nprint fmt: %s\n", e->print_fmt);
}
