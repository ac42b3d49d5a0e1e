// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/image/elf.h"
#include "vmm/trace/filter.h"
#include "vmm/image/mcount.h"
#include "vmm/trace/patch.h"
#include "vmm/image/symtab.h"

static int patch_add(struct patch_set *ps, const struct patch_mem *mem, const struct elf_image *elf,
		     const struct mcount_slot *ms, const struct symtab *syms, int nop_compiled, struct errbuf *err)
{
	enum slot_state state;
	unsigned n = ps->ops->layout->slot_bytes;
	struct patch_slot *s = &ps->slots[ps->count];
	struct slot_err serr;
	uint64_t pa;
	int rc;

	if (elf_vaddr_to_paddr(elf, ms->addr, &pa) || !(s->hva = mem->gpa_ptr(mem->opaque, pa, n)))
		return err_set(err, EINVAL, "slot 0x%llx is outside the loaded kernel",
			       (unsigned long long)ms->addr);
	ps->ctx.slot_pc = ms->addr;
	state = slot_classify(ps->ops, &ps->ctx, s->hva, NULL);
	if (state != (nop_compiled ? SLOT_DISABLED : SLOT_ORIGINAL))
		return err_set(err, EINVAL, "slot 0x%llx (%s) does not hold the %s: not a fresh image",
			       (unsigned long long)ms->addr, symtab_name(syms, ms->func),
			       nop_compiled ? "NOP its build left in every slot" : "compiler's call");
	rc = slot_check_call(ps->ops, ms->addr, ps->ctx.our_target, &serr);
	if (rc)
		return err_set(err, -rc, "%s", serr.msg);
	s->va = ms->addr;
	s->func = ms->func->addr;
	s->gpa = pa;
	memcpy(s->orig, s->hva, n);
	s->name = symtab_name(syms, ms->func);
	s->sym = ms->func;
	s->init = ms->init;
	ps->count++;
	return 0;
}

int patch_init(struct patch_set *ps, const struct patch_mem *mem, const struct elf_image *elf,
	       const struct mcount_table *mt, const struct symtab *syms,
	       const struct slot_ops *ops, uint64_t fentry, uint64_t stub_entry,
	       struct errbuf *err)
{
	int rc;

	memset(ps, 0, sizeof(*ps));
	ps->ops = ops;
	ps->syms = syms;
	ps->mem = *mem;
	ps->ctx.original_target = fentry;
	ps->ctx.our_target = stub_entry;
	ps->stub_entry = stub_entry;
	ps->slots = calloc(mt->count ? mt->count : 1, sizeof(*ps->slots));
	if (!ps->slots)
		return err_set(err, ENOMEM, "out of memory for %zu slots", mt->count);
	for (size_t i = 0; i < mt->count; i++) {
		/* Overridden __weak bodies have no name to select them by. */
		if (mt->slots[i].func && (rc = patch_add(ps, mem, elf, &mt->slots[i], syms, mt->nop_compiled, err))) {
			patch_destroy(ps);
			return rc;
		}
	}
	return 0;
}

size_t patch_exclude(struct patch_set *ps, const char *const *names)
{
	size_t kept = 0, n = 0;

	for (size_t i = 0; i < ps->count; i++) {
		int out = 0;

		for (const char *const *name = names; name && *name && !out; name++)
			out = !strcmp(ps->slots[i].name, *name);
		if (out)
			n++;
		else
			ps->slots[kept++] = ps->slots[i];
	}
	ps->count = kept;
	return n;
}

void patch_destroy(struct patch_set *ps)
{
	free(ps->slots);
	memset(ps, 0, sizeof(*ps));
}

static void patch_recount(struct patch_set *ps)
{
	ps->held = 0;
	for (size_t i = 0; i < ps->count; i++)
		ps->held += ps->slots[i].clients && !ps->slots[i].dead;
}

uint8_t *patch_match(const struct patch_set *ps, const struct filter *f, size_t *n)
{
	uint8_t *sel = calloc(ps->count ? ps->count : 1, 1);

	*n = 0;
	for (size_t i = 0; sel && i < ps->count; i++)
		if (filter_match_function(f, ps->syms, ps->slots[i].sym)) {
			sel[i] = 1;
			(*n)++;
		}
	return sel;
}

size_t patch_want(struct patch_set *ps, const uint8_t *sel, unsigned client)
{
	size_t n = 0;

	for (size_t i = 0; i < ps->count; i++) {
		struct patch_slot *s = &ps->slots[i];

		if (!s->dead && sel[i]) {
			s->clients |= 1ULL << client;
			n++;
		}
	}
	patch_recount(ps);
	return n;
}

size_t patch_unwant(struct patch_set *ps, const struct filter *f, unsigned client)
{
	size_t n = 0;

	for (size_t i = 0; i < ps->count; i++) {
		struct patch_slot *s = &ps->slots[i];

		if ((s->clients & (1ULL << client)) && (!f || filter_match_function(f, ps->syms, s->sym))) {
			s->clients &= ~(1ULL << client);
			n += !s->dead;	/* a forgotten init slot's claim goes too, uncounted */
		}
	}
	patch_recount(ps);
	return n;
}

size_t patch_unwant_all(struct patch_set *ps, const uint8_t *sel)
{
	size_t n = 0;

	for (size_t i = 0; i < ps->count; i++) {
		struct patch_slot *s = &ps->slots[i];

		if (s->clients && (!sel || sel[i])) {
			s->clients = 0;
			n += !s->dead;
		}
	}
	patch_recount(ps);
	return n;
}

/*
 * Writes next over the slot's bytes: the whole instructions that differ,
 * unless a paused vCPU would resume in the middle of them (the arch layer
 * decides). Returns 0 when the slot now holds next.
 */
static int patch_write(struct patch_set *ps, struct patch_slot *s, const uint8_t *next,
		       struct patch_result *res)
{
	struct slot_change chg;

	if (slot_plan_change(ps->ops, s->va, s->hva, next, &chg) || !chg.len) {
		res->already++;
		return 0;
	}
	if (ps->npcs && slot_change_check_pcs(&chg, ps->pcs, ps->npcs, NULL)) {
		res->busy++;
		return -EBUSY;
	}
	if (!ps->mem.write_code)
		memcpy(s->hva + chg.offset, chg.bytes + chg.offset, chg.len);
	else if (ps->mem.write_code(ps->mem.opaque, s->gpa + chg.offset, s->hva + chg.offset,
				    chg.bytes + chg.offset, chg.len)) {
		res->failed++;
		return -EIO;
	}
	res->written++;
	return 0;
}

/* The context a slot's bytes are judged in: its address, and where our call goes from it. */
static void patch_ctx(struct patch_set *ps, const struct patch_slot *s)
{
	ps->ctx.slot_pc = s->va;
	ps->ctx.our_target = s->chain ? ps->chain.va + (s->chain - 1) * ps->chain.stride : ps->stub_entry;
}

/* Inside the stub's entries: never a target to chain to. */
static int patch_is_ours(const struct patch_set *ps, uint64_t target)
{
	return target == ps->stub_entry ||
	       (ps->chain.n && target >= ps->chain.va && target < ps->chain.va + ps->chain.n * ps->chain.stride);
}

/* The chained entry whose target is target: one already given it, or the next free one; -1 if none is left. */
static int patch_chain_entry(struct patch_set *ps, uint64_t target)
{
	for (unsigned k = 0; k < ps->chain.used; k++)
		if (ps->chain.targets[k] == target)
			return (int)k;
	if (ps->chain.used >= ps->chain.n)
		return -1;
	ps->chain.targets[ps->chain.used] = target;
	return (int)ps->chain.used++;
}

static void patch_foreign(struct patch_slot *s, struct patch_result *res)
{
	res->foreign++;
	if (!res->foreign_example)
		res->foreign_example = s->name;
}

/*
 * One slot towards its wanted state. Enabling accepts the compiler's call or
 * the guest's disabled form and keeps what it replaced; disabling puts that
 * back, so a detached guest is left exactly as it was.
 */
static void patch_sync_slot(struct patch_set *ps, struct patch_slot *s, struct patch_result *res)
{
	uint8_t next[SLOT_MAX_BYTES];
	enum slot_state cur;
	unsigned n = ps->ops->layout->slot_bytes;
	uint64_t target;
	int k;

	patch_ctx(ps, s);
	cur = slot_classify(ps->ops, &ps->ctx, s->hva, &target);
	s->given = 0;
	if (s->clients && !s->enabled) {
		/*
		 * Enabled by the guest's own ftrace (after the hand-over only):
		 * our call goes through a chained entry on to its target, or,
		 * with none, the guest keeps the slot (and its ftrace works).
		 */
		if (cur == SLOT_ENABLED_ELSEWHERE && ps->phase == PATCH_PHASE_RUNNING && !patch_is_ours(ps, target)) {
			if ((k = patch_chain_entry(ps, target)) < 0) {
				s->given = 1;
				res->given++;
				return;
			}
			s->chain = (uint8_t)(k + 1);
			patch_ctx(ps, s);
		} else if (cur != SLOT_ORIGINAL && cur != SLOT_DISABLED) {
			patch_foreign(s, res);
			return;
		}
		if (slot_build(ps->ops, SLOT_ENABLED, &ps->ctx, next, NULL)) {
			s->chain = 0;
			patch_foreign(s, res);
			return;
		}
		memcpy(s->saved, s->hva, n);
		if (!patch_write(ps, s, next, res)) {
			s->enabled = 1;
			res->chained += s->chain != 0;
		} else {
			s->chain = 0;
		}
	} else if (s->clients) {
		if (cur == SLOT_ENABLED)
			res->already++;
		else
			patch_foreign(s, res);	/* someone else rewrote our call */
	} else if (s->enabled) {
		if (cur != SLOT_ENABLED)
			patch_foreign(s, res);
		else if (patch_write(ps, s, s->saved, res))
			return;		/* still ours: the next change set retries */
		s->enabled = 0;
		s->chain = 0;
	}
}

void patch_sync(struct patch_set *ps, struct patch_result *res)
{
	memset(res, 0, sizeof(*res));
	for (size_t i = 0; i < ps->count; i++) {
		struct patch_slot *s = &ps->slots[i];

		if (s->dead)
			continue;
		if (ps->phase == PATCH_PHASE_FTRACE_INIT || ps->phase == PATCH_PHASE_GUEST_FTRACE) {
			/* ftrace_init, or the guest's ftrace, owns the slots now: apply when it returns. */
			res->deferred += s->clients && !s->enabled;
			continue;
		}
		if (s->clients || s->enabled)
			patch_sync_slot(ps, s, res);
	}
	if (ps->phase != PATCH_PHASE_FTRACE_INIT && ps->phase != PATCH_PHASE_GUEST_FTRACE)
		ps->given = res->given;
}

/* Every slot holding our call back to the bytes before it: the compiler's (orig) or the guest's (saved). */
static void patch_put_back(struct patch_set *ps, int orig, struct patch_result *res)
{
	memset(res, 0, sizeof(*res));
	for (size_t i = 0; i < ps->count; i++) {
		struct patch_slot *s = &ps->slots[i];

		if (s->dead || !s->enabled)
			continue;
		patch_ctx(ps, s);
		if (slot_classify(ps->ops, &ps->ctx, s->hva, NULL) != SLOT_ENABLED)
			patch_foreign(s, res);
		else if (patch_write(ps, s, orig ? s->orig : s->saved, res))
			continue;	/* still ours: the host could not write it */
		s->enabled = 0;
		s->chain = 0;
	}
}

void patch_restore_all(struct patch_set *ps, struct patch_result *res)
{
	patch_put_back(ps, 1, res);
}

void patch_release_all(struct patch_set *ps, struct patch_result *res)
{
	patch_put_back(ps, 0, res);
	/* No slot calls a chained entry now, and no vCPU is inside one (the change set's quiesce). */
	ps->chain.used = 0;
}

size_t patch_drop_init(struct patch_set *ps)
{
	size_t n = 0;

	for (size_t i = 0; i < ps->count; i++)
		if (ps->slots[i].init && !ps->slots[i].dead) {
			ps->slots[i].dead = 1;
			ps->slots[i].enabled = 0;
			n++;
		}
	patch_recount(ps);
	return n;
}

void patch_scan(const struct patch_set *ps, size_t *ours, uint64_t *digest)
{
	struct slot_ctx ctx = ps->ctx;
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */
	uint64_t target;

	*ours = 0;
	for (size_t i = 0; i < ps->count; i++) {
		const struct patch_slot *s = &ps->slots[i];
		enum slot_state st;

		if (s->dead)
			continue;
		ctx.slot_pc = s->va;
		ctx.our_target = ps->stub_entry;
		st = slot_classify(ps->ops, &ctx, s->hva, &target);
		*ours += st == SLOT_ENABLED || (st == SLOT_ENABLED_ELSEWHERE && patch_is_ours(ps, target));
		for (unsigned b = 0; b < ps->ops->layout->slot_bytes; b++)
			h = (h ^ s->hva[b]) * 0x100000001b3ULL;
	}
	*digest = h;
}

static int slot_cmp(const void *key, const void *elem)
{
	uint64_t va = *(const uint64_t *)key;
	const struct patch_slot *s = elem;

	return va < s->va ? -1 : va > s->va;
}

const struct patch_slot *patch_find(const struct patch_set *ps, uint64_t va)
{
	return bsearch(&va, ps->slots, ps->count, sizeof(*ps->slots), slot_cmp);
}

/* "0xADDR (SYMBOL+0xOFF)", or "0xADDR (outside the kernel's symbols)". */
static void patch_name_target(const struct patch_set *ps, uint64_t target, char *buf, size_t len)
{
	uint64_t off = 0;
	const struct symbol *sym = ps->syms ? symtab_find_addr(ps->syms, target, &off) : NULL;
	uint64_t ext = sym ? symtab_extent(ps->syms, sym) : 0;

	if (sym && (off == 0 || off < ext))
		snprintf(buf, len, "0x%llx (%s+0x%llx)", (unsigned long long)target,
			 symtab_name(ps->syms, sym), (unsigned long long)off);
	else
		snprintf(buf, len, "0x%llx (outside the kernel's symbols)", (unsigned long long)target);
}

/* What bytes hold, at ctx's slot, in words: "the guest's NOP", "the guest's call of T", ... */
static void patch_name_bytes(const struct patch_set *ps, const struct slot_ctx *ctx, const uint8_t *bytes,
			     char *buf, size_t len)
{
	uint64_t target = 0;
	enum slot_state st = slot_classify(ps->ops, ctx, bytes, &target);
	char tgt[160];
	size_t o;

	patch_name_target(ps, target, tgt, sizeof(tgt));
	switch (st) {
	case SLOT_ORIGINAL:
		if (ps->ops->arch == SLOT_ARCH_X86_64)
			snprintf(buf, len, "the compiler's call of %s", tgt);
		else
			snprintf(buf, len, "the compiler's bytes");
		break;
	case SLOT_DISABLED:
		snprintf(buf, len, "the guest's NOP");
		break;
	case SLOT_ENABLED:
		snprintf(buf, len, "vmmtrace's call of its stub");
		break;
	case SLOT_ENABLED_ELSEWHERE:
		if (patch_is_ours(ps, target))
			snprintf(buf, len, "vmmtrace's call of its chained entry %llu",
				 (unsigned long long)((target - ps->chain.va) / ps->chain.stride));
		else
			snprintf(buf, len, "the guest's call of %s", tgt);
		break;
	default:
		o = (size_t)snprintf(buf, len, "bytes neither vmmtrace nor the guest's ftrace wrote (");
		for (unsigned b = 0; b < ps->ops->layout->slot_bytes && o + 4 < len; b++)
			o += (size_t)snprintf(buf + o, len - o, b ? " %02x" : "%02x", bytes[b]);
		if (o + 2 < len)
			snprintf(buf + o, len - o, ")");
		break;
	}
}

void patch_describe(const struct patch_set *ps, size_t i, char *buf, size_t len)
{
	const struct patch_slot *s = &ps->slots[i];
	struct slot_ctx ctx = ps->ctx;
	char what[256];
	int n;

	n = snprintf(buf, len, "slot %s 0x%llx: ", s->name, (unsigned long long)s->va);
	if (n < 0 || (size_t)n >= len)
		return;
	buf += n;
	len -= (size_t)n;
	ctx.slot_pc = s->va;
	ctx.our_target = ps->stub_entry;
	if (s->dead) {
		snprintf(buf, len, "init text the guest freed");
	} else if (s->enabled && s->clients) {
		patch_name_bytes(ps, &ctx, s->saved, what, sizeof(what));
		if (s->chain)
			snprintf(buf, len, "vmmtrace's call of its chained entry %u, which goes on to %s",
				 s->chain - 1u, strncmp(what, "the guest's call of ", 20) ? what : what + 20);
		else
			snprintf(buf, len, "vmmtrace's call of its stub, in place of %s", what);
	} else {
		patch_name_bytes(ps, &ctx, s->hva, what, sizeof(what));
		snprintf(buf, len, "%s%s", what,
			 !s->clients ? "" : s->given ? "; held, but given to the guest's ftrace (no chained entry left)" :
			 ps->phase == PATCH_PHASE_FTRACE_INIT || ps->phase == PATCH_PHASE_GUEST_FTRACE ?
			 "; held, vmmtrace's call waits for the guest's ftrace to finish its change" :
			 "; held, but left alone (not bytes vmmtrace may replace)");
	}
}
