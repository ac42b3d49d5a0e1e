// SPDX-License-Identifier: GPL-2.0
/* vmmtrace boot: run a kernel in a new VM until it reboots, powers off or fails. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch/arch.h"
#include "vmm/cmd.h"
#include "vmm/compat.h"
#include "vmm/console.h"
#include "vmm/image.h"
#include "vmm/log.h"
#include "vmm/serial.h"
#include "vmm/vcpu.h"
#include "vmm/vm.h"

#define BOOT_DEFAULT_MEM   (512ULL << 20)
#define BOOT_MAX_MEM       (64ULL << 30)
#define BOOT_MAX_INITRD    (1ULL << 30)
#define BOOT_CMDLINE_MAX   4096

struct boot_opts {
	const char *kernel;
	const char *initrd;
	char cmdline_extra[BOOT_CMDLINE_MAX];
	const char *cmdline_replace;
	unsigned ncpus;
	uint64_t mem;
	enum compat_mode compat;
	int verbose;
};

static const char boot_usage[] =
	"usage: vmmtrace boot KERNEL [options]\n"
	"  KERNEL                a bzImage (gzip/xz/zstd/lz4/lzma/bzip2 payload) or an ELF vmlinux\n"
	"  --initrd FILE         initramfs to pass to the kernel\n"
	"  --cmdline STR         append STR to the default kernel command line (repeatable)\n"
	"  --cmdline-replace STR use STR as the whole command line instead\n"
	"  --cpus N              number of vCPUs, 1 to 8 (default 1)\n"
	"  --mem SIZE            guest memory, e.g. 512M or 2G; a plain number is MiB (default 512M)\n"
	"  --compat auto|on|off  host-compatibility layer for software-assisted KVM (default auto)\n"
	"  -v, --verbose         more detail on stderr (repeat for debug)\n";

static int boot_fail(const char *fmt, const char *arg)
{
	fprintf(stderr, "vmmtrace boot: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	return EXIT_BAD_INPUT;
}

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
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char *end;
	int c;

	*o = (struct boot_opts){ .ncpus = 1, .mem = BOOT_DEFAULT_MEM, .compat = COMPAT_AUTO };
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (c) {
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
			break;
		case 'k':
			if (compat_parse_mode(optarg, &o->compat))
				return boot_fail("--compat must be auto, on or off, not '%s'", optarg);
			break;
		case 'v': o->verbose++; break;
		case 'h': fputs(boot_usage, stdout); return -1;
		default:
			return boot_fail("unknown or incomplete option '%s' (see --help)", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return boot_fail("%s", optind >= argc ? "KERNEL is missing (see --help)"
						      : "expected exactly one KERNEL argument");
	o->kernel = argv[optind];
	return 0;
}

static int read_initrd(const char *path, uint8_t **data, size_t *size, struct errbuf *err)
{
	struct stat st;
	size_t done = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return err_set(err, errno, "cannot read initrd '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > BOOT_MAX_INITRD) {
		rc = err_set(err, EINVAL, "initrd '%s' is not a regular file of at most 1 GiB", path);
		goto out;
	}
	*data = malloc(st.st_size ? st.st_size : 1);
	if (!*data) {
		rc = err_set(err, ENOMEM, "out of memory for initrd '%s'", path);
		goto out;
	}
	while (done < (size_t)st.st_size) {
		ssize_t n = read(fd, *data + done, st.st_size - done);

		if (n <= 0) {
			rc = err_set(err, n ? errno : EIO, "cannot read initrd '%s': %s", path,
				     n ? strerror(errno) : "short read");
			free(*data);
			*data = NULL;
			goto out;
		}
		done += n;
	}
	*size = done;
out:
	close(fd);
	return rc;
}

static void boot_compose_cmdline(const struct boot_opts *o, int compat, char *buf, size_t len)
{
	if (o->cmdline_replace) {
		snprintf(buf, len, "%s%s", o->cmdline_replace, o->cmdline_extra);
		return;
	}
	snprintf(buf, len, "%s%s%s%s", arch_default_cmdline(), compat ? " " : "",
		 compat ? arch_compat_cmdline() : "", o->cmdline_extra);
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

static int boot_run(const struct boot_opts *o, struct kernel_image *img,
		    const uint8_t *initrd, size_t initrd_size)
{
	char cmdline[BOOT_CMDLINE_MAX * 2];
	struct vm_config cfg = {
		.kernel_path = o->kernel, .initrd_path = o->initrd, .cmdline = cmdline,
		.ncpus = o->ncpus, .mem_size = o->mem, .compat = compat_resolve(o->compat),
		.console_in_fd = 0, .console_out_fd = 1,
	};
	struct errbuf err = { "" };
	struct vm vm;
	int status;

	boot_compose_cmdline(o, cfg.compat, cmdline, sizeof(cmdline));
	log_info("compat layer %s; command line: %s", cfg.compat ? "on" : "off", cmdline);
	if (vcpu_init_signals(&err) || vm_create(&vm, &cfg, &err)) {
		fprintf(stderr, "vmmtrace boot: %s\n", err.msg);
		return EXIT_FAILURE_RUN;
	}
	if (arch_vm_load(&vm, img, initrd, initrd_size, &err)) {
		fprintf(stderr, "vmmtrace boot: %s: %s\n", o->kernel, err.msg);
		vm_destroy(&vm);
		return EXIT_BAD_INPUT;
	}
	if (vm_create_vcpus(&vm, &err)) {
		fprintf(stderr, "vmmtrace boot: %s\n", err.msg);
		vm_destroy(&vm);
		return EXIT_FAILURE_RUN;
	}
	console_input_start(&vm);
	status = vm_run(&vm);
	console_input_stop();
	serial_flush(vm.serial);
	if (status != EXIT_OK)
		fprintf(stderr, "vmmtrace: %s\n", vm.exit_msg);
	else
		log_info("%s", vm.exit_msg);
	if (o->verbose && cfg.compat)
		compat_report(&vm.compat, stderr);
	vm_destroy(&vm);
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
	if (image_open(o.kernel, &img, &err)) {
		fprintf(stderr, "vmmtrace boot: %s\n", err.msg);
		return EXIT_BAD_INPUT;
	}
	log_info("%s: %s, payload %s, vmlinux %zu bytes", o.kernel,
		 img.is_bzimage ? "bzImage" : "ELF vmlinux", decompress_codec_name(img.codec),
		 img.vmlinux_size);
	if (o.initrd && read_initrd(o.initrd, &initrd, &initrd_size, &err)) {
		fprintf(stderr, "vmmtrace boot: %s\n", err.msg);
		image_close(&img);
		return EXIT_BAD_INPUT;
	}
	boot_block_signals();
	rc = boot_run(&o, &img, initrd, initrd_size);
	free(initrd);
	image_close(&img);
	return rc;
}
