// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "vmm/ctl-client.h"

int ctl_connect(const char *path, struct errbuf *err)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(addr.sun_path))
		return err_set(err, ENAMETOOLONG, "socket path '%s' is too long", path);
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return err_set(err, errno, "socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		int e = errno;

		close(fd);
		return err_set(err, e, "cannot connect to '%s': %s", path, strerror(e));
	}
	return fd;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EPIPE;
		p += n;
		len -= n;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EPIPE;
		p += n;
		len -= n;
	}
	return 0;
}

int ctl_send(int fd, uint16_t type, int32_t status, const void *payload, uint32_t len)
{
	struct vt_ctl_hdr h = { VT_CTL_MAGIC, VT_CTL_VERSION, type, len, status };
	int rc = write_all(fd, &h, sizeof(h));

	return rc ? rc : write_all(fd, payload, len);
}

int ctl_recv(int fd, struct vt_ctl_hdr *hdr, char *buf, size_t max)
{
	char sink[4096];
	size_t keep;
	int rc;

	if ((rc = read_all(fd, hdr, sizeof(*hdr))))
		return rc;
	if (hdr->magic != VT_CTL_MAGIC || hdr->version != VT_CTL_VERSION)
		return -EPROTO;
	keep = hdr->length < max - 1 ? hdr->length : max - 1;
	if ((rc = read_all(fd, buf, keep)))
		return rc;
	buf[keep] = 0;
	for (size_t left = hdr->length - keep; left; ) {	/* skip what does not fit */
		size_t n = left < sizeof(sink) ? left : sizeof(sink);

		if ((rc = read_all(fd, sink, n)))
			return rc;
		left -= n;
	}
	return 0;
}

int ctl_request(const char *path, uint16_t type, const void *payload, uint32_t len,
		char *reply, size_t max, int *status, struct errbuf *err)
{
	struct vt_ctl_hdr h;
	int fd = ctl_connect(path, err), rc;

	if (fd < 0)
		return fd;
	/*
	 * A failed send is not the answer: the server may refuse a peer as it
	 * accepts it (SO_PEERCRED) and close before our request is written; its
	 * reply is still queued on our side, so read it either way.
	 */
	ctl_send(fd, type, 0, payload, len);
	while (!(rc = ctl_recv(fd, &h, reply, max)) && h.type != VT_CTL_REPLY)
		;
	close(fd);
	if (rc)
		return err_set(err, -rc, "no reply from '%s' (%s)", path,
			       rc == -EPROTO ? "not a vmmtrace control socket" : "connection closed");
	*status = h.status;
	return 0;
}

int ctl_pack_patterns(char *buf, size_t max, const char **inc, unsigned ninc,
		      const char **exc, unsigned nexc)
{
	size_t off = 0;

	for (unsigned i = 0; i < ninc + nexc; i++) {
		const char *p = i < ninc ? inc[i] : exc[i - ninc];
		size_t n = strlen(p) + (i >= ninc) + 1;

		if (off + n > max)
			return -E2BIG;
		if (i >= ninc)
			buf[off++] = '!';
		memcpy(buf + off, p, strlen(p) + 1);
		off += strlen(p) + 1;
	}
	return (int)off;
}
