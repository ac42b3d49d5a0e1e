// SPDX-License-Identifier: GPL-2.0
/*
 * The trace.dat page store (trace-dat-pages.h). Pages live in chunks of
 * chunk_pages pages, a list per CPU, the page being filled in the last
 * chunk. Until close nothing is written, where the writer before this put
 * every page into a temporary file and copied it back into the output at
 * close: two writes and a read per byte, two thirds of its time.
 *
 * Past the budget, when a CPU needs a chunk, every CPU's chunks but one
 * with a page still being filled are appended, oldest first, to that
 * CPU's temporary file and go to a free list for reuse. A chunk with a page being filled never moves, so the writer's
 * pointer into it stays good. Memory is then bounded by the budget plus
 * one chunk per CPU, and chunks shrink with many CPUs to keep that small.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "vmm/output/dat.h"
#include "vmm/output/dat-pages.h"

struct dat_cpu_pages {
	FILE *spill;			/* the oldest pages, moved out of memory; NULL: none */
	uint8_t **chunk;		/* the newer pages, in order */
	size_t nchunk, chunk_cap;
	size_t last;			/* pages in use in the last chunk, an open one included */
	int open;			/* the last of them is still being filled */
};

struct trace_dat_pages {
	unsigned ncpus;
	size_t chunk_pages;		/* pages per chunk */
	size_t chunks, max_chunks;	/* allocated (free ones included); the budget */
	uint8_t **free;			/* chunks a spill emptied, nfree of max_chunks */
	size_t nfree;
	struct dat_cpu_pages cpu[];
};

#define CHUNK_PAGES_MAX	256u	/* 1 MiB: one write() per chunk at close */
#define CHUNK_PAGES_MIN	4u

size_t trace_dat_pages_mem = TRACE_DAT_PAGES_MEM;

/*
 * A chunk straight from mmap, its pages faulted in by the one call: the
 * store fills a hundred MB of fresh memory for a few million events, and
 * a page fault per 4 KiB page cost a sixth more time. (Huge pages were
 * tried: clearing them made the writer twice as slow here.)
 */
static uint8_t *chunk_alloc(size_t bytes)
{
	uint8_t *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	return m == MAP_FAILED ? NULL : m;
}

int trace_dat_pages_new(struct trace_dat_pages **out, unsigned ncpus)
{
	size_t budget = trace_dat_pages_mem / TRACE_DAT_PAGE_SIZE;
	struct trace_dat_pages *p = calloc(1, sizeof(*p) + ncpus * sizeof(p->cpu[0]));

	if (!p)
		return -ENOMEM;
	p->ncpus = ncpus;
	/* Each CPU's last chunk stays in memory: with many CPUs they must stay small. */
	p->chunk_pages = budget / 4 / (ncpus ? ncpus : 1);
	if (p->chunk_pages > CHUNK_PAGES_MAX)
		p->chunk_pages = CHUNK_PAGES_MAX;
	if (p->chunk_pages < CHUNK_PAGES_MIN)
		p->chunk_pages = CHUNK_PAGES_MIN;
	p->max_chunks = budget / p->chunk_pages ? budget / p->chunk_pages : 1;
	p->free = calloc(p->max_chunks, sizeof(*p->free));
	if (!p->free) {
		free(p);
		return -ENOMEM;
	}
	*out = p;
	return 0;
}

void trace_dat_pages_free(struct trace_dat_pages *p)
{
	if (!p)
		return;
	for (unsigned i = 0; i < p->ncpus; i++) {
		struct dat_cpu_pages *c = &p->cpu[i];

		for (size_t k = 0; k < c->nchunk; k++)
			munmap(c->chunk[k], p->chunk_pages * TRACE_DAT_PAGE_SIZE);
		free(c->chunk);
		if (c->spill)
			fclose(c->spill);
	}
	for (size_t k = 0; k < p->nfree; k++)
		munmap(p->free[k], p->chunk_pages * TRACE_DAT_PAGE_SIZE);
	free(p->free);
	free(p);
}

/* Moves c's full chunks, oldest first, to its temporary file and the free list. */
static int pages_spill_cpu(struct trace_dat_pages *p, struct dat_cpu_pages *c)
{
	size_t bytes = p->chunk_pages * TRACE_DAT_PAGE_SIZE;
	size_t full = c->nchunk && c->last == p->chunk_pages && !c->open ? c->nchunk : c->nchunk - !!c->nchunk;

	if (!full)
		return 0;
	if (!c->spill && !(c->spill = tmpfile()))
		return -(errno ? errno : EIO);
	/* All written before any moves: after an error every chunk is still c's, freed once. */
	for (size_t k = 0; k < full; k++)
		if (fwrite(c->chunk[k], 1, bytes, c->spill) != bytes)
			return -(errno ? errno : EIO);
	for (size_t k = 0; k < full; k++) {
		if (p->nfree < p->max_chunks)
			p->free[p->nfree++] = c->chunk[k];
		else
			munmap(c->chunk[k], bytes), p->chunks--;
	}
	memmove(c->chunk, c->chunk + full, (c->nchunk - full) * sizeof(*c->chunk));
	c->nchunk -= full;
	if (!c->nchunk)
		c->last = 0;
	return 0;
}

/* A chunk for a CPU that needs one: a free one, a new one, or one a spill frees. */
static uint8_t *pages_chunk(struct trace_dat_pages *p, int *err)
{
	uint8_t *chunk;

	if (!p->nfree && p->chunks >= p->max_chunks) {
		for (unsigned i = 0; i < p->ncpus && !*err; i++)
			*err = pages_spill_cpu(p, &p->cpu[i]);
		if (*err)
			return NULL;
	}
	if (p->nfree)
		return p->free[--p->nfree];
	/* Every CPU holds only the chunk it fills: one more, past the budget by at most a chunk each. */
	chunk = chunk_alloc(p->chunk_pages * TRACE_DAT_PAGE_SIZE);
	if (!chunk)
		*err = -ENOMEM;
	else
		p->chunks++;
	return chunk;
}

uint8_t *trace_dat_pages_open(struct trace_dat_pages *p, unsigned cpu, int *err)
{
	struct dat_cpu_pages *c = &p->cpu[cpu];

	*err = 0;
	if (!c->nchunk || c->last == p->chunk_pages) {
		uint8_t *chunk;

		if (c->nchunk == c->chunk_cap) {
			size_t cap = c->chunk_cap ? 2 * c->chunk_cap : 16;
			uint8_t **l = realloc(c->chunk, cap * sizeof(*l));

			if (!l) {
				*err = -ENOMEM;
				return NULL;
			}
			c->chunk = l;
			c->chunk_cap = cap;
		}
		chunk = pages_chunk(p, err);
		if (!chunk)
			return NULL;
		c->chunk[c->nchunk++] = chunk;	/* a spill may have emptied the list: index anew */
		c->last = 0;
	}
	c->open = 1;
	return c->chunk[c->nchunk - 1] + c->last++ * TRACE_DAT_PAGE_SIZE;
}

void trace_dat_pages_commit(struct trace_dat_pages *p, unsigned cpu)
{
	p->cpu[cpu].open = 0;
}

/* The temporary file's pages, copied out through a chunk-sized buffer. */
static int pages_put_spill(struct trace_dat_pages *p, FILE *f, trace_dat_put_fn *put, void *opaque)
{
	size_t bytes = p->chunk_pages * TRACE_DAT_PAGE_SIZE, n;
	uint8_t *buf = malloc(bytes);
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	if (fflush(f) || fseek(f, 0, SEEK_SET))
		rc = -(errno ? errno : EIO);
	while (!rc && (n = fread(buf, 1, bytes, f)) > 0)
		put(opaque, buf, n);
	if (!rc && ferror(f))
		rc = -(errno ? errno : EIO);
	free(buf);
	return rc;
}

int trace_dat_pages_put(struct trace_dat_pages *p, unsigned cpu, trace_dat_put_fn *put, void *opaque)
{
	struct dat_cpu_pages *c = &p->cpu[cpu];
	int rc = 0;

	if (c->spill && (rc = pages_put_spill(p, c->spill, put, opaque)))
		return rc;
	for (size_t k = 0; k < c->nchunk; k++) {
		size_t pages = k + 1 < c->nchunk ? p->chunk_pages : c->last - c->open;

		put(opaque, c->chunk[k], pages * TRACE_DAT_PAGE_SIZE);
	}
	return 0;
}
