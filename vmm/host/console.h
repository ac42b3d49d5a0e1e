/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guest's console as the user sees it, the same on every host: what
 * the guest prints goes to a file descriptor as it comes and is watched
 * line by line for the kernel's panic and power-off messages (with
 * panic=-1 a panic ends in a reset, which alone looks like a reboot);
 * vmmtrace's stdin, when it is a terminal (switched to raw input, signals
 * kept), a pipe or a file, goes to the guest through whatever the host
 * delivers input with (KVM: its UART; QEMU: the socket to its serial
 * port).
 */
#ifndef VMM_HOST_CONSOLE_H
#define VMM_HOST_CONSOLE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <termios.h>

#define CONSOLE_LINE_MAX 1024

/*
 * Hands len bytes of input to the guest; returns how many it took (0: not
 * now, the console tries again a moment later).
 */
typedef size_t console_deliver_fn(void *opaque, const uint8_t *buf, size_t len);

struct console {
	int out;			/* where the guest's output goes (-1: nowhere) */
	char line[CONSOLE_LINE_MAX];	/* the line being printed (console_write) */
	size_t len;
	char panic[256];		/* the first panic line's message, "" until then */
	atomic_int poweroff;		/* the kernel said it powers down */
	/* Input (console_input_start). */
	console_deliver_fn *deliver;
	void *opaque;
	pthread_t thread;
	int running, wake[2], tty_saved;
	atomic_int stop;
	struct termios saved;
};

void console_init(struct console *c, int out_fd);
/*
 * Bytes the guest printed: written to out, watched line by line (one
 * thread at a time). The reader of out going away does not stop the guest.
 */
void console_write(struct console *c, const void *buf, size_t len);
/* A whole line the guest printed, for a host whose UART writes out itself (serial_line_fn's shape). */
void console_watch_line(void *opaque, const char *line);
/* The guest's end: a line it left unfinished is watched too. */
void console_end(struct console *c);
/* The panic's message, or NULL when the guest printed none. */
const char *console_panic(const struct console *c);

/* Starts forwarding stdin to deliver (when it is a terminal, a pipe or a file). 0 or -errno. */
int console_input_start(struct console *c, console_deliver_fn *deliver, void *opaque);
/* Stops it and gives the terminal its mode back. Idempotent. */
void console_input_stop(struct console *c);

#endif
