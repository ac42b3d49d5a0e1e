// SPDX-License-Identifier: GPL-2.0
/*
 * The Perfetto writer's maps (perfetto-intern.h): interned ids by address,
 * the tasks whose tracks are written, the call stacks of the tracks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/output/perfetto-intern.h"

size_t perfetto_intern_slot(const struct perfetto_intern *t, uint64_t key)
{
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 17) & t->mask;

	while (t->iids[i] && t->keys[i] != key)
		i = (i + 1) & t->mask;
	return i;
}

int perfetto_intern_grow(struct perfetto_intern *t)
{
	struct perfetto_intern n = { .mask = t->mask ? 2 * t->mask + 1 : 1023 };

	n.keys = calloc(n.mask + 1, sizeof(*n.keys));
	n.iids = calloc(n.mask + 1, sizeof(*n.iids));
	if (!n.keys || !n.iids) {
		free(n.keys);
		free(n.iids);
		return -ENOMEM;
	}
	for (size_t i = 0; t->mask && i <= t->mask; i++) {
		if (t->iids[i]) {
			size_t s = perfetto_intern_slot(&n, t->keys[i]);

			n.keys[s] = t->keys[i];
			n.iids[s] = t->iids[i];
		}
	}
	n.count = t->count;
	free(t->keys);
	free(t->iids);
	*t = n;
	return 0;
}

/*
 * The iid of key in t; a key seen for the first time gets *next (which
 * then advances) and *fresh is set: the caller must emit its string in
 * this packet's InternedData. Returns 0 or -ENOMEM.
 */
int perfetto_intern(struct perfetto_intern *t, uint64_t key, uint64_t *next, uint64_t *iid, int *fresh)
{
	size_t s;

	*fresh = 0;
	if (t->mask) {
		s = perfetto_intern_slot(t, key);
		if (t->iids[s]) {
			*iid = t->iids[s];
			return 0;
		}
	}
	if ((t->count + 1) * 2 > t->mask && perfetto_intern_grow(t))
		return -ENOMEM;
	s = perfetto_intern_slot(t, key);
	t->keys[s] = key;
	t->iids[s] = *iid = (*next)++;
	t->count++;
	*fresh = 1;
	return 0;
}

void perfetto_intern_free(struct perfetto_intern *t)
{
	free(t->keys);
	free(t->iids);
	memset(t, 0, sizeof(*t));
}
