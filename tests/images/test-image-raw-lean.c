// SPDX-License-Identifier: GPL-2.0
/*
 * The lean arm64 and riscv64 kernels (scripts/build-lean-kernel.sh ARCH):
 * each raw Image must be placed where its vmlinux's .symtab puts its first
 * byte, hold the same bytes at every address the vmlinux loads, and give
 * the same kallsyms. Then Debian's arm64 kernel, relocatable. A missing
 * kernel is a failure naming the command that makes it, not a skip.
 */
#include <errno.h>
#include <string.h>

#include "tests/unit/check.h"
#include "tests/unit/fixtures.h"
#include "vmm/image/image-raw.h"
#include "vmm/image/image.h"
#include "vmm/image/kallsyms.h"
#include "vmm/image/sysmap.h"

/* A symbol's address by vmlinux's own .symtab (0: none). */
static uint64_t vmlinux_symbol(const struct kernel_image *vm, const char *name)
{
	const struct symbol *s;
	struct symtab tab;
	struct errbuf err;
	uint64_t a = 0;

	symtab_init(&tab);
	if (!sysmap_read_elf(&vm->elf, &tab, &err) && !symtab_finish(&tab) &&
	    (s = symtab_find_name(&tab, name)))
		a = s->addr;
	symtab_destroy(&tab);
	return a;
}

/* Every loaded byte of vmlinux that the Image holds must be the same there. */
static int same_bytes(const struct kernel_image *raw, const struct kernel_image *vm)
{
	const Elf64_Phdr *rp = raw->elf.phdr;
	uint64_t end = rp->p_vaddr + rp->p_filesz, covered = 0;
	int ok = 1;

	for (unsigned i = 0; i < vm->elf.ehdr->e_phnum; i++) {
		const Elf64_Phdr *ph = &vm->elf.phdr[i];
		uint64_t n = ph->p_filesz;
		const uint8_t *a, *b;

		if (ph->p_type != PT_LOAD || !n)
			continue;
		n = ph->p_vaddr + n > end ? end - ph->p_vaddr : n;
		a = elf_vaddr_ptr(&vm->elf, ph->p_vaddr, n);
		b = elf_vaddr_ptr(&raw->elf, ph->p_vaddr, n);
		ok &= CHECK_QUIET(ph->p_vaddr >= rp->p_vaddr && ph->p_vaddr < end && a && b && !memcmp(a, b, n),
				  "segment %u (%#llx, %llu bytes) differs", i,
				  (unsigned long long)ph->p_vaddr, (unsigned long long)n);
		covered += n;
	}
	return ok && covered;
}

static int open_lean(const char *sub, const char *file, struct kernel_image *img)
{
	char path[4096], rel[256];
	struct errbuf err = { "" };
	int rc;

	snprintf(rel, sizeof(rel), "%s/%s", sub, file);
	fx_cache_path(path, sizeof(path), rel);
	rc = image_open(path, img, &err);
	if (rc == -ENOENT)
		CHECK(0, "%s is missing: build it with scripts/build-lean-kernel.sh %s", path, sub + 5);
	else
		CHECK(rc == 0, "lean %s: image_open %s (%s)", sub + 5, file, rc ? err.msg : "ok");
	return rc;
}

/* The lean arm64/riscv64 kernels: Image placed where vmlinux says, same bytes, same kallsyms. */
static void test_lean(const char *sub, enum image_arch arch)
{
	struct kernel_image raw, vm;
	struct symtab a, b;
	struct kallsyms_layout l;
	struct errbuf err = { "" };
	uint64_t first;

	if (open_lean(sub, "Image", &raw))
		return;
	if (open_lean(sub, "vmlinux", &vm)) {
		image_close(&raw);
		return;
	}
	/* The symbol a raw Image's first byte is. */
	first = vmlinux_symbol(&vm, arch == IMAGE_ARCH_ARM64 ? "_text" : "_start");
	CHECK(raw.arch == arch && raw.is_raw && vm.arch == arch && !vm.is_raw,
	      "lean %s: Image and vmlinux read as %s", sub + 5, image_arch_name(arch));
	CHECK(first && raw.elf.phdr->p_vaddr == first && raw.elf.ehdr->e_entry == first,
	      "lean %s: the Image is placed at %#llx, where vmlinux's .symtab puts its first byte",
	      sub + 5, (unsigned long long)raw.elf.phdr->p_vaddr);
	CHECK(same_bytes(&raw, &vm), "lean %s: the Image's bytes equal vmlinux's at every address", sub + 5);
	symtab_init(&a);
	symtab_init(&b);
	CHECK(!kallsyms_recover(&raw.elf, &a, &l, &err) && !kallsyms_recover(&vm.elf, &b, &l, &err) &&
	      a.count == b.count && a.count > 10000 &&
	      !memcmp(a.syms, b.syms, a.count * sizeof(*a.syms)) && a.names_size == b.names_size &&
	      !memcmp(a.names, b.names, a.names_size),
	      "lean %s: kallsyms from the Image equals kallsyms from vmlinux (%zu symbols)%s%s",
	      sub + 5, a.count, err.msg[0] ? ": " : "", err.msg);
	if (arch == IMAGE_ARCH_ARM64) {
		/* cpu_number from the code that reads it, against vmlinux's own symbol. */
		uint64_t want = vmlinux_symbol(&vm, "cpu_number");

		CHECK(want && raw.recovered.cpu_number == want,
		      "lean arm64: cpu_number found from the code that reads it, at %#llx as vmlinux says (%#llx)",
		      (unsigned long long)raw.recovered.cpu_number, (unsigned long long)want);
		/* swapper_pg_dir from head.S's code, as for a kernel whose kallsyms names no data. */
		const struct symbol *sec = !symtab_finish(&a) ? symtab_find_name(&a, "secondary_startup") : NULL;
		const struct symbol *pri = symtab_find_name(&a, "__primary_switch");
		uint64_t got = sec && pri ? image_a64_swapper_pg_dir(elf_vaddr_ptr(&raw.elf, sec->addr, 128), 128,
								     sec->addr, elf_vaddr_ptr(&raw.elf, pri->addr, 128),
								     128, pri->addr) : 0;

		want = vmlinux_symbol(&vm, "swapper_pg_dir");
		CHECK(want && got == want,
		      "lean arm64: swapper_pg_dir found from secondary_startup's and __primary_switch's code, at %#llx "
		      "as vmlinux says (%#llx)", (unsigned long long)got, (unsigned long long)want);
		/* The same code with the two calls made to differ: no answer. */
		if (pri) {
			const uint8_t *p = elf_vaddr_ptr(&raw.elf, pri->addr, 128);
			uint8_t copy[128];

			memcpy(copy, p, sizeof(copy));
			for (unsigned i = 0; i < 32; i++)
				if ((copy[i * 4 + 3] & 0xfc) == 0x94) {	/* the first bl: one word further */
					copy[i * 4] ^= 1;
					break;
				}
			CHECK(image_a64_swapper_pg_dir(elf_vaddr_ptr(&raw.elf, sec->addr, 128), 128, sec->addr, copy,
						       128, pri->addr) == 0,
			      "lean arm64: no swapper_pg_dir when __primary_switch calls another function");
		}
	}
	symtab_destroy(&a);
	symtab_destroy(&b);
	image_close(&vm);
	image_close(&raw);
}

/* How an arm64 function starts: the patchable entry's nop, paciasp or bti c. */
static int arm64_entry_insn(const uint8_t *p)
{
	uint32_t w = p ? p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24 : 0;

	return w == 0xd503201f || w == 0xd503233f || w == 0xd503245f;
}

/*
 * What the relocations said of the data symbols kallsyms lacks: the
 * __mcount_loc table holds over 40,000 entries (tests/qemu/stock-arm64.sh
 * checks them against the guest's available_filter_functions), nearly all
 * at a text symbol's first byte; __init_end follows __rela_end within
 * 64 KiB; _end is where the synthetic ELF's memory ends.
 */
static uint64_t sym_or_0(const struct symtab *tab, const char *name)
{
	const struct symbol *s = symtab_find_name(tab, name);

	return s ? s->addr : 0;
}

static void check_recovered(const struct kernel_image *img, const struct symtab *tab)
{
	uint64_t a = img->recovered.start_mcount_loc, b = img->recovered.stop_mcount_loc;
	size_t n = a && b > a ? (size_t)(b - a) / 8 : 0, at_symbol = 0;
	const uint8_t *t = n ? elf_vaddr_ptr(&img->elf, a, n * 8) : NULL;

	for (size_t i = 0; t && i < n; i++) {
		uint64_t v = 0, off = 1;

		for (int k = 7; k >= 0; k--)
			v = v << 8 | t[i * 8 + k];
		if (symtab_find_addr(tab, v, &off) && off == 0)
			at_symbol++;
	}
	CHECK(n > 40000 && t && at_symbol * 100 >= n * 99,
	      "Debian arm64: __mcount_loc recovered from the relocations: %zu entries, %zu at a symbol's first byte",
	      n, at_symbol);
	CHECK(img->recovered.rela_start && img->recovered.rela_end > img->recovered.rela_start &&
	      img->recovered.init_end > img->recovered.rela_end &&
	      img->recovered.init_end - img->recovered.rela_end < 65536 &&
	      img->recovered.end == img->elf.phdr->p_vaddr + img->elf.phdr->p_memsz,
	      "Debian arm64: __rela_start %#llx, __rela_end %#llx, __init_end %#llx, _end %#llx",
	      (unsigned long long)img->recovered.rela_start, (unsigned long long)img->recovered.rela_end,
	      (unsigned long long)img->recovered.init_end, (unsigned long long)img->recovered.end);
	/* In the per-CPU section, which 6.1 links into the init data before the relocations. */
	CHECK(img->recovered.cpu_number > sym_or_0(tab, "__init_begin") &&
	      img->recovered.cpu_number < img->recovered.rela_start && !(img->recovered.cpu_number & 3),
	      "Debian arm64: cpu_number from the code that reads it, at %#llx in the init data",
	      (unsigned long long)img->recovered.cpu_number);
}

/*
 * Debian's arm64 kernel: relocatable, no System.map (a placeholder) and no
 * KALLSYMS_ALL. Its functions' first instructions are the oracle: placed
 * and relocated right, the text symbols land on them.
 */
static void test_stock_arm64(void)
{
	char path[4096];
	struct kernel_image img;
	struct kallsyms_layout l;
	struct symtab tab;
	struct errbuf err = { "" };
	size_t text = 0, entries = 0;
	int rc;

	fx_cache_path(path, sizeof(path), "stock-arm64-Image");
	rc = image_open(path, &img, &err);
	if (rc == -ENOENT) {
		CHECK(0, "Debian's arm64 kernel %s is missing: run scripts/fetch-debian-kernel.sh arm64", path);
		return;
	}
	CHECK(rc == 0 && img.is_raw && img.arch == IMAGE_ARCH_ARM64 && img.relocations > 100000 &&
	      img.elf.phdr->p_vaddr == 0xffff800008000000ull,
	      "Debian arm64: a relocatable Image, %zu relocations applied, placed at KIMAGE_VADDR (%s)",
	      img.relocations, rc ? err.msg : "ok");
	if (rc)
		return;
	symtab_init(&tab);
	rc = kallsyms_recover(&img.elf, &tab, &l, &err);
	for (size_t i = 0; !rc && i < tab.count; i++) {
		if (tab.syms[i].type != 'T' && tab.syms[i].type != 't')
			continue;
		text++;
		entries += arm64_entry_insn(elf_vaddr_ptr(&img.elf, tab.syms[i].addr, 4));
	}
	CHECK(!rc && text > 40000 && entries * 10 >= text * 9,
	      "Debian arm64: %zu of its %zu text symbols start with nop, paciasp or bti c%s%s",
	      entries, text, rc ? ": " : "", rc ? err.msg : "");
	if (!rc && !symtab_finish(&tab))
		check_recovered(&img, &tab);
	{
		const Elf64_Shdr *btf = elf_section(&img.elf, ".BTF");
		const uint8_t *b = btf ? elf_section_data(&img.elf, btf) : NULL;

		CHECK(b && btf->sh_size > (1u << 20) && b[0] == 0x9f && b[1] == 0xeb,
		      "Debian arm64: its BTF found in the file as a .BTF section (%llu bytes at %#llx)",
		      btf ? (unsigned long long)btf->sh_size : 0ULL, btf ? (unsigned long long)btf->sh_addr : 0ULL);
	}
	symtab_destroy(&tab);
	image_close(&img);
}

int main(void)
{
	test_lean("lean-arm64", IMAGE_ARCH_ARM64);
	test_lean("lean-riscv64", IMAGE_ARCH_RISCV64);
	test_stock_arm64();
	return check_exit();
}
