/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmmtrace's own KVM VMM as a host of the boundary in vmm/host/host.h: it
 * prepares the guest (vmm/kvm-x86_64/boot.c: segments, zero page, E820, MP
 * table), each operation is the VM core's or the host arch's, each hook a
 * translation of the core's vm_hooks.
 */
#ifndef VMM_KVM_HOST_KVM_H
#define VMM_KVM_HOST_KVM_H

#include <stddef.h>

#include "vmm/host/host.h"
#include "vmm/util/error.h"

/* The most vCPUs this host runs. */
#define HOST_KVM_MAX_CPUS 8

/* The guest arch (enum image_arch) this build's KVM host boots: its own. */
int host_kvm_guest_arch(void);
/* Whether it traces them too (every host arch with slot encodings: x86_64, arm64). */
int host_kvm_traces(void);
/* The register and interrupt ioctls its running VMs make, for the seccomp sandbox; *n: how many. */
const unsigned long *host_kvm_sandbox_ioctls(size_t *n);

/*
 * A VM for b's kernel, loaded and ready for a tracer: kernels of
 * host_kvm_guest_arch() only (-ENOEXEC with a line naming the kernel
 * otherwise). *out is freed by its destroy operation.
 */
int host_kvm_create(struct host **out, const struct host_boot *b, struct errbuf *err);

#endif
