// SPDX-License-Identifier: GPL-2.0
/*
 * A /reserved-memory region in the guest's device tree
 * (vmm/guest/devtree.h), with libfdt. The kernel's early memory code
 * (early_init_fdt_scan_reserved_mem) takes no-map regions out of memblock
 * before its first allocation, so the region is never the kernel's: not
 * in its linear map, never handed to an allocator.
 */
#include <errno.h>
#include <libfdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/guest/devtree.h"

/* Room for the new nodes and properties, and their names. */
#define DEVTREE_GROWTH 1024

/* A big-endian value of `cells` 32-bit cells (1 or 2) at p. */
static uint64_t read_cells(const fdt32_t *p, int cells)
{
	return cells == 2 ? (uint64_t)fdt32_to_cpu(p[0]) << 32 | fdt32_to_cpu(p[1]) : fdt32_to_cpu(p[0]);
}

static void write_cells(fdt32_t *p, int cells, uint64_t v)
{
	if (cells == 2)
		*p++ = cpu_to_fdt32((uint32_t)(v >> 32));
	*p = cpu_to_fdt32((uint32_t)v);
}

/* Calls fn for each range of each /memory node; stops at a non-zero return. */
static int memory_ranges(const void *fdt, int (*fn)(void *arg, uint64_t base, uint64_t size), void *arg,
			 struct errbuf *err)
{
	int ac = fdt_address_cells(fdt, 0), sc = fdt_size_cells(fdt, 0), found = 0, node, rc;

	if (ac < 1 || ac > 2 || sc < 1 || sc > 2)
		return err_set(err, EINVAL, "device tree: root #address-cells %d / #size-cells %d not supported", ac, sc);
	for (node = fdt_node_offset_by_prop_value(fdt, -1, "device_type", "memory", sizeof("memory"));
	     node >= 0; node = fdt_node_offset_by_prop_value(fdt, node, "device_type", "memory", sizeof("memory"))) {
		int len;
		const fdt32_t *reg = fdt_getprop(fdt, node, "reg", &len);

		if (!reg || len <= 0 || len % (4 * (ac + sc)))
			return err_set(err, EINVAL, "device tree: a /memory node without a valid reg");
		for (int i = 0; i < len / (4 * (ac + sc)); i++, reg += ac + sc) {
			found = 1;
			if ((rc = fn(arg, read_cells(reg, ac), read_cells(reg + ac, sc))))
				return rc > 0 ? 0 : rc;
		}
	}
	if (!found)
		return err_set(err, ENOENT, "device tree: no /memory node");
	return 0;
}

struct first_range {
	uint64_t base, size;
};

static int take_first(void *arg, uint64_t base, uint64_t size)
{
	struct first_range *r = arg;

	r->base = base;
	r->size = size;
	return 1;
}

int devtree_memory(const void *fdt, uint64_t *base, uint64_t *size, struct errbuf *err)
{
	struct first_range r = { 0, 0 };
	int rc = memory_ranges(fdt, take_first, &r, err);

	*base = r.base;
	*size = r.size;
	return rc;
}

struct inside {
	uint64_t base, size;
	int yes;
};

static int range_holds(void *arg, uint64_t base, uint64_t size)
{
	struct inside *in = arg;

	if (in->base >= base && in->size <= size && in->base - base <= size - in->size) {
		in->yes = 1;
		return 1;
	}
	return 0;
}

/* /reserved-memory, made when missing, with the root's cell sizes and an empty ranges. */
static int reserved_node(void *fdt, int *ac, int *sc)
{
	int node = fdt_path_offset(fdt, "/reserved-memory"), rc;

	if (node == -FDT_ERR_NOTFOUND) {
		node = fdt_add_subnode(fdt, 0, "reserved-memory");
		if (node < 0)
			return node;
		if ((rc = fdt_setprop_u32(fdt, node, "#address-cells", (uint32_t)fdt_address_cells(fdt, 0))) ||
		    (rc = fdt_setprop_u32(fdt, node, "#size-cells", (uint32_t)fdt_size_cells(fdt, 0))) ||
		    (rc = fdt_setprop(fdt, node, "ranges", NULL, 0)))
			return rc;
	}
	if (node < 0)
		return node;
	*ac = fdt_address_cells(fdt, node);
	*sc = fdt_size_cells(fdt, node);
	if (*ac < 1 || *ac > 2 || *sc < 1 || *sc > 2)
		return -FDT_ERR_BADNCELLS;
	return node;
}

int devtree_add_reserved(const void *in, size_t len, const char *name, uint64_t base, uint64_t size,
			 int no_map, void **out, size_t *out_len, struct errbuf *err)
{
	struct inside inside = { base, size, 0 };
	fdt32_t reg[4];
	char node_name[96];
	void *fdt = NULL;
	int rc, rm = -1, child = -1, ac = 0, sc = 0;

	*out = NULL;
	if (len < sizeof(struct fdt_header) || fdt_check_full(in, len))
		return err_set(err, EINVAL, "device tree: not a valid flattened device tree (%zu bytes)", len);
	if (!size || base + size < base)
		return err_set(err, EINVAL, "device tree: empty or wrapping region %#llx+%#llx",
			       (unsigned long long)base, (unsigned long long)size);
	if ((rc = memory_ranges(in, range_holds, &inside, err)))
		return rc;
	if (!inside.yes)
		return err_set(err, ERANGE, "device tree: [%#llx, %#llx) is not inside the guest's RAM",
			       (unsigned long long)base, (unsigned long long)(base + size));
	fdt = malloc(fdt_totalsize(in) + DEVTREE_GROWTH);
	if (!fdt)
		return err_set(err, ENOMEM, "device tree: out of memory");
	rc = fdt_open_into(in, fdt, (int)(fdt_totalsize(in) + DEVTREE_GROWTH));
	if (!rc)
		rc = rm = reserved_node(fdt, &ac, &sc);
	if (rc >= 0 && ((ac == 1 && base > UINT32_MAX) || (sc == 1 && size > UINT32_MAX)))
		rc = -FDT_ERR_BADVALUE;
	if (rc >= 0) {
		snprintf(node_name, sizeof(node_name), "%s@%llx", name, (unsigned long long)base);
		rc = child = fdt_add_subnode(fdt, rm, node_name);
	}
	if (rc >= 0) {
		write_cells(reg, ac, base);
		write_cells(reg + ac, sc, size);
		rc = fdt_setprop(fdt, child, "reg", reg, (int)(4 * (ac + sc)));
	}
	if (!rc && no_map)
		rc = fdt_setprop(fdt, child, "no-map", NULL, 0);
	if (!rc)
		rc = fdt_pack(fdt);
	if (rc < 0) {
		free(fdt);
		return err_set(err, EINVAL, "device tree: adding /reserved-memory/%s: %s", name, fdt_strerror(rc));
	}
	*out = fdt;
	*out_len = fdt_totalsize(fdt);
	return 0;
}
