// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/util/statusline.h"

#define ERASE "\r\033[K"	/* to the line's start, clear to its end */

static pthread_mutex_t sl_lock = PTHREAD_MUTEX_INITIALIZER;
static int sl_fd = -1;
static dev_t sl_rdev;
static int sl_shown;

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Whether fd is the terminal the line is drawn on (another fd of it too). */
static int same_terminal(int fd)
{
	struct stat st;

	return fd == sl_fd || (isatty(fd) && !fstat(fd, &st) && st.st_rdev == sl_rdev);
}

int statusline_enable(int fd)
{
	struct stat st;

	if (!isatty(fd) || fstat(fd, &st))
		return -ENOTTY;
	pthread_mutex_lock(&sl_lock);
	sl_fd = fd;
	sl_rdev = st.st_rdev;
	pthread_mutex_unlock(&sl_lock);
	return 0;
}

void statusline_disable(void)
{
	pthread_mutex_lock(&sl_lock);
	if (sl_shown)
		write_all(sl_fd, ERASE, sizeof(ERASE) - 1);
	sl_shown = 0;
	sl_fd = -1;
	pthread_mutex_unlock(&sl_lock);
}

void statusline_show(const char *text)
{
	char line[sizeof(ERASE) + 200];
	size_t n = strlen(text) < 200 ? strlen(text) : 200;

	memcpy(line, ERASE, sizeof(ERASE) - 1);
	memcpy(line + sizeof(ERASE) - 1, text, n);
	pthread_mutex_lock(&sl_lock);
	if (sl_fd >= 0 && !write_all(sl_fd, line, sizeof(ERASE) - 1 + n))
		sl_shown = 1;
	pthread_mutex_unlock(&sl_lock);
}

int statusline_write(int fd, const void *buf, size_t len)
{
	int rc;

	if (sl_fd < 0)	/* off: no lock on the console's path */
		return write_all(fd, buf, len);
	pthread_mutex_lock(&sl_lock);
	if (sl_shown && same_terminal(fd)) {
		write_all(sl_fd, ERASE, sizeof(ERASE) - 1);
		sl_shown = 0;
	}
	rc = write_all(fd, buf, len);
	pthread_mutex_unlock(&sl_lock);
	return rc;
}

int statusline_printf(int fd, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	return statusline_write(fd, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}
