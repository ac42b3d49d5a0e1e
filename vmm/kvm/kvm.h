/* SPDX-License-Identifier: GPL-2.0 */
/* The one KVM ioctl wrapper: failures name the ioctl that failed. */
#ifndef VMM_KVM_H
#define VMM_KVM_H

#include <linux/kvm.h>
#include <stdint.h>

#include "vmm/util/error.h"

/* ioctl(fd, req, arg); on failure returns -errno and says "KVM_FOO: ...". */
int kvm_ioctl_named(int fd, unsigned long req, void *arg, const char *name,
		    struct errbuf *err);
#define kvm_ioctl(fd, req, arg, err) kvm_ioctl_named(fd, req, (void *)(arg), #req, err)
/* For ioctls whose integer argument is passed by value. */
int kvm_ioctl_val(int fd, unsigned long req, unsigned long val, const char *name,
		  struct errbuf *err);

/* Opens /dev/kvm and checks the API version. */
int kvm_open(int *kvm_fd, struct errbuf *err);
/* KVM_CHECK_EXTENSION on the system fd; 0 when absent. */
int kvm_check_cap(int kvm_fd, int cap);

#endif
