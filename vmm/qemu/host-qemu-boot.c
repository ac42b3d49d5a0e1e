// SPDX-License-Identifier: GPL-2.0
/*
 * The QEMU host's own boot (host_qemu_create) and the guest's life under
 * it: the command line (nokaslr for a traced kernel, x86_64's memmap=),
 * the room the stub's data takes (arm64 and riscv64: a region the device
 * tree reserves; x86_64: RAM memmap= keeps; loongarch64: a region of the
 * device tree the host writes with the rest of its boot data,
 * la64-boot.h), QEMU started with its serial
 * port on a socket the console reads, an x86_64 bzImage run to its
 * kernel's entry, and then the run loop (host_qemu_step) until the guest
 * ends, with vmmtrace's signals read through a signalfd between steps.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vmm/guest/guest.h"
#include "vmm/guest/stub-geom.h"
#include "vmm/host/console.h"
#include "vmm/image/image.h"
#include "vmm/guest/devtree.h"
#include "vmm/qemu/host-qemu-int.h"
#include "vmm/qemu/la64-boot.h"
#include "vmm/util/log.h"

/* x86_64: how long the bzImage's decompressor may take under TCG. */
#define BOOT_ENTRY_WAIT_MS 120000

/* Whether word is one of the words of a or b (the command line and its --cmdline additions). */
static int cmdline_has(const char *a, const char *b, const char *word)
{
	const char *parts[2] = { a, b };
	size_t n = strlen(word);

	for (int i = 0; i < 2; i++)
		for (const char *p = parts[i]; p && (p = strstr(p, word)); p += n)
			if ((p == parts[i] || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
				return 1;
	return 0;
}

/*
 * QEMU's end of the console: as much send buffer as we may have. QEMU's
 * 16550 writes a byte at a time and drops one the socket refuses a few
 * times running; a one-byte write costs its whole buffer overhead (about
 * 768 bytes), so the default 208 KiB holds under 300 bytes unread. The
 * console's thread reads at once, but a loaded host may not run it for
 * milliseconds. Root may exceed net.core.wmem_max (SO_SNDBUFFORCE).
 */
static void console_room(int fd)
{
	int size = 16 << 20;

	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
}

/*
 * The console has a thread of its own: QEMU's 16550 (x86_64, riscv64)
 * writes to the socket a byte at a time and, when the socket does not
 * take one, retries a few times and then drops it, while the thread that
 * drives QEMU may wait up to 20 ms at a time for a gdbstub stop.
 */
static void *console_reader(void *arg)
{
	struct host_qemu *hq = arg;
	struct pollfd p = { .fd = hq->con_fd, .events = POLLIN };
	char buf[4096];

	for (;;) {
		ssize_t n;

		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			break;
		n = read(hq->con_fd, buf, sizeof(buf));
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			break;	/* the end: QEMU closed its side */
		if (n > 0)
			console_write(&hq->con, buf, (size_t)n);
	}
	return NULL;
}

/* The console's input: the socket to QEMU's serial port takes what it can now. */
static size_t console_deliver(void *opaque, const uint8_t *buf, size_t len)
{
	struct host_qemu *hq = opaque;
	ssize_t n = send(hq->con_fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);

	if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
		return len;	/* QEMU is gone: the input goes nowhere */
	return n > 0 ? (size_t)n : 0;
}

/* After QEMU's end: its console's last bytes, then the thread is ours again. */
static void console_reader_join(struct host_qemu *hq)
{
	if (hq->con_running)
		pthread_join(hq->con_thread, NULL);
	hq->con_running = 0;
	console_end(&hq->con);
}

/* A signal to vmmtrace, if one came: the guest stops as on KVM. */
static int take_signal(struct host_qemu *hq)
{
	struct signalfd_siginfo si;
	struct pollfd p = { .fd = hq->sfd, .events = POLLIN };

	if (hq->sfd < 0 || poll(&p, 1, 0) <= 0 || read(hq->sfd, &si, sizeof(si)) != sizeof(si))
		return 0;
	return (int)si.ssi_signo;
}

/*
 * x86_64: QEMU boots the bzImage, whose decompressor runs first. The traced
 * kernel starts at the vmlinux's entry (startup_64's physical address: the
 * decompressor jumps there under its identity map, at the link address
 * when not randomised), where QEMU stops before the tracer places
 * anything. A signal meanwhile stops the guest there (hq->signo).
 */
static int run_to_kernel(struct host_qemu *hq, const struct elf_image *elf, struct errbuf *err)
{
	uint64_t entry = elf->ehdr->e_entry, waited_ms = 0;
	struct qvm_stop st;
	int rc;

	if ((rc = qvm_set_break(hq->q, 1, entry, err)) || (rc = qvm_resume(hq->q, err)))
		return rc;
	for (;;) {
		if ((hq->signo = take_signal(hq)))
			return 0;
		rc = qvm_wait(hq->q, 20, &st, err);
		if (rc == -ETIMEDOUT && (waited_ms += 20) < BOOT_ENTRY_WAIT_MS)
			continue;
		if (rc == -ETIMEDOUT)
			return err_set(err, ETIMEDOUT, "the kernel's entry (startup_64 at %#llx) was not reached in %d s: "
				       "was it loaded elsewhere (randomised)?", (unsigned long long)entry,
				       BOOT_ENTRY_WAIT_MS / 1000);
		if (rc == -ECHILD)
			return err_set(err, ECHILD, "QEMU ended before the kernel started (the console says what the "
				       "bzImage's decompressor did)");
		if (rc)
			return rc;
		if (st.pc == entry)
			break;
		if ((rc = qvm_resume(hq->q, err)))	/* QEMU's own stop (a debug exception): go on */
			return rc;
	}
	return qvm_clear_break(hq->q, 1, entry, err);
}

/*
 * [_end, ALIGN(_end, 2 MiB)), the rest of the image's last 2 MiB block,
 * reserved in the device tree (docs/STUB-PLACEMENT.md). riscv64: a kernel
 * with STRICT_KERNEL_RWX reserves it itself (the stub's early rings live
 * there); one without does not, and then the stub's code goes there too,
 * the image having no padding below __init_begin (hq_place): the block is
 * mapped executable in every boot phase of such a kernel. arm64: where
 * _etext has no padding, the stub goes in the guard page at _end and its
 * page tables after it (vmm/guest/a64-guard.c). QEMU's virt loads a riscv64 Image
 * at its text_offset from the start of RAM, which the synthetic ELF's
 * p_paddr is, p_memsz its image_size; an arm64 one 2 MiB higher when its
 * text_offset falls in the first 4 KiB, where QEMU's boot code goes
 * (load_aarch64_image; hq_stub_install checks where it really is).
 */
static int region_past_end(struct host_qemu *hq, const struct host_boot *b, const struct qvm_arch *arch,
			   void **dtb, size_t *len, struct errbuf *err)
{
	const struct elf_image *elf = &b->img->elf;
	uint64_t end = 0, top;
	void *out = NULL;
	size_t olen = 0;
	int rc;

	for (unsigned i = 0; i < elf->ehdr->e_phnum; i++)
		if (elf->phdr[i].p_type == PT_LOAD && elf->phdr[i].p_paddr + elf->phdr[i].p_memsz > end)
			end = elf->phdr[i].p_paddr + elf->phdr[i].p_memsz;
	if (b->img->arch == IMAGE_ARCH_ARM64) {
		uint64_t flags = 0, first = UINT64_MAX;

		for (unsigned i = 0; i < elf->ehdr->e_phnum; i++)
			if (elf->phdr[i].p_type == PT_LOAD && elf->phdr[i].p_paddr < first)
				first = elf->phdr[i].p_paddr;
		if (first < 4096)
			end += 2ULL << 20;
		/* The Image header's flags (Documentation/arm64/booting.rst): bits 1-2 the page size, 4, 16 or 64 KiB. */
		if (b->img->is_raw && b->img->file_size >= 32)
			memcpy(&flags, b->img->file + 24, sizeof(flags));
		hq->a64_page_shift = (unsigned[]){ 0, 12, 14, 16 }[le64toh(flags) >> 1 & 3];
	}
	end = arch->ram_gpa + ((end + 4095) & ~4095ULL);
	top = (end + (2ULL << 20) - 1) & ~((2ULL << 20) - 1);
	if (!end || top == end)
		return 0;
	rc = devtree_add_reserved(*dtb, *len, "vmmtrace-stub", end, top - end, 0, &out, &olen, err);
	if (rc)
		return rc;
	free(*dtb);
	*dtb = out;
	*len = olen;
	hq->past_end_pa = end;
	hq->past_end_size = top - end;
	return 0;
}

/*
 * arm64 and riscv64: rings outgrow the image's padding (48 KiB on the lean
 * arm64 kernel, 540 KiB on riscv64), and --graph's shadow stacks too, so
 * QEMU boots with its own device tree plus a region at the top of RAM
 * reserved for them (left in the guest's linear map, where the stub can
 * reach it from the hand-over on: hq_rings_area), written to a file for
 * -dtb.
 */
static int region_dtb(struct host_qemu *hq, const struct host_boot *b, struct qemu_config *cfg, char *dtb_path,
		      size_t dtb_len, struct errbuf *err)
{
	const struct qvm_arch *arch = qvm_arch_for(b->img->arch);
	void *dtb = NULL, *out = NULL;
	size_t len = 0, olen = 0;
	int fd = -1, rc;

	hq->area_size = b->stub_bytes;
	if (hq->area_size > b->mem / 4)
		return err_set(err, E2BIG, "--buffer-size: %u CPUs' rings take more than a quarter of --mem", b->ncpus);
	hq->area_pa = arch->ram_gpa + b->mem - hq->area_size;
	if (b->img->arch == IMAGE_ARCH_RISCV64) {
		/*
		 * QEMU's riscv virt loads the device tree in the 2 MiB below the
		 * end of RAM or 3 GiB, whichever comes first (riscv_load_fdt), and
		 * the kernel keeps reading it: the region goes below it.
		 */
		uint64_t end = arch->ram_gpa + b->mem, fdt;

		fdt = (arch->ram_gpa < (3ULL << 30) && end > (3ULL << 30) ? 3ULL << 30 : end) - (2ULL << 20);
		if (fdt < end && fdt + (2ULL << 20) > hq->area_pa)
			hq->area_pa = fdt - hq->area_size;
		if (hq->area_pa < arch->ram_gpa + b->mem / 2)
			return err_set(err, E2BIG, "--buffer-size: %u CPUs' rings do not fit below QEMU's device tree",
				       b->ncpus);
	}
	snprintf(dtb_path, dtb_len, "/tmp/vmmtrace-dtb.XXXXXX");
	rc = qemu_dump_dtb(cfg, &dtb, &len, err);
	if (!rc)
		rc = devtree_add_reserved(dtb, len, "vmmtrace-rings", hq->area_pa, hq->area_size, 0, &out, &olen, err);
	if (!rc && (b->img->arch == IMAGE_ARCH_RISCV64 || b->img->arch == IMAGE_ARCH_ARM64))
		rc = region_past_end(hq, b, arch, &out, &olen, err);
	if (!rc && (fd = mkstemp(dtb_path)) < 0)
		rc = err_set(err, errno, "cannot create %s: %s", dtb_path, strerror(errno));
	if (!rc && write(fd, out, olen) != (ssize_t)olen)
		rc = err_set(err, EIO, "cannot write the device tree to %s", dtb_path);
	if (fd >= 0)
		close(fd);
	if (rc && fd >= 0)
		unlink(dtb_path);
	if (rc)
		dtb_path[0] = 0;
	else
		cfg->dtb = dtb_path;
	free(dtb);
	free(out);
	return rc;
}

/*
 * x86_64: the stub's region (its tables, code and rings: 2 MiB, then the
 * rings and shadow stacks in 2 MiB pages), its size and a first guess of
 * its place, 8 MiB below the top of RAM under 2 GiB. memmap=SIZE$START
 * keeps its code and rings from the kernel (reserved in its E820 map:
 * neither allocated nor in its direct map); written at a fixed width, it
 * is rewritten in place at startup_64, where host-qemu-x86.c places the
 * region clear of what QEMU loaded.
 */
static int region_x86(struct host_qemu *hq, const struct host_boot *b, char *memmap, size_t len, struct errbuf *err)
{
	uint64_t top = b->mem < (2ULL << 30) ? b->mem : 2ULL << 30;

	hq->area_size = HQ_X86_DATA + b->stub_bytes;
	if (hq->area_size > b->mem / 4)
		return err_set(err, E2BIG, "--buffer-size: %u CPUs' rings take more than a quarter of --mem", b->ncpus);
	hq->area_pa = (top - (8ULL << 20) - hq->area_size) & ~((2ULL << 20) - 1);
	snprintf(hq->memmap, sizeof(hq->memmap), HOST_QEMU_MEMMAP_FMT,
		 (unsigned long long)(hq->area_size - HQ_X86_CODE), (unsigned long long)(hq->area_pa + HQ_X86_CODE));
	snprintf(memmap, len, " %s", hq->memmap);
	return 0;
}

/* The kernel's first bytes as QEMU loads them: how the host finds the image in RAM. */
static int kernel_head(const struct host_boot *b, uint8_t *head, size_t len, struct errbuf *err)
{
	if (!b->img->is_raw) {
		/*
		 * x86_64: what the decompressor wrote; loongarch64: what QEMU's
		 * ELF loader wrote. The first bytes of the vmlinux's lowest segment.
		 */
		const struct elf_image *elf = &b->img->elf;
		const uint8_t *first = NULL;
		uint64_t low = UINT64_MAX;

		for (unsigned i = 0; i < elf->ehdr->e_phnum; i++)
			if (elf->phdr[i].p_type == PT_LOAD && elf->phdr[i].p_paddr < low) {
				low = elf->phdr[i].p_paddr;
				first = elf_vaddr_ptr(elf, elf->phdr[i].p_vaddr, len);
			}
		if (!first)
			return err_set(err, ENOEXEC, "%s: the vmlinux inside has no first segment", b->kernel);
		memcpy(head, first, len);
		return 0;
	}
	if (b->img->file_size < len)
		return err_set(err, ENOEXEC, "%s: too short", b->kernel);
	memcpy(head, b->img->file, len);
	return 0;
}

/* The command line: the arch's, or --cmdline-replace, --cmdline's additions, and what a traced boot needs. */
static int hq_cmdline(struct host_qemu *hq, const struct host_boot *b, const struct qvm_arch *arch,
		      const char *memmap)
{
	const char *base = b->cmdline_replace ? b->cmdline_replace : arch->cmdline;
	/* A traced kernel runs at its link addresses (guest_arch.nokaslr_why). */
	const struct guest_arch *ga = guest_arch_of(b->img->arch);
	const char *why = b->traced && ga ? ga->nokaslr_why : NULL;
	int nokaslr = why && !cmdline_has(base, b->cmdline_extra, "nokaslr");

	if (asprintf(&hq->cmdline, "%s%s%s%s", base, b->cmdline_extra, nokaslr ? " nokaslr" : "", memmap) < 0) {
		hq->cmdline = NULL;
		return -ENOMEM;
	}
	if (nokaslr && b->verbose)
		log_info("traced: nokaslr added to the command line (%s)", why);
	if (*memmap && b->verbose)
		log_info("traced:%s added to the command line (the stub and its rings, kept from the kernel)", memmap);
	return 0;
}

/* The signals the guest's run takes, through a signalfd; blocked first. */
static int signals_fd(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if (pthread_sigmask(SIG_BLOCK, &set, NULL))
		return -1;
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/*
 * riscv64 under --deterministic: how far a stop may move the guest's clock
 * (qvm_clock_ceiling), in ticks of QEMU virt's 10 MHz time: 10 s. Until the
 * kernel starts its timer (time_init) each stop moves it that far, so it
 * must outlast the boot's run to ftrace_init, the first stop: 0.2 s on the
 * lean kernels with 512 MiB, 1 s with 4 GiB (memblock's work grows with
 * memory); a boot that outruns it ends with one line at the next stop.
 */
#define DETERMINISTIC_RV_CEILING 100000000

/* QEMU started, stopped before the first instruction (or, x86_64 traced, at the kernel's entry). */
static int hq_open(struct host_qemu *hq, const struct host_boot *b, struct errbuf *err)
{
	const struct qvm_arch *arch = qvm_arch_for(b->img->arch);
	int la64 = b->img->arch == IMAGE_ARCH_LOONGARCH64;
	char memmap[80] = "", dtb[64] = "";
	struct qemu_config cfg = {
		.binary = arch->binary, .machine = arch->machine, .cpu = arch->cpu,
		.bios = b->firmware ? b->firmware : arch->bios,
		.ncpus = b->ncpus, .mem_size = b->mem, .kernel = b->kernel, .initrd = b->initrd,
		.console_socket = 1, .timeout_ms = 10000, .deterministic = b->deterministic,
	};
	struct la64_boot lb = { 0 };
	int consock[2], rc;

	if (b->traced && b->img->arch == IMAGE_ARCH_X86_64 && (rc = region_x86(hq, b, memmap, sizeof(memmap), err)))
		return rc;
	if (hq_cmdline(hq, b, arch, memmap))
		return err_set(err, ENOMEM, "out of memory for the command line");
	cfg.cmdline = hq->cmdline;
	if (la64) {
		/*
		 * QEMU's board takes no less than 1 GiB and gives the kernel
		 * nothing: the host writes the boot data (la64-boot.h), with
		 * the memory the device tree says, and the stub data's region.
		 */
		lb = (struct la64_boot){ .mem = b->mem, .ncpus = b->ncpus, .cmdline = hq->cmdline,
					 .initrd = b->initrd_data, .initrd_size = b->initrd ? b->initrd_size : 0,
					 .region_size = b->traced ? b->stub_bytes : 0 };
		if ((rc = la64_boot_plan(&lb, &b->img->elf, err)))
			return rc;
		if (lb.builtin_dtb && lb.builtin_cpus != b->ncpus)
			log_warn("the kernel's own device tree (CONFIG_BUILTIN_DTB) names %u CPU(s), not %u (--cpus): %s",
				 lb.builtin_cpus, b->ncpus, lb.builtin_cpus > b->ncpus ?
				 "the kernel waits for CPUs this guest has not" : "the other vCPUs stay parked");
		hq->area_pa = lb.region_pa;
		hq->area_size = lb.region_size;
		cfg.cmdline = NULL;
		cfg.initrd = NULL;
		if (cfg.mem_size < arch->min_mem)
			cfg.mem_size = arch->min_mem;
	}
	/* No stub data, no region: an Image without kallsyms (image.h) boots traced for VM events alone. */
	if (b->traced && b->stub_bytes && !la64 && b->img->arch != IMAGE_ARCH_X86_64 &&
	    (rc = region_dtb(hq, b, &cfg, dtb, sizeof(dtb), err)))
		return rc;
	/* The console both ways: QEMU's serial port is the socket's other end. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, consock)) {
		rc = err_set(err, errno, "socketpair: %s", strerror(errno));
		goto out;
	}
	console_room(consock[1]);
	cfg.console_fd = consock[1];
	rc = qvm_open(&hq->qh, &cfg, arch, err);
	close(consock[1]);
	if (rc) {
		close(consock[0]);
		goto out;
	}
	hq->q = &hq->qh;
	hq->h.child = hq->qh.q.pid;
	hq->con_fd = consock[0];
	fcntl(hq->con_fd, F_SETFL, O_NONBLOCK);
	if ((la64 && (rc = la64_boot_write(hq->q, &lb, err))) ||
	    (b->deterministic && (rc = qvm_clock_ceiling(hq->q, DETERMINISTIC_RV_CEILING, err))))
		goto out;
	if ((errno = pthread_create(&hq->con_thread, NULL, console_reader, hq))) {
		rc = err_set(err, errno, "cannot start the console's thread: %s", strerror(errno));
		goto out;
	}
	hq->con_running = 1;
	if (b->verbose)
		log_info("host qemu: %s -M %s, %u vCPU(s), %llu MiB; command line: %s", arch->binary, arch->machine,
			 b->ncpus, (unsigned long long)(b->mem >> 20), hq->cmdline);
	if (la64 && b->verbose)
		log_info("host qemu: loongarch64 boot data written: EFI system table %#llx, command line %#llx, device "
			 "tree %#llx%s%s (QEMU -m %lluM, the guest told %lluM), kernel to %#llx, stub data region %#llx+%#llx, "
			 "initrd %#llx+%#zx", (unsigned long long)LA64_SYSTAB_PA, (unsigned long long)LA64_CMDLINE_PA,
			 (unsigned long long)LA64_FDT_PA,
			 lb.builtin_dtb ? " (unread: the kernel has its own; memory map and initrd in EFI tables)" : "",
			 b->ncpus > 1 ? ", CPUs 1.. parked at 0x30000" : "",
			 (unsigned long long)(cfg.mem_size >> 20), (unsigned long long)(b->mem >> 20),
			 (unsigned long long)lb.kernel_end, (unsigned long long)lb.region_pa,
			 (unsigned long long)lb.region_size, (unsigned long long)lb.initrd_pa, lb.initrd_size);
out:
	if (dtb[0])
		unlink(dtb);	/* QEMU has read it */
	return rc;
}

static void hq_close(struct host_qemu *hq)
{
	if (hq->q)
		qvm_close(hq->q);	/* QEMU's end closes the console: its thread ends */
	console_reader_join(hq);
	if (hq->con_fd >= 0)
		close(hq->con_fd);
	hq->con_fd = -1;
}

int host_qemu_create(struct host **out, const struct host_boot *b, struct errbuf *err)
{
	const struct qvm_arch *arch = qvm_arch_for(b->img->arch);
	struct host_qemu *hq;
	uint8_t head[64];
	int rc;

	*out = NULL;
	if (!arch)
		return err_set(err, EOPNOTSUPP, "%s: no QEMU host for %s kernels", b->kernel, image_arch_name(b->img->arch));
	if (!host_qemu_loads(b->img))
		return err_set(err, ENOEXEC, "%s: --host qemu boots an x86_64 bzImage or an arm64 or riscv64 Image, not "
			       "an ELF vmlinux or a compressed Image (an ELF vmlinux for loongarch64 only)", b->kernel);
	if (b->ncpus > QVM_MAX_CPUS)
		return err_set(err, EINVAL, "--cpus %u: the QEMU host runs at most %d vCPUs", b->ncpus, QVM_MAX_CPUS);
	if (b->mem % (1ULL << 20))
		return err_set(err, EINVAL, "--mem: QEMU takes whole MiB (%llu KiB)", (unsigned long long)(b->mem >> 10));
	if (!(hq = calloc(1, sizeof(*hq))))
		return err_set(err, ENOMEM, "out of memory for the QEMU host");
	hq->con_fd = hq->sfd = hq->wake_fd = -1;
	console_init(&hq->con, b->console_fd);
	if ((hq->sfd = signals_fd()) < 0) {
		rc = err_set(err, errno, "signalfd: %s", strerror(errno));
		goto fail;
	}
	if ((rc = hq_open(hq, b, err)))
		goto fail;
	if (b->traced && b->img->arch == IMAGE_ARCH_X86_64 && (rc = run_to_kernel(hq, &b->img->elf, err)))
		goto fail;
	if ((rc = kernel_head(b, head, sizeof(head), err)) ||
	    (rc = host_qemu_init(hq, b->img->arch, &b->img->elf, b->traced && !hq->signo ? head : NULL, sizeof(head),
				 b->kernel, err)))
		goto fail;
	/* Under -icount x86_64's TSC counts the virtual clock's nanoseconds, not the host's TSC. */
	if (b->deterministic && b->img->arch == IMAGE_ARCH_X86_64)
		hq->clock_khz = 1000000;
	if (hq->signo) {
		char line[128];

		snprintf(line, sizeof(line), "stopped by signal %d (%s) before the kernel started", hq->signo,
			 strsignal(hq->signo));
		hq->h.ops->request_stop(&hq->h, VM_STOP_SIGNAL, line);
	}
	*out = &hq->h;
	return 0;
fail:
	hq_close(hq);
	if (hq->sfd >= 0)
		close(hq->sfd);
	free(hq->cmdline);
	free(hq);
	return rc;
}

int hq_start(struct host *h, struct errbuf *err)
{
	struct host_qemu *hq = hq_of(h);

	(void)err;
	if (console_input_start(&hq->con, console_deliver, hq))
		log_warn("the guest gets no console input: no thread for it");
	return 0;
}

/*
 * Every vCPU's registers while QEMU still stands stopped where the guest
 * ended (a breakpoint at its panic, a hang the watchdog stopped): the
 * flight recorder prints them after QEMU is gone.
 */
static void hq_keep_registers(struct host_qemu *hq)
{
	struct errbuf err;

	for (unsigned i = 0; i < hq->h.ncpus && i < HOST_MAX_CPUS; i++) {
		hq->regs[i][0] = 0;
		hq->regs_pc[i] = 0;
		if (!hq->dead && qvm_vcpu_dump(hq->q, i, hq->regs[i], sizeof(hq->regs[i]), &hq->regs_pc[i], &err))
			snprintf(hq->regs[i], sizeof(hq->regs[i]), "(%s)\n", err.msg);
		else if (hq->dead)
			snprintf(hq->regs[i], sizeof(hq->regs[i]), "(QEMU ended: no registers)\n");
	}
}

/*
 * This thread drives QEMU (host-qemu.h) and the tracer's hooks run on it;
 * signals are looked at between the host's steps. A signal stops the guest
 * as on KVM, with the trace so far written. At the end QEMU is ended, its
 * console read to the last byte, and a panic it printed is the reason.
 */
enum vm_stop_reason hq_run(struct host *h, int *signo)
{
	struct host_qemu *hq = hq_of(h);
	char line[160];
	int sig;

	while (host_qemu_step(hq, 20) == HOST_QEMU_RUNNING) {
		if ((sig = take_signal(hq)) && !hq->signo) {
			hq->signo = sig;
			snprintf(line, sizeof(line), "stopped by signal %d (%s)", sig, strsignal(sig));
			h->ops->stop(h, HOST_NO_CPU, VM_STOP_SIGNAL, line);
		}
	}
	console_input_stop(&hq->con);
	/* A stop asked for without a pause (the tracer's output failed): QEMU still runs. */
	if (!hq->dead && hq->q->running) {
		struct qvm_stop st;
		struct errbuf err;

		if (qvm_pause(hq->q, &st, &err))
			hq->dead = 1;
	}
	hq_keep_registers(hq);
	/* Stopped here, QEMU is done with: its console's end is then in the socket. */
	qemu_kill(&hq->q->q);
	console_reader_join(hq);
	if (hq->reason == VM_STOP_GUEST_EXIT && console_panic(&hq->con)) {
		hq->reason = VM_STOP_GUEST_PANIC;
		snprintf(hq->msg, sizeof(hq->msg), "guest kernel panic: %s", console_panic(&hq->con));
	}
	*signo = hq->signo;
	return hq->reason;
}

const char *hq_stop_msg(struct host *h)
{
	return hq_of(h)->msg;
}

void hq_vcpu_registers(struct host *h, unsigned cpu, char *buf, size_t len, uint64_t *pc)
{
	struct host_qemu *hq = hq_of(h);

	*pc = cpu < HOST_MAX_CPUS ? hq->regs_pc[cpu] : 0;
	snprintf(buf, len, "%s", cpu < HOST_MAX_CPUS && hq->regs[cpu][0] ? hq->regs[cpu] : "(no registers)\n");
}

void hq_report(struct host *h, FILE *f)
{
	fprintf(f, "vmmtrace: qemu: %llu doorbells answered\n", (unsigned long long)atomic_load(&hq_of(h)->doorbells));
}

void hq_destroy(struct host *h)
{
	struct host_qemu *hq = hq_of(h);

	if (!hq)
		return;
	console_input_stop(&hq->con);
	hq_close(hq);
	host_qemu_destroy(hq);
	if (hq->sfd >= 0)
		close(hq->sfd);
	free(hq->cmdline);
	free(hq);
}
