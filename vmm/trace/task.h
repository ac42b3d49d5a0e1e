/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where the guest keeps what the stub records of the task and context at a
 * call: the per-CPU current task pointer and preempt count (from the
 * kernel's symbols), and the task_struct members pid, comm, thread flags and
 * migration_disabled (from the kernel's BTF); docs/TASKS.md. x86_64 keeps
 * current and the preempt count per CPU; arm64 and riscv64 keep current in
 * a register (sp_el0, tp) and the count in thread_info; loongarch64 keeps
 * thread_info (outside the task) in tp, and the task in thread_info.task.
 */
#ifndef VMM_TRACE_TASK_H
#define VMM_TRACE_TASK_H

#include <stdint.h>
#include <stdio.h>

#include "vmm/image/btf.h"
#include "vmm/image/image.h"
#include "vmm/image/symtab.h"
#include "vmm/util/error.h"

#define TASK_UNKNOWN UINT64_MAX

struct task_layout {
	/*
	 * The values of the stub's VT_CFG_* of the same names; TASK_UNKNOWN when
	 * not found. cpu_off: x86_64 cpu_number's per-CPU offset, arm64 its
	 * address (plus tpidr_el1), riscv64 thread_info.cpu's offset in the task.
	 * cur_off: x86_64 current_task's per-CPU offset, loongarch64
	 * thread_info.task's offset (cpu_off, pc_off and tif_off are
	 * thread_info's there too), elsewhere 0 (the register holds the task).
	 */
	uint64_t cpu_off, cur_off, pc_off, pid_off, comm_off, tif_off, tif_mask, migr_off;
	uint64_t stack_off;		/* task_struct.stack (--graph drops dead frames with it) */
	const char *cpu_how;		/* what cpu_off is and where it came from */
	int cpu_in_task;		/* cpu_off is the task's (riscv64) */
	int cur_in_ti;			/* cur_off, pc_off, cpu_off, tif_off are thread_info's, in tp (loongarch64) */
	uint32_t task_size;		/* sizeof(struct task_struct), 0: no BTF */
	char btf[520];			/* where the BTF came from, or why there is none */
	char missing[200];		/* what was not found, for one warning; "" when complete */
};

/*
 * Finds the layout of img's kernel: BTF from btf_path when given (an error if
 * it cannot be read or does not describe this kernel), else from the image's
 * .BTF section or a vmlinux.btf beside the image (none is not an error: the
 * task columns stay unknown). With keep, the BTF read (when it describes
 * this kernel) is handed over there, for --args; keep->btf NULL: none.
 */
int task_layout_find(const struct kernel_image *img, const struct symtab *syms,
		     const char *btf_path, struct task_layout *l, struct kernel_btf *keep,
		     struct errbuf *err);
/* Every value and where it came from (vmmtrace symbols --layout). */
void task_layout_print(const struct task_layout *l, FILE *out);

#endif
