// SPDX-License-Identifier: GPL-2.0
/*
 * The QEMU host's operations (vmm/qemu/qemu-vm.c) on the lean arm64 kernel
 * with two vCPUs under QEMU TCG, as the tracer will use them:
 *  - vCPUs found, a breakpoint stop says which vCPU and where;
 *  - a pause stops every vCPU and says it was its own stop;
 *  - code written by guest-physical address takes effect at once and reads
 *    back at its virtual address; guest RAM is the shared mapping, and
 *    addresses outside it are refused;
 *  - let_run runs only the vCPUs asked for: the other one's PC does not
 *    move, the chosen one's does;
 *  - step_over moves the stopped vCPU past its breakpoint, which stays set
 *    and is hit again;
 *  - the guest's end (a panic without a root file system, then a reset
 *    that ends QEMU) is reported as such.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/qemu/qtest.h"
#include "tests/unit/check.h"
#include "vmm/qemu/qemu-vm.h"

#define DIR "lean-arm64"
#define RAM_GPA 0x40000000ULL

int main(void)
{
	uint64_t text = qtest_sysmap(DIR, "_text"), sk = qtest_sysmap(DIR, "start_kernel");
	uint64_t kinit = qtest_sysmap(DIR, "kernel_init"), printk = qtest_sysmap(DIR, "_printk");
	const struct qvm_arch arch = { .ram_gpa = RAM_GPA, .pc_off = 32 * 8, .bp_kind = 4 };
	struct errbuf err = { "" };
	struct qvm_stop st = { 0, 0 };
	uint64_t pc0 = 0, pc = 0, text_off = 0;
	uint8_t head[64], code[4], back[4];
	const uint8_t spin[4] = { 0x00, 0x00, 0x00, 0x14 };	/* b . */
	char kernel[640];
	struct qvm h;
	FILE *f;
	int rc;

	signal(SIGPIPE, SIG_IGN);
	snprintf(kernel, sizeof(kernel), "%s/%s/Image", qtest_cache_dir(), DIR);
	f = fopen(kernel, "rb");
	if (!f || fread(head, 1, sizeof(head), f) != sizeof(head) || !text || !sk || !kinit || !printk) {
		CHECK(0, "the lean arm64 kernel and its System.map are in %s/%s", qtest_cache_dir(), DIR);
		if (f)
			fclose(f);
		return check_exit();
	}
	fclose(f);
	struct qemu_config cfg = {
		.binary = "qemu-system-aarch64", .machine = "virt", .cpu = "max", .ncpus = 2,
		.mem_size = 512ULL << 20, .kernel = kernel, .cmdline = "console=ttyAMA0 nokaslr panic=-1",
		.console_path = "/dev/null", .timeout_ms = 10000,
	};
	rc = qvm_open(&h, &cfg, &arch, &err);
	CHECK(!rc && h.ncpus == 2 && h.thread[0] < h.thread[1], "two vCPUs, threads %ld and %ld (%s)", h.thread[0],
	      h.thread[1], err.msg);
	if (rc)
		return check_exit();

	rc = qvm_set_break(&h, 1, sk, &err);
	if (!rc)
		rc = qvm_resume(&h, &err);
	if (!rc)
		rc = qvm_wait(&h, 60000, &st, &err);
	CHECK(!rc && st.cpu == 0 && st.pc == sk, "a breakpoint stop: vCPU %u at %#llx, start_kernel (%s)", st.cpu,
	      (unsigned long long)st.pc, err.msg);
	qvm_clear_break(&h, 1, sk, &err);

	/* Guest RAM and code by physical address. */
	for (text_off = 0; text_off + sizeof(head) <= h.q.ram_size; text_off += 4096)
		if (!memcmp(h.q.ram + text_off, head, sizeof(head)))
			break;
	uint64_t sk_pa = RAM_GPA + text_off + (sk - text);

	CHECK(qvm_gpa_ptr(&h, RAM_GPA, 1) == h.q.ram && !qvm_gpa_ptr(&h, RAM_GPA - 1, 2) &&
	      !qvm_gpa_ptr(&h, RAM_GPA + h.q.ram_size - 1, 2) && qvm_gpa_ptr(&h, sk_pa, 4),
	      "guest RAM is the shared mapping, bounds checked");
	memcpy(code, qvm_gpa_ptr(&h, sk_pa, 4), 4);
	err.msg[0] = 0;
	rc = qvm_write_code(&h, sk_pa, spin, sizeof(spin), &err);
	if (!rc)
		rc = qvm_read_virt_on(&h, 0, sk, back, sizeof(back), &err);
	CHECK(!rc && !memcmp(back, spin, 4), "code written at physical %#llx reads back at start_kernel (%s)",
	      (unsigned long long)sk_pa, err.msg);
	CHECK(qvm_write_code(&h, RAM_GPA - 4096, spin, 4, &err) == -ERANGE, "code outside RAM is refused: %s",
	      err.msg);
	err.msg[0] = 0;
	rc = qvm_resume(&h, &err);
	usleep(200 * 1000);
	if (!rc)
		rc = qvm_pause(&h, &st, &err);
	if (!rc)
		rc = qvm_vcpu_pc(&h, 0, &pc, &err);
	CHECK(!rc && st.cpu == QVM_MAX_CPUS && pc == sk,
	      "the pause is its own stop, and the branch to itself keeps vCPU 0 at start_kernel (pc %#llx; %s)",
	      (unsigned long long)pc, err.msg);

	/* On to kernel_init, both vCPUs up. */
	rc = qvm_write_code(&h, sk_pa, code, sizeof(code), &err);
	if (!rc)
		rc = qvm_set_break(&h, 1, kinit, &err);
	if (!rc)
		rc = qvm_resume(&h, &err);
	if (!rc)
		rc = qvm_wait(&h, 60000, &st, &err);
	CHECK(!rc && st.pc == kinit, "the restored code runs on to kernel_init on vCPU %u (%s)", st.cpu, err.msg);
	if (rc)
		goto out;
	qvm_clear_break(&h, 1, kinit, &err);
	unsigned c = st.cpu, other = 1 - st.cpu;

	err.msg[0] = 0;
	rc = qvm_let_run(&h, 1ULL << other, 100, NULL, &err);
	if (!rc)
		rc = qvm_vcpu_pc(&h, c, &pc0, &err);
	CHECK(!rc && pc0 == kinit, "let_run of vCPU %u leaves vCPU %u where it stopped (pc %#llx; %s)", other, c,
	      (unsigned long long)pc0, err.msg);
	rc = qvm_let_run(&h, 1ULL << c, 100, NULL, &err);
	if (!rc)
		rc = qvm_vcpu_pc(&h, c, &pc, &err);
	CHECK(!rc && pc != kinit, "let_run of vCPU %u runs it (pc %#llx; %s)", c, (unsigned long long)pc, err.msg);

	/* Step over a breakpoint that stays. */
	err.msg[0] = 0;
	rc = qvm_set_break(&h, 0, printk, &err);
	if (!rc)
		rc = qvm_resume(&h, &err);
	if (!rc)
		rc = qvm_wait(&h, 60000, &st, &err);
	if (!rc && st.pc == printk)
		rc = qvm_step_over(&h, 0, &st, &err);
	if (!rc)
		rc = qvm_vcpu_pc(&h, st.cpu, &pc, &err);
	CHECK(!rc && st.pc == printk && pc == printk + 4, "step_over moves vCPU %u one instruction past _printk (pc %#llx; %s)",
	      st.cpu, (unsigned long long)pc, err.msg);
	if (!rc)
		rc = qvm_resume(&h, &err);
	if (!rc)
		rc = qvm_wait(&h, 60000, &st, &err);
	CHECK(!rc && st.pc == printk, "... and the breakpoint is hit again (pc %#llx; %s)", (unsigned long long)st.pc,
	      err.msg);
	if (rc)
		goto out;

	/* No root file system: a panic, a reset, QEMU ends. */
	qvm_clear_break(&h, 0, printk, &err);
	err.msg[0] = 0;
	rc = qvm_resume(&h, &err);
	if (!rc)
		rc = qvm_wait(&h, 120000, &st, &err);
	CHECK(rc == -ECHILD && h.exited, "the guest's end is reported (%d: %s)", rc, err.msg);
out:
	qvm_close(&h);
	CHECK(h.q.reaped, "QEMU is reaped");
	return check_exit();
}
