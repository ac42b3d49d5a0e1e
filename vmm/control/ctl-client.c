// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "vmm/control/control-frame.h"
#include "vmm/control/ctl-client.h"

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
	char *msg = malloc(CTL_FRAME_HDR_LEN + len);
	int rc;

	if (!msg)
		return -ENOMEM;
	rc = write_all(fd, msg, ctl_frame_encode(msg, type, status, payload, len));
	free(msg);
	return rc;
}

int ctl_recv(int fd, struct vt_ctl_hdr *hdr, char *buf, size_t max)
{
	char sink[4096];
	size_t keep;
	int rc;

	if ((rc = read_all(fd, hdr, sizeof(*hdr))))
		return rc;
	if (ctl_frame_check_hdr(hdr))
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
