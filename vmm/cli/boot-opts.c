// SPDX-License-Identifier: GPL-2.0
/* vmmtrace boot's options (boot-opts.h): the usage text, parsing and checks. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/cli/boot-opts.h"
#include "vmm/host/host.h"
#include "vmm/image/image.h"
#include "vmm/kvm/host-kvm.h"
#include "vmm/trace/vmev-select.h"
#include "vmm/output/flightrec.h"
#include "vmm/output/writer.h"
#include "vmm/util/log.h"
#include "vmm/util/util.h"

static const char boot_usage[] =
	"usage: vmmtrace boot KERNEL [options]       (man vmmtrace-boot: every option in full)\n"
	"  KERNEL                 bzImage, ELF vmlinux, or arm64/riscv64 Image (or Image.gz)\n"
	"guest:\n"
	"  --initrd FILE          initramfs for the kernel\n"
	"  --cmdline STR          append STR to the kernel command line (repeatable)\n"
	"  --cmdline-replace STR  STR instead of the default command line\n"
	"  --cpus N               vCPUs, 1 to 8 (default 1)\n"
	"  --mem SIZE             guest memory: 512M (default), 2G; a plain number is MiB\n"
	"  --arch ARCH            x86_64, arm64, riscv64 or loongarch64: the kernel's\n"
	"  --console FILE         the guest's console to FILE (default stdout; stderr if tracing to it)\n"
	"tracing:\n"
	"  --trace GLOB           trace the functions matching GLOB (ftrace globs; repeatable)\n"
	"  --notrace GLOB         but not these (repeatable)\n"
	"  --stop-at FUNC         stop the guest when FUNC is first called\n"
	"  --args                 each call's arguments, by the kernel's BTF\n"
	"  --graph                each call's return too, as function_graph prints calls\n"
	"  --retval               with --graph: the return values\n"
	"  --graph-depth N        with --graph: calls at most N deep\n"
	"  --mode MODE            lossless (default), overwrite or exit\n"
	"  --buffer-size SIZE     ring size per vCPU (default 512K; 16M with --deterministic)\n"
	"  --system-map FILE      symbols from FILE instead of the image's kallsyms\n"
	"  --btf FILE             the kernel's types (default: the image's .BTF, or vmlinux.btf beside it)\n"
	"  --control PATH         a control socket for vmmtrace attach/detach/status/nmi/stop\n"
	"  --attach-backlog SIZE  how far an attach client may fall behind (default 64M)\n"
	"output:\n"
	"  -o, --output FILE      the trace to FILE; its name picks the format (.txt .dat .perfetto; raw)\n"
	"  --format FMT           text, dat, perfetto or raw, whatever -o's name says\n"
	"  -q, --quiet            no live progress line\n"
	"  -v, --verbose          more detail on stderr (twice: debug)\n"
	"VM events and post-mortems:\n"
	"  --event GLOB           VM events: kvm:pio, kvm:mmio, kvm:msr, kvm:exit, kvm:hypercall, kvm:cpuid\n"
	"  --msr LIST             kvm:msr records these MSRs too: 0x10,0xc0000100-0xc0000102\n"
	"  --handshake            at the end, the KVM PV features offered and turned on\n"
	"                         (arm64: the guest's PSCI and SMCCC calls)\n"
	"  --flight-recorder N    keep the last N events; print them and the registers if the guest dies\n"
	"  --hang SECS            with --flight-recorder: no event for SECS seconds stops the guest\n"
	"host:\n"
	"  --host kvm|qemu        this VMM on /dev/kvm (the machine's own arch: x86_64, arm64), or QEMU\n"
	"                         (default: KVM where it opens, for a kernel of the machine's arch)\n"
	"  --compat auto|on|off   the compatibility layer for software-assisted KVM (default auto)\n"
	"  --fast-boot auto|on|off  skip the kernel's slow self-checks on such a host (default: with compat)\n"
	"  --deterministic        QEMU host: the guest's clock counts instructions, two boots trace alike\n"
	"  --firmware FILE        QEMU host, riscv64: the SBI firmware run before the kernel (QEMU's -bios)\n"
	"  --no-sandbox           no seccomp filter once the guest runs\n";

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

/* auto, on, off: HOST_AUTO, 1, 0. */
static int boot_parse_switch(const char *s, int *v)
{
	if (!strcmp(s, "auto"))
		*v = HOST_AUTO;
	else if (!strcmp(s, "on"))
		*v = 1;
	else if (!strcmp(s, "off"))
		*v = 0;
	else
		return -EINVAL;
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

int boot_parse(int argc, char **argv, struct boot_opts *o)
{
	static const struct option longopts[] = {
		{ "initrd", required_argument, NULL, 'i' },
		{ "cmdline", required_argument, NULL, 'c' },
		{ "cmdline-replace", required_argument, NULL, 'C' },
		{ "cpus", required_argument, NULL, 'n' },
		{ "mem", required_argument, NULL, 'm' },
		{ "compat", required_argument, NULL, 'k' },
		{ "fast-boot", required_argument, NULL, 'j' },
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
		{ "deterministic", no_argument, NULL, 'd' },
		{ "firmware", required_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char *end;
	int c;

	*o = (struct boot_opts){ .ncpus = 1, .mem = BOOT_DEFAULT_MEM, .compat = HOST_AUTO, .fast_boot = HOST_AUTO };
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
			o->events_given = 1;
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
			o->buffer_given = 1;
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
			if (errno || *end || end == optarg || n < 1 || n > HOST_MAX_CPUS)
				return boot_fail("--cpus must be between 1 and %d, not '%s'", HOST_MAX_CPUS, optarg);
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
		case 'j':
			if (boot_parse_switch(optarg, c == 'k' ? &o->compat : &o->fast_boot))
				return boot_fail("%s must be auto, on or off, not '%s'", c == 'k' ? "--compat" : "--fast-boot",
						 optarg);
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
			if (!strcmp(optarg, "kvm") || !strcmp(optarg, "qemu"))
				o->host = !strcmp(optarg, "kvm") ? BOOT_HOST_KVM : BOOT_HOST_QEMU;
			else
				return boot_fail("--host '%s': kvm or qemu", optarg);
			break;
		case 'Z': o->arch = optarg; break;
		case 'd': o->deterministic = 1; break;
		case 'J': o->firmware = optarg; break;
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
	/* With --control alone it keeps shadow stacks for attach --graph (riscv64 under QEMU needs it asked at boot). */
	if (o->tcfg.graph && !o->tcfg.n_include && !o->control)
		return boot_fail("%s", "--graph needs --trace (the functions whose calls it shows) or --control");
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
	if (o->handshake) {
		uint32_t table = VMEV_MASK(VMEV_MSR) | VMEV_MASK(VMEV_CPUID) | VMEV_MASK(VMEV_HYPERCALL);

		o->tcfg.events_implied = table & ~o->tcfg.events;
		o->tcfg.events |= table;
	}
	/*
	 * For tests of the doorbell path (docs/TESTING.md), and --deterministic:
	 * no drain but at doorbells (the guest stopped) and at the end, so that
	 * the host's reading never changes what the guest's stub does.
	 */
	if ((getenv("VMMTRACE_DRAIN") && !strcmp(getenv("VMMTRACE_DRAIN"), "doorbell")) || o->deterministic)
		o->tcfg.drain_at_doorbells = 1;
	/*
	 * Every stop moves a --deterministic guest's clock on to its next
	 * timer, so its rings are large enough for few doorbells unless asked.
	 */
	if (o->deterministic && !o->buffer_given)
		o->tcfg.buffer_size = BOOT_DETERMINISTIC_BUFFER;
	/* -o's name picks the format (trace.dat, x.perfetto, x.txt; anything else raw). */
	if (!o->tcfg.format && o->tcfg.output)
		o->tcfg.format = trace_writer_for_path(o->tcfg.output);
	return boot_check_events(o);
}

enum boot_host boot_host_choose(enum boot_host want, int image_arch, int *kvm_missing)
{
	*kvm_missing = 0;
	if (want != BOOT_HOST_AUTO)
		return want;
	/* KVM by default for the kernels of the machine's own arch, where its KVM host traces them. */
	if (image_arch != host_kvm_guest_arch() || !host_kvm_traces())
		return BOOT_HOST_QEMU;
	*kvm_missing = access("/dev/kvm", R_OK | W_OK) != 0;
	return *kvm_missing ? BOOT_HOST_QEMU : BOOT_HOST_KVM;
}
