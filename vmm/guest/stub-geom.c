// SPDX-License-Identifier: GPL-2.0
/* The stub's data: rings, headers, shadow stacks (stub-geom.h). */
#include <errno.h>

#include "vmm/guest/stub-geom.h"

#define PAGE_UP(x) (((x) + 4095) & ~4095ULL)
#define REGION_ALIGN (2ULL << 20)

uint64_t stub_geom_records(uint64_t buffer_size)
{
	uint64_t n = STUB_MIN_RECORDS;

	while (n * 2 <= buffer_size / VT_REC_SIZE)
		n *= 2;
	return n;
}

void stub_geom_roomy(struct stub_geom *g, unsigned nrings, uint64_t nrecords, uint64_t shadow_tables)
{
	g->nrings = nrings;
	g->nrecords = nrecords;
	g->hdr_bytes = PAGE_UP((uint64_t)nrings * VT_HDR_SIZE);
	g->ring_bytes = nrecords * VT_REC_SIZE;
	g->rings_end = PAGE_UP(g->hdr_bytes + nrings * g->ring_bytes);
	g->shadow_tables = shadow_tables;
	g->size = g->rings_end + shadow_tables * VT_SHADOW_SIZE;
}

uint64_t stub_geom_region_bytes(unsigned ncpus, uint64_t buffer_size)
{
	struct stub_geom g;

	stub_geom_roomy(&g, ncpus, stub_geom_records(buffer_size), STUB_SHADOW_TABLES);
	return (g.size + 4096 + REGION_ALIGN - 1) & ~(REGION_ALIGN - 1);
}

uint64_t stub_geom_shadow_for(uint64_t room)
{
	uint64_t n = STUB_SHADOW_TABLES;

	while (n && n * VT_SHADOW_SIZE > room / 4)
		n /= 2;
	return n;
}

int stub_geom_fit(struct stub_geom *g, unsigned nrings, uint64_t nrecords, uint64_t room, int shadow, int graph,
		  struct errbuf *err)
{
	uint64_t hdr = (uint64_t)nrings * VT_HDR_SIZE, smallest = hdr + nrings * STUB_MIN_SMALL_RECORDS * VT_REC_SIZE;
	uint64_t tables = shadow ? STUB_SHADOW_TABLES : 0;

	/* Not every shadow stack beside the smallest rings: a few for a boot that asks for --graph. */
	if (tables && room < STUB_SHADOW_BYTES + smallest)
		tables = graph ? stub_geom_shadow_for(room) : 0;
	if (graph && !tables)
		return err_set(err, E2BIG, "--graph: no room for shadow stacks (%llu bytes)", (unsigned long long)room);
	room = room > tables * VT_SHADOW_SIZE ? room - tables * VT_SHADOW_SIZE : 0;
	while (nrecords > STUB_MIN_SMALL_RECORDS && hdr + nrings * nrecords * VT_REC_SIZE > room)
		nrecords /= 2;
	if (hdr + nrings * nrecords * VT_REC_SIZE > room)
		return err_set(err, E2BIG, "room for %llu bytes of rings: not even %u records for each of %u CPUs",
			       (unsigned long long)room, STUB_MIN_SMALL_RECORDS, nrings);
	g->nrings = nrings;
	g->nrecords = nrecords;
	g->hdr_bytes = hdr;
	g->ring_bytes = nrecords * VT_REC_SIZE;
	g->rings_end = hdr + nrings * g->ring_bytes;
	g->shadow_tables = tables;
	g->size = g->rings_end + tables * VT_SHADOW_SIZE;
	return 0;
}

int stub_geom_move(struct stub_geom *g, unsigned nrings, uint64_t want, uint64_t size, int shadow)
{
	uint64_t hdr = PAGE_UP((uint64_t)nrings * VT_HDR_SIZE), n = STUB_MIN_SMALL_RECORDS;

	/* The shadow stacks after the rings, page-aligned, and they need the room first. */
	if (shadow && size < STUB_SHADOW_BYTES + 4096)
		shadow = 0;
	if (shadow)
		size -= STUB_SHADOW_BYTES + 4096;
	while (n * 2 <= want && hdr + nrings * n * 2 * VT_REC_SIZE <= size)
		n *= 2;
	if (hdr + nrings * n * VT_REC_SIZE > size)
		return -ENOSPC;
	stub_geom_roomy(g, nrings, n, shadow ? STUB_SHADOW_TABLES : 0);
	return 0;
}

void stub_geom_config_rings(const struct stub_geom *g, uint64_t data_va, uint64_t limit, struct vt_stub_config *c)
{
	c->ring_hdrs = data_va;
	c->ring_recs = data_va + g->hdr_bytes;
	c->ring_bytes = g->ring_bytes;
	c->ring_mask = g->nrecords - 1;
	c->limit = limit;
	c->nrings = g->nrings;
}

void stub_geom_config(const struct stub_geom *g, uint64_t data_va, uint64_t limit, struct vt_stub_config *c)
{
	stub_geom_config_rings(g, data_va, limit, c);
	c->shadow = data_va + g->rings_end;
	c->shadow_mask = g->shadow_tables ? g->shadow_tables - 1 : 0;
}
