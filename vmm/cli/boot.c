// SPDX-License-Identifier: GPL-2.0
/*
 * The one boot driver: vmmtrace boot on any host behind vmm/host/host.h.
 * The host prepares and runs the guest; this file makes the tracer and
 * its taps (--handshake, --flight-recorder), the control socket, the
 * progress line, the --hang watchdog and the sandbox, runs the guest, and
 * turns why it stopped into the exit status (README, "Exit status").
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vmm/cli/boot.h"
#include "vmm/cli/cmd.h"
#include "vmm/cli/progress.h"
#include "vmm/cli/sandbox.h"
#include "vmm/control/control.h"
#include "vmm/guest/stub-geom.h"
#include "vmm/image/image.h"
#include "vmm/image/symtab.h"
#include "vmm/kvm/host-kvm.h"
#include "vmm/output/flightrec.h"
#include "vmm/output/handshake.h"
#include "vmm/output/writer.h"
#include "vmm/qemu/host-qemu.h"
#include "vmm/trace/tracer.h"
#include "vmm/util/log.h"

int boot_exit_status(enum vm_stop_reason reason, int signo)
{
	switch (reason) {
	case VM_STOP_NONE:
	case VM_STOP_GUEST_EXIT:
	case VM_STOP_REQUESTED:
		return EXIT_OK;
	case VM_STOP_SIGNAL:
		return EXIT_SIGNAL_BASE + signo;
	case VM_STOP_GUEST_PANIC:
		return EXIT_GUEST_PANIC;
	case VM_STOP_CPU_SHUTDOWN:
		return EXIT_TRIPLE_FAULT;
	case VM_STOP_UNEMULATED:
		return EXIT_KVM_INTERNAL;
	case VM_STOP_GUEST_HANG:
		return EXIT_GUEST_HANG;
	case VM_STOP_HOST_FAILURE:
	default:
		return EXIT_FAILURE_RUN;
	}
}

/*
 * The trace's last events and closing account. A failed output (disk full,
 * file too large, I/O error) is one line: the stop's, when the tracer
 * stopped the guest for it, and gets its own status unless the guest's end
 * says more (a panic, a signal).
 */
static int boot_finish_trace(struct tracer *t, const char *stop_msg, int status)
{
	struct errbuf err = { "" };

	if (tracer_finish(t, &err) && strcmp(err.msg, stop_msg))
		cmd_fail("boot", EXIT_FAILURE_RUN, "%s", err.msg);
	if (tracer_output_error(t))
		return status == EXIT_OK || status == EXIT_FAILURE_RUN ? EXIT_TRACE_WRITE : status;
	if (err.msg[0] && status == EXIT_OK)
		return EXIT_FAILURE_RUN;
	return status;
}

/* Confine the process once the guest, its files and its threads exist (docs/SANDBOX.md). */
static int boot_sandbox(int no_sandbox, pid_t child)
{
	struct errbuf err = { "" };
	const char *why, *what = "";
	unsigned n = 0;
	int rc;

	if (no_sandbox) {
		log_info("sandbox off (--no-sandbox)");
		return 0;
	}
	if (!sandbox_available(&why)) {
		log_info("sandbox off: %s", why);
		return 0;
	}
	if (sandbox_enter(child, &n, &err))
		return cmd_fail("boot", EXIT_FAILURE_RUN, "%s (--no-sandbox runs without it)", err.msg);
	log_info("sandbox on: seccomp filter on every thread, %u system calls allowed", n);
	if ((rc = sandbox_selftest(&what)) <= 0)
		log_warn("sandbox self-test: %s %s", what, rc ? strerror(-rc) : "was allowed");
	return 0;
}

/* What sees the boot's events besides its trace file (tracer_config.tap). */
struct boot_taps {
	struct handshake *hs;
	struct flightrec *fr;
	/* VMMTRACE_TEE_TEXT (docs/TESTING.md): the same events as text too, to compare with its -o. */
	FILE *tee;
	struct trace_writer *tee_w;
	const struct boot_opts *o;
	struct tracer *t;
};

/* The tee's writer opens at the first event, when the guest's clock is known. */
static void boot_tee(struct boot_taps *taps, const struct ring_event *ev)
{
	const struct trace_writer_ops *ops = taps->o->tcfg.graph ? &trace_writer_graph : &trace_writer_text;
	struct trace_meta meta;
	struct errbuf err;

	if (!taps->tee_w) {
		tracer_meta(taps->t, &meta);
		meta.graph = taps->o->tcfg.graph;
		meta.graph_retval = taps->o->tcfg.retval;
		meta.graph_depth = taps->o->tcfg.graph_depth;
		if (ops->open(&taps->tee_w, taps->tee, &meta, &err)) {
			fclose(taps->tee);
			taps->tee = NULL;
			return;
		}
	}
	ops->event(taps->tee_w, ev);
}

static void boot_tap(void *opaque, const struct ring_event *ev)
{
	struct boot_taps *taps = opaque;

	if (taps->hs)
		handshake_event(taps->hs, ev);
	if (taps->fr)
		flightrec_event(taps->fr, ev);
	if (taps->tee)
		boot_tee(taps, ev);
}

/*
 * --hang: a thread that stops the guest once no event (function or VM
 * event) was recorded for secs seconds. Started before the sandbox.
 */
struct hang_watch {
	unsigned secs;
	struct host *host;
	struct tracer *t;
	pthread_t thread;
	int running;
	atomic_int stop;
};

static void *hang_main(void *arg)
{
	struct hang_watch *h = arg;
	struct tracer_progress p;
	uint64_t last = UINT64_MAX;
	unsigned quiet_ms = 0;
	char msg[128];

	while (!atomic_load(&h->stop) && quiet_ms < h->secs * 1000u) {
		struct timespec ts = { 0, 250 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		tracer_progress(h->t, &p);
		quiet_ms = p.events + p.vm_events == last ? quiet_ms + 250 : 0;
		last = p.events + p.vm_events;
	}
	if (!atomic_load(&h->stop)) {
		snprintf(msg, sizeof(msg), "the guest made no progress for %u s (--hang): no event recorded", h->secs);
		/* A clean stop: QEMU's vCPUs stand where they hung, for the recorder to read. */
		h->host->ops->stop(h->host, HOST_NO_CPU, VM_STOP_GUEST_HANG, msg);
	}
	return NULL;
}

static void hang_stop(struct hang_watch *h)
{
	if (!h->running)
		return;
	atomic_store(&h->stop, 1);
	pthread_join(h->thread, NULL);
	h->running = 0;
}

/*
 * --flight-recorder: when the guest died (panic, triple fault, an
 * instruction the host could not run, hang), its last events and every
 * vCPU's registers, its PC symbolised; nothing when it ended otherwise.
 */
static void boot_flight_report(struct host *h, struct tracer *t, struct flightrec *fr, int status)
{
	struct trace_meta meta;
	char regs[1536];

	if (status != EXIT_GUEST_PANIC && status != EXIT_TRIPLE_FAULT && status != EXIT_KVM_INTERNAL &&
	    status != EXIT_GUEST_HANG)
		return;
	tracer_meta(t, &meta);
	flightrec_print(fr, &meta, stderr);
	for (unsigned i = 0; i < h->ncpus; i++) {
		uint64_t pc, off = 0;
		const struct symbol *s;

		h->ops->vcpu_registers(h, i, regs, sizeof(regs), &pc);
		s = pc ? symtab_find_addr(meta.syms, pc, &off) : NULL;
		if (s && off < symtab_extent(meta.syms, s))
			fprintf(stderr, "vmmtrace: flight recorder: vCPU %u at %s+0x%" PRIx64 ":\n%s", i,
				symtab_name(meta.syms, s), off, regs);
		else
			fprintf(stderr, "vmmtrace: flight recorder: vCPU %u:\n%s", i, regs);
	}
}

/* Whether the boot needs the tracer: its slots, breakpoints, events or control socket. */
static int boot_traced(const struct boot_opts *o)
{
	return o->tcfg.n_include || o->control || o->tcfg.stop_at || o->tcfg.events;
}

/* What the chosen host cannot do of what was asked: one line, exit status 2 (1: QEMU for lack of KVM). */
static int boot_check_host(const struct boot_opts *o, const struct boot_run *r, struct host *h)
{
	int status = r->kvm_missing ? EXIT_FAILURE_RUN : EXIT_BAD_INPUT;
	const char *why = r->kvm_missing ? "cannot open /dev/kvm, and the QEMU host" : "the QEMU host (--host qemu)";

	if (h->exits)
		return 0;
	if (o->events_given)
		return cmd_fail("boot", status, "%s reports no VM exits: --event records none there (docs/HOSTS.md)", why);
	if (o->flight_recorder && !o->tcfg.n_include)
		return cmd_fail("boot", status, "%s reports no VM exits: --flight-recorder keeps function events there; "
				"name some with --trace", why);
	return 0;
}

/* The tracer, when the boot needs one, with the taps. */
static int boot_trace_setup(const struct boot_opts *o, struct boot_taps *taps, struct host *h,
			    const struct kernel_image *img, struct tracer **t)
{
	struct tracer_config cfg = o->tcfg;
	struct errbuf err = { "" };
	int rc;

	*t = NULL;
	cfg.live = o->control != NULL;
	if (!h->exits) {
		/* Nothing to record of the VM events asked for by --handshake or --flight-recorder's default. */
		cfg.events = 0;
		cfg.n_msrs = 0;
	}
	if (!boot_traced(o))
		return 0;
	if (getenv("VMMTRACE_TEE_TEXT") && !(taps->tee = fopen(getenv("VMMTRACE_TEE_TEXT"), "w")))
		return cmd_fail("boot", EXIT_BAD_INPUT, "VMMTRACE_TEE_TEXT=%s: %s", getenv("VMMTRACE_TEE_TEXT"),
				strerror(errno));
	taps->o = o;
	if (taps->hs || taps->fr || taps->tee) {
		cfg.tap = boot_tap;
		cfg.tap_opaque = taps;
	}
	rc = tracer_create(t, h, img, &cfg, &err);
	taps->t = *t;
	if (rc && h->ops->stopping(h))
		return 0;	/* the host is gone or going: its run says why */
	if (rc)
		return cmd_fail("boot", rc == -ENOMEM ? EXIT_FAILURE_RUN : EXIT_BAD_INPUT, "%s", err.msg);
	return 0;
}

/* The guest's end: its line, the trace's last events, the recorder and the handshake table. */
static int boot_end(const struct boot_opts *o, struct host *h, struct tracer *t, struct boot_taps *taps,
		    int status)
{
	const char *msg = h->ops->stop_msg(h);

	if (status != EXIT_OK || t || o->verbose)
		fprintf(stderr, "vmmtrace: %s\n", msg);
	if (o->verbose && h->ops->report)
		h->ops->report(h, stderr);
	/* None without a tracer: an untraced guest pays nothing for tracing (tests/kvm/hooks.sh). */
	log_info("liburcu reader registrations: %lu", tracer_rcu_registrations());
	if (!t)
		return status;
	status = boot_finish_trace(t, msg, status);
	if (taps->tee_w)
		(o->tcfg.graph ? &trace_writer_graph : &trace_writer_text)->close(taps->tee_w, NULL, NULL);
	tracer_summary(t, stderr);
	if (taps->fr)
		boot_flight_report(h, t, taps->fr, status);
	if (taps->hs && h->exits) {
		struct trace_meta meta;

		tracer_meta(t, &meta);
		/* CPUID offered: x86's handshake; without it, arm64's calls. */
		if (!tracer_vmev_missing(t, VMEV_CPUID))
			handshake_print(taps->hs, &meta, tracer_vmev_missing(t, VMEV_MSR), stderr);
		else
			handshake_print_smccc(taps->hs, &meta, tracer_vmev_missing(t, VMEV_HYPERCALL), stderr);
	} else if (taps->hs) {
		fprintf(stderr, "vmmtrace: --handshake: no table: the %s host reports no VM exits (no kvm:cpuid, no "
			"kvm:msr), and under TCG the guest finds no KVM to negotiate with; its functions are traced "
			"with --trace 'kvm_*'\n", h->name);
	}
	return status;
}

/* The guest runs, watched, until it stops. */
static int boot_go(const struct boot_opts *o, struct host *h, struct tracer *t, struct boot_taps *taps)
{
	struct errbuf err = { "" };
	struct control *control = NULL;
	struct progress *progress = NULL;
	struct hang_watch hang = { .secs = o->hang, .host = h, .t = t };
	enum vm_stop_reason reason;
	int status, signo = 0;

	if (h->ops->start(h, &err) || (t && tracer_start(t, &err))) {
		/* The guest went first (QEMU died): its run says why, the trace so far is written. */
		if (h->ops->stopping(h)) {
			reason = h->ops->run(h, &signo);
			return boot_end(o, h, t, taps, boot_exit_status(reason, signo));
		}
		return cmd_fail("boot", t && tracer_output_error(t) ? EXIT_TRACE_WRITE : EXIT_FAILURE_RUN, "%s",
				err.msg);
	}
	if (o->control && control_start(&control, h, t, o->control, o->attach_backlog, &err))
		return cmd_fail("boot", EXIT_BAD_INPUT, "%s", err.msg);
	/* A terminal's progress line, unless -q. */
	if (t && !o->quiet && progress_start(&progress, t))
		log_warn("no progress line: out of memory or threads");
	if (t && hang.secs) {
		hang.running = !pthread_create(&hang.thread, NULL, hang_main, &hang);
		if (!hang.running)
			log_warn("--hang: no watchdog thread: a hang is not caught");
	}
	if ((status = boot_sandbox(o->no_sandbox, h->child))) {
		hang_stop(&hang);
		progress_stop(progress);
		control_stop(control);
		return status;
	}
	reason = h->ops->run(h, &signo);
	status = boot_exit_status(reason, signo);
	hang_stop(&hang);
	progress_stop(progress);
	/* Its attached clients end first, their windows' events written. */
	control_stop(control);
	return boot_end(o, h, t, taps, status);
}

int boot_run(const struct boot_opts *o, const struct boot_run *r)
{
	struct host_boot b = {
		.kernel = o->kernel, .img = r->img, .initrd = o->initrd, .initrd_data = r->initrd,
		.initrd_size = r->initrd_size, .cmdline_replace = o->cmdline_replace, .cmdline_extra = o->cmdline_extra,
		.ncpus = o->ncpus, .mem = o->mem, .compat = o->compat, .fast_boot = o->fast_boot,
		.deterministic = o->deterministic, .firmware = o->firmware,
		.console_fd = r->console_fd, .verbose = o->verbose, .traced = boot_traced(o),
		.stub_bytes = r->img->unplaced ? 0 : stub_geom_region_bytes(o->ncpus, o->tcfg.buffer_size),
	};
	struct boot_taps taps = { 0 };
	struct errbuf err = { "" };
	struct tracer *t = NULL;
	struct host *h = NULL;
	int rc, status;

	rc = r->qemu ? host_qemu_create(&h, &b, &err) : host_kvm_create(&h, &b, &err);
	/* What was asked cannot be (host.h, struct host_boot), or the host failed. */
	if (rc)
		return cmd_fail("boot", rc == -ENOEXEC || rc == -EINVAL || rc == -EOPNOTSUPP || rc == -E2BIG ?
				EXIT_BAD_INPUT : EXIT_FAILURE_RUN, "%s", err.msg);
	if ((status = boot_check_host(o, r, h)))
		goto out;
	if ((o->handshake && !(taps.hs = handshake_new())) ||
	    (o->flight_recorder && !(taps.fr = flightrec_new(o->flight_recorder)))) {
		status = cmd_fail("boot", EXIT_FAILURE_RUN, "out of memory for --handshake or --flight-recorder");
		goto out;
	}
	if (!h->ops->stopping(h) && (status = boot_trace_setup(o, &taps, h, r->img, &t)))
		goto out;
	status = boot_go(o, h, t, &taps);
out:
	/* The tracer first: it gives back the host's hooks and stub. */
	tracer_destroy(t);
	h->ops->destroy(h);
	handshake_free(taps.hs);
	flightrec_free(taps.fr);
	if (taps.tee)
		fclose(taps.tee);
	return status;
}
