// SPDX-License-Identifier: GPL-2.0
/*
 * vmmtrace boot: run a kernel in a new guest until it reboots, powers off
 * or fails. The options (boot-opts.c) and the checks that need no guest
 * are here; the guest's life, on either host, is the boot driver's
 * (boot.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/cli/boot.h"
#include "vmm/cli/cmd.h"
#include "vmm/cli/fatal.h"
#include "vmm/image/image.h"
#include "vmm/output/writer.h"
#include "vmm/qemu/host-qemu.h"
#include "vmm/qemu/qemu-proc.h"
#include "vmm/qemu/qemu-vm.h"
#include "vmm/util/log.h"
#include "vmm/util/util.h"

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

/*
 * SIGINT/SIGTERM/SIGHUP are taken by the host's run (KVM: a wait on them;
 * QEMU: a signalfd), the kick signal only by vCPUs: blocked here, before
 * any thread starts, so that every thread inherits it.
 */
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

/*
 * What --deterministic cannot promise, refused (docs/TRACING.md,
 * "Reproducible boots"): several vCPUs under a QEMU older than 10 (7.2's
 * instruction counting hangs x86_64 and loongarch64 guests bringing up
 * their second CPU; 10.0 boots them, and its turns between vCPUs follow
 * the instruction counts: two boots give the same trace). A riscv64 guest
 * on several vCPUs whose firmware keeps a waiting hart busy is stopped at
 * the first stop instead (qemu-vm.c), which only the boot can tell.
 */
#define DETERMINISTIC_SMP_QEMU 10

static int boot_check_deterministic(const struct boot_opts *o, const struct kernel_image *img, int qemu)
{
	if (!qemu)
		return boot_fail("--deterministic needs the QEMU host (--host qemu): on KVM the guest's clock is the host's");
	if (o->ncpus > 1) {
		const struct qvm_arch *a = qvm_arch_for(img->arch);
		unsigned major = 0, minor = 0;
		struct errbuf err = { "" };

		if (!a || qemu_version(a->binary, &major, &minor, &err))
			return boot_fail("--deterministic on %u vCPUs: %s", o->ncpus, a ? err.msg : "no QEMU for this kernel");
		if (major < DETERMINISTIC_SMP_QEMU)
			return boot_fail("--deterministic on %u vCPUs needs QEMU %u or later (%s here is %u.%u, whose "
					 "instruction counting hangs x86_64 and loongarch64 guests starting their second "
					 "CPU); one vCPU works with it", o->ncpus, DETERMINISTIC_SMP_QEMU, a->binary,
					 major, minor);
		/*
		 * A stop is deterministic only while the other vCPUs idle: QEMU
		 * runs them on between one vCPU's breakpoint and the VM's stop
		 * (docs/TRACING.md). The default rings make the hand-over,
		 * before other CPUs start, and the end the only stops.
		 */
		if (o->buffer_given && o->tcfg.buffer_size < BOOT_DETERMINISTIC_BUFFER)
			log_warn("--deterministic on %u vCPUs with --buffer-size below 16M: a doorbell while another "
				 "vCPU runs lets it run on for a time the host picks, and two boots may part",
				 o->ncpus);
	}
	return 0;
}

int cmd_boot(int argc, char **argv)
{
	struct boot_opts o;
	struct kernel_image img;
	struct errbuf err = { "" };
	struct boot_run r = { .img = &img };
	uint8_t *initrd = NULL;
	int rc;

	rc = boot_parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	log_set_level(o.verbose >= 2 ? LOG_DEBUG : o.verbose ? LOG_INFO : LOG_WARN);
	fatal_signals_install("boot", o.tcfg.n_include ? o.tcfg.output : NULL,
			      o.tcfg.format == trace_writer_find("raw"));
	if (image_open_as(o.kernel, IMAGE_OPEN_UNPLACED, &img, &err))
		return boot_fail("%s", err.msg);
	/* A raw Image without kallsyms boots untraced (VM events, the console), never with functions. */
	if (img.unplaced && (o.tcfg.n_include || o.tcfg.stop_at || o.control)) {
		rc = boot_fail("%s: %s; %s needs the kernel's symbols", o.kernel, img.unplaced,
			       o.tcfg.n_include ? "--trace" : o.tcfg.stop_at ? "--stop-at" : "--control");
		image_close(&img);
		return rc;
	}
	if (o.arch && strcmp(o.arch, image_arch_name(img.arch))) {
		const char *is = image_arch_name(img.arch);

		image_close(&img);
		return boot_fail("%s: the kernel is %s, not %s (--arch)", o.kernel, is, o.arch);
	}
	log_info("%s: %s, payload %s, vmlinux %zu bytes", o.kernel,
		 img.is_bzimage ? "bzImage" : "ELF vmlinux", decompress_codec_name(img.codec),
		 img.vmlinux_size);
	if (o.initrd && read_initrd(o.initrd, &initrd, &r.initrd_size, &err)) {
		image_close(&img);
		return boot_fail("%s", err.msg);
	}
	r.initrd = initrd;
	/* QEMU takes a bzImage or a plain Image; an ELF vmlinux is this VMM's (x86_64 only). */
	if (host_qemu_loads(&img))
		r.qemu = boot_host_choose(o.host, img.arch, &r.kvm_missing) == BOOT_HOST_QEMU;
	else
		r.qemu = o.host == BOOT_HOST_QEMU;
	if (o.firmware && (!r.qemu || img.arch != IMAGE_ARCH_RISCV64))
		rc = boot_fail("--firmware: only a riscv64 kernel under the QEMU host (--host qemu) takes one");
	else if (o.firmware && access(o.firmware, R_OK))
		rc = boot_fail("--firmware '%s': %s", o.firmware, strerror(errno));
	if (!rc && o.deterministic)
		rc = boot_check_deterministic(&o, &img, r.qemu);
	if (rc) {
		free(initrd);
		image_close(&img);
		return rc;
	}
	if ((r.console_fd = boot_console_fd(&o)) < 0) {
		rc = boot_fail("cannot open --console '%s': %s", o.console, strerror(errno));
	} else {
		boot_block_signals();
		rc = boot_run(&o, &r);
	}
	if (o.console && r.console_fd >= 0)
		close(r.console_fd);
	free(initrd);
	image_close(&img);
	return rc;
}
