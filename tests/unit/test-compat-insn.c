// SPDX-License-Identifier: GPL-2.0
/*
 * The compat layer's instruction decoder (vmm/kvm-x86_64/compat-insn.c): every
 * instruction it assists, in the encodings the SDM gives them, with the
 * addressing modes a compiler emits (RIP-relative, SIB, disp8/disp32,
 * REX.B/X, fs/gs, 32-bit address size). Lengths decide how far RIP moves
 * and addresses where the guest's memory is touched, so both are checked
 * against values worked out by hand from the encodings. Everything else,
 * truncated bytes and over-long prefix runs must be refused: the bytes come
 * from the guest.
 */
#include <errno.h>
#include <string.h>

#include "vmm/kvm-x86_64/compat-insn.h"
#include "tests/unit/check.h"

#define NOADDR 0x5a5a5a5a5a5a5a5aULL	/* no memory operand to check */

/* Register values chosen so that every term of an address shows. */
static const struct kvm_regs regs = {
	.rax = 0x1000, .rcx = 0x20000, .rdx = 0x300000, .rbx = 0x4000000,
	.rsp = 0xffffc90000001f00ULL, .rbp = 0xffffc90000002000ULL,
	.rsi = 0x100, .rdi = 0x10,
	.r8 = 0x800000000ULL, .r9 = 0x9000000000ULL, .r10 = 0xa0000000000ULL,
	.r11 = 0xb00000000000ULL, .r12 = 0xffff888000000000ULL,
	.r13 = 0xffff888100000000ULL, .r14 = 7, .r15 = 0x1fffffff0ULL,
	.rip = 0xffffffff81000000ULL,
};
static struct kvm_sregs sregs;

struct accept_case {
	const char *what;
	const uint8_t bytes[16];
	unsigned len;		/* bytes given to the decoder */
	unsigned assist;
	unsigned insn_len;	/* how far RIP moves */
	uint64_t addr;		/* linear address of the memory operand, or NOADDR */
};

#define B(...) { __VA_ARGS__ }, sizeof((uint8_t[]){ __VA_ARGS__ })

static const struct accept_case no_operand[] = {
	{ "9b fwait", B(0x9b), ASSIST_FWAIT, 1, NOADDR },
	{ "cc int3", B(0xcc), ASSIST_INT3, 1, NOADDR },
	{ "0f 77 emms", B(0x0f, 0x77), ASSIST_EMMS, 2, NOADDR },
	{ "db e2 fnclex", B(0xdb, 0xe2), ASSIST_FNCLEX, 2, NOADDR },
	{ "df e0 fnstsw %ax", B(0xdf, 0xe0), ASSIST_FNSTSW, 2, NOADDR },
	{ "0f 01 d0 xgetbv", B(0x0f, 0x01, 0xd0), ASSIST_XGETBV, 3, NOADDR },
	{ "0f 01 d1 xsetbv", B(0x0f, 0x01, 0xd1), ASSIST_XSETBV, 3, NOADDR },
	{ "0f 03 c1 lsl %ecx,%eax", B(0x0f, 0x03, 0xc1), ASSIST_LSL, 3, NOADDR },
	{ "48 0f 03 c1 lsl %rcx,%rax", B(0x48, 0x0f, 0x03, 0xc1), ASSIST_LSL, 4, NOADDR },
	{ "44 0f 03 f8 lsl %eax,%r15d", B(0x44, 0x0f, 0x03, 0xf8), ASSIST_LSL, 4, NOADDR },
	{ "0f 00 e8 verw %ax", B(0x0f, 0x00, 0xe8), ASSIST_VERW, 3, NOADDR },
	/* Null prefixes in 64-bit mode (cs, ss, ds, es) change nothing. */
	{ "2e 3e 9b fwait", B(0x2e, 0x3e, 0x9b), ASSIST_FWAIT, 3, NOADDR },
	/* Bytes after the instruction are not part of it. */
	{ "cc then a nop", B(0xcc, 0x90, 0x90), ASSIST_INT3, 1, NOADDR },
};

static const struct accept_case with_operand[] = {
	/* modrm 10 = mod 00, /2, rm rax */
	{ "0f ae 10 ldmxcsr (%rax)", B(0x0f, 0xae, 0x10), ASSIST_LDMXCSR, 3, 0x1000 },
	/* modrm 5d = mod 01, /3, rm rbp; rbp - 8 */
	{ "0f ae 5d f8 stmxcsr -8(%rbp)", B(0x0f, 0xae, 0x5d, 0xf8), ASSIST_STMXCSR, 4,
	  0xffffc90000001ff8ULL },
	/* RIP-relative: from the end of the 7-byte instruction */
	{ "0f ae 15 +0x10 ldmxcsr (%rip)", B(0x0f, 0xae, 0x15, 0x10, 0, 0, 0), ASSIST_LDMXCSR, 7,
	  0xffffffff81000017ULL },
	{ "0f ae 15 -0x10 ldmxcsr (%rip)", B(0x0f, 0xae, 0x15, 0xf0, 0xff, 0xff, 0xff),
	  ASSIST_LDMXCSR, 7, 0xffffffff80fffff7ULL },
	/* mod 10: disp32 sign-extended, rax + 0xffffffff80000000 */
	{ "0f ae 90 ldmxcsr -0x80000000(%rax)", B(0x0f, 0xae, 0x90, 0, 0, 0, 0x80),
	  ASSIST_LDMXCSR, 7, 0xffffffff80001000ULL },
	/* SIB 8b = scale 4, index rcx, base rbx: 0x4000000 + 0x80000 */
	{ "0f ae 1c 8b stmxcsr (%rbx,%rcx,4)", B(0x0f, 0xae, 0x1c, 0x8b), ASSIST_STMXCSR, 4,
	  0x4080000 },
	/* SIB 72 = scale 2, index rsi, base rdx: 0x300000 + 0x200 */
	{ "0f ae 1c 72 stmxcsr (%rdx,%rsi,2)", B(0x0f, 0xae, 0x1c, 0x72), ASSIST_STMXCSR, 4,
	  0x300200 },
	/* SIB cd = scale 8, index rcx, base 101 with mod 00: no base, disp32 */
	{ "0f ae 14 cd ldmxcsr 0x1000(,%rcx,8)", B(0x0f, 0xae, 0x14, 0xcd, 0x00, 0x10, 0, 0),
	  ASSIST_LDMXCSR, 8, 0x101000 },
	/* SIB 24: index 100 is none, base rsp */
	{ "0f ae 5c 24 08 stmxcsr 8(%rsp)", B(0x0f, 0xae, 0x5c, 0x24, 0x08), ASSIST_STMXCSR, 5,
	  0xffffc90000001f08ULL },
	/* SIB 25 with mod 00: neither base nor index, disp32 sign-extended */
	{ "0f ae 14 25 ldmxcsr 0xffffffff80000000", B(0x0f, 0xae, 0x14, 0x25, 0, 0, 0, 0x80),
	  ASSIST_LDMXCSR, 8, 0xffffffff80000000ULL },
	/* REX.B: rm 001 is r9 */
	{ "41 0f ae 11 ldmxcsr (%r9)", B(0x41, 0x0f, 0xae, 0x11), ASSIST_LDMXCSR, 4,
	  0x9000000000ULL },
	/* REX.B does not turn mod 00 rm 101 into r13: still RIP-relative */
	{ "41 0f ae 15 ldmxcsr 0x100(%rip)", B(0x41, 0x0f, 0xae, 0x15, 0x00, 0x01, 0, 0),
	  ASSIST_LDMXCSR, 8, 0xffffffff81000108ULL },
	/* REX.B: rm 100 still means a SIB; its base 100 is r12 */
	{ "41 0f ae 14 24 ldmxcsr (%r12)", B(0x41, 0x0f, 0xae, 0x14, 0x24), ASSIST_LDMXCSR, 5,
	  0xffff888000000000ULL },
	/* REX.B, SIB base 101 with mod 00: no base (not r13), disp32 */
	{ "41 0f ae 14 25 ldmxcsr 0x12345678", B(0x41, 0x0f, 0xae, 0x14, 0x25, 0x78, 0x56, 0x34, 0x12),
	  ASSIST_LDMXCSR, 9, 0x12345678 },
	/* REX.B, mod 01 rm 101: r13 + 0x10 */
	{ "41 0f ae 55 10 ldmxcsr 0x10(%r13)", B(0x41, 0x0f, 0xae, 0x55, 0x10), ASSIST_LDMXCSR, 5,
	  0xffff888100000010ULL },
	/* REX.X: SIB index 100 is r12, not "no index" */
	{ "42 0f ae 14 20 ldmxcsr (%rax,%r12)", B(0x42, 0x0f, 0xae, 0x14, 0x20), ASSIST_LDMXCSR, 5,
	  0xffff888000001000ULL },
	/* REX.WXB, SIB f5 = scale 8, index r14, base r13, disp8 -0x40: r13 + 56 - 64 */
	{ "4b 0f ae 64 f5 c0 xsave64 -0x40(%r13,%r14,8)", B(0x4b, 0x0f, 0xae, 0x64, 0xf5, 0xc0),
	  ASSIST_XSAVE, 6, 0xffff8880fffffff8ULL },
	/* fs: its base plus the offset */
	{ "64 0f ae 14 25 ldmxcsr %fs:0x10", B(0x64, 0x0f, 0xae, 0x14, 0x25, 0x10, 0, 0, 0),
	  ASSIST_LDMXCSR, 9, 0x00007f0000000010ULL },
	{ "65 48 0f ae 24 25 xsave64 %gs:0", B(0x65, 0x48, 0x0f, 0xae, 0x24, 0x25, 0, 0, 0, 0),
	  ASSIST_XSAVE, 10, 0xffff88807fc00000ULL },
	{ "65 0f ae 58 08 stmxcsr %gs:8(%rax)", B(0x65, 0x0f, 0xae, 0x58, 0x08), ASSIST_STMXCSR, 5,
	  0xffff88807fc01008ULL },
	/* Address size 32: r15d 0xfffffff0 + 0x20 wraps to 0x10 (not 0x200000010) */
	{ "67 41 0f ae 57 20 ldmxcsr 0x20(%r15d)", B(0x67, 0x41, 0x0f, 0xae, 0x57, 0x20),
	  ASSIST_LDMXCSR, 6, 0x10 },
	/* ... and the segment base is added after the truncation */
	{ "64 67 41 0f ae 57 20 ldmxcsr %fs:0x20(%r15d)", B(0x64, 0x67, 0x41, 0x0f, 0xae, 0x57, 0x20),
	  ASSIST_LDMXCSR, 7, 0x00007f0000000010ULL },
	/* EIP-relative: rip + 8 truncated to 32 bits */
	{ "67 0f ae 15 ldmxcsr (%eip)", B(0x67, 0x0f, 0xae, 0x15, 0, 0, 0, 0), ASSIST_LDMXCSR, 8,
	  0x81000008 },
	{ "3e 0f ae 10 ldmxcsr %ds:(%rax)", B(0x3e, 0x0f, 0xae, 0x10), ASSIST_LDMXCSR, 4, 0x1000 },
	/* dd /7 (modrm 7d = mod 01, /7, rbp) and d9 /5 (6c = mod 01, /5, SIB) */
	{ "dd 38 fnstsw (%rax)", B(0xdd, 0x38), ASSIST_FNSTSW, 2, 0x1000 },
	{ "dd 7d fe fnstsw -2(%rbp)", B(0xdd, 0x7d, 0xfe), ASSIST_FNSTSW, 3, 0xffffc90000001ffeULL },
	{ "d9 6c 24 fe fldcw -2(%rsp)", B(0xd9, 0x6c, 0x24, 0xfe), ASSIST_FLDCW, 4,
	  0xffffc90000001efeULL },
	{ "0f 03 06 lsl (%rsi),%eax", B(0x0f, 0x03, 0x06), ASSIST_LSL, 3, 0x100 },
	/* 6.12's CLEAR_CPU_BUFFERS: verw x86_verw_sel(%rip) (0f 00 /5) */
	{ "0f 00 2d verw -0x10(%rip)", B(0x0f, 0x00, 0x2d, 0xf0, 0xff, 0xff, 0xff), ASSIST_VERW, 7,
	  0xffffffff80fffff7ULL },
	/* 0f ae /4 xsave, /5 xrstor, /6 xsaveopt (completed as xsave) */
	{ "0f ae 27 xsave (%rdi)", B(0x0f, 0xae, 0x27), ASSIST_XSAVE, 3, 0x10 },
	{ "0f ae 2f xrstor (%rdi)", B(0x0f, 0xae, 0x2f), ASSIST_XRSTOR, 3, 0x10 },
	{ "48 0f ae 2f xrstor64 (%rdi)", B(0x48, 0x0f, 0xae, 0x2f), ASSIST_XRSTOR, 4, 0x10 },
	{ "0f ae 37 xsaveopt (%rdi)", B(0x0f, 0xae, 0x37), ASSIST_XSAVE, 3, 0x10 },
	{ "0f ae a7 xsave 0x200(%rdi)", B(0x0f, 0xae, 0xa7, 0x00, 0x02, 0, 0), ASSIST_XSAVE, 7, 0x210 },
};

static void check_accept(const struct accept_case *t)
{
	struct insn in;
	unsigned assist = ~0u;
	int rc = compat_insn_decode(t->bytes, t->len, &in, &assist);

	if (rc || assist != t->assist || in.pos != t->insn_len) {
		CHECK(0, "%s: rc %d assist %u (want %u) length %u (want %u)", t->what, rc, assist,
		      t->assist, in.pos, t->insn_len);
		return;
	}
	if (t->addr == NOADDR) {
		CHECK(!in.has_modrm || (in.modrm >> 6) == 3, "%s: %u bytes, no memory operand",
		      t->what, t->insn_len);
		return;
	}
	uint64_t ea = compat_insn_address(&in, &regs, &sregs);

	CHECK(in.has_modrm && (in.modrm >> 6) != 3 && ea == t->addr, "%s: %u bytes at 0x%llx (got 0x%llx)",
	      t->what, t->insn_len, (unsigned long long)t->addr, (unsigned long long)ea);
}

struct refuse_case {
	const char *what;
	const uint8_t bytes[16];
	unsigned len;
};

static const struct refuse_case refused[] = {
	{ "90 nop", B(0x90) },
	{ "0f 0b ud2", B(0x0f, 0x0b) },
	{ "0f 01 f9 rdtscp", B(0x0f, 0x01, 0xf9) },
	{ "0f 01 ca clac", B(0x0f, 0x01, 0xca) },
	{ "0f 00 e0 verr %ax (/4, not verw)", B(0x0f, 0x00, 0xe0) },
	{ "0f 00 d8 ltr %ax (/3)", B(0x0f, 0x00, 0xd8) },
	{ "0f ae f0 mfence (mod 3)", B(0x0f, 0xae, 0xf0) },
	{ "0f ae e8 lfence (mod 3)", B(0x0f, 0xae, 0xe8) },
	{ "0f ae 00 fxsave (/0)", B(0x0f, 0xae, 0x00) },
	{ "0f ae 08 fxrstor (/1)", B(0x0f, 0xae, 0x08) },
	{ "0f ae 38 clflush (/7)", B(0x0f, 0xae, 0x38) },
	{ "66 0f ae 30 clwb", B(0x66, 0x0f, 0xae, 0x30) },
	{ "66 0f ae 38 clflushopt", B(0x66, 0x0f, 0xae, 0x38) },
	{ "f3 0f ae 10 (not ldmxcsr)", B(0xf3, 0x0f, 0xae, 0x10) },
	{ "f3 48 0f ae c0 rdfsbase", B(0xf3, 0x48, 0x0f, 0xae, 0xc0) },
	{ "66 0f 01 d0 (not xgetbv)", B(0x66, 0x0f, 0x01, 0xd0) },
	{ "0f 01 d2", B(0x0f, 0x01, 0xd2) },
	{ "df e1", B(0xdf, 0xe1) },
	{ "db e3 fninit", B(0xdb, 0xe3) },
	{ "dd c0 ffree (mod 3)", B(0xdd, 0xc0) },
	{ "dd 30 fnsave (/6)", B(0xdd, 0x30) },
	{ "d9 7d fe fnstcw (/7)", B(0xd9, 0x7d, 0xfe) },
	{ "d9 e8 fld1 (mod 3)", B(0xd9, 0xe8) },
	{ "c5 f8 77 vzeroupper", B(0xc5, 0xf8, 0x77) },
	{ "48 0f c7 0e cmpxchg16b", B(0x48, 0x0f, 0xc7, 0x0e) },
	/* REX must come last: here it is ignored and 66 is the opcode byte */
	{ "48 66 0f ae 10", B(0x48, 0x66, 0x0f, 0xae, 0x10) },
	/* Truncated */
	{ "nothing", { 0 }, 0 },
	{ "0f", B(0x0f) },
	{ "0f ae", B(0x0f, 0xae) },
	{ "0f 01", B(0x0f, 0x01) },
	{ "0f 03", B(0x0f, 0x03) },
	{ "df", B(0xdf) },
	{ "db", B(0xdb) },
	{ "dd", B(0xdd) },
	{ "d9", B(0xd9) },
	{ "0f ae 14 (no SIB)", B(0x0f, 0xae, 0x14) },
	{ "0f ae 54 24 (no disp8)", B(0x0f, 0xae, 0x54, 0x24) },
	{ "0f ae 15 + 3 of 4 disp32 bytes", B(0x0f, 0xae, 0x15, 0x10, 0x00, 0x00) },
	{ "41 0f ae 14 25 + 3 of 4 disp32 bytes", B(0x41, 0x0f, 0xae, 0x14, 0x25, 0x78, 0x56, 0x34) },
	{ "0f ae 90 + 1 disp32 byte", B(0x0f, 0xae, 0x90, 0x00) },
	/* Prefixes only */
	{ "66", B(0x66) },
	{ "48 (REX only)", B(0x48) },
	{ "64 65 67 f0 2e 26 36 3e f2 f3", B(0x64, 0x65, 0x67, 0xf0, 0x2e, 0x26, 0x36, 0x3e, 0xf2, 0xf3) },
};

static void test_accepted(void)
{
	for (size_t i = 0; i < sizeof(no_operand) / sizeof(no_operand[0]); i++)
		check_accept(&no_operand[i]);
	for (size_t i = 0; i < sizeof(with_operand) / sizeof(with_operand[0]); i++)
		check_accept(&with_operand[i]);
}

static void test_refused(void)
{
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		const struct refuse_case *t = &refused[i];
		struct insn in;
		unsigned assist = ~0u;
		int rc = compat_insn_decode(t->bytes, t->len, &in, &assist);

		CHECK(rc == -ENOTSUP && assist == ~0u, "refused: %s (rc %d)", t->what, rc);
	}
}

/* An instruction is at most 15 bytes: 14 prefixes and fwait is one; 15 prefixes are not. */
static void test_prefix_runs(void)
{
	uint8_t b[32];
	struct insn in;
	unsigned assist = ~0u;
	int rc;

	memset(b, 0x2e, sizeof(b));
	b[14] = 0x9b;
	rc = compat_insn_decode(b, 15, &in, &assist);
	CHECK(!rc && assist == ASSIST_FWAIT && in.pos == 15, "14 prefixes + fwait: 15 bytes (rc %d)", rc);
	memset(b, 0x2e, sizeof(b));
	b[15] = 0x9b;
	assist = ~0u;
	rc = compat_insn_decode(b, 16, &in, &assist);
	CHECK(rc == -ENOTSUP && assist == ~0u, "15 prefixes + fwait: refused (rc %d)", rc);
	memset(b, 0x2e, sizeof(b));
	rc = compat_insn_decode(b, sizeof(b), &in, &assist);
	CHECK(rc == -ENOTSUP && in.pos <= 15, "32 prefix bytes: refused, read no further than 15 (rc %d)", rc);
	/* 13 prefixes, then 0f ae 10: byte 16 is past any instruction */
	memset(b, 0x3e, sizeof(b));
	memcpy(b + 13, (uint8_t[]){ 0x0f, 0xae, 0x10 }, 3);
	rc = compat_insn_decode(b, 16, &in, &assist);
	CHECK(rc == -ENOTSUP, "13 prefixes + 3-byte ldmxcsr (16 bytes): refused (rc %d)", rc);
	memcpy(b + 12, (uint8_t[]){ 0x0f, 0xae, 0x10 }, 3);
	rc = compat_insn_decode(b, 16, &in, &assist);
	CHECK(!rc && assist == ASSIST_LDMXCSR && in.pos == 15,
	      "12 prefixes + 3-byte ldmxcsr: 15 bytes (rc %d)", rc);
}

/* Every start and length of random bytes: no crash, a length within what was given. */
static void test_random_bytes(void)
{
	uint8_t b[16];
	uint32_t x = 12345;
	int bad = 0, seen = 0;

	for (int n = 0; n < 200000; n++) {
		struct insn in;
		unsigned assist, len;

		for (unsigned i = 0; i < sizeof(b); i++) {
			x = x * 1103515245 + 12345;
			b[i] = (uint8_t)(x >> 16);
		}
		/* Favour the interesting opcode bytes. */
		if (b[0] & 1)
			b[(b[1] >> 4) & 3] = (const uint8_t[]){ 0x0f, 0xae, 0xdd, 0xd9, 0x9b, 0x41, 0x67, 0x64 }[b[2] & 7];
		len = b[3] % 17;
		if (!compat_insn_decode(b, len, &in, &assist)) {
			seen++;
			bad += !CHECK_QUIET(in.pos >= 1 && in.pos <= len && assist < ASSIST_FAULT,
					    "random bytes: length %u of %u, assist %u", in.pos, len, assist);
		}
	}
	CHECK(!bad && seen, "random bytes: %d accepted, each within its bytes", seen);
}

int main(void)
{
	sregs.fs.base = 0x00007f0000000000ULL;
	sregs.gs.base = 0xffff88807fc00000ULL;
	test_accepted();
	test_refused();
	test_prefix_runs();
	test_random_bytes();
	return check_exit();
}
