// SPDX-License-Identifier: GPL-2.0
/*
 * Linking the embedded stubs at their guest address (vmm/guest/guest.c,
 * guest_stub_link): every arch's stub (and arm64's one-page stub) links
 * with its return hook, doorbell and chained entries moved by the address
 * and nothing else changed; a stub whose configuration points its return
 * hook, its doorbell or its chained entries (or their targets) outside
 * itself, or whose size is not the embedded one's, is refused with one
 * message and left as it was.
 */
#include <stdlib.h>
#include <string.h>

#include "proto/trace.h"
#include "tests/unit/check.h"
#include "vmm/guest/guest.h"
#include "vmm/image/image.h"

#define VA 0xffffffff80200000ull

/* What a bad configuration does to the copy before the link. */
enum bad { BAD_RET_LOW, BAD_RET_HIGH, BAD_BELL, BAD_CHAIN_END, BAD_CHAIN_TGT, BAD_CHAIN_LOW, BAD_N };

static const char *const bad_names[BAD_N] = {
	"return hook inside the configuration", "return hook past the end", "doorbell past the end",
	"chained entries running past the end", "chained targets running past the end",
	"chained entries inside the configuration",
};

/* Applies bad to c; 0 when it does not apply (no chained entries in this stub). */
static int make_bad(struct vt_stub_config *c, size_t size, enum bad bad)
{
	switch (bad) {
	case BAD_RET_LOW: c->ret_va = VT_CFG_SIZE - 8; return 1;
	case BAD_RET_HIGH: c->ret_va = size; return 1;
	case BAD_BELL: c->doorbell_pc = size + 4096; return 1;
	case BAD_CHAIN_END:
		if (!c->chain_n)
			return 0;
		c->chain_n = (uint32_t)((size - c->chain_va) / VT_CHAIN_STRIDE + 1);
		return 1;
	case BAD_CHAIN_TGT:
		if (!c->chain_n)
			return 0;
		c->chain_tgt_va = size - 4;
		return 1;
	case BAD_CHAIN_LOW:
		if (!c->chain_n)
			return 0;
		c->chain_va = 16;
		return 1;
	default: return 0;
	}
}

static void check_arch(const struct guest_arch *g, const char *label)
{
	size_t size = guest_stub_size(g);
	uint8_t *copy = malloc(size), *orig = malloc(size);
	struct vt_stub_config *c = (struct vt_stub_config *)(void *)copy;
	const struct vt_stub_config *o = (const struct vt_stub_config *)(const void *)g->stub;
	struct errbuf err;

	if (!copy || !orig) {
		CHECK(0, "%s: out of memory", label);
		free(copy);
		free(orig);
		return;
	}
	memcpy(copy, g->stub, size);
	CHECK(guest_stub_link(g, copy, size, VA, &err) == 0, "%s: the embedded stub links at %#llx", label, VA);
	CHECK(c->ret_va == o->ret_va + VA && c->doorbell_pc == o->doorbell_pc + VA &&
	      (!o->chain_n || (c->chain_va == o->chain_va + VA && c->chain_tgt_va == o->chain_tgt_va + VA)),
	      "%s: its return hook, doorbell and %u chained entries moved by the address", label, o->chain_n);
	c->ret_va = o->ret_va;
	c->doorbell_pc = o->doorbell_pc;
	c->chain_va = o->chain_va;
	c->chain_tgt_va = o->chain_tgt_va;
	CHECK(!memcmp(copy, g->stub, size), "%s: nothing else changed", label);
	CHECK(guest_stub_link(g, copy, size - 8, VA, &err) != 0 && strstr(err.msg, "a copy of"),
	      "%s: a size not the embedded one's is refused: %s", label, err.msg);
	for (int b = 0; b < BAD_N; b++) {
		memcpy(copy, g->stub, size);
		if (!make_bad(c, size, (enum bad)b))
			continue;
		memcpy(orig, copy, size);
		CHECK(guest_stub_link(g, copy, size, VA, &err) != 0 && err.msg[0] && !strchr(err.msg, '\n') &&
		      !memcmp(copy, orig, size), "%s: %s: refused, the copy left as it was: %s", label, bad_names[b],
		      err.msg);
	}
	free(copy);
	free(orig);
}

int main(void)
{
	static const int arches[] = { IMAGE_ARCH_X86_64, IMAGE_ARCH_ARM64, IMAGE_ARCH_RISCV64, IMAGE_ARCH_LOONGARCH64 };
	unsigned chained = 0;

	for (size_t i = 0; i < sizeof(arches) / sizeof(arches[0]); i++) {
		const struct guest_arch *g = guest_arch_of(arches[i]);

		CHECK(g != NULL, "%s: a stub is embedded", image_arch_name(arches[i]));
		if (!g)
			continue;
		chained += ((const struct vt_stub_config *)(const void *)g->stub)->chain_n != 0;
		check_arch(g, g->name);
	}
	check_arch(guest_arch_one_page(IMAGE_ARCH_ARM64), "arm64 (one page)");
	CHECK(chained >= 1, "%u of the stubs carry chained entries, whose refusals are checked", chained);
	return check_exit();
}
