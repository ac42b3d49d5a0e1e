// SPDX-License-Identifier: GPL-2.0
/* vmmtrace boot: run a kernel in a new VM until it reboots, powers off or fails. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
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
#include "vmm/trace/flightrec.h"
#include "vmm/trace/handshake.h"
#include "vmm/trace/tracer.h"
#include "vmm/trace/vmevent.h"
#include "vmm/trace/writer.h"
#include "vmm/util/util.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/kvm/vm.h"

#define BOOT_DEFAULT_MEM   (512ULL << 20)
#define BOOT_MAX_MEM       (64ULL << 30)
#define BOOT_MIN_MEM       (64ULL << 20)
#define BOOT_MAX_INITRD    (1ULL << 30)
#define BOOT_CMDLINE_MAX   4096
#define BOOT_MAX_GLOBS     64
#define BOOT_DEFAULT_BUFFER (512ULL << 10)	/* 4,096 records of 128 bytes */

struct boot_opts {
	const char *kernel;
	const char *initrd;
	char cmdline_extra[BOOT_CMDLINE_MAX];
	const char *cmdline_replace;
	unsigned ncpus;
	uint64_t mem;
	enum compat_mode compat;
	int verbose;
	int quiet;			/* -q: no progress line */
	int no_sandbox;			/* --no-sandbox: no seccomp filter */
	/* Tracing (active when at least one --trace is given). */
	const char *trace[BOOT_MAX_GLOBS];
	const char *notrace[BOOT_MAX_GLOBS];
	struct tracer_config tcfg;
	struct vmev_msr_set msrs;	/* --msr additions */
	uint32_t msr_ranges[VMEV_MAX_MSR_RANGES][2];
	const char *console;
	const char *control;
	uint64_t attach_backlog;
	int handshake;			/* --handshake: the PV feature table at the end */
	unsigned flight_recorder;	/* --flight-recorder N: events kept (0: off) */
	unsigned hang;			/* --hang SECS (0: off) */
	enum boot_host host;		/* --host (default: KVM for x86_64 where it opens, else QEMU) */
	const char *arch;		/* --arch: the kernel's architecture, checked against the image's */
};

static const char boot_usage[] =
	"usage: vmmtrace boot KERNEL [options]\n"
	"  KERNEL                a bzImage (gzip/xz/zstd/lz4/lzma/bzip2 payload), an ELF vmlinux,\n"
	"                        or an arm64 or riscv64 Image (or Image.gz)\n"
	"  --host kvm|qemu       KVM (this VMM; x86_64) or QEMU (any arch; not traced yet);\n"
	"                        default KVM for x86_64 where /dev/kvm opens, else QEMU\n"
	"  --arch ARCH           x86_64, arm64 or riscv64: checked against the kernel's\n"
	"  --initrd FILE         initramfs to pass to the kernel\n"
	"  --cmdline STR         append STR to the default kernel command line (repeatable)\n"
	"  --cmdline-replace STR use STR as the whole command line instead\n"
	"  --cpus N              number of vCPUs, 1 to 8 (default 1)\n"
	"  --mem SIZE            guest memory, e.g. 512M or 2G; a plain number is MiB (default 512M)\n"
	"  --compat auto|on|off  host-compatibility layer for software-assisted KVM (default auto)\n"
	"  -v, --verbose         more detail on stderr (repeat for debug)\n"
	"  -q, --quiet           no live progress line (shown only when tracing to a terminal)\n"
	"  --no-sandbox          no seccomp filter once the guest runs (docs/SANDBOX.md)\n"
	"tracing (docs/TRACING.md):\n"
	"  --trace GLOB          trace the functions matching GLOB (ftrace glob syntax; repeatable)\n"
	"  --notrace GLOB        but not these (repeatable)\n"
	"  -o, --output FILE     write the trace to FILE (default: stdout); its name picks\n"
	"                        the format: .txt/.trace text, .dat trace-cmd's trace.dat,\n"
	"                        .perfetto/.pftrace/.pb Perfetto, anything else raw\n"
	"  --format FMT          text, dat, perfetto or raw (vmmtrace's crash-safe format,\n"
	"                        read by vmmtrace report), whatever -o's name says\n"
	"  --buffer-size SIZE    ring size per vCPU, e.g. 1M (default 512K)\n"
	"  --mode MODE           lossless (default): never loses an event; overwrite: never exits\n"
	"                        to the VMM, counts what it overwrote; exit: one VM exit per event\n"
	"  --stop-at FUNC        stop the guest when FUNC is first called, and flush the trace\n"
	"  --system-map FILE     symbols from FILE instead of the image's kallsyms\n"
	"  --btf FILE            the kernel's types (task names, pids, arguments) from FILE:\n"
	"                        raw BTF or an ELF with .BTF; default: the image's .BTF,\n"
	"                        else vmlinux.btf beside the image\n"
	"  --args                each call's arguments, named and typed by the kernel's BTF,\n"
	"                        as ftrace's func-args option prints them (text, raw, Perfetto)\n"
	"  --graph               each call's return too, printed as the function_graph tracer\n"
	"                        prints calls: nested per CPU, with durations (text only)\n"
	"  --retval              with --graph: each return value, as funcgraph-retval prints it\n"
	"  --graph-depth N       with --graph: print calls at most N deep (function_graph's\n"
	"                        max_graph_depth)\n"
	"  --event GLOB          record VM events matching GLOB (kvm:pio, kvm:mmio, kvm:msr,\n"
	"                        kvm:exit, kvm:hypercall, kvm:cpuid; repeatable; with --trace\n"
	"                        or alone; every output format: docs/VM-EVENTS.md)\n"
	"  --msr LIST            kvm:msr also records these MSRs: 0x10,0x1b,0xc0000100-0xc0000102\n"
	"  --flight-recorder N   keep the last N events (--trace, --event; default every VM event)\n"
	"                        in memory, no trace unless -o; print them and the vCPUs' registers\n"
	"                        if the guest panics, triple-faults, hits a KVM internal error or\n"
	"                        hangs (docs/VM-EVENTS.md)\n"
	"  --hang SECS           with --flight-recorder: a guest that records no event for SECS\n"
	"                        seconds has hung: stop it (exit status 7)\n"
	"  --handshake           at the end, a table of the KVM PV features offered and which the\n"
	"                        guest turned on, when, where, with which value (from kvm:cpuid and\n"
	"                        kvm:msr events, which it records; docs/VM-EVENTS.md)\n"
	"  --console FILE        guest console to FILE (default: stderr while tracing to stdout)\n"
	"  --control PATH        control socket for vmmtrace attach/detach/status/stop (mode 0600)\n"
	"  --attach-backlog SIZE how far an attach client may fall behind reading its events\n"
	"                        before its window is ended with an error (default 64M)\n";

#define boot_fail(...) cmd_fail("boot", EXIT_BAD_INPUT, __VA_ARGS__)

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 20;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 0: break;
	default: return -EINVAL;
	}
	if (*end == 'i' || *end == 'B' || *end == 'b')
		end += (*end == 'i' && end[1] == 'B') ? 2 : 1;
	if (*end || v > (BOOT_MAX_MEM >> shift))
		return -EINVAL;
	*out = v << shift;
	return 0;
}

static int boot_add_glob(struct boot_opts *o, int include, const char *glob)
{
	unsigned *n = include ? &o->tcfg.n_include : &o->tcfg.n_exclude;
	const char **list = include ? o->trace : o->notrace;

	if (*n == BOOT_MAX_GLOBS)
		return -E2BIG;
	list[(*n)++] = glob;
	return 0;
}

/* --event and --msr together: what the output can hold, kvm:msr's MSRs. */
static int boot_check_events(struct boot_opts *o)
{
	struct vmev_msr_set all;

	if (o->msrs.n && !(o->tcfg.events & VMEV_MASK(VMEV_MSR)))
		return boot_fail("%s", "--msr needs --event kvm:msr");
	vmev_msr_defaults(&all);
	/* KVM's filter takes 16 ranges: the defaults' and --msr's together. */
	if (all.n + o->msrs.n > VMEV_MAX_MSR_RANGES)
		return boot_fail("--msr: at most %u ranges besides the default ones", VMEV_MAX_MSR_RANGES - all.n);
	for (unsigned i = 0; i < o->msrs.n; i++)
		all.r[all.n++] = o->msrs.r[i];
	for (unsigned i = 0; i < all.n; i++) {
		o->msr_ranges[i][0] = all.r[i].first;
		o->msr_ranges[i][1] = all.r[i].last;
	}
	o->tcfg.msrs = (const uint32_t (*)[2])o->msr_ranges;
	o->tcfg.n_msrs = all.n;
	return 0;
}

static int boot_parse(int argc, char **argv, struct boot_opts *o)
{
	static const struct option longopts[] = {
		{ "initrd", required_argument, NULL, 'i' },
		{ "cmdline", required_argument, NULL, 'c' },
		{ "cmdline-replace", required_argument, NULL, 'C' },
		{ "cpus", required_argument, NULL, 'n' },
		{ "mem", required_argument, NULL, 'm' },
		{ "compat", required_argument, NULL, 'k' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "no-sandbox", no_argument, NULL, 'X' },
		{ "trace", required_argument, NULL, 't' },
		{ "notrace", required_argument, NULL, 'N' },
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "buffer-size", required_argument, NULL, 'b' },
		{ "mode", required_argument, NULL, 'M' },
		{ "stop-at", required_argument, NULL, 's' },
		{ "system-map", required_argument, NULL, 'S' },
		{ "btf", required_argument, NULL, 'Y' },
		{ "args", no_argument, NULL, 'A' },
		{ "graph", no_argument, NULL, 'P' },
		{ "retval", no_argument, NULL, 'V' },
		{ "graph-depth", required_argument, NULL, 'D' },
		{ "console", required_argument, NULL, 'O' },
		{ "control", required_argument, NULL, 'K' },
		{ "attach-backlog", required_argument, NULL, 'B' },
		{ "event", required_argument, NULL, 'E' },
		{ "msr", required_argument, NULL, 'R' },
		{ "handshake", no_argument, NULL, 'H' },
		{ "flight-recorder", required_argument, NULL, 'F' },
		{ "hang", required_argument, NULL, 'G' },
		{ "host", required_argument, NULL, 'W' },
		{ "arch", required_argument, NULL, 'Z' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char *end;
	int c;

	*o = (struct boot_opts){ .ncpus = 1, .mem = BOOT_DEFAULT_MEM, .compat = COMPAT_AUTO };
	o->tcfg.include = o->trace;
	o->tcfg.exclude = o->notrace;
	o->tcfg.buffer_size = BOOT_DEFAULT_BUFFER;
	o->tcfg.mode = TRACE_LOSSLESS;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "vqho:", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
		case 'N':
			if (boot_add_glob(o, c == 't', optarg))
				return boot_fail("too many --trace/--notrace patterns (at most 64 each): '%s'", optarg);
			break;
		case 'o': o->tcfg.output = optarg; break;
		case 'f':
			if (!(o->tcfg.format = trace_writer_find(optarg)))
				return boot_fail("--format must be text, dat, perfetto or raw, not '%s'", optarg);
			break;
		case 'O': o->console = optarg; break;
		case 'K': o->control = optarg; break;
		case 'B':
			if (parse_size(optarg, &o->attach_backlog) || o->attach_backlog < (64 << 10) ||
			    o->attach_backlog > (4ULL << 30))
				return boot_fail("--attach-backlog '%s' is not a size from 64K to 4G", optarg);
			break;
		case 'E':
			if (vmev_select(optarg, &o->tcfg.events))
				return boot_fail("--event '%s' matches no event (kvm:pio, kvm:mmio, kvm:msr, "
						 "kvm:exit, kvm:hypercall, kvm:cpuid)", optarg);
			break;
		case 'R':
			if (vmev_msr_parse(optarg, &o->msrs))
				return boot_fail("--msr '%s' is not a list of MSRs and ranges like "
						 "0x10,0xc0000100-0xc0000102 (at most 256 MSRs a range)", optarg);
			break;
		case 's': o->tcfg.stop_at = optarg; break;
		case 'S': o->tcfg.system_map = optarg; break;
		case 'Y': o->tcfg.btf = optarg; break;
		case 'b':
			if (parse_size(optarg, &o->tcfg.buffer_size) || o->tcfg.buffer_size < 4096 ||
			    o->tcfg.buffer_size > (256ULL << 20))
				return boot_fail("--buffer-size '%s' is not a size from 4K to 256M", optarg);
			break;
		case 'M':
			if (!strcmp(optarg, "lossless"))
				o->tcfg.mode = TRACE_LOSSLESS;
			else if (!strcmp(optarg, "overwrite"))
				o->tcfg.mode = TRACE_OVERWRITE;
			else if (!strcmp(optarg, "exit"))
				o->tcfg.mode = TRACE_EXIT;
			else
				return boot_fail("--mode must be lossless, overwrite or exit, not '%s'", optarg);
			break;
		case 'i': o->initrd = optarg; break;
		case 'C': o->cmdline_replace = optarg; break;
		case 'c':
			if (strlen(o->cmdline_extra) + strlen(optarg) + 2 > sizeof(o->cmdline_extra))
				return boot_fail("--cmdline is too long (%s...)", "");
			strcat(o->cmdline_extra, " ");
			strcat(o->cmdline_extra, optarg);
			break;
		case 'n': {
			unsigned long n;

			errno = 0;
			n = strtoul(optarg, &end, 10);
			if (errno || *end || end == optarg || n < 1 || n > VM_MAX_CPUS)
				return boot_fail("--cpus must be between 1 and 8, not '%s'", optarg);
			o->ncpus = (unsigned)n;
			break;
		}
		case 'm':
			if (parse_size(optarg, &o->mem))
				return boot_fail("--mem '%s' is not a size up to 64G (e.g. 512M, 2G)", optarg);
			if (o->mem < BOOT_MIN_MEM)	/* echo the user's spelling: 1K is not "0 MiB" */
				return boot_fail("--mem %s is too small (at least %lluM)", optarg,
						 BOOT_MIN_MEM >> 20);
			if (o->mem & 4095)
				return boot_fail("--mem %s is not a whole number of 4K pages", optarg);
			break;
		case 'k':
			if (compat_parse_mode(optarg, &o->compat))
				return boot_fail("--compat must be auto, on or off, not '%s'", optarg);
			break;
		case 'v': o->verbose++; break;
		case 'q': o->quiet = 1; break;
		case 'X': o->no_sandbox = 1; break;
		case 'H': o->handshake = 1; break;
		case 'A': o->tcfg.args = 1; break;
		case 'P': o->tcfg.graph = 1; break;
		case 'V': o->tcfg.retval = 1; break;
		case 'D': {
			unsigned long n;

			errno = 0;
			n = strtoul(optarg, &end, 10);
			if (errno || *end || end == optarg || *optarg == '-' || n < 1 || n > VT_SHADOW_FRAMES)
				return boot_fail("--graph-depth must be a number from 1 to %d, not '%s'",
						 VT_SHADOW_FRAMES, optarg);
			o->tcfg.graph_depth = (unsigned)n;
			break;
		}
		case 'F':
		case 'G': {
			unsigned long n, max = c == 'F' ? FLIGHTREC_MAX : 86400;

			errno = 0;
			n = strtoul(optarg, &end, 10);
			if (errno || *end || end == optarg || *optarg == '-' || n < 1 || n > max)
				return boot_fail("%s must be a number from 1 to %lu, not '%s'",
						 c == 'F' ? "--flight-recorder" : "--hang", max, optarg);
			*(c == 'F' ? &o->flight_recorder : &o->hang) = (unsigned)n;
			break;
		}
		case 'h': fputs(boot_usage, stdout); return -1;
		case 'W':
			if (boot_host_parse(optarg, &o->host))
				return boot_fail("--host '%s': kvm or qemu", optarg);
			break;
		case 'Z': o->arch = optarg; break;
		default:
			return boot_fail("unknown or incomplete option '%s' (see --help)", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return boot_fail("%s", optind >= argc ? "KERNEL is missing (see --help)"
						      : "expected exactly one KERNEL argument");
	o->kernel = argv[optind];
	if (!o->tcfg.n_include && !o->tcfg.events && !o->handshake && !o->flight_recorder &&
	    (o->tcfg.n_exclude || o->tcfg.output || o->tcfg.format))
		return boot_fail("%s", "--notrace, -o and --format need at least one --trace, --event, "
				 "--handshake or --flight-recorder");
	if (o->hang && !o->flight_recorder)
		return boot_fail("%s", "--hang needs --flight-recorder");
	if ((o->tcfg.retval || o->tcfg.graph_depth) && !o->tcfg.graph)
		return boot_fail("%s", "--retval and --graph-depth need --graph");
	if (o->tcfg.graph && !o->tcfg.n_include)
		return boot_fail("%s", "--graph needs --trace: the functions whose calls it shows");
	if (o->tcfg.graph && (o->flight_recorder || o->handshake))
		return boot_fail("%s", "--graph does not combine with --flight-recorder or --handshake yet");
	if (o->attach_backlog && !o->control)
		return boot_fail("%s", "--attach-backlog needs --control");
	/*
	 * The recorder's --trace and --event say what it keeps: it writes a
	 * trace only to an -o or --format asked for. The handshake table
	 * writes none unless a trace was asked for some other way.
	 */
	if (o->flight_recorder)
		o->tcfg.no_output = !o->tcfg.output && !o->tcfg.format;
	else if (o->handshake)
		o->tcfg.no_output = !o->tcfg.n_include && !o->tcfg.events && !o->tcfg.output && !o->tcfg.format;
	if (o->flight_recorder) {
		/* Nothing chosen: every VM event but the CPUID table (records at time zero). */
		if (!o->tcfg.n_include && !o->tcfg.events)
			o->tcfg.events = VMEV_MASK(VMEV_PIO) | VMEV_MASK(VMEV_MMIO) | VMEV_MASK(VMEV_MSR) |
					 VMEV_MASK(VMEV_EXIT);
		o->tcfg.stop_on_panic = 1;
	}
	/* The table is built from these events; they go to the trace too, if there is one. */
	if (o->handshake)
		o->tcfg.events |= VMEV_MASK(VMEV_MSR) | VMEV_MASK(VMEV_CPUID);
	/* -o's name picks the format (trace.dat, x.perfetto, x.txt; anything else raw). */
	if (!o->tcfg.format && o->tcfg.output)
		o->tcfg.format = trace_writer_for_path(o->tcfg.output);
	if (o->tcfg.graph && o->tcfg.format && o->tcfg.format != &trace_writer_text)
		return boot_fail("--graph writes the text format only (-o FILE.txt or stdout), not %s",
				 o->tcfg.format->name);
	return boot_check_events(o);
}

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
	case VM_STOP_TRIPLE_FAULT:
		return EXIT_TRIPLE_FAULT;
	case VM_STOP_KVM_INTERNAL:
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
static int boot_sandbox(const struct boot_opts *o)
{
	struct errbuf err = { "" };
	const char *why, *what = "";
	unsigned n = 0;
	int rc;

	if (o->no_sandbox) {
		log_info("sandbox off (--no-sandbox)");
		return 0;
	}
	if (!sandbox_available(&why)) {
		log_info("sandbox off: %s", why);
		return 0;
	}
	if (sandbox_enter(&n, &err))
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
	if ((status = boot_sandbox(o))) {
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
