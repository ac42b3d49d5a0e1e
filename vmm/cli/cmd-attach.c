// SPDX-License-Identifier: GPL-2.0
/* vmmtrace attach: trace a running guest through its control socket, then detach. */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vmm/cli/cmd.h"
#include "vmm/cli/fatal.h"
#include "vmm/control/control-frame.h"
#include "vmm/control/ctl-client.h"
#include "vmm/trace/vmev-select.h"
#include "vmm/output/writer.h"

#define ATTACH_MAX_GLOBS 4096

static const char attach_usage[] =
	"usage: vmmtrace attach SOCKET --trace GLOB [--trace GLOB]... [options]\n"
	"  --trace GLOB       trace the functions matching GLOB (repeatable)\n"
	"  --event GLOB       record VM events matching GLOB (kvm:pio, kvm:exit, ...; repeatable;\n"
	"                     with --trace or alone; text, raw or dat: docs/VM-EVENTS.md)\n"
	"  --notrace GLOB     but not these (repeatable)\n"
	"  -o, --output FILE  write the trace to FILE (default: stdout); its name picks the\n"
	"                     format as for boot: .txt/.trace text, .dat trace.dat,\n"
	"                     .perfetto/.pftrace/.pb Perfetto, anything else raw\n"
	"  --format FMT       text, dat, perfetto or raw, whatever -o's name says\n"
	"  --args             each call's arguments, named and typed by the kernel's BTF,\n"
	"                     as ftrace's func-args option prints them (text, raw, Perfetto)\n"
	"  --graph            each call's return too, as the function_graph tracer prints\n"
	"                     calls (every format); calls in flight at a detach still return\n"
	"  --retval           with --graph: each return value (funcgraph-retval)\n"
	"  --graph-depth N    with --graph: print calls at most N deep\n"
	"  --duration SECS    detach after SECS seconds (default: at Ctrl-C or SIGTERM)\n";

static volatile sig_atomic_t attach_stop;
/*
 * One message's payload: a reply, or a window's bytes. Events come before
 * the attach reply too (the raw format's header and symbols chunks, 180 KB
 * for a real kernel), so even that first read takes a whole message.
 */
static char attach_buf[VT_CTL_MAX_PAYLOAD + 1];

static void attach_on_signal(int sig)
{
	(void)sig;
	attach_stop = 1;
}

struct attach_opts {
	const char *socket, *output;
	const struct trace_writer_ops *format;
	const char *inc[ATTACH_MAX_GLOBS], *exc[ATTACH_MAX_GLOBS];
	unsigned ninc, nexc;
	const char *ev[ATTACH_MAX_GLOBS];
	unsigned nev;
	uint32_t events;
	int args, graph, retval;
	const char *graph_depth;
	double duration;
};

static int attach_parse(int argc, char **argv, struct attach_opts *o)
{
	static const struct option longopts[] = {
		{ "trace", required_argument, NULL, 't' }, { "notrace", required_argument, NULL, 'N' },
		{ "output", required_argument, NULL, 'o' }, { "duration", required_argument, NULL, 'd' },
		{ "format", required_argument, NULL, 'f' }, { "event", required_argument, NULL, 'E' },
		{ "args", no_argument, NULL, 'A' }, { "help", no_argument, NULL, 'h' },
		{ "graph", no_argument, NULL, 'P' }, { "retval", no_argument, NULL, 'V' },
		{ "graph-depth", required_argument, NULL, 'D' }, { 0 },
	};
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
		case 'N':
			if ((c == 't' ? o->ninc : o->nexc) == ATTACH_MAX_GLOBS)
				return cmd_fail("attach", EXIT_BAD_INPUT, "too many patterns at %s", optarg);
			if (c == 't')
				o->inc[o->ninc++] = optarg;
			else
				o->exc[o->nexc++] = optarg;
			break;
		case 'o': o->output = optarg; break;
		case 'A': o->args = 1; break;
		case 'P': o->graph = 1; break;
		case 'V': o->retval = 1; break;
		case 'D': {
			unsigned long n;

			errno = 0;
			n = strtoul(optarg, &end, 10);
			if (errno || *end || end == optarg || *optarg == '-' || n < 1 || n > VT_SHADOW_FRAMES)
				return cmd_fail("attach", EXIT_BAD_INPUT, "--graph-depth must be a number from 1 to %d, not '%s'",
						VT_SHADOW_FRAMES, optarg);
			o->graph_depth = optarg;
			break;
		}
		case 'E':
			if (vmev_select(optarg, &o->events))
				return cmd_fail("attach", EXIT_BAD_INPUT, "--event '%s' matches no event (kvm:pio, "
						"kvm:mmio, kvm:msr, kvm:exit, kvm:hypercall, kvm:cpuid)", optarg);
			if (o->nev == ATTACH_MAX_GLOBS)
				return cmd_fail("attach", EXIT_BAD_INPUT, "too many --event globs at %s", optarg);
			o->ev[o->nev++] = optarg;
			break;
		case 'f':
			if (!(o->format = trace_writer_find(optarg)))
				return cmd_fail("attach", EXIT_BAD_INPUT,
						"--format must be text, dat, perfetto or raw, not '%s'", optarg);
			break;
		case 'd':
			o->duration = strtod(optarg, &end);
			if (*end || end == optarg || !(o->duration > 0) || o->duration > 1e9)
				return cmd_fail("attach", EXIT_BAD_INPUT,
						"--duration must be a positive number of seconds, not %s", optarg);
			break;
		case 'h': fputs(attach_usage, stdout); return -1;
		default:
			return cmd_fail("attach", EXIT_BAD_INPUT, "unknown or incomplete option %s",
					argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return cmd_fail("attach", EXIT_BAD_INPUT, "expected exactly one SOCKET argument (see --help)");
	if (!o->ninc && !o->nev)
		return cmd_fail("attach", EXIT_BAD_INPUT, "at least one --trace GLOB (or --event GLOB) is needed");
	o->socket = argv[optind];
	if (!o->format)
		o->format = o->output ? trace_writer_for_path(o->output) : &trace_writer_text;
	if ((o->retval || o->graph_depth) && !o->graph)
		return cmd_fail("attach", EXIT_BAD_INPUT, "--retval and --graph-depth need --graph");
	if (o->graph && !o->ninc)
		return cmd_fail("attach", EXIT_BAD_INPUT, "--graph needs --trace: the functions whose calls it shows");
	return 0;
}

static double attach_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * A failed write to the trace file (disk full, file too large, I/O error)
 * ends this client with one line; closing the socket is the detach, so the
 * guest and other clients go on. A raw trace keeps its complete chunks.
 */
static int attach_write_fail(const char *name)
{
	int e = errno ? errno : EIO;

	return cmd_fail("attach", EXIT_TRACE_WRITE, "cannot write %s: %s", name, strerror(e));
}

/*
 * No window was opened: the output holds no trace (at most the start of a
 * header sent before the refusal), so a regular file made for it goes.
 */
static void attach_discard(FILE *out, const char *path)
{
	struct stat st;

	if (out == stdout)
		return;
	if (!fstat(fileno(out), &st) && S_ISREG(st.st_mode))
		unlink(path);
	fclose(out);
}

/* Copies events to out until the server says END; returns 0 or an exit status. */
static int attach_stream(int fd, FILE *out, const char *name, double deadline)
{
	char *buf = attach_buf;
	struct vt_ctl_hdr h;
	int detaching = 0, rc;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (!detaching && (attach_stop || (deadline && attach_now() >= deadline))) {
			if (ctl_send(fd, VT_CTL_DETACH_SELF, 0, "", 0))
				break;
			detaching = 1;
		}
		if (poll(&p, 1, 100) <= 0)
			continue;
		if ((rc = ctl_recv(fd, &h, buf, sizeof(attach_buf))))
			break;
		errno = 0;
		if (h.type == VT_CTL_EVENTS && fwrite(buf, 1, h.length, out) != h.length)
			return attach_write_fail(name);
		if (h.type == VT_CTL_REPLY && h.status)	/* said, but the window goes on */
			cmd_fail("attach", 0, "%s", buf);
		if (h.type == VT_CTL_END && h.status)	/* the guest's side ended the window */
			return fflush(out) ? attach_write_fail(name) :
			       cmd_fail("attach", EXIT_TRACE_WRITE, "%s", buf);
		if (h.type == VT_CTL_END)
			return fflush(out) ? attach_write_fail(name) : EXIT_OK;
	}
	return cmd_fail("attach", EXIT_FAILURE_RUN, "the guest's control socket closed before the trace ended");
}

int cmd_attach(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = attach_on_signal };
	char *reply = attach_buf;
	char payload[VT_CTL_MAX_PAYLOAD];
	struct attach_opts o;
	struct vt_ctl_hdr h;
	struct errbuf err;
	FILE *out = stdout;
	const char *name;
	int fd, len, rc;

	if ((rc = attach_parse(argc, argv, &o)))
		return rc < 0 ? EXIT_OK : rc;
	len = ctl_frame_pack_patterns(payload, sizeof(payload), o.inc, o.ninc, o.exc, o.nexc);
	if (len >= 0)	/* the server writes the window in this format; we store its bytes */
		len = ctl_frame_pack_option(payload, sizeof(payload), len, "format", o.format->name);
	if (o.args && len >= 0)
		len = ctl_frame_pack_option(payload, sizeof(payload), len, "args", "1");
	if (o.graph && len >= 0)
		len = ctl_frame_pack_option(payload, sizeof(payload), len, "graph", "1");
	if (o.retval && len >= 0)
		len = ctl_frame_pack_option(payload, sizeof(payload), len, "retval", "1");
	if (o.graph_depth && len >= 0)
		len = ctl_frame_pack_option(payload, sizeof(payload), len, "graph-depth", o.graph_depth);
	for (unsigned i = 0; i < o.nev && len >= 0; i++)
		len = ctl_frame_pack_option(payload, sizeof(payload), len, "event", o.ev[i]);
	if (len < 0)
		return cmd_fail("attach", EXIT_BAD_INPUT, "the patterns are too long together");
	name = o.output ? o.output : "the trace to stdout";
	fatal_signals_install("attach", o.output, o.format == trace_writer_find("raw"));
	if (o.output && !(out = fopen(o.output, "w")))
		return cmd_fail("attach", EXIT_BAD_INPUT, "cannot open output '%s': %s", o.output, strerror(errno));
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	fd = ctl_connect(o.socket, &err);
	if (fd < 0) {
		attach_discard(out, o.output);
		return cmd_fail("attach", EXIT_BAD_INPUT, "%s", err.msg);
	}
	ctl_send(fd, VT_CTL_ATTACH, 0, payload, len);	/* a refusal's reply may already wait */
	/* A write failing here fails again, and is reported, in attach_stream. */
	while (!(rc = ctl_recv(fd, &h, reply, sizeof(attach_buf))) && h.type != VT_CTL_REPLY)
		if (h.type == VT_CTL_EVENTS)
			(void)!fwrite(reply, 1, h.length, out);
	if (rc || h.status) {
		close(fd);
		attach_discard(out, o.output);
		/* Out of memory, or a header larger than the boot's --attach-backlog: not the request's fault. */
		return cmd_fail("attach", !rc && (h.status == -ENOMEM || h.status == -ENOBUFS) ?
				EXIT_FAILURE_RUN : EXIT_BAD_INPUT,
				"%s", rc ? "no reply from the control socket" : reply);
	}
	fprintf(stderr, "vmmtrace attach: %s\n", reply);
	rc = attach_stream(fd, out, name, o.duration ? attach_now() + o.duration : 0);
	close(fd);
	errno = 0;
	if (out != stdout && fclose(out) && rc == EXIT_OK)
		rc = attach_write_fail(name);
	return rc;
}
