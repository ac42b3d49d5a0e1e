/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The reader of vmmtrace's raw traces (proto/raw.h). Opening a file checks
 * every chunk and rebuilds the trace's meta and symbol table; replaying
 * hands the events, in file order, to a callback or to any trace writer
 * (writer.h), so a raw trace converts to every other format. What the file
 * lacked or had damaged is returned as values (struct raw_read_report),
 * never printed: a file cut by a kill is a normal result, not an error.
 */
#ifndef VMM_OUTPUT_RAW_READ_H
#define VMM_OUTPUT_RAW_READ_H

#include <stdint.h>
#include <stdio.h>

#include "vmm/output/writer.h"
#include "vmm/util/error.h"

/* A chunk the reader could not use: where it starts and why. */
struct raw_read_damage {
	uint64_t offset;		/* file offset of the chunk (or of the damaged bytes) */
	uint64_t bytes;			/* bytes stepped over */
	const char *why;		/* static text: "payload checksum", ... */
};

#define RAW_READ_MAX_DAMAGE	32

struct raw_read_report {
	uint64_t file_size;
	uint64_t chunks;		/* complete chunks whose checksums hold */
	uint64_t event_chunks;		/* of them, event chunks */
	uint64_t events;		/* records in those (entries and kinds skipped) */
	uint64_t unknown_chunks;	/* whole chunks of types this reader skips */
	uint64_t skipped_records;	/* event records of kinds this reader skips */
	uint64_t missing_chunks;	/* sequence numbers never seen (lost to damage) */
	uint64_t damaged;		/* damaged chunks (or runs of damaged bytes) */
	unsigned ndamage;		/* the first RAW_READ_MAX_DAMAGE of them */
	struct raw_read_damage damage[RAW_READ_MAX_DAMAGE];
	int cut;			/* the file ends inside a chunk */
	uint64_t cut_offset;		/* where the last complete chunk ends */
	uint64_t cut_bytes;		/* bytes after it */
	int have_symbols;
	int have_trailer;		/* the writer closed the trace: the run ended cleanly */
	struct trace_stats stats;	/* from the trailer (have_trailer) */
	int have_phase;			/* the trailer records the ftrace_init boundary */
	uint64_t early_events;		/* events before ftrace_init (have_phase) */
	uint64_t ftrace_init_tsc;	/* (have_phase) */
};

struct raw_reader;

/*
 * Opens path and checks every chunk. Fails (-errno, err says why) only when
 * nothing can be read: a missing or empty file, a foreign one, one cut
 * before the end of its header chunk, a damaged header chunk, a format
 * version newer than this reader's. Damage and cuts further on are reported
 * in raw_read_report() instead.
 */
int raw_read_open(struct raw_reader **r, const char *path, struct errbuf *err);
void raw_read_close(struct raw_reader *r);

/* The trace's meta; syms is the rebuilt table (NULL without a symbols chunk). */
const struct trace_meta *raw_read_meta(const struct raw_reader *r);
const struct raw_read_report *raw_read_report(const struct raw_reader *r);

/* Receives each event; returns 0, or -errno to stop the replay. */
typedef int raw_event_fn(void *opaque, const struct ring_event *ev);

/*
 * Hands every event of the good event chunks to fn, in file order, a whole
 * chunk at a time: a chunk that does not decode is added to the report's
 * damage and none of its events are handed on. Returns 0 or fn's -errno.
 */
int raw_read_replay(struct raw_reader *r, raw_event_fn *fn, void *opaque);

/*
 * Converts the whole trace through ops into out: the writer gets the
 * rebuilt meta, every event, and the trailer's account (or, without one,
 * the events read). 0, or -errno with err set.
 */
int raw_read_convert(struct raw_reader *r, const struct trace_writer_ops *ops, FILE *out,
		     struct errbuf *err);

#endif
