// SPDX-License-Identifier: GPL-2.0
/* vmmtrace boot: run a kernel in a new VM until it reboots, powers off or fails. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vmm/kvm/arch.h"
#include "vmm/cli/boot-opts.h"
#include "vmm/cli/boot-qemu.h"
#include "vmm/cli/cmd.h"
#include "vmm/cli/fatal.h"
#include "vmm/cli/progress.h"
#include "vmm/cli/sandbox.h"
#include "vmm/kvm/compat.h"
#include "vmm/kvm/host-kvm.h"
#include "vmm/devices/console.h"
#include "vmm/control/control.h"
#include "vmm/image/image.h"
#include "vmm/util/log.h"
#include "vmm/devices/serial.h"
#include "vmm/output/flightrec.h"
#include "vmm/output/handshake.h"
#include "vmm/trace/tracer.h"
#include "vmm/output/vmevent.h"
#include "vmm/output/writer.h"
#include "vmm/util/util.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/kvm/vm.h"


static int read_initrd(const char *path, uint8_t **data, size_t *size, struct errbuf *err)
{
	int rc = util_read_file(path, BOOT_MAX_INITRD, data, size);

	if (rc == -EINVAL || rc == -EFBIG)
		return err_set(err, EINVAL, "initrd '%s' is not a regular file of at most 1 GiB", path);
	if (rc == -ENOMEM)
		return err_set(err, rc, "out of memory for initrd '%s'", path);
	if (rc)
		return err_set(err, rc, "cannot read initrd '%s': %s", path, strerror(-rc));
	return 0;
}

/* The whole command line, however long: its length is checked against the kernel's limit later. */
static char *boot_compose_cmdline(const struct boot_opts *o, int compat)
{
	char *buf = NULL;
	int rc;

	if (o->cmdline_replace)
		rc = asprintf(&buf, "%s%s", o->cmdline_replace, o->cmdline_extra);
	else
		rc = asprintf(&buf, "%s%s%s%s", arch_default_cmdline(), compat ? " " : "",
			      compat ? arch_compat_cmdline() : "", o->cmdline_extra);
	return rc < 0 ? NULL : buf;
}

/* SIGINT/SIGTERM/SIGHUP are taken by vm_run's wait; the kick signal only by vCPUs. */
static void boot_block_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* Where the guest console goes: stdout, or stderr when the trace takes stdout. */
static int boot_console_fd(const struct boot_opts *o)
{
	if (o->console)
		return open(o->console, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	return (o->tcfg.n_include || o->tcfg.events) && !o->tcfg.output && !o->tcfg.no_output ? 2 : 1;
}

/* What sees the boot's events besides its trace file (tracer_config.tap). */
struct boot_taps {
	struct handshake *hs;
	struct flightrec *fr;
};

static void boot_tap(void *opaque, const struct ring_event *ev)
{
	struct boot_taps *taps = opaque;

	if (taps->hs)
		handshake_event(taps->hs, ev);
	if (taps->fr)
		flightrec_event(taps->fr, ev);
}

static int boot_trace_setup(const struct boot_opts *o, struct boot_taps *taps, struct host *host,
			    struct kernel_image *img, struct tracer **t)
{
	struct tracer_config cfg = o->tcfg;
	struct errbuf err = { "" };
	int rc;

	*t = NULL;
	/* --stop-at alone needs the tracer's breakpoints, not its slots. */
	cfg.live = o->control != NULL;
	if (!o->tcfg.n_include && !o->control && !o->tcfg.stop_at && !o->tcfg.events)
		return 0;
	if (taps->hs || taps->fr) {
		cfg.tap = boot_tap;
		cfg.tap_opaque = taps;
	}
	rc = tracer_create(t, host, img, &cfg, &err);
	if (rc)
		return cmd_fail("boot", rc == -ENOMEM ? EXIT_FAILURE_RUN : EXIT_BAD_INPUT, "%s", err.msg);
	return 0;
}

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

static void boot_report(const struct boot_opts *o, struct vm *vm, int status, int traced)
{
	if (status != EXIT_OK || traced || o->verbose)
		fprintf(stderr, "vmmtrace: %s\n", vm->stop_msg);
	if (o->verbose && vm->cfg.compat)
		compat_report(&vm->compat, stderr);
}

/*
 * The trace's last events and closing account. A failed output (disk full,
 * file too large, I/O error) is one line: the stop's, when the tracer
 * stopped the guest for it, and gets its own status unless the guest's end
 * says more (a panic, a signal).
 */
int boot_finish_trace(struct tracer *t, const char *stop_msg, int status)
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

/* Confine the process once the VM, its files and its threads exist (docs/SANDBOX.md). */
int boot_sandbox(int no_sandbox, pid_t child)
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

/*
 * --hang: a thread that stops the guest once no event (function or VM
 * event) was recorded for secs seconds. Started before the sandbox.
 */
struct hang_watch {
	unsigned secs;
	struct vm *vm;
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

	while (!atomic_load(&h->stop) && quiet_ms < h->secs * 1000u) {
		struct timespec ts = { 0, 250 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		tracer_progress(h->t, &p);
		quiet_ms = p.events + p.vm_events == last ? quiet_ms + 250 : 0;
		last = p.events + p.vm_events;
	}
	if (!atomic_load(&h->stop))
		vm_request_stop(h->vm, VM_STOP_GUEST_HANG, "the guest made no progress for %u s (--hang): "
				"no event recorded", h->secs);
	return NULL;
}

static int hang_start(struct hang_watch *h, struct vm *vm, struct tracer *t)
{
	h->vm = vm;
	h->t = t;
	h->running = !pthread_create(&h->thread, NULL, hang_main, h);
	return h->running ? 0 : -1;
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
 * --flight-recorder: when the guest died (panic, triple fault, KVM
 * internal error, hang), its last events and every vCPU's registers, its
 * instruction pointer symbolised; nothing when it ended otherwise.
 */
static void boot_flight_report(struct vm *vm, struct tracer *t, struct flightrec *fr, int status)
{
	struct trace_meta meta;
	char regs[1024];

	if (status != EXIT_GUEST_PANIC && status != EXIT_TRIPLE_FAULT && status != EXIT_KVM_INTERNAL &&
	    status != EXIT_GUEST_HANG)
		return;
	tracer_meta(t, &meta);
	flightrec_print(fr, &meta, stderr);
	for (unsigned i = 0; i < vm->ncpus; i++) {
		uint64_t pc, off = 0;
		const struct symbol *s;

		arch_vcpu_registers(&vm->vcpus[i], regs, sizeof(regs), &pc);
		s = pc ? symtab_find_addr(meta.syms, pc, &off) : NULL;
		if (s && off < symtab_extent(meta.syms, s))
			fprintf(stderr, "vmmtrace: flight recorder: vCPU %u at %s+0x%" PRIx64 ":\n%s", i,
				symtab_name(meta.syms, s), off, regs);
		else
			fprintf(stderr, "vmmtrace: flight recorder: vCPU %u:\n%s", i, regs);
	}
}

static int boot_run_vm(const struct boot_opts *o, struct kernel_image *img,
		       const uint8_t *initrd, size_t initrd_size, char *cmdline)
{
	struct vm_config cfg = {
		.kernel_path = o->kernel, .initrd_path = o->initrd, .cmdline = cmdline,
		.ncpus = o->ncpus, .mem_size = o->mem, .compat = compat_resolve(o->compat),
		.console_in_fd = 0, .console_out_fd = boot_console_fd(o),
	};
	struct errbuf err = { "" };
	struct tracer *tracer = NULL;
	struct control *control = NULL;
	struct progress *progress = NULL;
	struct boot_taps taps = { NULL, NULL };
	struct hang_watch hang = { .secs = o->hang };
	struct host_kvm hk;
	struct vm vm;
	int status;

	if (cfg.console_out_fd < 0)
		return boot_fail("cannot open --console '%s': %s", o->console, strerror(errno));
	log_info("compat layer %s; command line: %s", cfg.compat ? "on" : "off", cmdline);
	if (vcpu_init_signals(&err) || vm_create(&vm, &cfg, &err))
		return cmd_fail("boot", EXIT_FAILURE_RUN, "%s", err.msg);
	if (arch_vm_load(&vm, img, initrd, initrd_size, &err)) {
		vm_destroy(&vm);
		return boot_fail("%s: %s", o->kernel, err.msg);
	}
	if ((o->handshake && !(taps.hs = handshake_new())) ||
	    (o->flight_recorder && !(taps.fr = flightrec_new(o->flight_recorder)))) {
		status = cmd_fail("boot", EXIT_FAILURE_RUN, "out of memory for --handshake or --flight-recorder");
		goto out;
	}
	host_kvm_init(&hk, &vm);
	if ((status = boot_trace_setup(o, &taps, &hk.h, img, &tracer)))
		goto out;
	if (vm_create_vcpus(&vm, &err) || (tracer && tracer_start(tracer, &err))) {
		status = cmd_fail("boot", tracer && tracer_output_error(tracer) ? EXIT_TRACE_WRITE :
				  EXIT_FAILURE_RUN, "%s", err.msg);
		goto out;
	}
	if (o->control && control_start(&control, &hk.h, tracer, o->control, o->attach_backlog, &err)) {
		status = boot_fail("%s", err.msg);
		goto out;
	}
	/* A terminal's progress line, unless -q; the vCPU threads need SIGINT blocked first. */
	if (tracer && !o->quiet && progress_start(&progress, tracer))
		log_warn("no progress line: out of memory or threads");
	console_input_start(&vm);
	if (tracer && hang.secs && hang_start(&hang, &vm, tracer))
		log_warn("--hang: no watchdog thread: a hang is not caught");
	if ((status = boot_sandbox(o->no_sandbox, 0))) {
		hang_stop(&hang);
		console_input_stop();
		progress_stop(progress);
		control_stop(control);
		goto out;
	}
	status = vm_run(&vm);
	status = boot_exit_status((enum vm_stop_reason)status, vm.stop_signal);
	hang_stop(&hang);
	console_input_stop();
	progress_stop(progress);
	control_stop(control);
	serial_flush(vm.serial);
	boot_report(o, &vm, status, tracer != NULL);
	if (tracer) {
		status = boot_finish_trace(tracer, vm.stop_msg, status);
		tracer_summary(tracer, stderr);
		if (taps.fr)
			boot_flight_report(&vm, tracer, taps.fr, status);
		if (taps.hs) {
			struct trace_meta meta;

			tracer_meta(tracer, &meta);
			handshake_print(taps.hs, &meta, tracer_vmev_missing(tracer, VMEV_MSR), stderr);
		}
	}
	log_info("liburcu reader registrations: %lu", tracer_rcu_registrations());
out:
	vm_destroy(&vm);
	tracer_destroy(tracer);
	handshake_free(taps.hs);
	flightrec_free(taps.fr);
	return status;
}

static int boot_run(const struct boot_opts *o, struct kernel_image *img,
		    const uint8_t *initrd, size_t initrd_size)
{
	char *cmdline = boot_compose_cmdline(o, compat_resolve(o->compat));
	int status;

	if (!cmdline)
		return cmd_fail("boot", EXIT_FAILURE_RUN, "out of memory");
	status = boot_run_vm(o, img, initrd, initrd_size, cmdline);
	free(cmdline);
	return status;
}

int cmd_boot(int argc, char **argv)
{
	struct boot_opts o;
	struct kernel_image img;
	struct errbuf err = { "" };
	uint8_t *initrd = NULL;
	size_t initrd_size = 0;
	int rc;

	rc = boot_parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	log_set_level(o.verbose >= 2 ? LOG_DEBUG : o.verbose ? LOG_INFO : LOG_WARN);
	fatal_signals_install("boot", o.tcfg.n_include ? o.tcfg.output : NULL,
			      o.tcfg.format == trace_writer_find("raw"));
	if (image_open(o.kernel, &img, &err))
		return boot_fail("%s", err.msg);
	if (o.arch && strcmp(o.arch, image_arch_name(img.arch))) {
		const char *is = image_arch_name(img.arch);

		image_close(&img);
		return boot_fail("%s: the kernel is %s, not %s (--arch)", o.kernel, is, o.arch);
	}
	log_info("%s: %s, payload %s, vmlinux %zu bytes", o.kernel,
		 img.is_bzimage ? "bzImage" : "ELF vmlinux", decompress_codec_name(img.codec),
		 img.vmlinux_size);
	if (o.initrd && read_initrd(o.initrd, &initrd, &initrd_size, &err)) {
		image_close(&img);
		return boot_fail("%s", err.msg);
	}
	/* QEMU takes a bzImage or a plain Image; an ELF vmlinux is this VMM's (x86_64 only). */
	if (boot_qemu_loads(&img) ? boot_host_choose(o.host, img.arch, &rc) == BOOT_HOST_QEMU
				  : o.host == BOOT_HOST_QEMU) {
		struct boot_qemu_opts q = {
			.kernel = o.kernel, .arch = img.arch, .initrd = o.initrd, .ncpus = o.ncpus, .mem = o.mem,
			.cmdline_replace = o.cmdline_replace, .cmdline_extra = o.cmdline_extra, .control = o.control,
			.console_fd = boot_console_fd(&o), .console = o.console, .verbose = o.verbose,
			.kvm_missing = rc, .loadable = boot_qemu_loads(&img), .img = &img, .tcfg = &o.tcfg,
			.attach_backlog = o.attach_backlog, .unsupported = o.tcfg.events || o.handshake || o.flight_recorder,
			.no_sandbox = o.no_sandbox,
		};

		free(initrd);
		rc = boot_qemu(&q);
		image_close(&img);
		return rc;
	}
	/* The reader opens arm64 and riscv64 kernels too; this VMM boots x86_64 ones. */
	if (image_require_arch(&img, IMAGE_ARCH_X86_64, &err)) {
		free(initrd);
		image_close(&img);
		return boot_fail("%s", err.msg);
	}
	boot_block_signals();
	rc = boot_run(&o, &img, initrd, initrd_size);
	free(initrd);
	image_close(&img);
	return rc;
}
