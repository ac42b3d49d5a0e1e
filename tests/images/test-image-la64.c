// SPDX-License-Identifier: GPL-2.0
/*
 * The lean loongarch64 kernel (scripts/build-lean-kernel.sh loongarch64),
 * read without booting it: its ELF vmlinux is a loongarch64 image; the
 * kallsyms recovered from it agree with its System.map; __mcount_loc's
 * slots are every function's two NOPs, rest_init's named so (not head.S's
 * kernel_entry_end at the same address); the task and context layout
 * comes from the vmlinux.btf beside it as thread_info offsets (tp) and
 * task_struct offsets; a wrong arch is refused in one line; elf_symbol
 * reads its .symtab as System.map says: __dtb_start..__dtb_end, the
 * built-in device tree, is empty but in the kernel built with one
 * (lean-loongarch64-dtb).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check.h"
#include "vmm/guest/guest.h"
#include "vmm/image/elf.h"
#include "vmm/image/image.h"
#include "vmm/image/kallsyms.h"
#include "vmm/image/mcount.h"
#include "vmm/image/sysmap.h"
#include "vmm/trace/task.h"

static char dir[4096];

static const char *file(const char *name)
{
	static char path[4200];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static void check_slots(const struct kernel_image *img, const struct symtab *ks)
{
	const struct guest_arch *g = guest_arch_of(img->arch);
	struct mcount_table mt;
	struct errbuf err = { "" };
	size_t wrong = 0;
	int rc = g ? mcount_read(&img->elf, ks, guest_slot_ops(g), &mt, &err) : -1;

	CHECK(g && rc == 0, "loongarch64: a guest arch with a stub, and __mcount_loc read (%s)", err.msg);
	if (!g || rc)
		return;
	CHECK(mt.count > 10000 && mt.states[SLOT_ORIGINAL] == mt.count && mt.init > 500,
	      "%zu slots, %zu in .init.text, every one the compiler's two NOPs", mt.count, mt.init);
	for (size_t i = 0; i < mt.count; i++)
		wrong += mt.slots[i].func && mt.slots[i].func->addr != mt.slots[i].addr;
	CHECK(wrong == 0, "every slot is its function's first instruction (%zu without a symbol)", mt.no_symbol);
	for (size_t i = 0; i < mt.count; i++) {
		const struct symbol *f = mt.slots[i].func;

		if (f && !strcmp(symtab_name(ks, f), "kernel_entry_end"))
			wrong++;
	}
	CHECK(wrong == 0 && symtab_find_name(ks, "rest_init") &&
	      !strcmp(symtab_name(ks, symtab_find_addr(ks, symtab_find_name(ks, "rest_init")->addr, NULL)), "rest_init"),
	      "rest_init's slot is rest_init's, not kernel_entry_end's (the end marker at its address)");
	mcount_destroy(&mt);
}

/* elf_symbol against System.map; the built-in tree's range holds one exactly when tree is set. */
static void check_elf_symbol(const struct kernel_image *img, const struct symtab *map, int tree)
{
	static const char *const names[] = { "start_kernel", "rest_init", "_end", "__dtb_start", "__dtb_end" };
	uint64_t a = 0, b = 0, v;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct symbol *s = symtab_find_name(map, names[i]);
		int rc = elf_symbol(&img->elf, names[i], &v);

		CHECK(s ? rc == 0 && v == s->addr : rc == -ENOENT, "%s: elf_symbol %s %#llx, System.map %s %#llx",
		      dir, names[i], rc ? 0ULL : (unsigned long long)v, s ? "has" : "has not",
		      s ? (unsigned long long)s->addr : 0ULL);
	}
	CHECK(!elf_symbol(&img->elf, "__dtb_start", &a) && !elf_symbol(&img->elf, "__dtb_end", &b) &&
	      (tree ? b - a >= 40 : a == b), "%s: the built-in tree's range is %llu bytes", dir, (unsigned long long)(b - a));
	CHECK(elf_symbol(&img->elf, "no_such_symbol_anywhere", &v) == -ENOENT && elf_symbol(&img->elf, "start_kerne", &v) == -ENOENT,
	      "%s: elf_symbol: an absent name, and a prefix of one, are -ENOENT", dir);
}

int main(void)
{
	const char *cache = getenv("VMMTRACE_CACHE"), *xdg = getenv("XDG_CACHE_HOME");
	struct kernel_image img;
	struct symtab ks, map;
	struct kallsyms_layout l;
	struct symtab_diff d;
	struct task_layout tl;
	struct errbuf err = { "" };
	int rc;

	if (cache)
		snprintf(dir, sizeof(dir), "%s/lean-loongarch64", cache);
	else if (xdg)
		snprintf(dir, sizeof(dir), "%s/vmmtrace/lean-loongarch64", xdg);
	else
		snprintf(dir, sizeof(dir), "%s/.cache/vmmtrace/lean-loongarch64", getenv("HOME") ? getenv("HOME") : "");
	rc = image_open(file("vmlinux"), &img, &err);
	CHECK(rc == 0, "the lean loongarch64 vmlinux opens (%s)", rc ? err.msg : "ok");
	if (rc) {
		printf("FAIL: the lean loongarch64 kernel is missing: scripts/build-lean-kernel.sh loongarch64\n");
		return 1;
	}
	CHECK(img.arch == IMAGE_ARCH_LOONGARCH64 && !strcmp(image_arch_name(img.arch), "loongarch64") && !img.is_raw,
	      "an ELF vmlinux for loongarch64 (e_machine %u)", img.elf.ehdr->e_machine);
	CHECK(image_require_arch(&img, IMAGE_ARCH_X86_64, &err) == -ENOEXEC &&
	      strstr(err.msg, "ELF is for loongarch (e_machine 258), not x86_64"), "x86_64 required: %s", err.msg);

	symtab_init(&ks);
	symtab_init(&map);
	rc = kallsyms_recover(&img.elf, &ks, &l, &err);
	CHECK(rc == 0 && symtab_finish(&ks) == 0, "kallsyms recovered from the image: %zu symbols (%s)", ks.count,
	      rc ? err.msg : "ok");
	rc = sysmap_read_file(file("System.map"), &map, &err);
	CHECK(rc == 0 && symtab_finish(&map) == 0, "its System.map: %zu symbols (%s)", map.count, rc ? err.msg : "ok");
	symtab_compare(&map, &ks, &d);
	CHECK(symtab_diff_disagreements(&d) == 0 && d.same + d.percpu_abs == ks.count,
	      "every recovered symbol is in System.map with its address and type (%zu same; %s)", d.same,
	      d.nexamples ? d.examples[0] : "no difference");
	check_slots(&img, &ks);

	rc = task_layout_find(&img, &ks, NULL, &tl, NULL, &err);
	CHECK(rc == 0 && tl.cur_in_ti && tl.cur_off == 0 && tl.cpu_off == 0x18 && tl.pc_off == 0x1c &&
	      tl.tif_off == 0x8 && tl.tif_mask == 1ULL << 2,
	      "thread_info from vmlinux.btf: task %#llx, cpu %#llx, preempt_count %#llx, flags %#llx, TIF_NEED_RESCHED %#llx",
	      (unsigned long long)tl.cur_off, (unsigned long long)tl.cpu_off, (unsigned long long)tl.pc_off,
	      (unsigned long long)tl.tif_off, (unsigned long long)tl.tif_mask);
	CHECK(rc == 0 && tl.pid_off != TASK_UNKNOWN && tl.comm_off != TASK_UNKNOWN && tl.stack_off != TASK_UNKNOWN &&
	      tl.migr_off != TASK_UNKNOWN && !tl.missing[0],
	      "task_struct: pid %#llx, comm %#llx, stack %#llx, migration_disabled %#llx; nothing missing (%s)",
	      (unsigned long long)tl.pid_off, (unsigned long long)tl.comm_off, (unsigned long long)tl.stack_off,
	      (unsigned long long)tl.migr_off, tl.missing);
	check_elf_symbol(&img, &map, 0);
	symtab_destroy(&ks);
	symtab_destroy(&map);
	image_close(&img);

	/* The same kernel with a device tree built in. */
	snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "-dtb");
	rc = image_open(file("vmlinux"), &img, &err);
	CHECK(rc == 0, "the loongarch64 vmlinux with a built-in tree opens (%s)", rc ? err.msg : "ok");
	if (rc)
		return check_exit();
	symtab_init(&map);
	rc = sysmap_read_file(file("System.map"), &map, &err);
	CHECK(rc == 0 && symtab_finish(&map) == 0, "its System.map (%s)", rc ? err.msg : "ok");
	check_elf_symbol(&img, &map, 1);
	symtab_destroy(&map);
	image_close(&img);
	return check_exit();
}
