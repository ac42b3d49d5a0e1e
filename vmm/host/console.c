// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "vmm/devices/console.h"
#include "vmm/devices/serial.h"
#include "vmm/kvm/vm.h"

static const char PANIC_MARK[] = "Kernel panic - not syncing: ";
static const char POWEROFF_MARK[] = "reboot: Power down";

void console_watch_line(void *opaque, const char *line)
{
	struct vm *vm = opaque;
	const char *p = strstr(line, PANIC_MARK);

	if (p && !vm->panic_msg[0])
		snprintf(vm->panic_msg, sizeof(vm->panic_msg), "%s", p + sizeof(PANIC_MARK) - 1);
	if (strstr(line, POWEROFF_MARK))
		atomic_store(&vm->poweroff_seen, 1);
}

static struct {
	pthread_t thread;
	int running;
	int wake[2];
	int tty_saved;
	struct termios saved;
	struct vm *vm;
} console;

static void console_feed(struct vm *vm, const uint8_t *buf, size_t len)
{
	struct timespec wait = { 0, 5 * 1000 * 1000 };

	while (len && !atomic_load(&vm->stopping)) {
		unsigned n = serial_receive(vm->serial, buf, len);

		buf += n;
		len -= n;
		if (len)
			nanosleep(&wait, NULL);	/* guest has not drained its FIFO yet */
	}
}

static void *console_thread(void *arg)
{
	struct vm *vm = arg;
	struct pollfd fds[2] = { { .fd = 0, .events = POLLIN }, { .fd = console.wake[0], .events = POLLIN } };
	uint8_t buf[256];

	while (!atomic_load(&vm->stopping)) {
		if (poll(fds, 2, -1) < 0 && errno != EINTR)
			break;
		if (fds[1].revents)
			break;
		if (!fds[0].revents)
			continue;
		ssize_t n = read(0, buf, sizeof(buf));
		if (n <= 0)
			break;	/* EOF: the guest just gets no more input */
		console_feed(vm, buf, n);
	}
	return NULL;
}

int console_input_start(struct vm *vm)
{
	struct stat st;

	if (fstat(0, &st) || !(isatty(0) || S_ISFIFO(st.st_mode) || S_ISREG(st.st_mode)))
		return 0;
	if (pipe(console.wake))
		return -errno;
	if (isatty(0) && !tcgetattr(0, &console.saved)) {
		struct termios raw = console.saved;

		/* Raw input for the guest's line discipline; keep ISIG for Ctrl-C. */
		raw.c_lflag &= ~(ICANON | ECHO | ECHONL | IEXTEN);
		raw.c_iflag &= ~(ICRNL | IXON);
		raw.c_cc[VMIN] = 1;
		raw.c_cc[VTIME] = 0;
		if (!tcsetattr(0, TCSANOW, &raw))
			console.tty_saved = 1;
	}
	console.vm = vm;
	if (pthread_create(&console.thread, NULL, console_thread, vm)) {
		console_input_stop();
		return -EAGAIN;
	}
	console.running = 1;
	return 0;
}

void console_input_stop(void)
{
	if (console.running) {
		(void)!write(console.wake[1], "x", 1);
		pthread_join(console.thread, NULL);
		console.running = 0;
	}
	if (console.tty_saved) {
		tcsetattr(0, TCSANOW, &console.saved);
		console.tty_saved = 0;
	}
	if (console.wake[0] > 0) {
		close(console.wake[0]);
		close(console.wake[1]);
		console.wake[0] = console.wake[1] = 0;
	}
}
