/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `--handshake`: the KVM paravirtual features a guest was offered and
 * which of them it turned on, when, on which vCPU, from which function and
 * with which value, built from the trace's own kvm:cpuid and kvm:msr
 * events (vmevent.h), so that every line can be found in the trace.
 * Pure code: it sees events in timestamp order and prints a table.
 */
#ifndef VMM_OUTPUT_HANDSHAKE_H
#define VMM_OUTPUT_HANDSHAKE_H

#include <stdio.h>

#include "vmm/output/event.h"
#include "vmm/output/writer.h"

struct handshake;

/* NULL when out of memory. */
struct handshake *handshake_new(void);
/* One event of the trace, in timestamp order; all but kvm:cpuid, kvm:msr and kvm:hypercall are ignored. */
void handshake_event(struct handshake *h, const struct ring_event *ev);
/*
 * The table, to out: a header line with what the guest was offered, then
 * one line per feature. meta names functions and turns TSC values into
 * the trace's seconds. why_not, when not NULL, says why no MSR event could
 * be seen (this host's KVM cannot deliver them): printed instead of rows
 * that would all say "no".
 */
void handshake_print(const struct handshake *h, const struct trace_meta *meta, const char *why_not,
		     FILE *out);
/*
 * arm64's table: the SMCCC calls the guest made (kvm:hypercall), one line
 * per function and what it asked about, first time, vCPU, the function
 * that made it and the answer. why_not: as for handshake_print, for
 * kvm:hypercall.
 */
void handshake_print_smccc(const struct handshake *h, const struct trace_meta *meta, const char *why_not,
			   FILE *out);
void handshake_free(struct handshake *h);

#endif
