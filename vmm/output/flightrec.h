/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `--flight-recorder N`: the last N events of a run (function and VM
 * events, every CPU), kept in memory instead of written, and printed only
 * when the guest dies (docs/FLIGHT-RECORDER.md). Pure code: it sees the
 * events in timestamp order and prints them in the text trace's layout.
 */
#ifndef VMM_OUTPUT_FLIGHTREC_H
#define VMM_OUTPUT_FLIGHTREC_H

#include <stdint.h>
#include <stdio.h>

#include "vmm/output/event.h"
#include "vmm/output/writer.h"

#define FLIGHTREC_MAX 1000000u		/* events: 48 MB of memory at most */

struct flightrec;

/* Keeps the last n (1..FLIGHTREC_MAX) events; NULL when out of memory. */
struct flightrec *flightrec_new(unsigned n);
void flightrec_event(struct flightrec *fr, const struct ring_event *ev);
/* Events seen in all. */
uint64_t flightrec_seen(const struct flightrec *fr);
/*
 * A header line, then the kept events, oldest first, as the text trace
 * prints them (meta names functions and turns TSC into seconds). Returns
 * how many were printed.
 */
unsigned flightrec_print(const struct flightrec *fr, const struct trace_meta *meta, FILE *out);
void flightrec_free(struct flightrec *fr);

#endif
