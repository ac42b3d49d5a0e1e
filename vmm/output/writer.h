/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Output formats of a trace. The tracer hands each client's events to the
 * client's writer in timestamp order (trace-buf.c), one call per event; a
 * writer only formats them into its FILE. The formats:
 *
 *   text      ftrace's `trace` file layout (trace-text.c)
 *   graph     the function_graph tracer's layout, for --graph (trace-graph.c)
 *   dat       trace-cmd's trace.dat, for trace-cmd report and KernelShark
 *   perfetto  a protobuf trace of TracePackets, for the Perfetto UI
 *   raw       vmmtrace's own crash-safe chunks, read by `vmmtrace report`
 *
 * Writers never print and never exit: they return 0 or -errno, with a
 * one-line message in an errbuf where one is taken.
 */
#ifndef VMM_OUTPUT_WRITER_H
#define VMM_OUTPUT_WRITER_H

#include <stdint.h>
#include <stdio.h>

#include "vmm/image/symtab.h"
#include "vmm/output/fnargs.h"
#include "vmm/output/event.h"
#include "vmm/util/error.h"

/* What every format needs to know about the trace besides its events. */
struct trace_meta {
	const struct symtab *syms;	/* the guest kernel's symbols (may be NULL) */
	uint64_t tsc_khz;		/* guest TSC ticks per ms (0: assume 1 GHz) */
	uint64_t tsc_base;		/* guest TSC at time zero (the guest's start) */
	unsigned ncpus;			/* vCPUs, i.e. rings: events have cpu < ncpus */
	const char *kernel;		/* the image traced, for the record (may be NULL) */
	struct fnargs *fnargs;		/* --args: the functions' prototypes; NULL: no arguments */
	int graph;			/* --graph: hooked entries and exits; text is function_graph's */
	int graph_retval;		/* graph: print return values (funcgraph-retval) */
	unsigned graph_depth;		/* graph: print calls this deep at most; 0: all */
};

/* The closing account, for formats that record it (raw, dat's options). */
struct trace_stats {
	uint64_t events;		/* handed to this writer */
	uint64_t dropped_stub;		/* dropped by the stub (ring full, overwrite mode) */
	uint64_t lost;			/* overwritten or unfinished before the host read them */
	/* The guest's hand-over to its own ftrace, when the kernel has one. */
	int have_phase;
	uint64_t ftrace_init_tsc;	/* guest TSC at ftrace_init's entry; ~0: not reached */
	uint64_t early_events;		/* events of the whole trace before it */
};

struct trace_writer;

struct trace_writer_ops {
	const char *name;		/* "text", "dat", "perfetto", "raw" */
	/* Sets up *w on out (not closed by the writer); writes what precedes the events. */
	int (*open)(struct trace_writer **w, FILE *out, const struct trace_meta *meta,
		    struct errbuf *err);
	/* One event; events arrive in timestamp order across all CPUs. */
	int (*event)(struct trace_writer *w, const struct ring_event *ev);
	/*
	 * The consumer calls this after each round (a few times per second):
	 * whatever was written so far should survive the process being killed
	 * (raw: the open chunk is closed and flushed). May be a no-op.
	 */
	int (*flush)(struct trace_writer *w);
	/*
	 * Writes what follows the events and frees w. After an error (of any
	 * call) nothing more is written: close then only frees, and returns it.
	 */
	int (*close)(struct trace_writer *w, const struct trace_stats *st, struct errbuf *err);
};

extern const struct trace_writer_ops trace_writer_text;
extern const struct trace_writer_ops trace_writer_graph;

/* The writer called name ("text", "raw", ...), or NULL (writer.c). */
const struct trace_writer_ops *trace_writer_find(const char *name);
/*
 * The writer a file name implies: .dat dat, .perfetto/.pftrace/.pb perfetto,
 * .txt/.trace text, .raw/.vtr and anything else raw. NULL when the format
 * it names is not built in.
 */
const struct trace_writer_ops *trace_writer_for_path(const char *path);

/* ns since meta->tsc_base for a guest TSC value (0 for earlier values). */
static inline uint64_t trace_meta_ns(const struct trace_meta *m, uint64_t tsc)
{
	uint64_t khz = m->tsc_khz ? m->tsc_khz : 1000000;
	uint64_t ticks = tsc > m->tsc_base ? tsc - m->tsc_base : 0;

	return (uint64_t)((unsigned __int128)ticks * 1000000u / khz);
}

#endif
