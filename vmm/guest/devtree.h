/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What vmmtrace changes in a guest's device tree, whichever host made
 * it (the QEMU host: QEMU's own, -machine dumpdtb=): a /reserved-memory
 * region, so that the guest kernel never allocates the memory where
 * vmmtrace keeps its stub and rings (the role the E820 map plays on x86).
 */
#ifndef VMM_GUEST_DEVTREE_H
#define VMM_GUEST_DEVTREE_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/util/error.h"

/*
 * Copies the flattened device tree in (len bytes, untrusted: checked by
 * libfdt) into a new buffer (*out, *out_len; free() it) with a child
 * "NAME@BASE" of /reserved-memory for [base, base + size), creating
 * /reserved-memory when the tree has none. The region must lie inside one
 * range of the tree's /memory nodes. no_map: the kernel does not map it
 * either; without, it stays in the kernel's linear map (memblock reserves
 * it), where the stub can write once paging_init has built that map.
 */
int devtree_add_reserved(const void *in, size_t len, const char *name, uint64_t base, uint64_t size,
			 int no_map, void **out, size_t *out_len, struct errbuf *err);

/* The first /memory node's first range (RAM's base and size), from a checked tree. */
int devtree_memory(const void *fdt, uint64_t *base, uint64_t *size, struct errbuf *err);

#endif
