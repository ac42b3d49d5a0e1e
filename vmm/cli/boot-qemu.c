// SPDX-License-Identifier: GPL-2.0
/*
 * vmmtrace boot --host qemu: the guest runs under QEMU (vmm/qemu/), the
 * second host backend, for arm64 and riscv64 guests and, on request or
 * where /dev/kvm is missing, x86_64 ones. It runs the guest with its
 * console on stdout (or --console FILE) until it resets or powers off (or
 * --stop-at), traced by the same tracer as on KVM for arm64 and riscv64
 * kernels (--trace, --notrace, -o, --mode, --buffer-size, --stop-at, and
 * --control for vmmtrace attach/detach/status/stop), and
 * ends with the same exit statuses as the KVM host: 0, 3 for a kernel
 * panic (its line repeated on stderr), 128+N for signal N, 1 when QEMU
 * cannot run it, 6 when the trace cannot be written.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "vmm/cli/boot-qemu.h"
#include "vmm/cli/cmd.h"
#include "vmm/control/control.h"
#include "vmm/guest/stub-geom.h"
#include "vmm/image/image.h"
#include "vmm/qemu/devtree.h"
#include "vmm/qemu/host-qemu.h"
#include "vmm/qemu/qhost.h"
#include "vmm/trace/tracer.h"
#include "vmm/util/log.h"

#define PANIC_MARK "Kernel panic - not syncing: "
#define LINE_MAX_BYTES 1024
/* x86_64: how long the bzImage's decompressor may take under TCG. */
#define BOOT_ENTRY_WAIT_MS 120000

struct console_watch {
	int out;			/* where the guest's console goes */
	char line[LINE_MAX_BYTES];
	size_t len;
	char panic[256];		/* the first panic line's message */
};

static void watch_line(struct console_watch *w)
{
	const char *p;

	w->line[w->len] = 0;
	p = strstr(w->line, PANIC_MARK);
	if (p && !w->panic[0]) {
		snprintf(w->panic, sizeof(w->panic), "%s", p + strlen(PANIC_MARK));
		w->panic[strcspn(w->panic, "\r\n")] = 0;
	}
	w->len = 0;
}

/* Forwards what the console socket holds; returns 0 at its end, 1 if more may come. */
static int console_pump(struct console_watch *w, int fd)
{
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	for (ssize_t i = 0; i < n; i++) {
		if (w->len < sizeof(w->line) - 1)
			w->line[w->len++] = buf[i];
		if (buf[i] == '\n')
			watch_line(w);
	}
	for (ssize_t off = 0; off < n;) {
		ssize_t m = write(w->out, buf + off, (size_t)(n - off));

		if (m <= 0)
			break;	/* the console's reader went away: the guest goes on */
		off += m;
	}
	return n > 0;
}

/*
 * The guest's input, as on KVM (vmm/devices/console.c): vmmtrace's stdin
 * when it is a terminal (switched to raw input, signals kept), a pipe or
 * a file, written to the console's socket, whose other end is QEMU's
 * serial port. Looked at between the run loop's steps; what the socket
 * does not take at once waits in pend, and stdin is not read meanwhile.
 */
struct console_input {
	int on, eof, tty_saved;
	struct termios saved;
	char pend[4096];
	size_t off, len;
};

static void console_input_open(struct console_input *in)
{
	struct stat st;

	memset(in, 0, sizeof(*in));
	if (fstat(0, &st) || !(isatty(0) || S_ISFIFO(st.st_mode) || S_ISREG(st.st_mode)))
		return;
	in->on = 1;
	if (isatty(0) && !tcgetattr(0, &in->saved)) {
		struct termios raw = in->saved;

		raw.c_lflag &= ~(ICANON | ECHO | ECHONL | IEXTEN);
		raw.c_iflag &= ~(ICRNL | IXON);
		raw.c_cc[VMIN] = 1;
		raw.c_cc[VTIME] = 0;
		in->tty_saved = !tcsetattr(0, TCSANOW, &raw);
	}
}

static void console_input_close(struct console_input *in)
{
	if (in->tty_saved)
		tcsetattr(0, TCSANOW, &in->saved);
	in->tty_saved = 0;
	in->on = 0;
}

static void console_input_pump(struct console_input *in, int con)
{
	struct pollfd p = { .fd = 0, .events = POLLIN };

	if (!in->on)
		return;
	if (!in->len && !in->eof && poll(&p, 1, 0) > 0) {
		ssize_t n = read(0, in->pend, sizeof(in->pend));

		if (n <= 0)
			in->eof = 1;	/* the guest just gets no more input */
		else
			in->off = 0, in->len = (size_t)n;
	}
	while (in->len) {
		ssize_t n = send(con, in->pend + in->off, in->len, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n <= 0)
			break;	/* QEMU has not taken it yet, or is gone */
		in->off += (size_t)n;
		in->len -= (size_t)n;
	}
}

/* SIGINT, SIGTERM and SIGHUP arrive through a signalfd: QEMU is ended first. */
static int signals_fd(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -1;
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* The guest's console after its end: what is left in the socket, and a panic it printed. */
static int console_end(struct console_watch *w, int con, int open, int status)
{
	while (open && console_pump(w, con))
		;
	if (w->len)
		watch_line(w);
	if (w->panic[0] && status == EXIT_OK) {
		fprintf(stderr, "vmmtrace: guest kernel panic: %s\n", w->panic);
		return EXIT_GUEST_PANIC;
	}
	return status;
}

/* Untraced: runs until the guest ends or a signal comes; returns the exit status. */
static int run_loop(struct qhost *h, struct console_watch *w, struct console_input *in, int con, int sfd)
{
	struct pollfd pfd[2] = { { .fd = con, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
	struct errbuf err = { "" };
	struct qhost_stop st;
	int open = 1, rc;

	if ((rc = qhost_resume(h, &err)))
		return cmd_fail("boot", EXIT_FAILURE_RUN, "%s", err.msg);
	for (;;) {
		struct signalfd_siginfo si;

		if (poll(pfd, 2, 20) > 0) {
			if (pfd[0].revents)
				open = console_pump(w, con);
			if (pfd[1].revents && read(sfd, &si, sizeof(si)) == sizeof(si)) {
				qhost_close(h);
				while (console_pump(w, con))
					;
				return EXIT_SIGNAL_BASE + (int)si.ssi_signo;
			}
		}
		if (!open)
			pfd[0].fd = -1;
		console_input_pump(in, con);
		rc = qhost_wait(h, 0, &st, &err);
		if (rc == -ETIMEDOUT)
			continue;
		if (rc == -ECHILD)
			break;
		if (rc)
			return cmd_fail("boot", EXIT_FAILURE_RUN, "%s", err.msg);
		/* No breakpoint is set: a stop is QEMU's own (a debug exception); go on. */
		if ((rc = qhost_resume(h, &err)))
			return cmd_fail("boot", EXIT_FAILURE_RUN, "%s", err.msg);
	}
	return console_end(w, con, open, EXIT_OK);
}

/*
 * Traced, the console has a thread of its own: QEMU's 16550 (x86_64,
 * riscv64) writes to the socket a byte at a time and, when the socket
 * does not take one, retries a few times and then drops it. A socket
 * charges each one-byte write its whole buffer overhead, so a few hundred
 * bytes left unread fill it, and the thread that drives QEMU waits up to
 * 20 ms at a time for a gdbstub stop: long enough to lose console output.
 */
struct console_reader {
	pthread_t tid;
	struct console_watch *w;
	int con, running;
};

static void *console_reader_main(void *arg)
{
	struct console_reader *r = arg;
	struct pollfd p = { .fd = r->con, .events = POLLIN };

	while (poll(&p, 1, -1) >= 0 || errno == EINTR)
		if (p.revents && !console_pump(r->w, r->con))
			break;	/* the end: QEMU closed its side */
	return NULL;
}

/* After QEMU's end: the rest of the console is forwarded, w is this thread's again. */
static void console_reader_join(struct console_reader *r)
{
	if (r->running)
		pthread_join(r->tid, NULL);
	r->running = 0;
}

/*
 * Traced: this thread drives QEMU (host-qemu.h) and the tracer's hooks run
 * on it; signals are looked at between the host's steps,
 * and the control socket's changes are served there (it pauses through
 * the host). A signal stops the guest as on KVM, with the trace so far
 * written.
 */
static int run_traced(struct host_qemu *hq, struct tracer *t, struct control *control, struct console_reader *cr,
		      struct console_input *in, int sfd)
{
	struct pollfd pfd = { .fd = sfd, .events = POLLIN };
	int signo = 0, status;
	char line[160];

	while (host_qemu_step(hq, 20) == HOST_QEMU_RUNNING) {
		struct signalfd_siginfo si;

		if (poll(&pfd, 1, 0) > 0 && read(sfd, &si, sizeof(si)) == sizeof(si) && !signo) {
			signo = (int)si.ssi_signo;
			snprintf(line, sizeof(line), "stopped by signal %d (%s)", signo, strsignal(signo));
			hq->h.ops->stop(&hq->h, HOST_NO_CPU, VM_STOP_SIGNAL, line);
		}
		console_input_pump(in, cr->con);
	}
	status = boot_exit_status(hq->reason, signo);
	/* Its attached clients end first, their windows' events written. */
	control_stop(control);
	/* Stopped here, QEMU is done with: its console's end is then in the socket. */
	qemu_kill(&hq->q->q);
	console_reader_join(cr);
	status = console_end(cr->w, cr->con, 0, status);
	fprintf(stderr, "vmmtrace: %s\n", hq->msg);
	status = boot_finish_trace(t, hq->msg, status);
	tracer_summary(t, stderr);
	log_info("qemu: %llu doorbells answered", (unsigned long long)atomic_load(&hq->doorbells));
	return status;
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

/* The guest's first bytes as QEMU loads them: how the QEMU host finds the image in RAM. */
static int image_head(const char *path, uint8_t *buf, size_t len)
{
	FILE *f = fopen(path, "rb");
	int ok = f && fread(buf, 1, len, f) == len;

	if (f)
		fclose(f);
	return ok ? 0 : -EIO;
}

/*
 * x86_64: QEMU boots the bzImage, whose decompressor runs first. The traced
 * kernel starts at the vmlinux's entry (startup_64's physical address: the
 * decompressor jumps there under its identity map, at the link address
 * when not randomised), where QEMU stops before the tracer places
 * anything. Returns 0 there, or the run's exit status.
 */
static int run_to_kernel(struct qhost *h, const struct elf_image *elf, int sfd)
{
	struct pollfd pfd = { .fd = sfd, .events = POLLIN };
	uint64_t entry = elf->ehdr->e_entry, waited_ms = 0;
	struct errbuf err = { "" };
	struct qhost_stop st;
	int rc;

	if ((rc = qhost_set_break(h, 1, entry, &err)) || (rc = qhost_resume(h, &err)))
		return cmd_fail("boot", EXIT_FAILURE_RUN, "%s", err.msg);
	for (;;) {
		struct signalfd_siginfo si;

		if (poll(&pfd, 1, 0) > 0 && read(sfd, &si, sizeof(si)) == sizeof(si))
			return EXIT_SIGNAL_BASE + (int)si.ssi_signo;
		rc = qhost_wait(h, 20, &st, &err);
		if (rc == -ETIMEDOUT && (waited_ms += 20) < BOOT_ENTRY_WAIT_MS)
			continue;
		if (rc == -ETIMEDOUT)
			return cmd_fail("boot", EXIT_FAILURE_RUN, "the kernel's entry (startup_64 at %#llx) was not reached "
					"in %d s: was it loaded elsewhere (randomised)?", (unsigned long long)entry,
					BOOT_ENTRY_WAIT_MS / 1000);
		if (rc == -ECHILD)
			return cmd_fail("boot", EXIT_FAILURE_RUN, "QEMU ended before the kernel started (the console says "
					"what the bzImage's decompressor did)");
		if (rc)
			return cmd_fail("boot", EXIT_FAILURE_RUN, "%s", err.msg);
		if (st.pc == entry)
			break;
		if ((rc = qhost_resume(h, &err)))	/* QEMU's own stop (a debug exception): go on */
			return cmd_fail("boot", EXIT_FAILURE_RUN, "%s", err.msg);
	}
	if ((rc = qhost_clear_break(h, 1, entry, &err)))
		return cmd_fail("boot", EXIT_FAILURE_RUN, "%s", err.msg);
	return 0;
}

/* The tracer's set-up failed: because QEMU is gone (then that is the line), or as msg says. */
static int setup_fail(struct host_qemu *hq, int status, const char *msg)
{
	if (!hq->dead)
		return cmd_fail("boot", status, "%s", msg);
	host_qemu_step(hq, 0);	/* why it is gone */
	return cmd_fail("boot", EXIT_FAILURE_RUN, "%s", hq->msg);
}

/*
 * arm64 and riscv64: rings outgrow the image's padding (48 KiB on the lean
 * arm64 kernel, 540 KiB on riscv64), and --graph's shadow stacks too, so
 * QEMU boots with its own device tree plus a region at the top of RAM
 * reserved for them (left in the guest's linear map, where the stub can
 * reach it from the hand-over on: host-qemu-stub.c), written to a file for
 * -dtb.
 */
struct ring_region {
	char dtb[64];			/* the tree's file, "" when none */
	uint64_t pa, size;
	char memmap[64];		/* x86_64: the command line's memmap= (HOST_QEMU_MEMMAP_FMT) */
};

static int ring_region_dtb(const struct boot_qemu_opts *o, struct qemu_config *cfg, const struct qhost_arch *arch,
			   struct ring_region *rr, struct errbuf *err)
{
	void *dtb = NULL, *out = NULL;
	size_t len = 0, olen = 0;
	int fd = -1, rc;

	/* The rings, their headers' page, and --graph's shadow stacks (tracer_rings_move). */
	rr->size = stub_geom_region_bytes(o->ncpus, o->tcfg->buffer_size);
	if (rr->size > o->mem / 4)
		return err_set(err, E2BIG, "--buffer-size: %u CPUs' rings take more than a quarter of --mem",
			       o->ncpus);
	rr->pa = arch->ram_gpa + o->mem - rr->size;
	if (o->arch == IMAGE_ARCH_RISCV64) {
		/*
		 * QEMU's riscv virt loads the device tree in the 2 MiB below the
		 * end of RAM or 3 GiB, whichever comes first (riscv_load_fdt), and
		 * the kernel keeps reading it: the region goes below it.
		 */
		uint64_t end = arch->ram_gpa + o->mem, fdt;

		fdt = (arch->ram_gpa < (3ULL << 30) && end > (3ULL << 30) ? 3ULL << 30 : end) - (2ULL << 20);
		if (fdt < end && fdt + (2ULL << 20) > rr->pa)
			rr->pa = fdt - rr->size;
		if (rr->pa < arch->ram_gpa + o->mem / 2)
			return err_set(err, E2BIG, "--buffer-size: %u CPUs' rings do not fit below QEMU's device tree",
				       o->ncpus);
	}
	snprintf(rr->dtb, sizeof(rr->dtb), "/tmp/vmmtrace-dtb.XXXXXX");
	rc = qemu_dump_dtb(cfg, &dtb, &len, err);
	if (!rc)
		rc = devtree_add_reserved(dtb, len, "vmmtrace-rings", rr->pa, rr->size, 0, &out, &olen, err);
	if (!rc && (fd = mkstemp(rr->dtb)) < 0)
		rc = err_set(err, errno, "cannot create %s: %s", rr->dtb, strerror(errno));
	if (!rc && write(fd, out, olen) != (ssize_t)olen)
		rc = err_set(err, EIO, "cannot write the device tree to %s", rr->dtb);
	if (fd >= 0)
		close(fd);
	if (rc && fd >= 0)
		unlink(rr->dtb);
	if (rc)
		rr->dtb[0] = 0;
	else
		cfg->dtb = rr->dtb;
	free(dtb);
	free(out);
	return rc;
}

/*
 * x86_64: the stub's region (its tables, code and rings: 2 MiB, then the
 * rings and shadow stacks in 2 MiB pages, arch/x86_64/stub-map.h), its
 * size and a first guess of its place, 8 MiB below the top of RAM under
 * 2 GiB. memmap=SIZE$START keeps its code and rings from the kernel
 * (reserved in its E820 map: neither allocated nor in its direct map);
 * written at a fixed width, it is rewritten in place at startup_64, where
 * host-qemu-x86.c places the region clear of what QEMU loaded.
 */
static int x86_region(const struct boot_qemu_opts *o, struct ring_region *rr, char *memmap, size_t len,
		      struct errbuf *err)
{
	uint64_t rings = stub_geom_region_bytes(o->ncpus, o->tcfg->buffer_size);
	uint64_t top = o->mem < (2ULL << 30) ? o->mem : 2ULL << 30;

	rr->size = HQ_X86_DATA + rings;
	if (rr->size > o->mem / 4)
		return err_set(err, E2BIG, "--buffer-size: %u CPUs' rings take more than a quarter of --mem",
			       o->ncpus);
	rr->pa = (top - (8ULL << 20) - rr->size) & ~((2ULL << 20) - 1);
	snprintf(rr->memmap, sizeof(rr->memmap), HOST_QEMU_MEMMAP_FMT,
		 (unsigned long long)(rr->size - HQ_X86_CODE), (unsigned long long)(rr->pa + HQ_X86_CODE));
	snprintf(memmap, len, " %s", rr->memmap);
	return 0;
}

static int traced_run(const struct boot_qemu_opts *o, struct qhost *h, const struct ring_region *rr,
		      struct console_reader *cr, struct console_input *in, int sfd)
{
	struct tracer_config tcfg = *o->tcfg;
	struct errbuf err = { "" };
	struct control *control = NULL;
	struct host_qemu hq;
	struct tracer *t = NULL;
	uint8_t head[64];
	int status;

	if (o->arch == IMAGE_ARCH_X86_64) {
		/* What the decompressor wrote: the first bytes of the vmlinux's lowest segment. */
		const struct elf_image *elf = &o->img->elf;
		const uint8_t *first = NULL;
		uint64_t low = UINT64_MAX;

		for (unsigned i = 0; i < elf->ehdr->e_phnum; i++)
			if (elf->phdr[i].p_type == PT_LOAD && elf->phdr[i].p_paddr < low) {
				low = elf->phdr[i].p_paddr;
				first = elf_vaddr_ptr(elf, elf->phdr[i].p_vaddr, sizeof(head));
			}
		if (!first)
			return cmd_fail("boot", EXIT_BAD_INPUT, "%s: the vmlinux inside has no first segment", o->kernel);
		memcpy(head, first, sizeof(head));
		if ((status = run_to_kernel(h, &o->img->elf, sfd)))
			return status;
	} else if (image_head(o->kernel, head, sizeof(head))) {
		return cmd_fail("boot", EXIT_BAD_INPUT, "cannot read %s", o->kernel);
	}
	if (host_qemu_init(&hq, h, o->arch, &o->img->elf, head, sizeof(head), o->kernel, &err))
		return cmd_fail("boot", EXIT_BAD_INPUT, "%s", err.msg);
	hq.area_pa = rr->pa;
	hq.area_size = rr->size;
	snprintf(hq.memmap, sizeof(hq.memmap), "%s", rr->memmap);
	tcfg.live = o->control != NULL;
	if (tracer_create(&t, &hq.h, o->img, &tcfg, &err)) {
		status = setup_fail(&hq, EXIT_BAD_INPUT, err.msg);
	} else if (tracer_start(t, &err)) {
		status = setup_fail(&hq, tracer_output_error(t) ? EXIT_TRACE_WRITE : EXIT_FAILURE_RUN, err.msg);
	} else if (o->control && control_start(&control, &hq.h, t, o->control, o->attach_backlog, &err)) {
		status = cmd_fail("boot", EXIT_BAD_INPUT, "%s", err.msg);
	} else if ((status = boot_sandbox(o->no_sandbox, h->q.pid))) {
		control_stop(control);
	} else {
		status = run_traced(&hq, t, control, cr, in, sfd);
	}
	qhost_close(h);
	tracer_destroy(t);
	host_qemu_destroy(&hq);
	return status;
}

static int boot_traced(const struct boot_qemu_opts *o, struct qhost *h, const struct ring_region *rr,
		       struct console_watch *w, struct console_input *in, int con, int sfd)
{
	struct console_reader cr = { .w = w, .con = con };
	int status;

	if ((errno = pthread_create(&cr.tid, NULL, console_reader_main, &cr)))
		return cmd_fail("boot", EXIT_FAILURE_RUN, "cannot start the console's thread: %s", strerror(errno));
	cr.running = 1;
	status = traced_run(o, h, rr, &cr, in, sfd);
	qhost_close(h);	/* QEMU's end closes the console: its thread ends */
	console_reader_join(&cr);
	return status;
}

int boot_qemu(const struct boot_qemu_opts *o)
{
	const struct qhost_arch *arch = qhost_arch_for(o->arch);
	struct console_watch w = { .out = o->console_fd };
	struct console_input in;
	struct errbuf err = { "" };
	struct ring_region rr = { "", 0, 0, "" };
	char *cmdline = NULL, memmap[64] = "";
	struct qhost h;
	int consock[2], sfd, status, rc, nokaslr, traced = o->tcfg->n_include || o->tcfg->stop_at || o->control;

	if (o->unsupported)
		return o->kvm_missing ? cmd_fail("boot", EXIT_FAILURE_RUN, "cannot open /dev/kvm, and the QEMU host "
						 "(--host qemu) has no --event, --handshake or --flight-recorder yet")
				      : cmd_fail("boot", EXIT_BAD_INPUT, "%s", "the QEMU host (--host qemu) has no "
						 "--event, --handshake or --flight-recorder yet (docs/HOSTS.md)");
	if (!o->loadable)
		return cmd_fail("boot", EXIT_BAD_INPUT, "%s: --host qemu boots an x86_64 bzImage or an arm64 or "
				"riscv64 Image, not an ELF vmlinux or a compressed Image", o->kernel);
	if (o->console_fd < 0)
		return cmd_fail("boot", EXIT_BAD_INPUT, "cannot open --console '%s': %s", o->console, strerror(errno));
	if (!arch)
		return cmd_fail("boot", EXIT_BAD_INPUT, "%s: no QEMU host for this architecture", o->kernel);
	if (o->mem % (1ULL << 20))
		return cmd_fail("boot", EXIT_BAD_INPUT, "--mem: QEMU takes whole MiB (%llu KiB)",
				(unsigned long long)(o->mem >> 10));
	/*
	 * A traced kernel runs at its link addresses: the slots, the stub and
	 * the rings are placed by them. arm64 randomises its base from the
	 * device tree's kaslr-seed or, on QEMU's -cpu max, from RNDR, and
	 * x86_64's decompressor from RDRAND and the TSC, unless told nokaslr,
	 * so a traced boot of either always gets it. x86_64's stub goes in RAM
	 * memmap= keeps from the kernel (x86_region).
	 */
	nokaslr = traced && o->arch != IMAGE_ARCH_RISCV64 &&
		  !cmdline_has(o->cmdline_replace ? o->cmdline_replace : arch->cmdline, o->cmdline_extra, "nokaslr");
	if (traced && o->arch == IMAGE_ARCH_X86_64 && x86_region(o, &rr, memmap, sizeof(memmap), &err))
		return cmd_fail("boot", EXIT_BAD_INPUT, "%s", err.msg);
	if (asprintf(&cmdline, "%s%s%s%s", o->cmdline_replace ? o->cmdline_replace : arch->cmdline,
		     o->cmdline_extra, nokaslr ? " nokaslr" : "", memmap) < 0)
		return cmd_fail("boot", EXIT_FAILURE_RUN, "out of memory");
	if (nokaslr && o->verbose)
		fprintf(stderr, "vmmtrace: traced: nokaslr added to the command line (the tracer places its slots "
			"at the kernel's link addresses)\n");
	if (*memmap && o->verbose)
		fprintf(stderr, "vmmtrace: traced:%s added to the command line (the stub and its rings, kept from "
			"the kernel)\n", memmap);
	/* The console both ways: QEMU's serial port is the socket's other end. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, consock)) {
		free(cmdline);
		return cmd_fail("boot", EXIT_FAILURE_RUN, "socketpair: %s", strerror(errno));
	}
	console_room(consock[1]);
	struct qemu_config cfg = {
		.binary = arch->binary, .machine = arch->machine, .cpu = arch->cpu, .bios = arch->bios,
		.ncpus = o->ncpus, .mem_size = o->mem, .kernel = o->kernel, .initrd = o->initrd,
		.cmdline = cmdline, .console_path = NULL, .console_fd = consock[1], .console_socket = 1,
		.timeout_ms = 10000,
	};

	if (traced && o->arch != IMAGE_ARCH_X86_64 && ring_region_dtb(o, &cfg, arch, &rr, &err)) {
		close(consock[0]);
		close(consock[1]);
		free(cmdline);
		return cmd_fail("boot", EXIT_FAILURE_RUN, "%s", err.msg);
	}
	sfd = signals_fd();
	rc = sfd < 0 ? -errno : qhost_open(&h, &cfg, arch, &err);
	if (rr.dtb[0])
		unlink(rr.dtb);	/* QEMU has read it */
	if (rc) {
		close(consock[0]);
		close(consock[1]);
		free(cmdline);
		if (sfd >= 0)
			close(sfd);
		return cmd_fail("boot", EXIT_FAILURE_RUN, "%s", sfd < 0 ? strerror(errno) : err.msg);
	}
	close(consock[1]);
	fcntl(consock[0], F_SETFL, O_NONBLOCK);
	if (o->verbose)
		fprintf(stderr, "vmmtrace: host qemu: %s -M %s, %u vCPU(s), %llu MiB; command line: %s\n",
			arch->binary, arch->machine, o->ncpus, (unsigned long long)(o->mem >> 20), cmdline);
	console_input_open(&in);
	if (traced)
		status = boot_traced(o, &h, &rr, &w, &in, consock[0], sfd);
	else if (!(status = boot_sandbox(o->no_sandbox, h.q.pid)))
		status = run_loop(&h, &w, &in, consock[0], sfd);
	console_input_close(&in);
	free(cmdline);
	qhost_close(&h);
	close(consock[0]);
	close(sfd);
	return status;
}

int boot_qemu_loads(const struct kernel_image *img)
{
	return img->is_bzimage || (img->is_raw && img->codec == CODEC_NONE);
}

int boot_host_parse(const char *s, enum boot_host *host)
{
	if (!strcmp(s, "kvm"))
		*host = BOOT_HOST_KVM;
	else if (!strcmp(s, "qemu"))
		*host = BOOT_HOST_QEMU;
	else
		return -EINVAL;
	return 0;
}

enum boot_host boot_host_choose(enum boot_host want, int image_arch, int *kvm_missing)
{
	*kvm_missing = 0;
	if (want != BOOT_HOST_AUTO)
		return want;
	if (image_arch != IMAGE_ARCH_X86_64)
		return BOOT_HOST_QEMU;
	*kvm_missing = access("/dev/kvm", R_OK | W_OK) != 0;
	return *kvm_missing ? BOOT_HOST_QEMU : BOOT_HOST_KVM;
}
