// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "proto/control.h"
#include "vmm/control/control.h"
#include "vmm/control/control-frame.h"
#include "vmm/trace/filter.h"
#include "vmm/util/log.h"
#include "vmm/trace/tracer.h"
#include "vmm/trace/vmev-select.h"
#include "vmm/output/writer.h"
#include "vmm/host/host.h"

#define CTL_MAX_CONNS      32
#define CTL_PARTIAL_NS     (5ULL * 1000 * 1000 * 1000)	/* a request must arrive whole within 5 s */
#define CTL_DRAIN_MS       5000		/* a closing window's client must read within 5 s */

struct ctl_conn {
	int fd;
	struct ctl_frame in;
	uint64_t partial_since;
	int closing;			/* close once the queue is sent */
	pthread_mutex_t lock;		/* out: the consumer appends events */
	char *out;			/* out[out_off, out_len) waits to be sent */
	size_t out_off, out_len, out_cap;
	int queue_err;			/* an events message that could not be queued */
	int draining;			/* its window closes: send, do not refuse, its last bytes */
	struct trace_client *client;
	const struct trace_writer_ops *format;	/* of the attach request's window */
	uint32_t vm_events;		/* its "=event=GLOB" options (vmevent.h) */
	int args;			/* its "=args=1" option (--args) */
	int graph, retval;		/* "=graph=1", "=retval=1" (--graph, --retval) */
	unsigned graph_depth;		/* "=graph-depth=N" (--graph-depth) */
	FILE *events;
	struct control *ctl;
};

struct control {
	struct host *host;
	struct tracer *t;
	int listen_fd;
	size_t backlog;			/* queued bytes an attach client may fall behind */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int wake[2];
	pthread_t thread;
	int running;
	volatile int stop;
	struct ctl_conn *conns[CTL_MAX_CONNS];
};

static uint64_t ctl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int ctl_write(struct ctl_conn *c);

/*
 * A closing window writes its last bytes at once (a trace.dat: all of
 * them) on the control thread, while its client waits for them: send until
 * at most `keep` bytes are queued, waiting for the client to read, up to
 * CTL_DRAIN_MS without progress. Fails with -ETIMEDOUT or -EPIPE.
 */
static int ctl_send_down_to(struct ctl_conn *c, size_t keep)
{
	for (;;) {
		struct pollfd p = { .fd = c->fd, .events = POLLOUT };
		size_t queued;

		if (ctl_write(c) < 0)
			return -EPIPE;
		pthread_mutex_lock(&c->lock);
		queued = c->out_len - c->out_off;
		pthread_mutex_unlock(&c->lock);
		if (queued <= keep)
			return 0;
		if (poll(&p, 1, CTL_DRAIN_MS) <= 0)
			return -ETIMEDOUT;
	}
}

/*
 * Queues one message; safe from any thread. Events stop at the connection's
 * backlog (the client reads too slowly): they fail with -ENOBUFS and the
 * window is then ended (ctl_end_failed). A closing window's last events are
 * sent as they come instead (ctl_send_down_to). Replies and END always fit.
 */
static int ctl_queue(struct ctl_conn *c, uint16_t type, int32_t status, const void *p, size_t len)
{
	size_t need, queued;
	int rc = 0;

	pthread_mutex_lock(&c->lock);
	queued = c->out_len - c->out_off;
	if (type == VT_CTL_EVENTS && c->draining && !c->queue_err &&
	    queued + CTL_FRAME_HDR_LEN + len > c->ctl->backlog) {
		pthread_mutex_unlock(&c->lock);
		rc = ctl_send_down_to(c, c->ctl->backlog / 2);
		pthread_mutex_lock(&c->lock);
		if (rc)
			c->queue_err = rc;
		queued = c->out_len - c->out_off;
	}
	if (c->out_off && (c->out_off >= queued || c->out_len + CTL_FRAME_HDR_LEN + len > c->out_cap)) {
		memmove(c->out, c->out + c->out_off, queued);	/* the sent prefix goes */
		c->out_off = 0;
		c->out_len = queued;
	}
	need = c->out_len + CTL_FRAME_HDR_LEN + len;
	if (type == VT_CTL_EVENTS && (c->queue_err || queued + CTL_FRAME_HDR_LEN + len > c->ctl->backlog)) {
		rc = c->queue_err = c->queue_err ? c->queue_err : -ENOBUFS;
	} else if (need > c->out_cap) {
		size_t cap = need * 2;
		char *n = realloc(c->out, cap);

		if (!n)
			rc = -ENOMEM;
		else {
			c->out = n;
			c->out_cap = cap;
		}
		if (!n && type == VT_CTL_EVENTS)
			c->queue_err = rc;
	}
	if (!rc)
		c->out_len += ctl_frame_encode(c->out + c->out_len, type, status, p, (uint32_t)len);
	pthread_mutex_unlock(&c->lock);
	(void)!write(c->ctl->wake[1], "", 1);
	return rc;
}

static int ctl_replyf(struct ctl_conn *c, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int ctl_replyf(struct ctl_conn *c, int status, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return ctl_queue(c, VT_CTL_REPLY, status, msg, strlen(msg));
}

/*
 * fopencookie write: the window's bytes become VT_CTL_EVENTS messages. A
 * message that cannot be queued fails the write, so the client's writer
 * keeps the error (nothing after a gap) and the window is ended. A failure
 * returns 0, never -1: glibc's large-write path takes the count as unsigned,
 * and a -1 there made it copy past the caller's buffer (a crash, with a
 * trace.dat header larger than the backlog).
 */
static ssize_t ctl_events_write(void *cookie, const char *buf, size_t len)
{
	for (size_t off = 0; off < len; off += VT_CTL_MAX_PAYLOAD) {
		size_t n = len - off < VT_CTL_MAX_PAYLOAD ? len - off : VT_CTL_MAX_PAYLOAD;
		int rc = ctl_queue(cookie, VT_CTL_EVENTS, 0, buf + off, n);

		if (rc) {
			errno = -rc;
			return 0;
		}
	}
	return (ssize_t)len;
}

/*
 * The request's patterns into a filter. A bad one gets its reply here and
 * leaves nothing to destroy: the patterns before it are dropped too.
 */
static int ctl_parse_patterns(struct ctl_conn *c, struct filter *f)
{
	struct errbuf err;
	const char *p;
	size_t off = 0;
	int rc;

	filter_init(f);
	c->format = NULL;
	c->vm_events = 0;
	c->args = c->graph = c->retval = 0;
	c->graph_depth = 0;
	while ((rc = ctl_frame_next_pattern(c->in.payload, c->in.hdr.length, &off, &p)) > 0) {
		const char *fmt = ctl_frame_option(p, "format"), *ev = ctl_frame_option(p, "event");
		const char *flag = ctl_frame_option(p, "args"), *depth = ctl_frame_option(p, "graph-depth");
		int *which = &c->args;

		if (!flag && (flag = ctl_frame_option(p, "graph")))
			which = &c->graph;
		else if (!flag && (flag = ctl_frame_option(p, "retval")))
			which = &c->retval;
		if (flag || depth) {
			char *end = NULL;
			unsigned long n = depth ? strtoul(depth, &end, 10) : 0;

			if (flag ? strcmp(flag, "1") : (!*depth || *end || n < 1 || n > VT_SHADOW_FRAMES)) {
				ctl_replyf(c, -EINVAL, "unknown option in the request: %s", p);
				filter_destroy(f);
				return -EINVAL;
			}
			if (flag)
				*which = 1;
			else
				c->graph_depth = (unsigned)n;
			continue;
		}

		if (ev && vmev_select(ev, &c->vm_events)) {
			ctl_replyf(c, -EINVAL, "--event '%s' matches no event (kvm:pio, kvm:mmio, kvm:msr, "
				   "kvm:exit, kvm:hypercall, kvm:cpuid)", ev);
			filter_destroy(f);
			return -EINVAL;
		}
		if (ev)
			continue;
		if (p[0] == '=' && (!fmt || !(c->format = trace_writer_find(fmt)))) {
			ctl_replyf(c, -EINVAL, "unknown %s in the request: %s", fmt ? "format" : "option", p);
			filter_destroy(f);
			return -EINVAL;
		}
		if (fmt)
			continue;
		if ((rc = filter_add(f, p, &err))) {
			ctl_replyf(c, rc, "bad pattern: %s", err.msg);
			filter_destroy(f);
			return rc;
		}
	}
	if (!rc && (c->retval || c->graph_depth) && !c->graph) {
		ctl_replyf(c, -EINVAL, "--retval and --graph-depth need --graph");
		filter_destroy(f);
		return -EINVAL;
	}
	if (rc) {
		ctl_replyf(c, -EINVAL, "malformed request: %s", rc == -EBADMSG ?
			   "patterns must be NUL-terminated" : "pattern with a control or space character");
		filter_destroy(f);
	}
	return rc;
}

/* The backlog as --attach-backlog takes it: "64 KiB", "2 MiB". */
static const char *ctl_size_str(size_t bytes, char *buf, size_t len)
{
	if (bytes % (1 << 20) == 0)
		snprintf(buf, len, "%zu MiB", bytes >> 20);
	else if (bytes % 1024 == 0)
		snprintf(buf, len, "%zu KiB", bytes >> 10);
	else
		snprintf(buf, len, "%zu bytes", bytes);
	return buf;
}

static void ctl_attach(struct ctl_conn *c)
{
	struct trace_client_opts opts;
	static const cookie_io_functions_t io = { .write = ctl_events_write };
	struct errbuf err;
	struct filter f;
	char msg[512], size[32];
	int rc;

	if (c->client) {
		ctl_replyf(c, -EBUSY, "this connection is already attached");
		return;
	}
	if (ctl_parse_patterns(c, &f))
		return;
	if (!f.includes && !c->vm_events) {
		ctl_replyf(c, -EINVAL, "attach needs at least one pattern to trace or an event");
		goto out;
	}
	pthread_mutex_lock(&c->lock);
	c->queue_err = 0;
	pthread_mutex_unlock(&c->lock);
	c->events = fopencookie(c, "w", io);
	/* Before the writer's header: C allows setvbuf only before a stream's first output. */
	if (!c->events) {
		ctl_replyf(c, -ENOMEM, "out of memory");
		goto out;
	}
	setvbuf(c->events, NULL, _IOFBF, 1 << 16);
	opts = (struct trace_client_opts){ .args = c->args, .graph = c->graph, .retval = c->retval,
					   .graph_depth = c->graph_depth };
	if ((rc = tracer_client_new(c->ctl->t, c->events, 1, c->format, &opts, &c->client, &err))) {
		c->client = NULL;
		c->events = NULL;
		if (c->queue_err == -ENOBUFS)
			ctl_replyf(c, -ENOBUFS, "the %s trace's header is larger than the guest's "
				   "--attach-backlog (%s)", c->format ? c->format->name : "text",
				   ctl_size_str(c->ctl->backlog, size, sizeof(size)));
		else
			ctl_replyf(c, rc < 0 ? rc : -rc, "%s", err.msg);
		goto out;
	}
	tracer_client_set_events(c->client, c->vm_events);
	rc = tracer_attach(c->ctl->t, f.includes ? &f : NULL, c->client, msg, sizeof(msg), &err);
	if (rc) {
		tracer_client_free(c->client);
		c->client = NULL;
		c->events = NULL;
		ctl_replyf(c, rc, "%s", err.msg);
	} else {
		char evmsg[256] = "";

		tracer_vmev_describe(c->ctl->t, c->vm_events, evmsg, sizeof(evmsg));
		ctl_replyf(c, 0, "%s%s", msg, evmsg);
	}
out:
	filter_destroy(&f);
}

/*
 * Closes c's window: its slots released, its writer closed (its last bytes,
 * a trace.dat's all, queued; with drain sent as they come, past the
 * backlog), the client freed. Returns the status for VT_CTL_END: 0, or
 * -errno when the window lost bytes, with why in msg (and the log).
 */
static int ctl_close_window(struct ctl_conn *c, int drain, char *msg, size_t len)
{
	const char *fmt = c->format ? c->format->name : "text";
	char size[32];
	int rc, qerr;

	pthread_mutex_lock(&c->lock);
	c->draining = drain;
	pthread_mutex_unlock(&c->lock);
	rc = tracer_detach_client(c->ctl->t, c->client);
	tracer_client_free(c->client);	/* closes c->events */
	c->client = NULL;
	c->events = NULL;
	pthread_mutex_lock(&c->lock);
	qerr = c->queue_err;
	c->draining = 0;
	c->queue_err = 0;
	pthread_mutex_unlock(&c->lock);
	msg[0] = 0;
	if (qerr == -ENOBUFS)
		snprintf(msg, len, "the window was ended: this client fell %s behind "
			 "(boot --attach-backlog); its trace stops there",
			 ctl_size_str(c->ctl->backlog, size, sizeof(size)));
	else if (qerr == -ETIMEDOUT)
		snprintf(msg, len, "the window was ended: this client read nothing for %u s while its "
			 "last events were sent; its trace stops there", CTL_DRAIN_MS / 1000);
	else if (qerr || rc)
		snprintf(msg, len, "the window was ended: its %s trace could not be %s: %s", fmt,
			 qerr ? "queued" : "written", strerror(qerr ? -qerr : -rc));
	if (msg[0] && qerr != -EPIPE)	/* a client that left hears nothing */
		log_warn("attach client: %s", msg);
	return qerr ? qerr : rc;
}

/* The client's window ends: its events so far, then VT_CTL_END. */
static void ctl_detach_self(struct ctl_conn *c)
{
	char msg[256];
	int st;

	if (!c->client) {
		ctl_replyf(c, -EINVAL, "this connection is not attached");
		return;
	}
	st = ctl_close_window(c, 1, msg, sizeof(msg));
	ctl_replyf(c, 0, "detached");
	ctl_queue(c, VT_CTL_END, st, msg, strlen(msg));
}

static void ctl_detach(struct ctl_conn *c)
{
	struct filter f;
	char msg[256];

	if (ctl_parse_patterns(c, &f))
		return;
	tracer_detach_globs(c->ctl->t, f.count ? &f : NULL, msg, sizeof(msg));
	ctl_replyf(c, 0, "%s", msg);
	filter_destroy(&f);
}

static void ctl_status(struct ctl_conn *c)
{
	struct host *h = c->ctl->host;
	struct filter pats;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f) {
		ctl_replyf(c, -ENOMEM, "out of memory");
		return;
	}
	if (ctl_parse_patterns(c, &pats)) {
		fclose(f);
		free(buf);
		return;
	}
	if (pats.count && !pats.includes) {	/* !GLOB alone would select no slot, silently */
		ctl_replyf(c, -EINVAL, "the patterns only exclude (!GLOB): name the slots to describe with a GLOB");
		filter_destroy(&pats);
		fclose(f);
		free(buf);
		return;
	}
	fprintf(f, "host: %s\nvcpus: %u\n", h->name, h->ncpus);
	if (h->ops->describe)
		h->ops->describe(h, f);
	tracer_status(c->ctl->t, f);
	if (pats.includes)
		tracer_status_slots(c->ctl->t, &pats, f);
	filter_destroy(&pats);
	fclose(f);
	ctl_queue(c, VT_CTL_REPLY, 0, buf, len);
	free(buf);
}

static void ctl_handle(struct ctl_conn *c)
{
	switch (c->in.hdr.type) {
	case VT_CTL_ATTACH: ctl_attach(c); break;
	case VT_CTL_DETACH_SELF: ctl_detach_self(c); break;
	case VT_CTL_DETACH: ctl_detach(c); break;
	case VT_CTL_STATUS: ctl_status(c); break;
	case VT_CTL_NMI:
		if (c->ctl->host->ops->inject_nmi)
			ctl_replyf(c, 0, "NMI sent to %u vCPUs", c->ctl->host->ops->inject_nmi(c->ctl->host));
		else
			ctl_replyf(c, -EOPNOTSUPP, "the %s host cannot send an NMI", c->ctl->host->name);
		break;
	case VT_CTL_STOP:
		ctl_replyf(c, 0, "stopping the guest");
		c->ctl->host->ops->stop(c->ctl->host, HOST_NO_CPU, VM_STOP_REQUESTED, "stopped by 'vmmtrace stop'");
		break;
	default:
		ctl_replyf(c, -EINVAL, "unknown request type %u", c->in.hdr.type);
		break;
	}
}

static void ctl_conn_free(struct control *ctl, unsigned i)
{
	struct ctl_conn *c = ctl->conns[i];

	if (c->client) {	/* gone without detaching: release its slots */
		tracer_detach_client(ctl->t, c->client);
		tracer_client_free(c->client);
	}
	close(c->fd);
	ctl_frame_destroy(&c->in);
	free(c->out);
	pthread_mutex_destroy(&c->lock);
	free(c);
	ctl->conns[i] = NULL;
}

static void ctl_accept(struct control *ctl)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct ctl_conn *c;
	unsigned i;
	int fd = accept4(ctl->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0)
		return;
	for (i = 0; i < CTL_MAX_CONNS && ctl->conns[i]; i++)
		;
	c = i < CTL_MAX_CONNS ? calloc(1, sizeof(*c)) : NULL;
	if (!c) {
		close(fd);
		return;
	}
	c->fd = fd;
	c->ctl = ctl;
	ctl_frame_init(&c->in);
	pthread_mutex_init(&c->lock, NULL);
	ctl->conns[i] = c;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) || cred.uid != geteuid()) {
		ctl_replyf(c, -EACCES, "permission denied: peer uid %d is not the guest owner's",
			   (int)cred.uid);
		c->closing = 1;
	}
}

/* A request the framing refuses: the reply says why; -1 to close at once. */
static int ctl_refuse(struct ctl_conn *c, int err)
{
	if (err == -ENOMEM)
		return -1;
	if (err == -EMSGSIZE)
		ctl_replyf(c, -EMSGSIZE, "request of %u bytes exceeds the limit of %u",
			   c->in.hdr.length, VT_CTL_MAX_PAYLOAD);
	else
		ctl_replyf(c, -EPROTO, "not a vmmtrace control request (bad magic or version)");
	c->closing = 1;
	return 0;
}

/*
 * Reads what is there; handles each complete request. Never reads past the
 * request at hand: bytes after a refused one stay unread, and the parser
 * takes all that was read. Returns -1 to close.
 */
static int ctl_read(struct ctl_conn *c)
{
	char buf[4096];

	for (;;) {
		size_t want = ctl_frame_want(&c->in), used;
		ssize_t n = read(c->fd, buf, want < sizeof(buf) ? want : sizeof(buf));
		int rc;

		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		if (n == 0) {
			if (ctl_frame_partial(&c->in))
				ctl_replyf(c, -EPROTO, "truncated request: the connection ended mid-message");
			c->closing = 1;
			return 0;
		}
		if (!c->partial_since)
			c->partial_since = ctl_now();
		rc = ctl_frame_feed(&c->in, buf, n, &used);
		if (rc < 0)
			return ctl_refuse(c, rc);
		if (rc) {
			ctl_handle(c);
			c->partial_since = 0;
		}
	}
}

/* Sends what is queued; -1 when the peer is gone. */
static int ctl_write(struct ctl_conn *c)
{
	int rc = 0;

	pthread_mutex_lock(&c->lock);
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			rc = errno == EAGAIN || errno == EINTR ? 0 : -1;
			break;
		}
		c->out_off += n;
	}
	if (c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/*
 * A window whose bytes could not be queued, or whose writer failed, ends
 * here: the guest and the other clients go on.
 */
static void ctl_end_failed(struct ctl_conn *c)
{
	char msg[256];
	int qerr, st;

	pthread_mutex_lock(&c->lock);
	qerr = c->queue_err;
	pthread_mutex_unlock(&c->lock);
	if (!qerr && !tracer_client_error(c->client))
		return;
	st = ctl_close_window(c, 0, msg, sizeof(msg));
	ctl_queue(c, VT_CTL_END, st, msg, strlen(msg));
}

static void ctl_poll_once(struct control *ctl)
{
	struct pollfd fds[CTL_MAX_CONNS + 2];
	unsigned idx[CTL_MAX_CONNS];
	unsigned n = 2;
	char drain[256];

	fds[0] = (struct pollfd){ .fd = ctl->listen_fd, .events = POLLIN };
	fds[1] = (struct pollfd){ .fd = ctl->wake[0], .events = POLLIN };
	for (unsigned i = 0; i < CTL_MAX_CONNS; i++) {
		struct ctl_conn *c = ctl->conns[i];

		if (!c)
			continue;
		pthread_mutex_lock(&c->lock);
		fds[n] = (struct pollfd){ .fd = c->fd, .events = (c->closing ? 0 : POLLIN) |
								(c->out_len > c->out_off ? POLLOUT : 0) };
		pthread_mutex_unlock(&c->lock);
		idx[n - 2] = i;
		n++;
	}
	if (poll(fds, n, 200) < 0)
		return;
	if (fds[1].revents)
		while (read(ctl->wake[0], drain, sizeof(drain)) > 0)
			;
	for (unsigned k = 2; k < n; k++) {
		struct ctl_conn *c = ctl->conns[idx[k - 2]];
		int gone = 0;

		if (c->client)
			ctl_end_failed(c);
		if (fds[k].revents & POLLIN)
			gone = ctl_read(c) < 0;
		if (!gone && c->partial_since && ctl_now() - c->partial_since > CTL_PARTIAL_NS) {
			ctl_replyf(c, -ETIMEDOUT, "truncated request: incomplete after 5 s");
			c->closing = 1;
		}
		if (!gone)
			gone = ctl_write(c) < 0 || (fds[k].revents & (POLLERR | POLLHUP) && !(fds[k].revents & POLLIN));
		pthread_mutex_lock(&c->lock);
		gone |= c->closing && c->out_len == c->out_off;
		pthread_mutex_unlock(&c->lock);
		if (gone)
			ctl_conn_free(ctl, idx[k - 2]);
	}
	if (fds[0].revents & POLLIN)
		ctl_accept(ctl);
}

static void *ctl_thread(void *arg)
{
	struct control *ctl = arg;

	tracer_rcu_register();
	while (!ctl->stop)
		ctl_poll_once(ctl);
	for (unsigned i = 0; i < CTL_MAX_CONNS; i++)
		if (ctl->conns[i]) {
			struct ctl_conn *c = ctl->conns[i];

			if (c->client)
				ctl_end_failed(c);
			if (c->client) {	/* the guest stopped: end the window cleanly */
				char msg[256];
				int st = ctl_close_window(c, 1, msg, sizeof(msg));

				ctl_queue(c, VT_CTL_END, st, msg, strlen(msg));
			}
			fcntl(c->fd, F_SETFL, 0);	/* the last words, blocking */
			ctl_write(c);
			ctl_conn_free(ctl, i);
		}
	tracer_rcu_unregister();
	return NULL;
}

static int ctl_listen(struct control *ctl, const char *path, struct errbuf *err)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	mode_t old;
	int fd, rc;

	if (strlen(path) >= sizeof(addr.sun_path))
		return err_set(err, ENAMETOOLONG, "--control path '%s' is too long", path);
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return err_set(err, errno, "socket: %s", strerror(errno));
	old = umask(0177);	/* the socket is born 0600: no window for others */
	rc = bind(fd, (struct sockaddr *)&addr, sizeof(addr));
	umask(old);
	if (rc || chmod(path, 0600) || listen(fd, 16)) {
		rc = errno;
		close(fd);
		return err_set(err, rc, "cannot listen on '%s': %s", path, strerror(rc));
	}
	ctl->listen_fd = fd;
	snprintf(ctl->path, sizeof(ctl->path), "%s", path);
	return 0;
}

int control_start(struct control **out, struct host *host, struct tracer *t, const char *path,
		  size_t backlog, struct errbuf *err)
{
	struct control *ctl = calloc(1, sizeof(*ctl));
	int rc;

	if (!ctl)
		return err_set(err, ENOMEM, "out of memory");
	ctl->host = host;
	ctl->t = t;
	ctl->backlog = backlog ? backlog : CONTROL_DEFAULT_BACKLOG;
	if (pipe2(ctl->wake, O_CLOEXEC | O_NONBLOCK)) {
		free(ctl);
		return err_set(err, errno, "pipe: %s", strerror(errno));
	}
	if ((rc = ctl_listen(ctl, path, err)))
		goto fail;
	if ((rc = -pthread_create(&ctl->thread, NULL, ctl_thread, ctl))) {
		err_set(err, -rc, "cannot start the control thread");
		unlink(ctl->path);
		close(ctl->listen_fd);
		goto fail;
	}
	ctl->running = 1;
	*out = ctl;
	return 0;
fail:
	close(ctl->wake[0]);
	close(ctl->wake[1]);
	free(ctl);
	return rc;
}

void control_stop(struct control *ctl)
{
	if (!ctl)
		return;
	ctl->stop = 1;
	(void)!write(ctl->wake[1], "", 1);
	if (ctl->running)
		pthread_join(ctl->thread, NULL);
	close(ctl->listen_fd);
	unlink(ctl->path);
	close(ctl->wake[0]);
	close(ctl->wake[1]);
	free(ctl);
}
