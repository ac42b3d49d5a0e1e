// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "vmm/kvm/kvm.h"

int kvm_ioctl_named(int fd, unsigned long req, void *arg, const char *name,
		    struct errbuf *err)
{
	int ret;

	do
		ret = ioctl(fd, req, arg);
	while (ret < 0 && errno == EINTR);
	if (ret < 0)
		return err_set(err, errno, "%s: %s", name, strerror(errno));
	return ret;
}

int kvm_ioctl_val(int fd, unsigned long req, unsigned long val, const char *name,
		  struct errbuf *err)
{
	int ret = ioctl(fd, req, val);

	if (ret < 0)
		return err_set(err, errno, "%s: %s", name, strerror(errno));
	return ret;
}

int kvm_open(int *kvm_fd, struct errbuf *err)
{
	int fd, ver;

	fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return err_set(err, errno, "cannot open /dev/kvm: %s", strerror(errno));
	ver = ioctl(fd, KVM_GET_API_VERSION, 0);
	if (ver != KVM_API_VERSION) {
		close(fd);
		return err_set(err, ENOTSUP, "/dev/kvm has API version %d, need %d", ver, KVM_API_VERSION);
	}
	*kvm_fd = fd;
	return 0;
}

int kvm_check_cap(int kvm_fd, int cap)
{
	int ret = ioctl(kvm_fd, KVM_CHECK_EXTENSION, cap);

	return ret < 0 ? 0 : ret;
}
