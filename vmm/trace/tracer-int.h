/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tracer's state, shared by tracer.c (set-up, output), tracer-run.c
 * (while the guest runs), tracer-client.c (who gets which events) and
 * tracer-change.c (changing slots and routes in a paused guest).
 *
 * Threads: vCPUs (doorbells, breakpoints), the consumer, the control
 * socket, main. The client table and the routing table are read under
 * liburcu's read lock and replaced by writers holding change_lock, so the
 * consumer and the doorbells never wait for a change.
 */
#ifndef VMM_TRACER_INT_H
#define VMM_TRACER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "vmm/trace/filter.h"
#include "vmm/image/mcount.h"
#include "vmm/trace/patch.h"
#include "vmm/trace/ring.h"
#include "vmm/image/symtab.h"
#include "vmm/trace/task.h"
#include "vmm/trace/trace-buf.h"
#include "vmm/output/writer.h"
#include "vmm/trace/tracer.h"
#include "vmm/guest/guest.h"
#include "vmm/guest/stub-geom.h"
#include "vmm/host/host-exits.h"

struct trace_client {
	unsigned id;
	struct trace_buf buf;		/* its events, until they are safe to emit in order */
	const struct trace_writer_ops *wops;	/* its output format */
	struct trace_writer *w;		/* open from tracer_start (or attach) to detach */
	atomic_int werr;		/* -errno of the first failed write (any thread reads it) */
	uint64_t written;		/* events handed to the writer */
	FILE *out;
	int own_out;			/* out is closed with the client */
	uint32_t events;		/* VM events it asked for (VMEV_MASK bits) */
	int args;			/* its writer gets the prototypes (--args) */
	int graph, retval;		/* it gets returns too (--graph), with their values (--retval) */
	unsigned graph_depth;		/* --graph-depth: 0 all */
	void (*tap)(void *opaque, const struct ring_event *ev);	/* tracer_config.tap */
	void *tap_opaque;
};

struct route {
	uint64_t va;			/* the slot: what the stub records */
	uint64_t func;			/* its function: what every output names */
	uint64_t clients;
};

struct route_table {
	size_t count;
	struct route r[];
};

struct tracer {
	struct host *host;
	const struct guest_arch *guest;	/* the guest's stub and facts */
	struct stub_geom geom;		/* the stub's data as first laid out */
	int hooked;			/* our host_hooks are installed */
	struct tracer_config cfg;
	struct symtab syms;
	struct mcount_table mt;
	struct stub_region stub;
	struct task_layout task;	/* what the stub records of the task and context */
	struct kernel_btf kbtf;		/* the kernel's BTF, when it has one that fits */
	struct fnargs *fnargs;		/* prototypes for --args (from kbtf; created at first use) */
	pthread_mutex_t fnargs_lock;
	unsigned nrings;
	uint64_t nrecords;
	struct ring_view *rings;
	uint64_t tsc_khz, tsc_base;

	/* Writers (attach, detach, hand-over) hold change_lock, after vm_pause. */
	pthread_mutex_t change_lock;
	struct patch_set ps;
	struct trace_client *clients[PATCH_MAX_CLIENTS];	/* RCU */
	struct route_table *routes;				/* RCU */
	/* pause: first kick to resume; held: every vCPU stopped to resume. */
	uint64_t pause_last_ns, pause_worst_ns, held_last_ns, held_worst_ns, changes;

	uint64_t stub_entry;
	uint64_t doorbell_pc;		/* the stub's doorbell (its two instructions), where the host put it */
	uint64_t shadow_tables;		/* --graph's shadow stacks now (a power of two; 0: no room for any) */
	uint8_t *shadow_host;		/* ... and where they are */
	int graph;			/* a client asked for returns: the stub hooks them (never undone) */
	uint64_t ftrace_init;		/* 0: the kernel has no ftrace to hand over to */
	uint64_t ftrace_ret;
	/*
	 * The guest's own ftrace changing its slots (ftrace_modify_all_code,
	 * every arch's way, after the hand-over): held slots go back to its
	 * bytes on entry, and are taken again when it returns (to
	 * guest_ftrace_ret, on whichever vCPU).
	 */
	uint64_t guest_ftrace;
	uint64_t guest_ftrace_ret;
	uint64_t guest_ftrace_changes;	/* how many times */
	size_t guest_chained_max, guest_given_max;	/* held slots on to its tracer, given to it: the most at once */
	struct patch_result guest_release, guest_retake;	/* the last time's */
	uint64_t free_initmem;
	uint64_t stop_at;
	uint64_t emergency_restart;	/* cfg.stop_on_panic: its address, or 0 */

	pthread_t consumer;
	int consumer_running;
	atomic_int consumer_stop;
	_Atomic uint64_t max_tsc;	/* newest timestamp drained */
	uint64_t round_max;

	atomic_ulong events;		/* drained from the rings */
	atomic_ulong unrouted;		/* drained for a slot no client holds any more */
	atomic_ulong doorbells;
	atomic_ulong bad_doorbells;
	uint64_t early_events;		/* drained when the guest entered ftrace_init */
	uint64_t ftrace_init_tsc;	/* the guest's TSC then (0: not yet) */
	struct patch_result handoff_restore, handoff_enable;
	int handed_over;
	size_t init_dropped;
	struct trace_client *boot_client;
	int output_stopped;		/* the consumer stopped the guest: the output failed */

	/* VM events (tracer-vmev.c). */
	_Atomic uint32_t vmev_want;	/* union of the clients' events */
	uint32_t vmev_offered;		/* kinds this host's KVM can deliver */
	const char *vmev_why_no_hypercall;	/* the host's reason, when it cannot */
	atomic_int vmev_inflight;	/* exits between their TSC read and their buffers */
	atomic_ulong vm_events;
	uint64_t vmev_seq[HOST_MAX_CPUS];	/* per vCPU; only its thread writes it */
	/*
	 * The current exit's guest TSC and RIP, per vCPU (its thread only):
	 * read once for the exit's kvm:exit event, reused by the port, MMIO
	 * or MSR event of the same exit.
	 */
	struct { uint64_t tsc, rip; int valid; } vmev_stamp[HOST_MAX_CPUS];
};

/* tracer-run.c */
void tracer_doorbell(void *opaque, uint32_t ring);
/* Drains every ring once (into the router); returns 1 if one stopped at a record in flight. */
int tracer_drain_all(struct tracer *t, int final);
int tracer_consumer_start(struct tracer *t, struct errbuf *err);
void tracer_consumer_stop(struct tracer *t);
/* The breakpoints the current phase needs, on one vCPU. */
int tracer_set_breakpoints(struct tracer *t, unsigned cpu, struct errbuf *err);
/* Emits what is safe (or everything) of every client's buffer. */
void tracer_flush_clients(struct tracer *t, int all);

/* Whether pc lies in the stub's code. */
bool tracer_pc_in_stub(const struct tracer *t, uint64_t pc);
/* host_hooks.debug_exit: an execution breakpoint hit at pc. */
void tracer_breakpoint(void *opaque, unsigned cpu, uint64_t pc);

/* tracer.c: bigger rings where the host has room for them only from the hand-over on. */
void tracer_rings_move(struct tracer *t);

/*
 * --graph's shadow stacks (vmm/guest/stub-geom.h): where the stub's first
 * place is small (QEMU: the image's padding), a boot with --graph gets a
 * few, at most a quarter of that room (the boot task is the only one until
 * the hand-over), and every trace all of them where the rings move
 * (tracer_rings_move), if they do.
 *
 * tracer-shadow.c: all of them at shadow (host) / va, from the few of the stub's first place. */
void tracer_shadow_move(struct tracer *t, uint8_t *shadow, uint64_t va);
/* ... -v: how many are held, and the farthest a task went for one. */
void tracer_shadow_report(struct tracer *t);

/* tracer-client.c */
/* ring_batch_fn: hands a ring's events to the clients holding their slots. */
int tracer_route(void *opaque, struct ring_event *ev, size_t n, size_t *taken);

/* tracer-vmev.c */
/* Probes what the host offers of cfg->events, sets up the MSR filter; warns once for the rest. */
int tracer_vmev_setup(struct tracer *t, struct errbuf *err);
/* host_hooks.exit */
void tracer_vm_exit(void *opaque, unsigned cpu, const struct vm_exit_info *x);
/* After a client came or went (change_lock held): which kinds anyone wants. */
void tracer_vmev_recount(struct tracer *t);
/* Records that describe the guest at its start (kvm:cpuid); in tracer_start. */
void tracer_vmev_boot_records(struct tracer *t);
/* The closing account of VM events, when any were asked for. */
void tracer_vmev_summary(struct tracer *t, FILE *out);

/* tracer-change.c */
/*
 * A change set: with every vCPU paused and the rings drained, fn changes
 * the claims, then the slots' bytes and the routes follow. fn returns 0 or
 * -errno; msg (if not NULL) gets a one-line account.
 */
typedef int tracer_change_fn(struct tracer *t, void *arg);
int tracer_change(struct tracer *t, int self, tracer_change_fn *fn, void *arg,
		  struct patch_result *res);
/* host_hooks.stop: a clean stop once no vCPU is inside the stub. */
void tracer_stop_hook(void *opaque, int self, enum vm_stop_reason reason, const char *msg);
/* The prototypes for --args, made at first use (and its warning when the kernel has no BTF). */
struct fnargs *tracer_fnargs(struct tracer *t);
int tracer_client_new(struct tracer *t, FILE *out, int own_out, const struct trace_writer_ops *wops,
		      const struct trace_client_opts *opts, struct trace_client **out_client, struct errbuf *err);
/* Opens c's writer once the guest's clock is known (tracer_start, or at attach). */
int tracer_client_open(struct tracer *t, struct trace_client *c, struct errbuf *err);
/* trace_emit_fn: hands one event to the client's writer. */
int tracer_client_emit(void *opaque, const struct ring_event *ev);
/* After a round: what the writer has so far should survive a kill. */
void tracer_client_flush(struct trace_client *c);
/* The one line for the boot client's failed output rc: what failed, where. */
void tracer_output_msg(const struct tracer *t, int rc, char *buf, size_t len);
/* Emits what is left, closes the writer with the closing account. */
int tracer_client_close(struct tracer *t, struct trace_client *c, struct errbuf *err);
/* The drop counts of every ring (for summaries and writers' closing accounts). */
void tracer_ring_totals(struct tracer *t, uint64_t *lost, uint64_t *stub_dropped, uint64_t *rejected);
void tracer_client_free(struct trace_client *c);
void tracer_rcu_register(void);
void tracer_rcu_unregister(void);

#endif
