// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/elf.h"
#include "vmm/filter.h"
#include "vmm/mcount.h"
#include "vmm/patch.h"
#include "vmm/symtab.h"
#include "vmm/vm.h"

static int patch_add(struct patch_set *ps, struct vm *vm, const struct elf_image *elf,
		     const struct mcount_slot *ms, const struct symtab *syms, struct errbuf *err)
{
	unsigned n = ps->ops->layout->slot_bytes;
	struct held_slot *h = &ps->slots[ps->count];
	uint64_t pa;

	if (elf_vaddr_to_paddr(elf, ms->addr, &pa) || !(h->hva = vm_gpa_ptr(vm, pa, n)))
		return err_set(err, EINVAL, "slot 0x%llx is outside the loaded kernel",
			       (unsigned long long)ms->addr);
	ps->ctx.slot_pc = ms->addr;
	if (slot_classify(ps->ops, &ps->ctx, h->hva, NULL) != SLOT_ORIGINAL)
		return err_set(err, EINVAL, "slot 0x%llx (%s) does not hold the compiler's call: not a fresh image",
			       (unsigned long long)ms->addr, symtab_name(syms, ms->func));
	h->va = ms->addr;
	memcpy(h->orig, h->hva, n);
	h->name = symtab_name(syms, ms->func);
	h->init = ms->init;
	ps->count++;
	return 0;
}

int patch_select(struct patch_set *ps, struct vm *vm, const struct elf_image *elf,
		 const struct mcount_table *mt, const struct symtab *syms,
		 const struct filter *filter, const struct slot_ops *ops,
		 uint64_t fentry, uint64_t stub_entry, struct errbuf *err)
{
	int rc;

	memset(ps, 0, sizeof(*ps));
	ps->ops = ops;
	ps->ctx.original_target = fentry;
	ps->ctx.our_target = stub_entry;
	ps->slots = calloc(mt->count ? mt->count : 1, sizeof(*ps->slots));
	if (!ps->slots)
		return err_set(err, ENOMEM, "out of memory for %zu slots", mt->count);
	for (size_t i = 0; i < mt->count; i++) {
		const struct mcount_slot *ms = &mt->slots[i];

		if (!ms->func)
			continue;	/* overridden __weak bodies: no name to select by */
		if (!filter_match(filter, symtab_name(syms, ms->func)))
			continue;
		if ((rc = slot_check_call(ops, ms->addr, stub_entry, err)) ||
		    (rc = patch_add(ps, vm, elf, ms, syms, err))) {
			patch_destroy(ps);
			return rc;
		}
	}
	return 0;
}

void patch_destroy(struct patch_set *ps)
{
	free(ps->slots);
	ps->slots = NULL;
	ps->count = 0;
}

static void patch_write(struct patch_set *ps, struct held_slot *h, const uint8_t *next,
			struct patch_result *res)
{
	struct slot_change chg;

	if (slot_plan_change(ps->ops, h->va, h->hva, next, &chg) || !chg.len) {
		res->already++;
		return;
	}
	/* Every vCPU is outside KVM_RUN: no instruction fetch can see a mix. */
	memcpy(h->hva + chg.offset, chg.bytes + chg.offset, chg.len);
	res->written++;
}

void patch_enable(struct patch_set *ps, struct patch_result *res)
{
	uint8_t next[SLOT_MAX_BYTES];

	memset(res, 0, sizeof(*res));
	for (size_t i = 0; i < ps->count; i++) {
		struct held_slot *h = &ps->slots[i];

		ps->ctx.slot_pc = h->va;
		switch (slot_classify(ps->ops, &ps->ctx, h->hva, NULL)) {
		case SLOT_ENABLED:
			res->already++;
			break;
		case SLOT_ORIGINAL:
		case SLOT_DISABLED:
			if (slot_build(ps->ops, SLOT_ENABLED, &ps->ctx, next, NULL)) {
				res->foreign++;
				break;
			}
			patch_write(ps, h, next, res);
			break;
		default:
			res->foreign++;
			break;
		}
	}
}

void patch_restore(struct patch_set *ps, struct patch_result *res)
{
	memset(res, 0, sizeof(*res));
	for (size_t i = 0; i < ps->count; i++) {
		struct held_slot *h = &ps->slots[i];

		ps->ctx.slot_pc = h->va;
		switch (slot_classify(ps->ops, &ps->ctx, h->hva, NULL)) {
		case SLOT_ORIGINAL:
			res->already++;
			break;
		case SLOT_ENABLED:
			patch_write(ps, h, h->orig, res);
			break;
		default:
			res->foreign++;
			break;
		}
	}
}

static int held_cmp(const void *key, const void *elem)
{
	uint64_t va = *(const uint64_t *)key;
	const struct held_slot *h = elem;

	return va < h->va ? -1 : va > h->va;
}

const struct held_slot *patch_find(const struct patch_set *ps, uint64_t va)
{
	return bsearch(&va, ps->slots, ps->count, sizeof(*ps->slots), held_cmp);
}
