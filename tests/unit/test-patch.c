// SPDX-License-Identifier: GPL-2.0
/*
 * The slot patcher's phase machine (vmm/trace/patch.c), driven the way the tracer
 * drives it (tracer-change.c and tracer-client.c: want/unwant, then patch_sync with every vCPU
 * paused; tracer-run.c: patch_restore_all when the guest enters ftrace_init,
 * RUNNING once it returns, patch_drop_init when it frees its init text) over
 * a fake kernel: a vmlinux-like ELF whose text holds a few functions, its
 * __mcount_loc table and symbols, and a host buffer standing in for guest
 * memory. Every step checks the exact bytes of every slot, restated here from
 * the ISA rather than taken from arch/, and the counts patch_sync reports.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "arch/slot.h"
#include "tests/unit/check.h"
#include "tests/unit/fixtures.h"
#include "vmm/image/elf.h"
#include "vmm/trace/filter.h"
#include "vmm/image/mcount.h"
#include "vmm/trace/patch.h"
#include "vmm/image/symtab.h"

#define TEXT_SIZE 0x4000u
#define V FX_TEXT_VADDR
#define FENTRY (V + 0x800)		/* __fentry__ */
#define OTHER (V + 0x900)		/* another call target: a guest ftrace trampoline */
#define STUB (V - 0x200000)		/* the stub, below the kernel as on x86_64 */
#define WEAK_SLOT (V + 0x1500)		/* a slot in fn_d's body: an overridden __weak one */
#define INIT_LO (V + 0x1300)		/* _sinittext .. _einittext */
#define INIT_HI (V + 0x1400)

enum { F_A, F_B, F_C, F_INIT, F_IBT, NFUNCS };

static const struct {
	const char *name;
	uint64_t addr;
} funcs[NFUNCS] = {
	{ "fn_a", V + 0x1000 }, { "fn_b", V + 0x1100 }, { "fn_c", V + 0x1200 },
	{ "fn_init", INIT_LO }, { "fn_ibt", V + 0x1600 },
};

static const uint8_t x86_nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
static const uint8_t x86_endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
#define A64_NOP 0xd503201fu
#define A64_MOV_X9_X30 0xaa1e03e9u
#define A64_RET 0xd65f03c0u
#define A64_BTI_C 0xd503245fu

struct fake {
	const struct slot_ops *ops;
	struct fx_buf file;
	struct elf_image elf;
	struct symtab syms;
	struct mcount_table mt;
	uint8_t mem[TEXT_SIZE];		/* guest memory: the loaded text */
	struct patch_set ps;
	struct patch_result res;
	/* arm64 DYNAMIC_FTRACE_WITH_CALL_OPS: two NOPs before each function, the
	 * records pointing at them; fn_ibt starts with `bti c`. */
	bool callops;
	/* x86_64 clang builds (objtool --mnop): every slot a NOP in the image. */
	bool nops;
};

static bool is_x86(const struct fake *k)
{
	return k->ops->arch == SLOT_ARCH_X86_64;
}

/* x86_64 IBT: fn_ibt starts with ENDBR64 and its slot follows it (arm64 call ops: bti c). */
static uint64_t slot_va(const struct fake *k, int f)
{
	return funcs[f].addr + ((is_x86(k) || k->callops) && f == F_IBT ? sizeof(x86_endbr64) : 0);
}

/* What __mcount_loc records for f: its slot, or (call ops) the literal 8 bytes before it. */
static uint64_t record_va(const struct fake *k, int f)
{
	return k->callops ? funcs[f].addr - 8 : slot_va(k, f);
}

static uint8_t *slot_mem(struct fake *k, uint64_t va)
{
	return k->mem + (va - V);
}

static void x86_call(uint8_t *b, uint64_t pc, uint64_t target)
{
	b[0] = 0xe8;
	fx_put_le32(b + 1, (uint32_t)(target - (pc + 5)));
}

static void a64_words(uint8_t *b, uint32_t w0, uint32_t w1)
{
	fx_put_le32(b, w0);
	fx_put_le32(b + 4, w1);
}

/* bl at pc to target: imm26 in words from the bl itself. */
static uint32_t a64_bl(uint64_t pc, uint64_t target)
{
	return 0x94000000u | ((uint32_t)((target - pc) >> 2) & 0x03ffffffu);
}

/* A function as the compiler emits it: slot, then a return. */
static void put_function(struct fake *k, uint8_t *text, int f)
{
	uint64_t s = slot_va(k, f);
	uint8_t *p = text + (s - V);

	if (is_x86(k)) {
		if (s != funcs[f].addr)
			memcpy(text + (funcs[f].addr - V), x86_endbr64, sizeof(x86_endbr64));
		if (k->nops)
			memcpy(p, x86_nop5, sizeof(x86_nop5));
		else
			x86_call(p, s, FENTRY);
		p[5] = 0xc3;
	} else {
		if (k->callops)
			a64_words(text + (funcs[f].addr - 8 - V), A64_NOP, A64_NOP);
		if (s != funcs[f].addr)
			fx_put_le32(text + (funcs[f].addr - V), A64_BTI_C);
		a64_words(p, A64_NOP, A64_NOP);
		fx_put_le32(p + 8, A64_RET);
	}
}

static int add_symbols(struct fake *k, uint64_t table)
{
	int rc = 0;

	for (int f = 0; f < NFUNCS; f++)
		rc |= symtab_add(&k->syms, funcs[f].addr, 'T', funcs[f].name, strlen(funcs[f].name));
	rc |= symtab_add(&k->syms, V + 0x1480, 'T', "fn_d", 4);
	rc |= symtab_add(&k->syms, FENTRY, 'T', "__fentry__", 10);
	rc |= symtab_add(&k->syms, INIT_LO, 'T', "_sinittext", 10);
	rc |= symtab_add(&k->syms, INIT_HI, 'T', "_einittext", 10);
	rc |= symtab_add(&k->syms, table, 'D', "__start_mcount_loc", 18);
	rc |= symtab_add(&k->syms, table + 7 * 8, 'D', "__stop_mcount_loc", 17);
	return rc ? rc : symtab_finish(&k->syms);
}

/* The ELF file, its symbols and __mcount_loc (slots, a zero entry, the weak
 * body's slot); then the text "loaded" into guest memory. */
static int fake_build_as(struct fake *k, const struct slot_ops *ops, uint16_t machine, bool callops)
{
	uint64_t table = fx_data_vaddr(TEXT_SIZE), weak_rec = callops ? WEAK_SLOT - 8 : WEAK_SLOT;
	struct errbuf err = { "" };
	uint8_t *text, *loc;
	bool nops = k->nops;	/* the one setting a caller makes before */
	int rc;

	memset(k, 0, sizeof(*k));
	k->ops = ops;
	k->callops = callops;
	k->nops = nops;
	symtab_init(&k->syms);
	if ((rc = fx_make_elf(TEXT_SIZE, machine, &k->file)))
		return rc;
	text = k->file.data + FX_TEXT_OFF;
	loc = text + TEXT_SIZE;
	for (int f = 0; f < NFUNCS; f++) {
		put_function(k, text, f);
		fx_put_le32(loc + 8 * f, (uint32_t)record_va(k, f));
		fx_put_le32(loc + 8 * f + 4, (uint32_t)(record_va(k, f) >> 32));
	}
	memset(loc + 8 * NFUNCS, 0, 8);
	memcpy(text + (WEAK_SLOT - V), text + (funcs[F_A].addr - V), 8);
	fx_put_le32(loc + 8 * (NFUNCS + 1), (uint32_t)weak_rec);
	fx_put_le32(loc + 8 * (NFUNCS + 1) + 4, (uint32_t)(weak_rec >> 32));
	if (is_x86(k) && !k->nops)
		x86_call(text + (WEAK_SLOT - V), WEAK_SLOT, FENTRY);
	if ((rc = elf_parse(k->file.data, k->file.len, machine, &k->elf, &err)) ||
	    (rc = add_symbols(k, table)) ||
	    (rc = mcount_read(&k->elf, &k->syms, ops, &k->mt, &err))) {
		printf("INFO: fake kernel: %s\n", err.msg);
		return rc;
	}
	memcpy(k->mem, text, TEXT_SIZE);
	return 0;
}

static int fake_build(struct fake *k, const struct slot_ops *ops, uint16_t machine)
{
	return fake_build_as(k, ops, machine, false);
}

static void fake_destroy(struct fake *k)
{
	patch_destroy(&k->ps);
	mcount_destroy(&k->mt);
	symtab_destroy(&k->syms);
	fx_free(&k->file);
}

/* The resolver patch.c gets instead of the VM: guest RAM is the text only. */
static void *fake_gpa_ptr(void *opaque, uint64_t gpa, uint64_t len)
{
	struct fake *k = opaque;

	if (gpa < FX_TEXT_PADDR || len > TEXT_SIZE || gpa - FX_TEXT_PADDR > TEXT_SIZE - len)
		return NULL;
	return k->mem + (gpa - FX_TEXT_PADDR);
}

static void *no_gpa_ptr(void *opaque, uint64_t gpa, uint64_t len)
{
	(void)opaque;
	(void)gpa;
	(void)len;
	return NULL;
}

static int fake_patch_init(struct fake *k, uint64_t stub, struct errbuf *err)
{
	const struct patch_mem mem = { fake_gpa_ptr, NULL, k };

	return patch_init(&k->ps, &mem, &k->elf, &k->mt, &k->syms, k->ops, k->mt.fentry, stub, err);
}

/* Client claims through a glob, as tracer_attach/tracer_detach do. */
static size_t want(struct fake *k, const char *glob, unsigned client)
{
	struct filter f;
	struct errbuf err;
	uint8_t *sel;
	size_t n = 0;

	filter_init(&f);
	if (!filter_add(&f, glob, &err) && (sel = patch_match(&k->ps, &f, &n))) {
		n = patch_want(&k->ps, sel, client);
		free(sel);
	}
	filter_destroy(&f);
	return n;
}

static size_t unwant(struct fake *k, const char *glob, unsigned client)
{
	struct filter f;
	struct errbuf err;
	size_t n = 0;

	if (!glob)
		return patch_unwant(&k->ps, NULL, client);
	filter_init(&f);
	if (!filter_add(&f, glob, &err))
		n = patch_unwant(&k->ps, &f, client);
	filter_destroy(&f);
	return n;
}

static size_t unwant_all(struct fake *k, const char *glob)
{
	struct filter f;
	struct errbuf err;
	uint8_t *sel = NULL;
	size_t n = 0;

	filter_init(&f);
	if (!filter_add(&f, glob, &err) && (sel = patch_match(&k->ps, &f, &n)))
		n = patch_unwant_all(&k->ps, sel);
	free(sel);
	filter_destroy(&f);
	return n;
}

/* patch_sync's counts, exactly. */
static void check_res(const struct fake *k, const char *what, size_t written, size_t already,
		      size_t foreign, size_t deferred, size_t busy)
{
	const struct patch_result *r = &k->res;

	CHECK(r->written == written && r->already == already && r->foreign == foreign &&
	      r->deferred == deferred && r->busy == busy,
	      "%s: written %zu already %zu foreign %zu deferred %zu busy %zu (want %zu %zu %zu %zu %zu)",
	      what, r->written, r->already, r->foreign, r->deferred, r->busy,
	      written, already, foreign, deferred, busy);
}

static void sync_check(struct fake *k, const char *what, size_t written, size_t already,
		       size_t foreign, size_t deferred, size_t busy)
{
	patch_sync(&k->ps, &k->res);
	check_res(k, what, written, already, foreign, deferred, busy);
}

/* x86_64 forms of a slot: the compiler's call, ours, another's, the NOP. */
enum form { FENT, STB, OTH, NOP };

static void x86_form(uint8_t *b, uint64_t pc, enum form form)
{
	if (form == NOP)
		memcpy(b, x86_nop5, 5);
	else
		x86_call(b, pc, form == FENT ? FENTRY : form == STB ? STUB : OTHER);
}

/* Every x86_64 slot holds exactly the given form; the weak body is never touched. */
static void check_x86(struct fake *k, const char *what, enum form a, enum form b,
		      enum form c, enum form init, enum form ibt)
{
	const enum form want[NFUNCS] = { a, b, c, init, ibt };
	uint8_t exp[5], weak[5];
	int bad = -1;

	for (int f = NFUNCS - 1; f >= 0; f--) {
		x86_form(exp, slot_va(k, f), want[f]);
		if (memcmp(slot_mem(k, slot_va(k, f)), exp, 5))
			bad = f;
	}
	x86_call(weak, WEAK_SLOT, FENTRY);
	CHECK(bad < 0 && !memcmp(slot_mem(k, WEAK_SLOT), weak, 5),
	      "%s: slot bytes as expected%s%s", what, bad < 0 ? "" : "; wrong: ",
	      bad < 0 ? "" : funcs[bad].name);
}

static const struct patch_slot *slot_of(const struct fake *k, int f)
{
	return patch_find(&k->ps, slot_va(k, f));
}

static void x86_setup(struct fake *k)
{
	const struct patch_slot *ibt;
	struct errbuf err = { "" };
	int rc;

	CHECK(k->mt.count == 6 && k->mt.zero == 1 && k->mt.no_symbol == 1 && k->mt.init == 1 &&
	      k->mt.states[SLOT_ORIGINAL] == 6,
	      "mcount: 6 slots (1 zero entry skipped), 1 without a symbol, 1 init, all original");
	rc = fake_patch_init(k, STUB, &err);
	CHECK(rc == 0 && k->ps.count == NFUNCS && k->ps.held == 0,
	      "patch_init: the 5 named slots, the weak body left out (%s)", rc ? err.msg : "ok");
	ibt = slot_of(k, F_IBT);
	CHECK(ibt && ibt->va == funcs[F_IBT].addr + 4 && !strcmp(ibt->name, "fn_ibt") &&
	      ibt->hva == k->mem + (ibt->va - V) && !memcmp(ibt->orig, ibt->hva, 5),
	      "fn_ibt's slot is after its ENDBR64, in guest memory, original bytes kept");
	CHECK(!patch_find(&k->ps, WEAK_SLOT) && !patch_find(&k->ps, funcs[F_IBT].addr),
	      "patch_find: no slot for the weak body or at fn_ibt's ENDBR64");
	CHECK(slot_of(k, F_INIT)->init && !slot_of(k, F_A)->init, "fn_init's slot is init text");
	check_x86(k, "fresh", FENT, FENT, FENT, FENT, FENT);
}

/* Before ftrace_init: call __fentry__ <-> call stub. */
static void x86_early(struct fake *k)
{
	k->ps.phase = PATCH_PHASE_EARLY;
	CHECK(want(k, "fn_[ab]", 0) == 2 && k->ps.held == 2, "client 0 wants fn_a, fn_b");
	check_x86(k, "claims alone write nothing", FENT, FENT, FENT, FENT, FENT);
	sync_check(k, "early: enable a, b", 2, 0, 0, 0, 0);
	check_x86(k, "early: a, b call the stub", STB, STB, FENT, FENT, FENT);
	CHECK(want(k, "fn_[bc]", 1) == 2 && k->ps.held == 3 &&
	      slot_of(k, F_B)->clients == 3, "client 1 wants fn_b (shared) and fn_c");
	sync_check(k, "early: enable c; a, b already", 1, 2, 0, 0, 0);
	check_x86(k, "early: c calls the stub too", STB, STB, STB, FENT, FENT);
	CHECK(unwant(k, NULL, 0) == 2 && k->ps.held == 2, "client 0 detaches: drops a and b");
	sync_check(k, "early: release a", 1, 2, 0, 0, 0);
	check_x86(k, "early: a back to call __fentry__, b kept for client 1", FENT, STB, STB, FENT,
		  FENT);
	/* Someone else rewrote our call at b; ibt is mid text_poke_bp (int3). */
	x86_call(slot_mem(k, slot_va(k, F_B)), slot_va(k, F_B), OTHER);
	slot_mem(k, slot_va(k, F_IBT))[0] = 0xcc;
	CHECK(want(k, "fn_ibt", 0) == 1, "client 0 wants fn_ibt");
	sync_check(k, "early: b and ibt foreign", 0, 1, 2, 0, 0);
	CHECK(!strcmp(k->res.foreign_example, "fn_b") && !slot_of(k, F_IBT)->enabled,
	      "the first foreign slot is named; ibt is not taken");
	CHECK(slot_mem(k, slot_va(k, F_IBT))[0] == 0xcc, "the int3 is left alone");
	slot_mem(k, slot_va(k, F_IBT))[0] = 0xe8;
	sync_check(k, "early: ibt back to call __fentry__ is taken now", 1, 1, 1, 0, 0);
	check_x86(k, "early: before ftrace_init", FENT, OTH, STB, FENT, STB);
}

/* ftrace_init: held slots back to the compiler's bytes, hands off until it returns. */
static void x86_handoff(struct fake *k)
{
	static uint8_t before[TEXT_SIZE];

	patch_restore_all(&k->ps, &k->res);
	check_res(k, "ftrace_init entry: c, ibt restored, b foreign", 2, 0, 1, 0, 0);
	check_x86(k, "ftrace_init entry: every slot we held holds call __fentry__", FENT, OTH, FENT,
		  FENT, FENT);
	k->ps.phase = PATCH_PHASE_FTRACE_INIT;
	CHECK(want(k, "fn_a", 2) == 1 && k->ps.held == 4, "client 2 attaches to fn_a meanwhile");
	memcpy(before, k->mem, TEXT_SIZE);
	sync_check(k, "inside ftrace_init: a, b, c, ibt deferred", 0, 0, 0, 4, 0);
	CHECK(!memcmp(before, k->mem, TEXT_SIZE), "inside ftrace_init: not a byte written");
	/* The guest's ftrace_init NOPs every call __fentry__. */
	for (int f = 0; f < NFUNCS; f++)
		if (f != F_B)
			memcpy(slot_mem(k, slot_va(k, f)), x86_nop5, 5);
}

/* After ftrace_init: the guest's NOP <-> call stub. */
static void x86_running(struct fake *k)
{
	k->ps.phase = PATCH_PHASE_RUNNING;
	/* b calls another target, as a slot the guest's ftrace enabled: with no chained entries, given to it. */
	sync_check(k, "running: a, c, ibt enabled from the NOP, b given", 3, 0, 0, 0, 0);
	CHECK(k->res.given == 1 && k->ps.given == 1 && slot_of(k, F_B)->given && !slot_of(k, F_B)->enabled,
	      "b is given to the guest's ftrace (%zu, %zu)", k->res.given, k->ps.given);
	check_x86(k, "running: calls to the stub", STB, OTH, STB, NOP, STB);
	CHECK(!memcmp(slot_of(k, F_C)->saved, x86_nop5, 5), "what our call replaced is the NOP");
	CHECK(unwant(k, "fn_c", 1) == 1 && unwant(k, "fn_c", 1) == 0,
	      "client 1 drops fn_c by glob, once");
	sync_check(k, "running: release c", 1, 2, 0, 0, 0);
	check_x86(k, "running: c back to the NOP", STB, OTH, NOP, NOP, STB);
	CHECK(unwant_all(k, "fn_a") == 1 && k->ps.held == 2, "fn_a dropped for every client");
	sync_check(k, "running: release a", 1, 1, 0, 0, 0);
	check_x86(k, "running: a back to the NOP", NOP, OTH, NOP, NOP, STB);
	CHECK(unwant(k, NULL, 1) == 1 && k->ps.held == 1, "client 1 detaches from the given b");
	sync_check(k, "running: b, neither held nor ours, is not looked at", 0, 1, 0, 0, 0);
	CHECK(k->ps.given == 0, "nothing given any more");
}

/* free_initmem: init slots gone for good; patch_scan reads what is live. */
static void x86_init_and_scan(struct fake *k)
{
	uint64_t d1, d2, d3;
	size_t ours;

	CHECK(want(k, "fn_init", 0) == 1, "client 0 wants fn_init");
	sync_check(k, "running: enable init", 1, 1, 0, 0, 0);
	patch_scan(&k->ps, &ours, &d1);
	CHECK(ours == 2, "scan: 2 slots call the stub (%zu)", ours);
	CHECK(patch_drop_init(&k->ps) == 1 && k->ps.held == 1 && slot_of(k, F_INIT)->dead,
	      "the guest frees its init text: fn_init's slot dropped");
	CHECK(slot_of(k, F_INIT)->clients == 1 && !slot_of(k, F_INIT)->enabled,
	      "its claim stays (a call the freeing code still makes is routed), its bytes are forgotten");
	CHECK(patch_drop_init(&k->ps) == 0 && want(k, "fn_init", 0) == 0,
	      "dropped once; a dead slot cannot be claimed");
	sync_check(k, "running: the dead slot is never written", 0, 1, 0, 0, 0);
	check_x86(k, "running: freed init text left as it was", NOP, OTH, NOP, STB, STB);
	patch_scan(&k->ps, &ours, &d2);
	CHECK(ours == 1 && d2 != d1, "scan: the dead slot no longer counts (%zu)", ours);
	slot_mem(k, slot_va(k, F_A))[4] ^= 0xff;
	patch_scan(&k->ps, &ours, &d3);
	CHECK(d3 != d2, "scan: one changed byte changes the digest");
	slot_mem(k, slot_va(k, F_A))[4] ^= 0xff;
	patch_scan(&k->ps, &ours, &d3);
	CHECK(d3 == d2, "scan: the same bytes give the same digest");
	/* Someone else rewrites our call at ibt before we release it. */
	x86_call(slot_mem(k, slot_va(k, F_IBT)), slot_va(k, F_IBT), OTHER);
	CHECK(unwant_all(k, "*") == 1 && k->ps.held == 0, "every claim dropped");
	sync_check(k, "running: releasing a foreign ibt leaves it", 0, 0, 1, 0, 0);
	CHECK(!slot_of(k, F_IBT)->enabled, "... and forgets it was ours");
	check_x86(k, "detached: the guest's text as it left it", NOP, OTH, NOP, STB, OTH);
	patch_scan(&k->ps, &ours, &d3);
	CHECK(ours == 0, "scan: nothing calls the stub");
	sync_check(k, "detached: nothing left to do", 0, 0, 0, 0, 0);
}

/*
 * The guest's ftrace changes its slots after the hand-over: every held slot
 * back to its bytes at the change's start, taken again at its end: a NOP
 * as before, a call it wrote through a chained entry (on to its target),
 * one more target than entries given to it; detach gives back its call.
 */
#define CHAIN (STUB + 0x400)
#define OTHER2 (V + 0x980)
/* patch_describe's line for f holds want. */
static void describe_check(struct fake *k, int f, const char *want)
{
	char line[512];

	patch_describe(&k->ps, (size_t)(slot_of(k, f) - k->ps.slots), line, sizeof(line));
	CHECK(strstr(line, want) != NULL, "describe: '%s' has '%s'", line, want);
}

static void test_x86_guest_ftrace(void)
{
	struct fake *k = calloc(1, sizeof(*k));
	uint64_t targets[2] = { 0, 0 };
	uint8_t want_b[5];

	if (!k || fake_build(k, &slot_ops_x86_64, EM_X86_64)) {
		CHECK(0, "x86_64 fake kernel built");
		free(k);
		return;
	}
	{
		struct errbuf err = { "" };

		CHECK(!fake_patch_init(k, STUB, &err), "patch_init (%s)", err.msg);
	}
	for (int f = 0; f < NFUNCS; f++)
		memcpy(slot_mem(k, slot_va(k, f)), x86_nop5, 5);	/* after ftrace_init */
	k->ps.phase = PATCH_PHASE_RUNNING;
	k->ps.chain = (struct patch_chain){ CHAIN, 16, 2, targets, 0 };
	CHECK(want(k, "fn_[abc]", 0) == 3, "client 0 wants a, b, c");
	sync_check(k, "running: a, b, c enabled", 3, 0, 0, 0, 0);
	check_x86(k, "running: a, b, c call the stub", STB, STB, STB, NOP, NOP);

	/* The guest's ftrace: enable b towards OTHER, c towards OTHER2, ibt towards OTHER. */
	patch_release_all(&k->ps, &k->res);
	check_res(k, "guest ftrace entry: a, b, c given back", 3, 0, 0, 0, 0);
	check_x86(k, "guest ftrace entry: its own bytes everywhere", NOP, NOP, NOP, NOP, NOP);
	k->ps.phase = PATCH_PHASE_GUEST_FTRACE;
	CHECK(want(k, "fn_ibt", 0) == 1, "client 0 also wants ibt meanwhile");
	sync_check(k, "guest ftrace: hands off", 0, 0, 0, 4, 0);
	x86_call(slot_mem(k, slot_va(k, F_B)), slot_va(k, F_B), OTHER);
	x86_call(slot_mem(k, slot_va(k, F_C)), slot_va(k, F_C), OTHER2);
	x86_call(slot_mem(k, slot_va(k, F_IBT)), slot_va(k, F_IBT), OTHER);
	memcpy(want_b, slot_mem(k, slot_va(k, F_B)), 5);
	k->ps.phase = PATCH_PHASE_RUNNING;
	sync_check(k, "guest ftrace returned: a, b, c, ibt taken", 4, 0, 0, 0, 0);
	CHECK(k->res.chained == 3 && k->res.given == 0, "b, c, ibt chained (%zu), none given (%zu)",
	      k->res.chained, k->res.given);
	CHECK(slot_of(k, F_B)->chain == 1 && slot_of(k, F_C)->chain == 2 && slot_of(k, F_IBT)->chain == 1 &&
	      !slot_of(k, F_A)->chain, "b and ibt share entry 0 (OTHER), c has entry 1 (OTHER2)");
	CHECK(targets[0] == OTHER && targets[1] == OTHER2, "the stub's table names the guest's targets");
	describe_check(k, F_A, "slot fn_a 0x");
	describe_check(k, F_A, ": vmmtrace's call of its stub, in place of the guest's NOP");
	describe_check(k, F_C, ": vmmtrace's call of its chained entry 1, which goes on to 0x");
	{
		uint8_t b[5];

		x86_call(b, slot_va(k, F_B), CHAIN);
		CHECK(!memcmp(slot_mem(k, slot_va(k, F_B)), b, 5), "b calls chained entry 0");
		x86_call(b, slot_va(k, F_C), CHAIN + 16);
		CHECK(!memcmp(slot_mem(k, slot_va(k, F_C)), b, 5), "c calls chained entry 1");
	}
	{
		uint8_t b[5];

		x86_call(b, slot_va(k, F_A), STUB);
		CHECK(!memcmp(slot_mem(k, slot_va(k, F_A)), b, 5), "a calls the stub's entry");
	}
	sync_check(k, "a second sync: every slot already ours", 0, 4, 0, 0, 0);
	{
		size_t ours;
		uint64_t d;

		patch_scan(&k->ps, &ours, &d);
		CHECK(ours == 4, "scan: chained slots count as ours (%zu)", ours);
	}

	/* The guest's next change: a third target, with two entries. */
	patch_release_all(&k->ps, &k->res);
	check_res(k, "second change: four given back", 4, 0, 0, 0, 0);
	CHECK(!memcmp(slot_mem(k, slot_va(k, F_B)), want_b, 5), "b holds the guest's call again");
	x86_call(slot_mem(k, slot_va(k, F_A)), slot_va(k, F_A), V + 0xa00);
	sync_check(k, "three targets, two entries: a, b, ibt taken", 3, 0, 0, 0, 0);
	CHECK(k->res.chained == 3 && k->ps.chain.used == 2 && targets[0] == V + 0xa00 && targets[1] == OTHER,
	      "entries reassigned in slot order (%#llx, %#llx)", (unsigned long long)targets[0],
	      (unsigned long long)targets[1]);
	CHECK(k->res.given == 1 && k->ps.given == 1 && slot_of(k, F_C)->given && !slot_of(k, F_C)->enabled,
	      "c given to the guest (%zu)", k->res.given);
	{
		uint8_t b[5];

		x86_call(b, slot_va(k, F_C), OTHER2);
		CHECK(!memcmp(slot_mem(k, slot_va(k, F_C)), b, 5), "c keeps the guest's call");
	}
	describe_check(k, F_C, "; held, but given to the guest's ftrace");
	/* A slot calling one of our entries that we did not write is foreign, never chained to itself. */
	patch_release_all(&k->ps, &k->res);
	x86_call(slot_mem(k, slot_va(k, F_A)), slot_va(k, F_A), CHAIN + 16);
	sync_check(k, "a calls entry 1 behind our back: foreign; b, c, ibt chained (two targets now)", 3, 0, 1, 0, 0);
	CHECK(!slot_of(k, F_A)->enabled && !slot_of(k, F_A)->chain, "a is not taken");

	/* Detach: each slot gets the guest's bytes back. */
	CHECK(unwant_all(k, "*") == 4 && k->ps.held == 0, "every claim dropped");
	sync_check(k, "detach: b, c and ibt released", 3, 0, 0, 0, 0);
	CHECK(!memcmp(slot_mem(k, slot_va(k, F_B)), want_b, 5), "b: the guest's call, as it wrote it");
	describe_check(k, F_B, ": the guest's call of 0x");
	describe_check(k, F_A, ": vmmtrace's call of its chained entry 1");	/* what it holds, whoever wrote it */
	{
		uint8_t b[5];

		x86_call(b, slot_va(k, F_IBT), OTHER);
		CHECK(!memcmp(slot_mem(k, slot_va(k, F_IBT)), b, 5), "ibt: the guest's call");
		x86_call(b, slot_va(k, F_C), OTHER2);
		CHECK(!memcmp(slot_mem(k, slot_va(k, F_C)), b, 5), "c: the guest's call");
	}
	fake_destroy(k);
	free(k);
}

static void test_x86_phases(void)
{
	struct fake *k = calloc(1, sizeof(*k));

	if (!k || fake_build(k, &slot_ops_x86_64, EM_X86_64)) {
		CHECK(0, "x86_64 fake kernel built");
		free(k);
		return;
	}
	x86_setup(k);
	x86_early(k);
	x86_handoff(k);
	x86_running(k);
	x86_init_and_scan(k);
	fake_destroy(k);
	free(k);
}

/* patch_init refuses what it cannot patch, saying which slot. */
static void test_init_refusals(void)
{
	struct fake *k = calloc(1, sizeof(*k));
	const struct patch_mem none = { no_gpa_ptr, NULL, NULL };
	struct errbuf err = { "" };
	int rc;

	if (!k || fake_build(k, &slot_ops_x86_64, EM_X86_64)) {
		CHECK(0, "x86_64 fake kernel built");
		free(k);
		return;
	}
	rc = fake_patch_init(k, V + 0x100000000ull, &err);
	CHECK(rc == -ERANGE && strstr(err.msg, "cannot reach") && k->ps.count == 0,
	      "a stub 4 GiB away: -ERANGE (%s)", err.msg);
	rc = patch_init(&k->ps, &none, &k->elf, &k->mt, &k->syms, k->ops, k->mt.fentry, STUB, &err);
	CHECK(rc == -EINVAL && strstr(err.msg, "outside the loaded kernel"),
	      "slots not in guest memory: -EINVAL (%s)", err.msg);
	memcpy(slot_mem(k, slot_va(k, F_C)), x86_nop5, 5);
	rc = fake_patch_init(k, STUB, &err);
	CHECK(rc == -EINVAL && strstr(err.msg, "fn_c") && strstr(err.msg, "not a fresh image"),
	      "a slot already NOPed: not a fresh image (%s)", err.msg);
	fake_destroy(k);
	free(k);
}

/*
 * An x86_64 kernel whose build left every slot a NOP (clang, objtool
 * --mnop): that is the fresh image; enabling a slot keeps its NOP to put
 * back, the hand-over restores it, and one call among the NOPs (a slot
 * someone patched) is refused.
 */
static void test_x86_nop_compiled(void)
{
	struct fake *k = calloc(1, sizeof(*k));
	struct patch_result res;
	struct errbuf err = { "" };
	uint64_t c;
	int rc;

	if (!k) {
		CHECK(0, "memory for a fake kernel");
		return;
	}
	k->nops = true;
	if (fake_build_as(k, &slot_ops_x86_64, EM_X86_64, false) || !k->mt.nop_compiled) {
		CHECK(0, "x86_64 NOP-compiled fake kernel built and recognised (nop_compiled %d)", k->mt.nop_compiled);
		fake_destroy(k);
		free(k);
		return;
	}
	rc = fake_patch_init(k, STUB, &err);
	CHECK(rc == 0 && k->ps.count == NFUNCS, "NOP-compiled: every named slot taken (%s)", rc ? err.msg : "ok");
	k->ps.phase = PATCH_PHASE_EARLY;
	c = slot_va(k, F_C);
	CHECK(want(k, "fn_c", 0) == 1, "NOP-compiled: client 0 wants fn_c");
	patch_sync(&k->ps, &res);
	CHECK(res.written == 1 && slot_mem(k, c)[0] == 0xe8, "NOP-compiled: fn_c calls the stub before ftrace_init");
	patch_restore_all(&k->ps, &res);
	CHECK(res.written == 1 && !memcmp(slot_mem(k, c), x86_nop5, 5), "NOP-compiled: the hand-over puts its NOP back");
	patch_destroy(&k->ps);
	x86_call(k->mem + (funcs[F_A].addr - V), funcs[F_A].addr, FENTRY);
	rc = fake_patch_init(k, STUB, &err);
	CHECK(rc == -EINVAL && strstr(err.msg, "fn_a") && strstr(err.msg, "NOP its build left"),
	      "NOP-compiled: a call among the NOPs: not a fresh image (%s)", err.msg);
	fake_destroy(k);
	free(k);
}

/* Every arm64 slot holds exactly these two words. */
static void check_a64(struct fake *k, int f, uint32_t w0, uint32_t w1, const char *what)
{
	uint8_t exp[8];

	a64_words(exp, w0, w1);
	CHECK(!memcmp(slot_mem(k, slot_va(k, f)), exp, 8), "%s: %s holds %08x %08x", what,
	      funcs[f].name, w0, w1);
}

static void sync_at(struct fake *k, uint64_t pc, const char *what, size_t written,
		    size_t already, size_t busy)
{
	k->ps.pcs = &pc;
	k->ps.npcs = 1;
	sync_check(k, what, written, already, 0, 0, busy);
	k->ps.pcs = NULL;
	k->ps.npcs = 0;
}

/* Two-instruction slots: a change a paused vCPU would run half of waits. */
static void test_a64_busy(void)
{
	struct fake *k = calloc(1, sizeof(*k));
	struct errbuf err = { "" };
	uint64_t a, b;

	if (!k || fake_build(k, &slot_ops_arm64, EM_AARCH64) || fake_patch_init(k, STUB, &err)) {
		CHECK(0, "arm64 fake kernel built and loaded (%s)", err.msg);
		free(k);
		return;
	}
	a = slot_va(k, F_A);
	b = slot_va(k, F_B);
	CHECK(k->ps.count == NFUNCS, "arm64: the 5 named slots");
	{
		static const char *const out[] = { "fn_d_none", "fn_init", NULL };

		CHECK(patch_exclude(&k->ps, out) == 1 && k->ps.count == NFUNCS - 1 && !slot_of(k, F_INIT) &&
		      want(k, "fn_init", 0) == 0, "a function run before the MMU is on is taken out, never wanted");
	}
	k->ps.phase = PATCH_PHASE_EARLY;
	CHECK(want(k, "fn_a", 0) == 1, "arm64: client 0 wants fn_a");
	sync_at(k, a + 4, "arm64 early: a vCPU between the two NOPs blocks both words", 0, 0, 1);
	check_a64(k, F_A, A64_NOP, A64_NOP, "busy");
	CHECK(!slot_of(k, F_A)->enabled, "arm64: not enabled while busy");
	sync_at(k, a, "arm64 early: at the slot's first byte it may go", 1, 0, 0);
	check_a64(k, F_A, A64_MOV_X9_X30, a64_bl(a + 4, STUB), "enabled");
	CHECK(unwant(k, NULL, 0) == 1, "arm64: client 0 detaches");
	sync_at(k, a + 4, "arm64 early: release waits for the vCPU at the bl", 0, 0, 1);
	check_a64(k, F_A, A64_MOV_X9_X30, a64_bl(a + 4, STUB), "release busy");
	CHECK(slot_of(k, F_A)->enabled, "arm64: still ours, to retry");
	sync_at(k, a + 8, "arm64 early: past the slot, the release goes", 1, 0, 0);
	check_a64(k, F_A, A64_NOP, A64_NOP, "released");
	/* After the guest's ftrace_init: mov x9, x30; nop, and only the toggle flips. */
	a64_words(slot_mem(k, b), A64_MOV_X9_X30, A64_NOP);
	k->ps.phase = PATCH_PHASE_RUNNING;
	CHECK(want(k, "fn_b", 0) == 1, "arm64: client 0 wants fn_b");
	sync_at(k, b + 4, "arm64 running: a vCPU at the toggle does not block it", 1, 0, 0);
	check_a64(k, F_B, A64_MOV_X9_X30, a64_bl(b + 4, STUB), "enabled by the toggle");
	CHECK(unwant(k, NULL, 0) == 1, "arm64: client 0 detaches again");
	sync_at(k, b + 4, "arm64 running: nor the release", 1, 0, 0);
	check_a64(k, F_B, A64_MOV_X9_X30, A64_NOP, "disabled by the toggle");
	check_a64(k, F_C, A64_NOP, A64_NOP, "untouched");
	fake_destroy(k);
	free(k);
}

/*
 * arm64 with call ops (6.5+, Debian's 6.12): the records point 8 bytes
 * before each function; the slots are found as ftrace_call_adjust() finds
 * them (past the literal, past a bti c), each named as its function, and
 * patched there, the literal never touched.
 */
static uint32_t le32_at(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static void test_a64_callops(void)
{
	struct fake *k = calloc(1, sizeof(*k));
	struct errbuf err = { "" };
	int named = 1, weak = 0;

	if (!k || fake_build_as(k, &slot_ops_arm64, EM_AARCH64, true) || fake_patch_init(k, STUB, &err)) {
		CHECK(0, "arm64 call-ops fake kernel built and loaded (%s)", err.msg);
		free(k);
		return;
	}
	CHECK(k->mt.pre == 8, "call ops: the records point 8 bytes before the functions (pre %u)", k->mt.pre);
	for (int f = 0; f < NFUNCS; f++) {
		const struct patch_slot *s = slot_of(k, f);

		named &= s && s->va == slot_va(k, f) && s->func == funcs[f].addr && !strcmp(s->name, funcs[f].name);
	}
	CHECK(named && k->ps.count == NFUNCS, "call ops: each slot at its function's entry (fn_ibt's after bti c), "
	      "named as it, its function's address kept for the events");
	for (size_t i = 0; i < k->mt.count; i++)
		weak += k->mt.slots[i].addr == WEAK_SLOT && !k->mt.slots[i].func;
	CHECK(k->mt.no_symbol == 1 && weak == 1,
	      "call ops: the overridden __weak body's slot is found past its literal, without a symbol");
	k->ps.phase = PATCH_PHASE_EARLY;
	CHECK(want(k, "fn_ibt", 0) == 1, "call ops: client 0 wants fn_ibt");
	sync_at(k, 0, "call ops: fn_ibt enabled", 1, 0, 0);
	check_a64(k, F_IBT, A64_MOV_X9_X30, a64_bl(slot_va(k, F_IBT) + 4, STUB), "enabled after bti c");
	CHECK(le32_at(slot_mem(k, funcs[F_IBT].addr)) == A64_BTI_C &&
	      le32_at(slot_mem(k, funcs[F_IBT].addr - 8)) == A64_NOP &&
	      le32_at(slot_mem(k, funcs[F_IBT].addr - 4)) == A64_NOP,
	      "call ops: the bti c and the literal's NOPs untouched");
	fake_destroy(k);
	free(k);
}

int main(void)
{
	test_x86_phases();
	test_x86_guest_ftrace();
	test_init_refusals();
	test_x86_nop_compiled();
	test_a64_busy();
	test_a64_callops();
	return check_exit();
}
