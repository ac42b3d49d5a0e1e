// SPDX-License-Identifier: GPL-2.0
/*
 * --graph's shadow stacks on the host's side (the stubs push and pop them,
 * proto/trace.h): how many fit the stub's first place, their move with the
 * rings at the hand-over, and what -v says of them at the end.
 */
#include <string.h>

#include "vmm/util/log.h"
#include "vmm/trace/tracer-int.h"

/*
 * The few shadow stacks of the stub's first place into all of them at
 * shadow (host) / va: each table in use goes where the stub will look for
 * its task first. The guest wrote them; a table that finds no free place
 * among its probes (a guest that forged its owners) stays behind, and its
 * calls' returns find no frame. Each place's reach (VT_SHADOW_REACH) is
 * made anew: what the tables placed from it need.
 */
void tracer_shadow_move(struct tracer *t, uint8_t *shadow, uint64_t va)
{
	struct vt_stub_config *c = (struct vt_stub_config *)t->stub.code;
	uint64_t moved = 0, left = 0;
	uint8_t reach[STUB_SHADOW_TABLES] = { 0 };

	memset(shadow, 0, STUB_SHADOW_BYTES);
	for (uint64_t i = 0; i < t->shadow_tables; i++) {
		const uint8_t *from = t->shadow_host + i * VT_SHADOW_SIZE;
		uint64_t task, h;
		unsigned k;

		memcpy(&task, from + VT_SHADOW_TASK, sizeof(task));
		if (!task)
			continue;
		h = vt_shadow_hash(task);
		for (k = 0; k < VT_SHADOW_PROBE; k++) {
			uint8_t *to = shadow + ((h + k) & (STUB_SHADOW_TABLES - 1)) * VT_SHADOW_SIZE;
			uint64_t owner;

			memcpy(&owner, to + VT_SHADOW_TASK, sizeof(owner));
			if (!owner) {
				memcpy(to, from, VT_SHADOW_SIZE);
				if (reach[h & (STUB_SHADOW_TABLES - 1)] < k + 1)
					reach[h & (STUB_SHADOW_TABLES - 1)] = (uint8_t)(k + 1);
				break;
			}
		}
		moved += k < VT_SHADOW_PROBE;
		left += k == VT_SHADOW_PROBE;
	}
	for (unsigned i = 0; i < STUB_SHADOW_TABLES; i++) {
		uint64_t r = reach[i];

		memcpy(shadow + (uint64_t)i * VT_SHADOW_SIZE + VT_SHADOW_REACH, &r, sizeof(r));
	}
	if (left)
		log_warn("%llu shadow stacks found no place among all the stacks: their calls' returns are lost",
			 (unsigned long long)left);
	t->shadow_host = shadow;
	t->shadow_tables = STUB_SHADOW_TABLES;
	c->shadow = va;
	c->shadow_mask = STUB_SHADOW_TABLES - 1;
	log_info("shadow stacks moved to %#llx: %u of them, %llu in use", (unsigned long long)va,
		 STUB_SHADOW_TABLES, (unsigned long long)moved);
}

/*
 * -v: how full --graph's shadow stacks got. The guest wrote them: values
 * are only counted (a reach beyond VT_SHADOW_PROBE counts as that).
 */
void tracer_shadow_report(struct tracer *t)
{
	uint64_t held = 0, farthest = 0;

	for (uint64_t i = 0; t->shadow_host && i < t->shadow_tables; i++) {
		const uint8_t *s = t->shadow_host + i * VT_SHADOW_SIZE;
		uint64_t task, reach;

		memcpy(&task, s + VT_SHADOW_TASK, sizeof(task));
		memcpy(&reach, s + VT_SHADOW_REACH, sizeof(reach));
		held += task != 0;
		farthest = reach > farthest ? (reach < VT_SHADOW_PROBE ? reach : VT_SHADOW_PROBE) : farthest;
	}
	log_info("--graph: %llu of %llu shadow stacks held at the end; the most any task had to try: %llu of %u",
		 (unsigned long long)held, (unsigned long long)t->shadow_tables, (unsigned long long)farthest,
		 VT_SHADOW_PROBE);
}
