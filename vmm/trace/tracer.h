/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A trace session on a booting guest: symbols and slots from the image, the
 * stub and its rings, the slots' phases around the guest's ftrace_init, the
 * consumer thread, and the output.
 */
#ifndef VMM_TRACER_H
#define VMM_TRACER_H

#include <stdint.h>
#include <stdio.h>

#include "vmm/util/error.h"

struct kernel_image;
struct ring_event;
struct trace_meta;
struct trace_writer_ops;
struct host;
struct tracer;

/*
 * lossless: a full ring makes the vCPU wait for the host (doorbell);
 * overwrite: the oldest records are overwritten, losses counted exactly;
 * exit: a VM exit for every event (the cost baseline of breakpoint tracers).
 */
enum trace_mode { TRACE_LOSSLESS, TRACE_OVERWRITE, TRACE_EXIT };

struct tracer_config {
	const char **include;		/* --trace globs */
	unsigned n_include;
	const char **exclude;		/* --notrace globs */
	unsigned n_exclude;
	const char *output;		/* -o FILE; NULL: stdout */
	uint64_t buffer_size;		/* bytes of records per CPU */
	enum trace_mode mode;
	const char *stop_at;		/* function name or NULL */
	const char *system_map;		/* --system-map FILE or NULL */
	const char *btf;		/* --btf FILE or NULL: the image's own .BTF */
	const struct trace_writer_ops *format;	/* -o's format (NULL: text) */
	uint32_t events;		/* --event: VMEV_MASK() bits (vmevent.h) */
	uint32_t events_implied;	/* those of them only --handshake asked for: no warning where missing */
	int args;			/* --args: each call's arguments (fnargs.h) */
	int graph;			/* --graph: entries and returns, as function_graph prints them */
	int retval;			/* --retval: with the return values (funcgraph-retval) */
	unsigned graph_depth;		/* --graph-depth N: calls nested deeper are not printed; 0: all */
	const uint32_t (*msrs)[2];	/* kvm:msr's MSR ranges (first, last) */
	unsigned n_msrs;
	/*
	 * Sees every event of the boot's own trace, in timestamp order, on the
	 * consumer's thread, whether it is written or not (--handshake).
	 */
	void (*tap)(void *opaque, const struct ring_event *ev);
	void *tap_opaque;
	int no_output;			/* the boot's events go to the tap only: no -o, nothing on stdout */
	/*
	 * Stop the guest, as a panic, when it calls emergency_restart(): a
	 * panic with panic=-1 reboots through it at once, before a console
	 * that is not up yet could say why (--flight-recorder).
	 */
	int stop_on_panic;
	/* A control socket may attach clients, and so slots, while the guest runs. */
	int live;
	/*
	 * The consumer thread leaves the rings alone: they are drained only
	 * at doorbells and at the end, so a lossless ring fills and rings at
	 * every wrap (tests prove the doorbell path with exact counts:
	 * VMMTRACE_DRAIN=doorbell, docs/TESTING.md).
	 */
	int drain_at_doorbells;
};

/* After the kernel is loaded, before the vCPUs exist: symbols, stub, slots. */
int tracer_create(struct tracer **out, struct host *host, const struct kernel_image *img,
		  const struct tracer_config *cfg, struct errbuf *err);
/* After the vCPUs exist, before they run: breakpoints, consumer thread. */
int tracer_start(struct tracer *t, struct errbuf *err);
/* After the vCPUs stopped: last drain, output. Returns 0 or -errno. */
int tracer_finish(struct tracer *t, struct errbuf *err);
/*
 * -errno of the first failed write of the trace output (-o or stdout), or 0.
 * Such a failure stops the guest cleanly (VM_STOP_HOST_FAILURE, the message
 * "cannot write FILE: why"), and tracer_start/tracer_finish fail with the
 * same message.
 */
int tracer_output_error(const struct tracer *t);
/* What the trace's writers are told of it (symbols, clock, CPUs); valid from tracer_start. */
void tracer_meta(const struct tracer *t, struct trace_meta *m);
/* Why VM events of kind (vmevent.h) are not recorded on this host, or NULL when they are. */
const char *tracer_vmev_missing(const struct tracer *t, unsigned kind);
/* The closing account (events, drops, anything the guest did wrong) to out. */
void tracer_summary(struct tracer *t, FILE *out);
/* After the VM is destroyed. */
void tracer_destroy(struct tracer *t);

/* Live changes, from the control socket (any thread but a vCPU's). */
struct filter;
struct trace_client;
/* What a client asks for beside its slots and VM events. */
struct trace_client_opts {
	int args;			/* each call's arguments (--args) */
	int graph;			/* returns too, function_graph's layout (--graph; text only) */
	int retval;			/* with graph: return values (--retval) */
	unsigned graph_depth;		/* with graph: calls at most this deep (--graph-depth); 0: all */
};
/*
 * A new client writing to out in format wops (NULL: text), as opts asks
 * (NULL: nothing more); out is closed with it when own_out, and also when
 * this fails.
 */
int tracer_client_new(struct tracer *t, FILE *out, int own_out, const struct trace_writer_ops *wops,
		      const struct trace_client_opts *opts, struct trace_client **c, struct errbuf *err);
void tracer_client_free(struct trace_client *c);
/* -errno of c's first failed write (nothing is written after it), or 0; c may be NULL. */
int tracer_client_error(const struct trace_client *c);
/* The VM events (VMEV_MASK bits) client c gets; before it is attached. */
void tracer_client_set_events(struct trace_client *c, uint32_t events);
/*
 * For an attach reply: which of the VM events asked for (VMEV_MASK bits)
 * this guest records, and why not the others ("" when nothing was asked).
 */
void tracer_vmev_describe(struct tracer *t, uint32_t events, char *msg, size_t len);
/* Gives client c the slots matching f (none with NULL); msg gets a one-line account. */
int tracer_attach(struct tracer *t, const struct filter *f, struct trace_client *c,
		  char *msg, size_t len, struct errbuf *err);
/*
 * c's slots are released and its events so far written to its output; free
 * it after. Returns -errno of the first failed write of its window, or 0.
 */
int tracer_detach_client(struct tracer *t, struct trace_client *c);
/* Releases the slots matching f (all with NULL) from every client. */
int tracer_detach_globs(struct tracer *t, const struct filter *f, char *msg, size_t len);
/* A snapshot for a live progress display; cheap, from any thread. */
struct tracer_progress {
	uint64_t events;		/* drained so far */
	uint64_t vm_events;		/* VM events recorded so far */
	uint64_t dropped;		/* by the stub, or lost */
	uint64_t guest_ns;		/* guest time of the newest event drained */
	const char *phase;		/* "early boot", "ftrace_init", "running" */
};
void tracer_progress(struct tracer *t, struct tracer_progress *p);
/* Multi-line status report to out. */
void tracer_status(struct tracer *t, FILE *out);
/* The slots of the functions f selects, a line each (patch_describe), at most 64. */
void tracer_status_slots(struct tracer *t, const struct filter *f, FILE *out);
/* Threads that read the tracer's shared tables (liburcu) register first. */
void tracer_rcu_register(void);
void tracer_rcu_unregister(void);

/* How many threads registered with liburcu so far (none when nothing is traced). */
unsigned long tracer_rcu_registrations(void);

#endif
