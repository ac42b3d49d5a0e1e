/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The trace.dat writer's page store: each CPU's finished ring-buffer pages,
 * in order, until the writer closes and each CPU's pages go out in one
 * piece (trace.dat wants them contiguous per CPU). They are kept in memory
 * so that each byte is written once; past a budget (TRACE_DAT_PAGES_MEM)
 * the older pages move to a temporary file per CPU and are copied from it
 * at close, so a trace of any length runs in bounded memory.
 */
#ifndef VMM_OUTPUT_DAT_PAGES_H
#define VMM_OUTPUT_DAT_PAGES_H

#include <stddef.h>
#include <stdint.h>

/*
 * Bytes of pages held in memory, all CPUs, before the older ones move out:
 * 256 MiB, about 9 M events (28.5 bytes each on a boot). A variable so
 * that tests can make a small trace spill.
 */
#define TRACE_DAT_PAGES_MEM	(256u << 20)
extern size_t trace_dat_pages_mem;

struct trace_dat_pages;

/* A store for ncpus CPUs; -ENOMEM. */
int trace_dat_pages_new(struct trace_dat_pages **out, unsigned ncpus);
void trace_dat_pages_free(struct trace_dat_pages *p);
/*
 * A new page for cpu, after its previous one was committed: TRACE_DAT_PAGE_SIZE
 * bytes of undefined content, which stay where they are until committed.
 * NULL with *err set to -errno (no memory, or the temporary file failed).
 */
uint8_t *trace_dat_pages_open(struct trace_dat_pages *p, unsigned cpu, int *err);
/* The page cpu has open is whole: it joins cpu's pages. */
void trace_dat_pages_commit(struct trace_dat_pages *p, unsigned cpu);

typedef void trace_dat_put_fn(void *opaque, const void *buf, size_t len);
/*
 * Hands cpu's committed pages to put, oldest first, in as few pieces as it
 * has; 0 or -errno (reading the temporary file back).
 */
int trace_dat_pages_put(struct trace_dat_pages *p, unsigned cpu, trace_dat_put_fn *put, void *opaque);

#endif
