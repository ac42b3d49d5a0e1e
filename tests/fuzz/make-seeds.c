// SPDX-License-Identifier: GPL-2.0
/*
 * Writes the committed seed corpora tests/fuzz/seeds/<target>/ (run once,
 * by hand, when a format changes): a tiny ELF and bzImages with each
 * codec's payload (made by the codecs' tools, as tests/unit/fixtures.h
 * makes the unit tests' fixtures), a System.map with an ELF that has
 * __mcount_loc, raw traces from the raw writer itself, rings whose records
 * are committed, control streams and instruction/page-table inputs.
 * Usage: make-seeds DIR (DIR/image, DIR/sysmap, ... must exist).
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/fixtures.h"
#include "arch/slot.h"
#include "proto/control.h"
#include "proto/trace.h"
#include "vmm/control/control-frame.h"
#include "vmm/output/raw.h"

static const char *top;

static void put(const char *target, const char *name, const void *p, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", top, target, name);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
		perror(path);
		exit(1);
	}
}

/*
 * A tiny vmlinux: one PT_LOAD of 64 bytes of text holding x86 fentry
 * slots, a .symtab with functions, __fentry__ and __start/__stop_mcount_loc
 * around a 3-entry __mcount_loc in the same segment.
 */
#define T_VA 0xffffffff81000000ull
static size_t tiny_elf(uint8_t *d, size_t cap)
{
	static const char strtab[] = "\0start_kernel\0setup_arch\0__fentry__\0__start_mcount_loc\0__stop_mcount_loc";
	static const char shstr[] = "\0.text\0.symtab\0.strtab\0.shstrtab";
	Elf64_Ehdr *eh = (Elf64_Ehdr *)d;
	Elf64_Phdr *ph = (Elf64_Phdr *)(d + sizeof(*eh));
	size_t text = sizeof(*eh) + sizeof(*ph), text_len = 64 + 24;
	size_t sym = (text + text_len + 7) & ~7ul, nsym = 6;
	size_t str = sym + nsym * sizeof(Elf64_Sym), shs = str + sizeof(strtab);
	size_t sh = (shs + sizeof(shstr) + 7) & ~7ul, len = sh + 5 * sizeof(Elf64_Shdr);
	Elf64_Sym *s = (Elf64_Sym *)(d + sym);
	Elf64_Shdr *h = (Elf64_Shdr *)(d + sh);
	uint8_t *t = d + text;
	uint64_t mc = T_VA + 64;

	if (len > cap)
		exit(1);
	memset(d, 0, len);
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_EXEC;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_entry = 0x1000000;
	eh->e_phoff = sizeof(*eh);
	eh->e_shoff = sh;
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 1;
	eh->e_shentsize = sizeof(*h);
	eh->e_shnum = 5;
	eh->e_shstrndx = 4;
	*ph = (Elf64_Phdr){ PT_LOAD, PF_R | PF_X, text, T_VA, 0x1000000, text_len, text_len, 16 };
	/* start_kernel: call __fentry__; setup_arch: the 5-byte NOP; __fentry__: ret. */
	t[0] = 0xe8;
	fx_put_le32(t + 1, (uint32_t)(T_VA + 48 - (T_VA + 5)));
	memcpy(t + 16, "\x0f\x1f\x44\x00\x00", 5);
	t[48] = 0xc3;
	for (int i = 0; i < 3; i++) {
		uint64_t a = T_VA + (uint64_t)(i == 2 ? 32 : i * 16);

		memcpy(t + 64 + 8 * i, &a, 8);
	}
	s[1] = (Elf64_Sym){ 1, ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), 0, 1, T_VA, 16 };
	s[2] = (Elf64_Sym){ 14, ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), 0, 1, T_VA + 16, 16 };
	s[3] = (Elf64_Sym){ 25, ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), 0, 1, T_VA + 48, 1 };
	s[4] = (Elf64_Sym){ 36, ELF64_ST_INFO(STB_GLOBAL, STT_NOTYPE), 0, 1, mc, 0 };
	s[5] = (Elf64_Sym){ 55, ELF64_ST_INFO(STB_GLOBAL, STT_NOTYPE), 0, 1, mc + 24, 0 };
	memcpy(d + str, strtab, sizeof(strtab));
	memcpy(d + shs, shstr, sizeof(shstr));
	h[1] = (Elf64_Shdr){ 1, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, T_VA, text, text_len, 0, 0, 16, 0 };
	h[2] = (Elf64_Shdr){ 7, SHT_SYMTAB, 0, 0, sym, nsym * sizeof(Elf64_Sym), 3, 1, 8, sizeof(Elf64_Sym) };
	h[3] = (Elf64_Shdr){ 15, SHT_STRTAB, 0, 0, str, sizeof(strtab), 0, 0, 1, 0 };
	h[4] = (Elf64_Shdr){ 23, SHT_STRTAB, 0, 0, shs, sizeof(shstr), 0, 0, 1, 0 };
	return len;
}

static void image_seeds(const uint8_t *elf, size_t elf_len)
{
	const char *dir = fx_tmpdir();
	struct fx_buf in = { (uint8_t *)elf, elf_len };

	put("image", "vmlinux", elf, elf_len);
	for (size_t i = 0; dir && i < FX_NCODECS; i++) {
		struct fx_buf packed, bz;
		char name[64];

		if (fx_compress(dir, &fx_codecs[i], &in, 1, &packed))
			exit(1);
		/* setup_sects 1: the smallest setup, to keep seeds small. */
		if (fx_make_bzimage(&packed, 1, &bz))
			exit(1);
		snprintf(name, sizeof(name), "bzImage-%s", fx_codecs[i].name);
		put("image", name, bz.data, bz.len);
		fx_free(&packed);
		fx_free(&bz);
	}
}

static void sysmap_seeds(const uint8_t *elf, size_t elf_len)
{
	static const char map[] = "ffffffff81000000 T start_kernel\nffffffff81000010 T setup_arch\n"
				  "ffffffff81000030 T __fentry__\nffffffff81000040 D __start_mcount_loc\n"
				  "ffffffff81000058 D __stop_mcount_loc\nffffffffc0a00000 t ext4_init_fs\t[ext4]\n";
	uint8_t buf[4096];
	size_t n = sizeof(map) - 1;

	for (int arch = 0; arch < 2; arch++) {
		buf[0] = (uint8_t)n;
		buf[1] = (uint8_t)(n >> 8);
		buf[2] = (uint8_t)arch;
		memcpy(buf + 3, map, n);
		memcpy(buf + 3 + n, elf, elf_len);
		put("sysmap", arch ? "map+elf-arm64" : "map+elf", buf, 3 + n + elf_len);
	}
	/* The ELF alone: its .symtab drives mcount_read. */
	buf[0] = buf[1] = buf[2] = 0;
	memcpy(buf + 3, elf, elf_len);
	put("sysmap", "elf", buf, 3 + elf_len);
}

static void raw_seeds(void)
{
	static struct symtab syms;
	struct trace_meta m = { &syms, 2500000, 1000, 2, "/boot/vmlinuz" };
	struct trace_stats st = { .events = 6, .dropped_stub = 1, .lost = 2 };
	char *buf = NULL;
	size_t len = 0;

	symtab_init(&syms);
	symtab_add(&syms, T_VA, 'T', "start_kernel", 12);
	symtab_add(&syms, T_VA + 16, 'T', "setup_arch", 10);
	symtab_finish(&syms);
	for (int close = 0; close < 2; close++) {
		FILE *f = open_memstream(&buf, &len);
		struct trace_writer *w;
		struct errbuf err;

		if (!f || trace_writer_raw.open(&w, f, &m, &err))
			exit(1);
		for (uint64_t i = 0; i < 6; i++) {
			struct ring_event ev = { 2000 + 10 * i, T_VA + 16 * (i & 1), T_VA + 5, i / 2,
						 (uint16_t)(i & 1), (uint16_t)(i & 1), (uint32_t)(i & 1) };

			if (trace_writer_raw.event(w, &ev) || (i == 2 && trace_writer_raw.flush(w)))
				exit(1);
		}
		if (!close) {
			/* A killed tracer: the file ends with its last flush. */
			trace_writer_raw.flush(w);
			fflush(f);
			size_t cut = len;
			trace_writer_raw.close(w, &st, &err);
			fclose(f);
			put("raw", "killed.raw", buf, cut);
		} else {
			trace_writer_raw.close(w, &st, &err);
			fclose(f);
			put("raw", "closed.raw", buf, len);
		}
		free(buf);
		buf = NULL;
	}
	/* --args: events with their argument registers, and a prototypes chunk. */
	{
		struct kbtf_proto p = { .nparams = 3, .kept = 3, .variadic = 1 };
		struct fnargs *fa = fnargs_new(NULL);
		FILE *f = open_memstream(&buf, &len);
		struct trace_writer *w;
		struct errbuf err;

		snprintf(p.p[0].name, sizeof(p.p[0].name), "fd");
		p.p[0].kind = KBTF_ARG_UINT;
		p.p[0].size = 4;
		snprintf(p.p[1].name, sizeof(p.p[1].name), "now");
		p.p[1].kind = KBTF_ARG_OTHER;
		p.p[1].size = 16;
		snprintf(p.p[1].type, sizeof(p.p[1].type), "STRUCT");
		snprintf(p.p[2].name, sizeof(p.p[2].name), "n");
		p.p[2].kind = KBTF_ARG_SINT;
		p.p[2].size = 8;
		if (!fa || fnargs_add(fa, T_VA, &p) || !f)
			exit(1);
		m.fnargs = fa;
		if (trace_writer_raw.open(&w, f, &m, &err))
			exit(1);
		for (uint64_t i = 0; i < 4; i++) {
			struct ring_event ev = { 3000 + 10 * i, T_VA + 16 * (i & 1), T_VA + 5, i,
						 0, VT_REC_FLAG_ARGS, 0 };

			for (unsigned k = 0; k < VT_REC_NARGS; k++)
				ev.args[k] = (i + 1) << (8 * k);
			if (trace_writer_raw.event(w, &ev))
				exit(1);
		}
		trace_writer_raw.close(w, &st, &err);
		fclose(f);
		put("raw", "args.raw", buf, len);
		free(buf);
		buf = NULL;
		fnargs_free(fa);
		m.fnargs = NULL;
	}
	symtab_destroy(&syms);
}

/* Ring seeds: geometry byte, header, records committed for their lap, a script. */
static void ring_seeds(void)
{
	uint8_t buf[1 + 2 * (sizeof(struct vt_ring_hdr) + 4 * sizeof(struct vt_record)) + 40];

	for (int lossless = 0; lossless < 2; lossless++) {
		uint8_t *p = buf;
		struct vt_ring_hdr h = { 0 };

		memset(buf, 0, sizeof(buf));
		*p++ = (uint8_t)(2 | lossless << 3 | 1 << 4);	/* 4 records, two rings */
		for (int r = 0; r < 2; r++) {
			h.head = 6;	/* lapped once: indices 2..5 are in the window */
			h.dropped = (uint64_t)r;
			memcpy(p, &h, sizeof(h));
			p += sizeof(h);
			for (uint64_t i = 2; i < 6; i++) {
				struct vt_record rec = { 1000 + 10 * i + (uint64_t)r, T_VA + i, T_VA,
							 (uint16_t)r, (uint16_t)(i & 1),
							 (uint32_t)(i == 5 ? 0 : i + 1) };

				memcpy(p + (i & 3) * sizeof(rec), &rec, sizeof(rec));
			}
			p += 4 * sizeof(struct vt_record);
		}
		/* Script: commit record 5 of ring 0, then a head that goes backwards. */
		p[0] = 3;
		p[1] = 0;
		uint64_t v = 5ull << 32 | 6;
		memcpy(p + 2, &v, 8);
		p[10] = 0x80;
		p[11] = 1;
		v = 1;
		memcpy(p + 12, &v, 8);
		put("ring", lossless ? "lossless" : "overwrite", buf, (size_t)(p + 20 - buf));
	}
}

static void control_seeds(void)
{
	static const char pats[] = "start_kernel\0vfs_*\0!vfs_write\0=format=raw\0";
	uint8_t buf[512];
	size_t n;

	buf[0] = 3;	/* three cut sizes: 1, 2, 17 bytes */
	buf[1] = 0;
	buf[2] = 1;
	buf[3] = 16;
	n = 4 + ctl_frame_encode(buf + 4, VT_CTL_ATTACH, 0, pats, sizeof(pats) - 1);
	n += ctl_frame_encode(buf + n, VT_CTL_DETACH, 0, "vfs_*", 6);
	n += ctl_frame_encode(buf + n, VT_CTL_DETACH, 0, NULL, 0);
	put("control", "attach-detach", buf, n);
	buf[0] = 0;
	n = 1 + ctl_frame_encode(buf + 1, VT_CTL_ATTACH, 0, "bad pattern", 11);
	put("control", "unterminated", buf, n);
}

/* compat: ctl, GVA, CR3, len, 16 instruction bytes, then RAM with a 4-level map. */
static void compat_seeds(void)
{
	static const uint8_t insns[][16] = {
		{ 0x0f, 0xae, 0x15, 0x10, 0x00, 0x00, 0x00 },	/* ldmxcsr rip+0x10 */
		{ 0x65, 0x48, 0x0f, 0x01, 0xd0 },		/* gs rex.w xgetbv */
		{ 0x48, 0x0f, 0xae, 0x64, 0x24, 0x08 },	/* xsave64 8(%rsp) */
	};
	uint8_t buf[1 + 8 + 8 + 1 + 16 + 0x6000];
	uint64_t gva = 0xffff888000001234ull, cr3 = 0x1000, e;

	for (size_t k = 0; k < sizeof(insns) / sizeof(insns[0]); k++) {
		memset(buf, 0, sizeof(buf));
		buf[0] = (uint8_t)(0x4 | 0x1 | (k == 1 ? 0x8 : 0));	/* paging, WP, a write once */
		memcpy(buf + 1, &gva, 8);
		memcpy(buf + 9, &cr3, 8);
		buf[17] = 16;
		memcpy(buf + 18, insns[k], 16);
		uint8_t *ram = buf + 34;
		/* PML4[273] -> 0x2000, PDPT[0] -> 0x3000, PD[0] -> 0x4000, PT[1] -> 0x5000. */
		e = 0x2000 | 3; memcpy(ram + 0x1000 + 273 * 8, &e, 8);
		if (k) {
			/* PDPT[0]: a 1 GiB page at 0 (read-only for k 2), so RAM ends at 0x3000. */
			e = 0x80 | (k == 2 ? 1 : 3); memcpy(ram + 0x2000, &e, 8);
		} else {
			e = 0x3000 | 3; memcpy(ram + 0x2000, &e, 8);
			e = 0x4000 | 3; memcpy(ram + 0x3000, &e, 8);
			e = 0x5000 | 3; memcpy(ram + 0x4000 + 8, &e, 8);
		}
		char name[32];
		snprintf(name, sizeof(name), "walk-%zu", k);
		put("compat", name, buf, k ? 34 + 0x3000 : sizeof(buf));
	}
}

static void slot_seeds(void)
{
	uint8_t buf[1 + 24 + 16];

	for (int arch = 0; arch < SLOT_ARCH_COUNT; arch++) {
		uint64_t pc = T_VA + 0x100, orig = T_VA + 0x40, ours = T_VA + 0x80000;
		char name[32];

		memset(buf, 0, sizeof(buf));
		buf[0] = (uint8_t)arch;
		memcpy(buf + 1, &pc, 8);
		memcpy(buf + 9, &orig, 8);
		memcpy(buf + 17, &ours, 8);
		if (arch == SLOT_ARCH_X86_64) {
			buf[25] = 0xe8;
			fx_put_le32(buf + 26, (uint32_t)(orig - (pc + 5)));
			memcpy(buf + 33, "\x0f\x1f\x44\x00\x00", 5);
		} else {
			/* cur: the compiler's NOPs where there are some; next: random-ish. */
			const struct slot_layout *l = slot_ops_for((enum slot_arch)arch)->layout;

			memcpy(buf + 25, l->compiled[0], l->slot_bytes);
			slot_build(slot_ops_for((enum slot_arch)arch), SLOT_ENABLED,
				   &(struct slot_ctx){ pc, orig, ours }, buf + 33, NULL);
		}
		snprintf(name, sizeof(name), "arch-%d", arch);
		put("slot", name, buf, sizeof(buf));
	}
}

int main(int argc, char **argv)
{
	uint8_t elf[2048];
	size_t n;

	if (argc != 2) {
		fprintf(stderr, "usage: make-seeds DIR\n");
		return 2;
	}
	top = argv[1];
	n = tiny_elf(elf, sizeof(elf));
	image_seeds(elf, n);
	sysmap_seeds(elf, n);
	raw_seeds();
	ring_seeds();
	control_seeds();
	compat_seeds();
	slot_seeds();
	return 0;
}
