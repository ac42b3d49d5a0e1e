// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "vmm/guest/guest.h"
#include "vmm/image/btf.h"
#include "vmm/trace/task.h"

/*
 * Per-CPU variables are linked at their offset in the per-CPU area, so their
 * symbol is a small number (x86_64's cpu_number too: task_x86); anything larger is
 * not a per-CPU variable.
 */
#define TASK_PERCPU_MAX (1ULL << 32)
#define TASK_CPU_NUMBER_MAX (16u << 20)	/* cpu_number is among the first per-CPU variables */


/* The comm of init_task, the one task_struct whose bytes the image holds (INIT_TASK_COMM). */
#define TASK_INIT_COMM "swapper"

static uint64_t task_percpu(const struct symtab *syms, const char *name)
{
	const struct symbol *s = symtab_find_name(syms, name);

	return s && s->addr < TASK_PERCPU_MAX ? s->addr : TASK_UNKNOWN;
}

static void task_missing(struct task_layout *l, const char *what)
{
	size_t n = strlen(l->missing);

	snprintf(l->missing + n, sizeof(l->missing) - n, "%s%s", n ? ", " : "", what);
}

/* Member offset when it exists with the size the stub reads, inside a type of type_size bytes. */
static uint64_t task_member(const struct kernel_btf *kb, const char *type, const char *path,
			    uint32_t want_size, uint32_t type_size)
{
	uint32_t off, size;

	if (kbtf_member(kb, type, path, &off, &size) || size != want_size ||
	    (uint64_t)off + size > type_size)
		return TASK_UNKNOWN;
	return off;
}

/*
 * A BTF of another kernel would send the stub to wrong offsets: init_task's
 * bytes in the image must show the comm and pid 0 where this BTF says.
 */
static int task_check_init(const struct kernel_image *img, const struct symtab *syms,
			   const struct task_layout *l, struct errbuf *err)
{
	const struct symbol *s = symtab_find_name(syms, "init_task");
	const uint8_t *comm, *pid;

	if (!s)
		return 0;
	comm = elf_vaddr_ptr(&img->elf, s->addr + l->comm_off, 16);
	pid = elf_vaddr_ptr(&img->elf, s->addr + l->pid_off, 4);
	if (!comm || !pid)
		return 0;
	if (memcmp(comm, TASK_INIT_COMM, sizeof(TASK_INIT_COMM)) || memcmp(pid, "\0\0\0\0", 4))
		return err_set(err, EINVAL, "the BTF of %s does not describe this kernel: "
			       "init_task's comm is not '%s' at offset %" PRIu64, l->btf, TASK_INIT_COMM,
			       l->comm_off);
	return 0;
}

/* What the stub must not follow once the task's own offsets are unknown. */
static void task_forget(struct task_layout *l)
{
	l->cur_off = l->pid_off = l->comm_off = l->tif_off = l->tif_mask = l->migr_off = l->stack_off =
		TASK_UNKNOWN;
	/* riscv64 finds its CPU number in the task too. */
	if (l->cpu_in_task)
		l->cpu_off = TASK_UNKNOWN;
}

/* A member of x86_64's per-CPU pcpu_hot (6.2+), as a per-CPU offset. */
static uint64_t task_x86_hot(const struct symtab *syms, const struct kernel_btf *kb, const char *member,
			     uint32_t size)
{
	uint64_t hot = task_percpu(syms, "pcpu_hot"), off;

	if (hot == TASK_UNKNOWN)
		return TASK_UNKNOWN;
	off = task_member(kb, "pcpu_hot", member, size, kbtf_struct_size(kb, "pcpu_hot"));
	return off == TASK_UNKNOWN ? TASK_UNKNOWN : hot + off;
}

/*
 * x86_64: the CPU number, current and the preempt count per CPU: up to 6.1
 * variables of their own (cpu_number, current_task, __preempt_count), from
 * 6.2 members of pcpu_hot, found through the BTF.
 */
static void task_x86(const struct kernel_image *img, const struct symtab *syms, const struct kernel_btf *kb,
		     int have_btf, struct task_layout *l)
{
	(void)img;
	const struct symbol *cpu = symtab_find_name(syms, "cpu_number");

	l->cpu_off = cpu && cpu->addr < TASK_CPU_NUMBER_MAX ? cpu->addr : TASK_UNKNOWN;
	l->cpu_how = "per-CPU offset, cpu_number";
	l->cur_off = task_percpu(syms, "current_task");
	l->pc_off = task_percpu(syms, "__preempt_count");
	if (!have_btf)
		return;
	if (l->cpu_off == TASK_UNKNOWN) {
		l->cpu_off = task_x86_hot(syms, kb, "cpu_number", 4);
		if (l->cpu_off >= TASK_CPU_NUMBER_MAX)
			l->cpu_off = TASK_UNKNOWN;
		else
			l->cpu_how = "per-CPU offset, pcpu_hot.cpu_number in the BTF";
	}
	if (l->cur_off == TASK_UNKNOWN)
		l->cur_off = task_x86_hot(syms, kb, "current_task", 8);
	if (l->pc_off == TASK_UNKNOWN)
		l->pc_off = task_x86_hot(syms, kb, "preempt_count", 4);
}

/*
 * arm64 and riscv64: current in a register from the first C instruction
 * (sp_el0, tp), the preempt count in thread_info (task_struct's first
 * member with THREAD_INFO_IN_TASK): arm64's 64 bits with the inverted
 * need-resched bit at 32, riscv64's the generic int. The CPU number:
 * thread_info.cpu where the kernel has one (riscv64; arm64 from 6.3, whose
 * raw_smp_processor_id() reads it), else arm64's per-CPU cpu_number (its
 * address plus tpidr_el1).
 */
static void task_arm64(const struct kernel_image *img, const struct symtab *syms, const struct kernel_btf *kb,
		       int have_btf, struct task_layout *l)
{
	const struct symbol *cpu = symtab_find_name(syms, "cpu_number");
	uint32_t size = have_btf ? kbtf_struct_size(kb, "task_struct") : 0;
	uint64_t ti_cpu = have_btf ? task_member(kb, "task_struct", "thread_info.cpu", 4, size) : TASK_UNKNOWN;

	(void)img;
	if (!have_btf) {
		l->cpu_off = cpu ? cpu->addr : TASK_UNKNOWN;
		l->cpu_how = "address, plus tpidr_el1";
		return;
	}
	l->pc_off = task_member(kb, "task_struct", "thread_info.preempt_count", 8, size);
	l->cur_off = 0;
	if (ti_cpu != TASK_UNKNOWN) {
		l->cpu_in_task = 1;
		l->cpu_off = ti_cpu;
		l->cpu_how = "BTF, task_struct offset, sp_el0";
	} else {
		l->cpu_off = cpu ? cpu->addr : TASK_UNKNOWN;
		l->cpu_how = "address, plus tpidr_el1";
	}
}

/*
 * Per guest arch: where its layout comes from, and the names its missing
 * parts are called by (preempt count, thread flags, the current task).
 */
typedef void task_find_fn(const struct kernel_image *img, const struct symtab *syms, const struct kernel_btf *kb,
			  int have_btf, struct task_layout *l);
struct task_arch {
	task_find_fn *find;		/* NULL: task_in_struct, from the members below */
	const char *preempt, *flags, *current;
	int flags_in_ti;		/* the thread flags are in thread_info, found by find */
	/* task_in_struct: the struct the stub's register points to and its members (NULL: none). */
	const char *in, *cpu, *pc, *task, *tif, *cpu_how;
};
static const struct task_arch task_arches[] = {
	[IMAGE_ARCH_X86_64] = { task_x86, "the per-CPU preempt count", "task_struct.thread_info.flags",
				"the per-CPU current task", 0 },
	[IMAGE_ARCH_ARM64] = { task_arm64, "thread_info.preempt_count", "task_struct.thread_info.flags",
			       "the per-CPU current task", 0 },
	[IMAGE_ARCH_RISCV64] = { NULL, "thread_info.preempt_count", "task_struct.thread_info.flags",
				 "the per-CPU current task", 0, "task_struct", "thread_info.cpu",
				 "thread_info.preempt_count", NULL, NULL, "BTF, task_struct offset" },
	[IMAGE_ARCH_LOONGARCH64] = { NULL, "thread_info.preempt_count", "thread_info.flags", "thread_info.task", 1,
				     "thread_info", "cpu", "preempt_count", "task", "flags",
				     "BTF, thread_info offset, tp" },
};

/*
 * riscv64 (as arm64 above, with the generic int preempt count and
 * thread_info.cpu always) and loongarch64, which has no
 * THREAD_INFO_IN_TASK: tp holds the current thread_info from kernel_entry
 * on (arch/loongarch/include/asm/thread_info.h), whose members give the
 * CPU number, the preempt count and the thread flags, and whose first
 * member points to the task: each VT_CFG_* of these is a thread_info
 * offset, read from tp (guest-stub/loongarch64/stub.S); the task's own
 * members are task_struct offsets as elsewhere. Which struct and members:
 * the arch's row of task_arches.
 */
static void task_in_struct(const struct task_arch *ta, const struct kernel_btf *kb, int have_btf,
			   struct task_layout *l)
{
	uint32_t size = have_btf ? kbtf_struct_size(kb, ta->in) : 0;

	if (!size)
		return;
	l->cur_in_ti = ta->task != NULL;
	l->cpu_in_task = !l->cur_in_ti;
	l->cpu_off = task_member(kb, ta->in, ta->cpu, 4, size);
	l->cpu_how = ta->cpu_how;
	l->pc_off = task_member(kb, ta->in, ta->pc, 4, size);
	l->cur_off = ta->task ? task_member(kb, ta->in, ta->task, 8, size) : 0;
	if (ta->tif)
		l->tif_off = task_member(kb, ta->in, ta->tif, 8, size);
}

int task_layout_find(const struct kernel_image *img, const struct symtab *syms,
		     const char *btf_path, struct task_layout *l, struct kernel_btf *keep,
		     struct errbuf *err)
{
	const struct guest_arch *ga = guest_arch_of(img->arch);
	const struct task_arch *ta = (unsigned)img->arch < sizeof(task_arches) / sizeof(task_arches[0]) ?
		&task_arches[img->arch] : NULL;
	struct kernel_btf kb = { 0 };
	int rc, have_btf, asked = btf_path != NULL;

	if (!ta || (!ta->find && !ta->in))
		return err_set(err, ENOEXEC, "%s: tasks: no layout known for %s", img->path, image_arch_name(img->arch));
	memset(l, 0, sizeof(*l));
	l->cpu_off = l->cur_off = l->pc_off = l->pid_off = l->comm_off = l->tif_off = l->tif_mask =
		l->migr_off = l->stack_off = TASK_UNKNOWN;
	if (btf_path) {
		if ((rc = kbtf_from_file(btf_path, &kb, err)))
			return rc;
	} else if ((rc = kbtf_from_elf(&img->elf, img->path, &kb, err)) && rc != -ENOENT) {
		return rc;
	} else if (rc == -ENOENT) {
		/* pahole's detached BTF beside the image, as the lean test kernel has it. */
		char beside[4096], why[sizeof(err->msg)];
		const char *slash = strrchr(img->path, '/');
		int dir = slash ? (int)(slash - img->path) : 0;

		snprintf(why, sizeof(why), "%s", err->msg);
		snprintf(beside, sizeof(beside), "%.*s%svmlinux.btf", dir, img->path, slash ? "/" : "");
		if (access(beside, F_OK) == 0) {
			/* Found, not asked for: one that cannot be read or does not fit leaves the tasks unknown. */
			kbtf_from_file(beside, &kb, err);
		} else {
			snprintf(err->msg, sizeof(err->msg), "%s", why);
		}
	}
	have_btf = kb.btf != NULL;
	snprintf(l->btf, sizeof(l->btf), "%s", have_btf ? kb.source : err->msg);
	if (ta->find)
		ta->find(img, syms, &kb, have_btf, l);
	else
		task_in_struct(ta, &kb, have_btf, l);
	if (l->pc_off == TASK_UNKNOWN)
		task_missing(l, ta->preempt);
	if (have_btf) {
		l->task_size = kbtf_struct_size(&kb, "task_struct");
		l->pid_off = task_member(&kb, "task_struct", "pid", 4, l->task_size);
		l->comm_off = task_member(&kb, "task_struct", "comm", 16, l->task_size);
		if (!ta->flags_in_ti)
			l->tif_off = task_member(&kb, "task_struct", "thread_info.flags", 8, l->task_size);
		l->migr_off = task_member(&kb, "task_struct", "migration_disabled", 2, l->task_size);
		l->stack_off = task_member(&kb, "task_struct", "stack", 8, l->task_size);
		if (l->tif_off != TASK_UNKNOWN && ga)
			l->tif_mask = 1ULL << ga->tif_need_resched;
		else
			task_missing(l, ta->flags);
		if (l->migr_off == TASK_UNKNOWN)
			task_missing(l, "task_struct.migration_disabled");
	}
	if (l->cur_off == TASK_UNKNOWN)
		task_missing(l, ta->current);
	if (l->pid_off == TASK_UNKNOWN || l->comm_off == TASK_UNKNOWN) {
		task_missing(l, have_btf ? "task_struct.pid or .comm" : "task names and pids (no BTF)");
		/* The stub follows the task pointer only to offsets it knows. */
		task_forget(l);
	}
	if (l->comm_off != TASK_UNKNOWN && (rc = task_check_init(img, syms, l, err))) {
		kbtf_close(&kb);
		if (asked)
			return rc;
		task_missing(l, "a task_struct that matches init_task");
		task_forget(l);
	}
	if (keep)
		*keep = kb;	/* another kernel's BTF was closed above: its prototypes would lie too */
	else
		kbtf_close(&kb);
	return 0;
}

static void task_print_off(FILE *out, const char *what, uint64_t v, const char *how)
{
	if (v == TASK_UNKNOWN)
		fprintf(out, "%-28s unknown\n", what);
	else
		fprintf(out, "%-28s %#" PRIx64 " (%s)\n", what, v, how);
}

void task_layout_print(const struct task_layout *l, FILE *out)
{
	const char *how = l->cur_in_ti ? "thread_info offset, tp" : "per-CPU offset";

	fprintf(out, "%-28s %s\n", "btf", l->btf);
	if (l->task_size)
		fprintf(out, "%-28s %u bytes\n", "task_struct", l->task_size);
	task_print_off(out, "current task", l->cur_off, how);
	task_print_off(out, "preempt count", l->pc_off, how);
	task_print_off(out, "cpu number", l->cpu_off, l->cpu_how ? l->cpu_how : "");
	task_print_off(out, "task_struct.pid", l->pid_off, "BTF");
	task_print_off(out, "task_struct.comm", l->comm_off, "BTF");
	task_print_off(out, "thread_info.flags", l->tif_off, l->cur_in_ti ? "BTF, thread_info offset, tp" : "BTF");
	task_print_off(out, "need-resched mask", l->tif_mask, "TIF_NEED_RESCHED");
	task_print_off(out, "migration_disabled", l->migr_off, "BTF");
	task_print_off(out, "task_struct.stack", l->stack_off, "BTF");
	if (*l->missing)
		fprintf(out, "%-28s %s\n", "not found", l->missing);
}
