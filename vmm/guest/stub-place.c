// SPDX-License-Identifier: GPL-2.0
/*
 * The stub's places inside an arm64 or riscv64 kernel's image
 * (stub-place.h, docs/STUB-PLACEMENT.md).
 */
#include <errno.h>

#include "proto/trace.h"
#include "vmm/guest/guest.h"
#include "vmm/guest/stub-place.h"
#include "vmm/image/elf.h"
#include "vmm/image/image.h"
#include "vmm/image/symtab.h"

static const struct guest_place_syms guest_places[] = {
	[IMAGE_ARCH_ARM64] = { "_etext", "init_pg_end", "_end", "__rela_end", "__init_end", 0, NULL, "_end" },
	[IMAGE_ARCH_RISCV64] = { "__init_begin", "_end", "_end", NULL, NULL, 2 << 20, "__init_data_begin", NULL },
};

const struct guest_place_syms *guest_place_syms(int image_arch)
{
	if (image_arch < 0 || (size_t)image_arch >= sizeof(guest_places) / sizeof(guest_places[0]))
		return NULL;
	return guest_places[image_arch].code_end ? &guest_places[image_arch] : NULL;
}

uint64_t guest_sym(const struct symtab *syms, const char *name)
{
	const struct symbol *s = symtab_find_name(syms, name);

	return s ? s->addr : 0;
}

int guest_is_padding(const struct elf_image *elf, const struct symtab *syms, uint64_t va, uint64_t len)
{
	const uint8_t *bytes = elf_vaddr_ptr(elf, va, len);
	const struct symbol *s;
	uint64_t off;

	for (uint64_t i = 0; bytes && i < len; i++)
		if (bytes[i])
			return 0;
	s = symtab_find_addr(syms, va + len - 1, &off);
	return bytes && s && s->addr <= va;
}

int guest_stub_place(int image_arch, const struct elf_image *elf, const struct symtab *syms, int can_move,
		     uint64_t past_end, struct guest_place *p, struct errbuf *err)
{
	const struct guest_place_syms *g = guest_place_syms(image_arch);
	uint64_t end, *code = &p->code, *data = &p->data, *data_end = &p->data_end;
	int *early = &p->early;
	enum guest_code_place *place = &p->where;

	if (!g)
		return err_set(err, EOPNOTSUPP, "a %s kernel's stub does not live in its image", image_arch_name(image_arch));
	end = guest_sym(syms, g->code_end);
	*data = guest_sym(syms, g->data_start);
	*data_end = guest_sym(syms, g->data_end);
	*early = 0;
	*place = GUEST_CODE_PADDING;
	if (g->early_start && guest_sym(syms, g->early_start) && guest_sym(syms, g->early_end)) {
		/*
		 * The tail of the init data, after the relocation table, is free
		 * until free_initmem: Debian's stock arm64 kernel has nothing else
		 * (no init_pg_end in its kallsyms, and init_pg_dir fills the image
		 * up to _end), and on the lean kernel it is 48 KiB against the
		 * data tail's 8: the rings go there whenever they can move at the
		 * hand-over (a region to move to) and it is larger.
		 */
		uint64_t e0 = guest_sym(syms, g->early_start), e1 = guest_sym(syms, g->early_end);
		int tail = *data && *data_end > *data;
		const uint8_t *zero = e1 > e0 ? elf_vaddr_ptr(elf, e0, e1 - e0) : NULL;

		for (uint64_t i = 0; zero && i < e1 - e0; i++)
			if (zero[i])
				zero = NULL;
		if (tail && !(zero && can_move && e1 - e0 > *data_end - *data)) {
			/* The data tail, as before. */
		} else if (zero) {
			*data = e0;
			*data_end = e1;
			*early = 1;
		} else {
			return err_set(err, ENOSPC, "[%s, %s) is not zeros in the image (.relr.dyn?): no room for the "
				       "stub's rings", g->early_start, g->early_end);
		}
	}
	if (!end || !*data || !*data_end)
		return err_set(err, ENOENT, "the kernel's symbols name no %s, %s or %s: no room known for the stub",
			       g->code_end, g->data_start, g->data_end);
	*code = end - STUB_CODE_ROOM;
	if (!guest_is_padding(elf, syms, *code, STUB_CODE_ROOM) && g->code_guard && !(end & 4095) &&
	    guest_is_padding(elf, syms, end - 4096, 4096)) {
		/* arm64 with one page of padding (Debian's 6.12): the one-page stub, mapped as text in every phase. */
		*code = end - 4096;
		*place = GUEST_CODE_PADDING_PAGE;
	} else if (!guest_is_padding(elf, syms, *code, STUB_CODE_ROOM)) {
		uint64_t strict = g->code_past_end ? guest_sym(syms, g->code_past_end) : 0;
		uint64_t guard = g->code_guard ? guest_sym(syms, g->code_guard) : 0;

		if (guard) {
			/* arm64: _end's guard page, mapped by the early tables' last 2 MiB block and by the host's. */
			if (guard & 4095 || !(guard & ((2ULL << 20) - 1)))
				return err_set(err, ENOSPC, "no %u bytes of padding below %s for the stub, and %s "
					       "(%#llx) is %s: no page after it that the early page tables map",
					       STUB_CODE_ROOM, g->code_end, g->code_guard, (unsigned long long)guard,
					       guard & 4095 ? "not page-aligned" : "2 MiB-aligned");
			if (!past_end)
				return err_set(err, ENOSPC, "no %u bytes of padding below %s for the stub, and no region "
					       "reserved past %s", STUB_CODE_ROOM, g->code_end, g->code_guard);
			*code = guard;
			*place = GUEST_CODE_GUARD;
		} else {
			if (!strict || !(strict & ((2ULL << 20) - 1)) || !past_end)
				return err_set(err, ENOSPC, "no %u bytes of padding below %s for the stub%s",
					       STUB_CODE_ROOM, g->code_end,
					       strict ? "" : " (and no other place known for this kernel)");
			/* No STRICT_KERNEL_RWX: the rest of the image's last block, reserved in the device tree. */
			*code = (*data + 4095) & ~4095ULL;
			*data = *code + STUB_CODE_ROOM;
			*place = GUEST_CODE_PAST_END;
		}
	}
	*data = (*data + VT_REC_SIZE - 1) & ~(uint64_t)(VT_REC_SIZE - 1);
	if (g->data_end_align)
		*data_end = (*data_end + g->data_end_align - 1) & ~(g->data_end_align - 1);
	if (*data_end <= *data)
		return err_set(err, ENOSPC, "no room for the stub's rings in [%s, %s)", g->data_start, g->data_end);
	return 0;
}

int guest_stub_image(int image_arch, const struct guest_place *p, uint64_t data_size, int can_move,
		     const struct guest_arch **g, size_t *size, struct errbuf *err)
{
	int one_page = p->where == GUEST_CODE_GUARD || p->where == GUEST_CODE_PADDING_PAGE;

	*g = one_page ? guest_arch_one_page(image_arch) : guest_arch_of(image_arch);
	*size = *g ? guest_stub_size(*g) : 0;
	if (*size <= VT_CFG_SIZE || *size > (one_page ? 4096u : STUB_CODE_ROOM))
		return err_set(err, EINVAL, "the embedded %s%s stub is %zu bytes", one_page ? "one-page " : "",
			       image_arch_name(image_arch), *size);
	if (p->early && !can_move)
		return err_set(err, ENOSPC, "the rings' only room is init data the guest frees, and there is no "
			       "region to move them to");
	if (data_size > p->data_end - p->data)
		return err_set(err, E2BIG, "the stub's rings need %llu bytes, the image has room for %llu",
			       (unsigned long long)data_size, (unsigned long long)(p->data_end - p->data));
	return 0;
}
