// SPDX-License-Identifier: GPL-2.0
/*
 * Writes tiny loongarch64 ELF programs for qemu-loongarch64: Debian has no
 * loongarch64 compiler or assembler, so the code is hand-assembled here from
 * the ISA manual's formats, and the slot words come from arch/. Each program
 * calls func three times; func's slot is in one state and its body adds 1 to
 * a0; the stub adds 1 to s0 and returns into the body. The exit status is
 * a0 | s0 << 4: 3 when the slot makes no call, 51 when it reaches the stub.
 *
 *   la64-elf OUTDIR    writes OUTDIR/la64-*.elf, prints "FILE STATUS" lines
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "arch/slot.h"

#ifndef EM_LOONGARCH
#define EM_LOONGARCH 258
#endif

#define BASE 0x120000000ull	/* where the LoongArch toolchain links executables */
#define CODE_OFF 0x1000u
#define SEG_ALIGN 0x10000u
#define STUB_FILE_OFF 0x20000u
#define IMAGE_MAX 0x30000u

enum { R_ZERO = 0, R_RA = 1, R_A0 = 4, R_A7 = 11, R_T0 = 12, R_T1 = 13, R_T2 = 14, R_S0 = 23 };

/* Hand assembly from the ISA manual's formats (volume 1, 2.2): 3R for or,
 * 2RI12 for addi.d/ori, 2RI6 for slli.d, 2RI16 for jirl. */
static uint32_t la_or(int rd, int rj, int rk)
{
	return 0x00150000u | rk << 10 | rj << 5 | rd;
}

static uint32_t la_addi_d(int rd, int rj, int si12)
{
	return 0x02c00000u | ((uint32_t)si12 & 0xfff) << 10 | rj << 5 | rd;
}

static uint32_t la_ori(int rd, int rj, int ui12)
{
	return 0x03800000u | ui12 << 10 | rj << 5 | rd;
}

static uint32_t la_slli_d(int rd, int rj, int ui6)
{
	return 0x00410000u | ui6 << 10 | rj << 5 | rd;
}

/* jirl rd, rj, 0: an indirect jump that links into rd (zero: none). */
static uint32_t la_jirl(int rd, int rj)
{
	return 0x4c000000u | rj << 5 | rd;
}

static uint32_t la_syscall(void)
{
	return 0x002b0000u;
}

struct image {
	uint8_t bytes[IMAGE_MAX];
	uint64_t stub;		/* address of the stub */
	uint32_t stub_off;	/* and its file offset */
	int far;		/* stub in a second segment */
};

static void emit(struct image *im, uint64_t *pc, uint32_t word)
{
	uint64_t off = *pc >= BASE && *pc < BASE + STUB_FILE_OFF ? *pc - BASE :
		       im->stub_off + (*pc - im->stub);

	slot_put_le32(im->bytes + off, word);
	*pc += 4;
}

/* One slot word (nop, save-ra or the bl) from arch/, at pc. */
static int emit_slot_insn(struct image *im, uint64_t *pc, enum slot_insn insn, uint64_t target)
{
	uint8_t b[SLOT_INSN_MAX_BYTES];
	size_t len;
	int ret = slot_encode(&slot_ops_loongarch64, insn, *pc, target, b, &len, NULL);

	if (!ret)
		emit(im, pc, slot_get_le32(b));
	return ret;
}

static void write_headers(struct image *im)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)im->bytes;
	Elf64_Phdr *ph = (Elf64_Phdr *)(im->bytes + sizeof(*eh));

	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_EXEC;
	eh->e_machine = EM_LOONGARCH;
	eh->e_version = EV_CURRENT;
	eh->e_entry = BASE + CODE_OFF;
	eh->e_phoff = sizeof(*eh);
	eh->e_flags = 0x43;	/* LP64D, object ABI v1 */
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = im->far ? 2 : 1;
	ph[0] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0,
			      .p_vaddr = BASE, .p_paddr = BASE, .p_filesz = STUB_FILE_OFF,
			      .p_memsz = STUB_FILE_OFF, .p_align = SEG_ALIGN };
	if (im->far) {
		uint64_t va = im->stub & ~(uint64_t)(SEG_ALIGN - 1);

		ph[1] = ph[0];
		ph[1].p_offset = STUB_FILE_OFF;
		ph[1].p_vaddr = ph[1].p_paddr = va;
		ph[1].p_filesz = ph[1].p_memsz = SEG_ALIGN;
		/* PT_LOAD entries go in ascending address order. */
		if (va < BASE) {
			Elf64_Phdr t = ph[0];

			ph[0] = ph[1];
			ph[1] = t;
		}
	}
}

/* _start: three calls to func, then exit(a0 | s0 << 4). */
static int emit_start(struct image *im, uint64_t func)
{
	uint64_t pc = BASE + CODE_OFF;
	int ret = 0;

	emit(im, &pc, la_or(R_S0, R_ZERO, R_ZERO));
	emit(im, &pc, la_or(R_A0, R_ZERO, R_ZERO));
	for (int i = 0; i < 3 && !ret; i++)
		ret = emit_slot_insn(im, &pc, SLOT_INSN_CALL, func);
	emit(im, &pc, la_slli_d(R_T2, R_S0, 4));
	emit(im, &pc, la_or(R_A0, R_A0, R_T2));
	emit(im, &pc, la_ori(R_A7, R_ZERO, 93));	/* __NR_exit (asm-generic) */
	emit(im, &pc, la_syscall());
	return ret;
}

/* func: the slot in state, then a0 += 1; return. The stub: s0 += 1, then
 * back to the body (ra = slot + 8) with the caller's ra restored from t0. */
static int emit_func_and_stub(struct image *im, uint64_t func, enum slot_state state)
{
	uint64_t pc = func, spc = im->stub;
	int ret;

	ret = emit_slot_insn(im, &pc, state == SLOT_ORIGINAL ? SLOT_INSN_NOP : SLOT_INSN_SAVE_RA, 0);
	if (!ret)
		ret = emit_slot_insn(im, &pc, state == SLOT_ENABLED ? SLOT_INSN_CALL : SLOT_INSN_NOP,
				     im->stub);
	emit(im, &pc, la_addi_d(R_A0, R_A0, 1));
	emit(im, &pc, la_jirl(R_ZERO, R_RA));
	emit(im, &spc, la_addi_d(R_S0, R_S0, 1));
	emit(im, &spc, la_or(R_T1, R_RA, R_ZERO));
	emit(im, &spc, la_or(R_RA, R_T0, R_ZERO));
	emit(im, &spc, la_jirl(R_ZERO, R_T1));
	return ret;
}

/* Writes one program whose stub sits at func + 4 + stub_delta. */
static int write_program(const char *path, enum slot_state state, int64_t stub_delta, int far)
{
	static struct image im;
	uint64_t func = BASE + CODE_OFF + 0x100;
	FILE *f;
	int ret;

	memset(&im, 0, sizeof(im));
	im.far = far;
	im.stub = func + 4 + (uint64_t)stub_delta;
	im.stub_off = far ? STUB_FILE_OFF + (uint32_t)(im.stub & (SEG_ALIGN - 1))
			  : (uint32_t)(im.stub - BASE);
	write_headers(&im);
	ret = emit_start(&im, func);
	if (!ret)
		ret = emit_func_and_stub(&im, func, state);
	if (ret)
		return ret;
	f = fopen(path, "wb");
	if (!f)
		return -errno;
	ret = fwrite(im.bytes, far ? STUB_FILE_OFF + SEG_ALIGN : STUB_FILE_OFF, 1, f) == 1 ? 0 : -EIO;
	if (fclose(f) || ret)
		return -EIO;
	/* qemu-user, like execve, runs only executable files. */
	return chmod(path, 0755) ? -errno : 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		enum slot_state state;
		int64_t delta;
		int far, status;
	} progs[] = {
		{ "original", SLOT_ORIGINAL, 0x200, 0, 3 },
		{ "disabled", SLOT_DISABLED, 0x200, 0, 3 },
		{ "enabled", SLOT_ENABLED, 0x200, 0, 51 },
		{ "enabled-backward", SLOT_ENABLED, -0x800, 0, 51 },
		{ "enabled-forward-edge", SLOT_ENABLED, (INT64_C(1) << 27) - 4, 1, 51 },
		{ "enabled-backward-edge", SLOT_ENABLED, -(INT64_C(1) << 27), 1, 51 },
	};
	char path[4096];

	if (argc != 2) {
		fprintf(stderr, "usage: la64-elf OUTDIR\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		snprintf(path, sizeof(path), "%s/la64-%s.elf", argv[1], progs[i].name);
		if (write_program(path, progs[i].state, progs[i].delta, progs[i].far)) {
			fprintf(stderr, "la64-elf: cannot write %s\n", path);
			return 1;
		}
		printf("%s %d\n", path, progs[i].status);
	}
	return 0;
}
