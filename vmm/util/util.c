// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vmm/util/util.h"

uint64_t util_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int util_read_file(const char *path, uint64_t max, uint8_t **data, size_t *size)
{
	struct stat st;
	uint8_t *buf = NULL;
	size_t done = 0;
	int fd, rc = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		goto out;
	}
	if ((uint64_t)st.st_size > max) {
		rc = -EFBIG;
		goto out;
	}
	/* Aligned for an ELF read in place; padded with zeros for text. */
	buf = aligned_alloc(8, ((size_t)st.st_size + 16) & ~(size_t)7);
	if (!buf) {
		rc = -ENOMEM;
		goto out;
	}
	while (done < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + done, (size_t)st.st_size - done);

		if (n <= 0) {
			rc = n ? -errno : -EIO;
			goto out;
		}
		done += (size_t)n;
	}
	memset(buf + done, 0, (((size_t)st.st_size + 16) & ~(size_t)7) - done);
	*data = buf;
	*size = done;
	buf = NULL;
out:
	free(buf);
	close(fd);
	return rc;
}

int util_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}
