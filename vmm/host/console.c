// SPDX-License-Identifier: GPL-2.0
/* The guest's console on every host (console.h). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vmm/host/console.h"

static const char PANIC_MARK[] = "Kernel panic - not syncing: ";
static const char POWEROFF_MARK[] = "reboot: Power down";

void console_init(struct console *c, int out_fd)
{
	memset(c, 0, sizeof(*c));
	c->out = out_fd;
	c->wake[0] = c->wake[1] = -1;
}

void console_watch_line(void *opaque, const char *line)
{
	struct console *c = opaque;
	const char *p = strstr(line, PANIC_MARK);

	if (p && !c->panic[0]) {
		snprintf(c->panic, sizeof(c->panic), "%s", p + sizeof(PANIC_MARK) - 1);
		c->panic[strcspn(c->panic, "\r\n")] = 0;
	}
	if (strstr(line, POWEROFF_MARK))
		atomic_store(&c->poweroff, 1);
}

static void console_line_done(struct console *c)
{
	c->line[c->len] = 0;
	console_watch_line(c, c->line);
	c->len = 0;
}

void console_write(struct console *c, const void *buf, size_t len)
{
	const char *b = buf;

	for (size_t i = 0; i < len; i++) {
		if (c->len < sizeof(c->line) - 1)
			c->line[c->len++] = b[i];
		if (b[i] == '\n')
			console_line_done(c);
	}
	for (size_t off = 0; c->out >= 0 && off < len;) {
		ssize_t m = write(c->out, b + off, len - off);

		if (m <= 0)
			break;	/* the console's reader went away: the guest goes on */
		off += (size_t)m;
	}
}

void console_end(struct console *c)
{
	if (c->len)
		console_line_done(c);
}

const char *console_panic(const struct console *c)
{
	return c->panic[0] ? c->panic : NULL;
}

static void console_feed(struct console *c, const uint8_t *buf, size_t len)
{
	struct timespec wait = { 0, 5 * 1000 * 1000 };

	while (len && !atomic_load(&c->stop)) {
		size_t n = c->deliver(c->opaque, buf, len);

		buf += n;
		len -= n;
		if (len)
			nanosleep(&wait, NULL);	/* the guest has not taken what it was given yet */
	}
}

static void *console_thread(void *arg)
{
	struct console *c = arg;
	struct pollfd fds[2] = { { .fd = 0, .events = POLLIN }, { .fd = c->wake[0], .events = POLLIN } };
	uint8_t buf[256];

	while (!atomic_load(&c->stop)) {
		ssize_t n;

		if (poll(fds, 2, -1) < 0 && errno != EINTR)
			break;
		if (fds[1].revents)
			break;
		if (!fds[0].revents)
			continue;
		n = read(0, buf, sizeof(buf));
		if (n <= 0)
			break;	/* EOF: the guest just gets no more input */
		console_feed(c, buf, (size_t)n);
	}
	return NULL;
}

int console_input_start(struct console *c, console_deliver_fn *deliver, void *opaque)
{
	struct stat st;

	if (fstat(0, &st) || !(isatty(0) || S_ISFIFO(st.st_mode) || S_ISREG(st.st_mode)))
		return 0;
	if (pipe(c->wake))
		return -errno;
	if (isatty(0) && !tcgetattr(0, &c->saved)) {
		struct termios raw = c->saved;

		/* Raw input for the guest's line discipline; keep ISIG for Ctrl-C. */
		raw.c_lflag &= ~(ICANON | ECHO | ECHONL | IEXTEN);
		raw.c_iflag &= ~(ICRNL | IXON);
		raw.c_cc[VMIN] = 1;
		raw.c_cc[VTIME] = 0;
		if (!tcsetattr(0, TCSANOW, &raw))
			c->tty_saved = 1;
	}
	c->deliver = deliver;
	c->opaque = opaque;
	atomic_store(&c->stop, 0);
	if (pthread_create(&c->thread, NULL, console_thread, c)) {
		console_input_stop(c);
		return -EAGAIN;
	}
	c->running = 1;
	return 0;
}

void console_input_stop(struct console *c)
{
	atomic_store(&c->stop, 1);
	if (c->running) {
		(void)!write(c->wake[1], "x", 1);
		pthread_join(c->thread, NULL);
		c->running = 0;
	}
	if (c->tty_saved) {
		tcsetattr(0, TCSANOW, &c->saved);
		c->tty_saved = 0;
	}
	if (c->wake[0] >= 0) {
		close(c->wake[0]);
		close(c->wake[1]);
		c->wake[0] = c->wake[1] = -1;
	}
}
