/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Perfetto output: a protobuf `Trace` (a stream of TracePackets) that the
 * Perfetto UI and trace_processor open. Layout: docs/FORMATS.md, "Perfetto".
 *
 * Each event is one TrackEvent on its vCPU's track, under one track for the
 * guest kernel. Event names, the callers' names and the annotation keys are
 * interned on one packet sequence, so a long trace names each function once.
 */
#ifndef VMM_OUTPUT_PERFETTO_H
#define VMM_OUTPUT_PERFETTO_H

#include "vmm/output/writer.h"

extern const struct trace_writer_ops trace_writer_perfetto;

/*
 * What an event is, which decides how it is encoded (the table in
 * trace-perfetto.c): its TrackEvent type, where its name comes from, its
 * category and its annotations. The writer's event() maps a function entry
 * to FUNC_ENTRY, a hooked entry (--graph) to FUNC_BEGIN, its return to
 * FUNC_END (perfetto-calls.c), and every VM event to VM_EVENT.
 */
enum trace_perfetto_kind {
	TRACE_PERFETTO_FUNC_ENTRY,	/* instant: a function was entered (no return recorded) */
	TRACE_PERFETTO_FUNC_BEGIN,	/* slice begin: a function entered whose return is recorded */
	TRACE_PERFETTO_FUNC_END,	/* slice end: that function returned (ev->func, parent unused) */
	TRACE_PERFETTO_VM_EVENT,	/* instant: a VM event, named by the caller (e.g. "kvm:kvm_exit") */
	TRACE_PERFETTO_FUNC_UNRETURNED,	/* slice end: a call whose return the stub never saw (its task went on below it) */
	TRACE_PERFETTO_NKINDS
};

/*
 * Writes one event of the given kind: ev gives the time, the vCPU, the
 * function, the caller and the flags; name is the VM event's name and is
 * interned by its address, so it must be a string that lives as long as
 * the writer (a literal or a table entry); NULL for the other kinds.
 * Returns 0 or -errno (-EINVAL for an unknown kind or a missing name).
 */
int trace_perfetto_emit(struct trace_writer *w, enum trace_perfetto_kind kind,
			const struct ring_event *ev, const char *name);
/* The track an event goes on: its task's (pid above 0), else its vCPU's. */
uint64_t trace_perfetto_track(const struct ring_event *ev);

#endif
