/* SPDX-License-Identifier: GPL-2.0 */
/* The Perfetto writer's open-addressed maps from a 64-bit key to a value (perfetto-intern.c). */
#ifndef VMM_OUTPUT_PERFETTO_INTERN_H
#define VMM_OUTPUT_PERFETTO_INTERN_H

#include <stddef.h>
#include <stdint.h>

/* An open-addressed map from a 64-bit key (an address) to its iid. */
struct perfetto_intern {
	uint64_t *keys;
	uint64_t *iids;		/* 0: empty slot (iids start at 1) */
	size_t mask;		/* slots - 1; no slots while mask is 0 */
	size_t count;
};

/* The slot of key: where it is, or the empty slot where it would go. t must have slots. */
size_t perfetto_intern_slot(const struct perfetto_intern *t, uint64_t key);
/* Doubles the slots (makes the first 1,024); -ENOMEM. */
int perfetto_intern_grow(struct perfetto_intern *t);
/*
 * The iid of key in t; a key seen for the first time gets *next (which
 * then advances) and *fresh is set: the caller must emit its string in
 * this packet's InternedData. Returns 0 or -ENOMEM.
 */
int perfetto_intern(struct perfetto_intern *t, uint64_t key, uint64_t *next, uint64_t *iid, int *fresh);
void perfetto_intern_free(struct perfetto_intern *t);

#endif
