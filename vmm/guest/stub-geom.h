/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The stub's data, laid out once for the tracer and every host: the ring
 * headers (one per CPU), each CPU's ring of records, and --graph's shadow
 * stacks (proto/trace.h), from the start of the stub's data area. Hosts
 * size the memory they set aside by it before the guest starts; the
 * tracer lays the rings out in what a host gave (stub_geom_fit) and again
 * where they move at the ftrace_init hand-over (stub_geom_move), and
 * fills the stub's configuration block from the result.
 */
#ifndef VMM_GUEST_STUB_GEOM_H
#define VMM_GUEST_STUB_GEOM_H

#include <stdint.h>

#include "proto/trace.h"
#include "vmm/util/error.h"

/*
 * --graph's shadow stacks, one per task inside a traced call at once (the
 * stub finds a task's among VT_SHADOW_PROBE from its hash): 4 MiB of the
 * stub's data, touched only by a trace that hooks returns.
 */
#define STUB_SHADOW_TABLES	1024
#define STUB_SHADOW_BYTES	((uint64_t)STUB_SHADOW_TABLES * VT_SHADOW_SIZE)
/* The fewest records per ring: where there is room, and where there is little. */
#define STUB_MIN_RECORDS	64
#define STUB_MIN_SMALL_RECORDS	8

struct stub_geom {
	unsigned nrings;
	uint64_t nrecords;		/* per ring, a power of two */
	uint64_t hdr_bytes;		/* the headers, from offset 0; the rings follow */
	uint64_t ring_bytes;		/* one ring's records */
	uint64_t rings_end;		/* the shadow stacks start here */
	uint64_t shadow_tables;		/* a power of two, or 0 */
	uint64_t size;			/* the whole of it */
};

/* Records per ring for --buffer-size bytes: the power of two at or below it, at least STUB_MIN_RECORDS. */
uint64_t stub_geom_records(uint64_t buffer_size);

/*
 * Where the host sets the memory aside for it (no room limit): headers and
 * rings each page-aligned, then shadow_tables shadow stacks (0: none).
 */
void stub_geom_roomy(struct stub_geom *g, unsigned nrings, uint64_t nrecords, uint64_t shadow_tables);

/*
 * The bytes a region must hold for ncpus rings of buffer_size bytes and
 * every shadow stack, as the tracer lays them out (stub_geom_move's page
 * of slack included), rounded up to 2 MiB: what a host reserves before the
 * guest starts.
 */
uint64_t stub_geom_region_bytes(unsigned ncpus, uint64_t buffer_size);

/*
 * Where the host has only room bytes (QEMU: padding of the image): the
 * headers packed, as many records per ring as fit (halving from
 * nrecords, at least STUB_MIN_SMALL_RECORDS), and shadow stacks: all of
 * them when they fit beside the smallest rings, else, for a boot that
 * asks for --graph (graph), the most that fit a quarter of room, else
 * none (shadow says whether the stub hooks returns at all).
 */
int stub_geom_fit(struct stub_geom *g, unsigned nrings, uint64_t nrecords, uint64_t room, int shadow, int graph,
		  struct errbuf *err);

/*
 * The bigger place the rings move to at the hand-over (size bytes): as many
 * records per ring as fit, up to want, at least STUB_MIN_SMALL_RECORDS;
 * with every shadow stack (shadow) when they fit beside them. -ENOSPC when
 * not even the smallest rings fit.
 */
int stub_geom_move(struct stub_geom *g, unsigned nrings, uint64_t want, uint64_t size, int shadow);

/* The shadow stacks that fit a quarter of room: a power of two, 0 if none does. */
uint64_t stub_geom_shadow_for(uint64_t room);

/*
 * The configuration block's view of g's rings at data_va (the guest's
 * address of the data's first byte): headers, records, masks; limit is the
 * mode's (records before the doorbell rings). stub_geom_config adds the
 * shadow stacks.
 */
void stub_geom_config_rings(const struct stub_geom *g, uint64_t data_va, uint64_t limit, struct vt_stub_config *c);
void stub_geom_config(const struct stub_geom *g, uint64_t data_va, uint64_t limit, struct vt_stub_config *c);

#endif
