/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trace-cmd's trace.dat (file version 6), so that `trace-cmd report` and
 * KernelShark read vmmtrace's traces unchanged (docs/FORMATS.md, "trace.dat").
 *
 * The container (trace-dat.c) knows nothing of particular events: each event
 * type is one entry of a table (trace-dat-events.c) that gives its id, its
 * system and name, the fields its format text describes, and an encoder that
 * fills the payload behind the common header. A new kind of event (kvm:*,
 * funcgraph_entry/exit) is a new table entry and a line in
 * trace_dat_event_pick().
 */
#ifndef VMM_OUTPUT_DAT_H
#define VMM_OUTPUT_DAT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "vmm/output/event.h"
#include "vmm/output/writer.h"

extern const struct trace_writer_ops trace_writer_dat;

/* The ring-buffer page of the kernel whose layout the file declares. */
#define TRACE_DAT_PAGE_SIZE	4096u
#define TRACE_DAT_PAGE_HDR	16u	/* u64 timestamp, u64 commit */
#define TRACE_DAT_PAGE_DATA	(TRACE_DAT_PAGE_SIZE - TRACE_DAT_PAGE_HDR)

/* Every event starts with the kernel's common fields (struct trace_entry). */
#define TRACE_DAT_COMMON_SIZE	8u
#define TRACE_DAT_FLAG_IRQS_OFF	0x01	/* common_flags: TRACE_FLAG_IRQS_OFF */

/* Little-endian stores: one store each on a little-endian host. */
static inline void trace_dat_put_le32(uint8_t *p, uint32_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(p, &v, 4);
#else
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
#endif
}

static inline void trace_dat_put_le64(uint8_t *p, uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(p, &v, 8);
#else
	trace_dat_put_le32(p, (uint32_t)v);
	trace_dat_put_le32(p + 4, (uint32_t)(v >> 32));
#endif
}

/*
 * trace_meta_ns() without its 128-bit division per event: n / khz as a
 * multiply by a reciprocal (Granlund and Montgomery, "Division by
 * invariant integers using multiplication", 1994, figure 4.1), exact for
 * every 64-bit n, so the times are those of the text writer to the ns.
 */
struct trace_dat_ns {
	uint64_t base;		/* meta->tsc_base */
	uint64_t magic;
	unsigned sh1, sh2;
	struct trace_meta meta;	/* for ticks * 10^6 past 64 bits (hours of trace) */
};

static inline void trace_dat_ns_init(struct trace_dat_ns *c, const struct trace_meta *m)
{
	uint64_t d = m->tsc_khz ? m->tsc_khz : 1000000;
	unsigned l = 0;

	while (l < 64 && (1ull << l) < d)
		l++;	/* ceil(log2 d) */
	c->base = m->tsc_base;
	c->magic = (uint64_t)((((unsigned __int128)1 << l) - d) * ((unsigned __int128)1 << 64) / d) + 1;
	c->sh1 = l < 1 ? l : 1;
	c->sh2 = l > 1 ? l - 1 : 0;
	c->meta = *m;
}

static inline uint64_t trace_dat_ns(const struct trace_dat_ns *c, uint64_t tsc)
{
	uint64_t ticks = tsc > c->base ? tsc - c->base : 0, n, t;

	if (ticks > UINT64_MAX / 1000000u)
		return trace_meta_ns(&c->meta, tsc);
	n = ticks * 1000000u;
	t = (uint64_t)(((unsigned __int128)c->magic * n) >> 64);
	return (t + ((n - t) >> c->sh1)) >> c->sh2;
}

/* One field line of a format text. */
struct trace_dat_field {
	const char *decl;	/* "unsigned long ip" */
	unsigned offset, size;
	int is_signed;
};

struct trace_dat_event {
	uint16_t id;			/* common_type */
	const char *system;		/* "ftrace" goes to the ftrace formats section */
	const char *name;
	const struct trace_dat_field *fields;	/* after the common ones */
	size_t nfields;
	const char *print_fmt;		/* the text after "print fmt: " */
	unsigned size;			/* payload bytes, common fields included */
	/* Fills payload[TRACE_DAT_COMMON_SIZE .. size) from ev; ns converts its other times. */
	void (*encode)(const struct ring_event *ev, uint8_t *payload, const struct trace_dat_ns *ns);
};

extern const struct trace_dat_event trace_dat_events[];
extern const size_t trace_dat_nevents;

/* The table entry that records ev; graph: a trace of --graph, whose hooked entries and exits are funcgraph's. */
const struct trace_dat_event *trace_dat_event_pick(const struct ring_event *ev, int graph);
/* Writes the format text of e as the kernel exposes it in events/<system>/<name>/format. */
void trace_dat_event_format(const struct trace_dat_event *e, FILE *out);

#endif
