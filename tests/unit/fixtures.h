/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fixtures for the kernel payload tests, made at run time in a temporary
 * directory (never committed binaries): a vmlinux look-alike ELF written
 * here field by field, its payload compressed by each codec's command-line
 * tool as the kernel's scripts/Makefile.lib does it (the stream followed by
 * the decompressed size as le32, "size_append"), and a minimal bzImage
 * around a payload.
 *
 * Everything is static inline so a test that uses only part of it builds
 * without unused-function warnings.
 */
#ifndef TESTS_UNIT_FIXTURES_H
#define TESTS_UNIT_FIXTURES_H

#include <elf.h>
#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/image/decompress.h"

/* Where the fixture ELF's segments live: the kernel's own layout. */
#define FX_TEXT_VADDR	0xffffffff81000000ull
#define FX_TEXT_PADDR	0x1000000ull
#define FX_TEXT_OFF	0x1000ull
#define FX_DATA_SIZE	0x2000ull	/* file part of the data segment */
#define FX_BSS_SIZE	0x3000ull	/* memsz - filesz */
#define FX_ENTRY	FX_TEXT_PADDR	/* vmlinux's e_entry is physical */
#define FX_PHNUM	3		/* text, data+bss, a non-LOAD note */
#define FX_SHNUM	5		/* null, .text, .data, .bss, .shstrtab */

struct fx_buf {
	uint8_t *data;
	size_t len;
};

static inline void fx_free(struct fx_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = 0;
}

static inline uint64_t fx_data_vaddr(size_t text_size)
{
	return FX_TEXT_VADDR + text_size;
}

/*
 * Bytes that compress, but not to nothing: a counter pattern with an
 * xorshift word every 64 bytes, so a corrupted stream cannot decode to
 * the right content by luck.
 */
static inline void fx_fill(uint8_t *p, size_t len, uint32_t seed)
{
	uint32_t x = seed | 1;

	for (size_t i = 0; i < len; i++) {
		if (i % 64 == 0) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
		}
		p[i] = (uint8_t)(i % 64 < 4 ? x >> (8 * (i % 4)) : (i / 64 + i % 64) & 0xff);
	}
}

/*
 * A vmlinux-like ELF64 of exactly FX_TEXT_OFF + text_size + FX_DATA_SIZE
 * bytes (text_size a multiple of 4 KiB): headers and section headers in
 * the first page, then .text (R+X) and .data (RW, followed by .bss).
 */
static inline int fx_make_elf(size_t text_size, uint16_t machine, struct fx_buf *out)
{
	static const char shstr[] = "\0.text\0.data\0.bss\0.shstrtab";
	size_t len = FX_TEXT_OFF + text_size + FX_DATA_SIZE;
	uint64_t data_vaddr = fx_data_vaddr(text_size);
	uint8_t *d = calloc(1, len);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)d;
	Elf64_Phdr *ph;
	Elf64_Shdr *sh;
	size_t shoff = sizeof(*eh) + FX_PHNUM * sizeof(*ph);
	size_t stroff = shoff + FX_SHNUM * sizeof(*sh);

	if (!d || text_size % 4096)
		return free(d), -EINVAL;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_EXEC;
	eh->e_machine = machine;
	eh->e_version = EV_CURRENT;
	eh->e_entry = FX_ENTRY;
	eh->e_phoff = sizeof(*eh);
	eh->e_shoff = shoff;
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = FX_PHNUM;
	eh->e_shentsize = sizeof(*sh);
	eh->e_shnum = FX_SHNUM;
	eh->e_shstrndx = FX_SHNUM - 1;

	ph = (Elf64_Phdr *)(d + eh->e_phoff);
	ph[0] = (Elf64_Phdr){ PT_LOAD, PF_R | PF_X, FX_TEXT_OFF, FX_TEXT_VADDR, FX_TEXT_PADDR,
			      text_size, text_size, 0x200000 };
	ph[1] = (Elf64_Phdr){ PT_LOAD, PF_R | PF_W, FX_TEXT_OFF + text_size, data_vaddr,
			      FX_TEXT_PADDR + text_size, FX_DATA_SIZE, FX_DATA_SIZE + FX_BSS_SIZE,
			      0x1000 };
	/* Not loadable: lookups must skip it although it covers the text. */
	ph[2] = (Elf64_Phdr){ PT_NOTE, PF_R, FX_TEXT_OFF, FX_TEXT_VADDR, 0x7000000, 64, 64, 4 };

	sh = (Elf64_Shdr *)(d + shoff);
	sh[1] = (Elf64_Shdr){ 1, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, FX_TEXT_VADDR,
			      FX_TEXT_OFF, text_size, 0, 0, 4096, 0 };
	sh[2] = (Elf64_Shdr){ 7, SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, data_vaddr,
			      FX_TEXT_OFF + text_size, FX_DATA_SIZE, 0, 0, 4096, 0 };
	sh[3] = (Elf64_Shdr){ 13, SHT_NOBITS, SHF_ALLOC | SHF_WRITE, data_vaddr + FX_DATA_SIZE,
			      FX_TEXT_OFF + text_size + FX_DATA_SIZE, FX_BSS_SIZE, 0, 0, 4096, 0 };
	sh[4] = (Elf64_Shdr){ 18, SHT_STRTAB, 0, 0, stroff, sizeof(shstr), 0, 0, 1, 0 };
	memcpy(d + stroff, shstr, sizeof(shstr));

	fx_fill(d + FX_TEXT_OFF, text_size, 0x1234567);
	fx_fill(d + FX_TEXT_OFF + text_size, FX_DATA_SIZE, 0x89abcdef);
	out->data = d;
	out->len = len;
	return 0;
}

static inline void fx_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

static inline void fx_put_le16(uint8_t *p, uint16_t v)
{
	p[0] = v;
	p[1] = v >> 8;
}

static inline int fx_write(const char *path, const struct fx_buf *b)
{
	FILE *f = fopen(path, "wb");
	int ok;

	if (!f)
		return -errno;
	ok = !b->len || fwrite(b->data, 1, b->len, f) == b->len;
	ok &= fclose(f) == 0;
	return ok ? 0 : -EIO;
}

/* Reads a file into a malloc'ed buffer with `extra` spare bytes after it. */
static inline int fx_read(const char *path, size_t extra, struct fx_buf *out)
{
	struct stat st;
	FILE *f = fopen(path, "rb");
	uint8_t *d;

	if (!f)
		return -errno;
	if (fstat(fileno(f), &st) || !(d = malloc(st.st_size + extra + 1))) {
		fclose(f);
		return -EIO;
	}
	if (fread(d, 1, st.st_size, f) != (size_t)st.st_size) {
		fclose(f);
		free(d);
		return -EIO;
	}
	fclose(f);
	out->data = d;
	out->len = st.st_size;
	return 0;
}

/* The codecs the kernel builds bzImages with, and the tool lines it uses. */
static const struct fx_codec {
	enum codec codec;
	const char *name;
	const char *cmd;	/* filter: stdin -> stdout */
} fx_codecs[] = {
	{ CODEC_GZIP, "gzip", "gzip -n -9 -c" },
	/* xz_wrap.sh: crc32 check and the x86 BCJ filter (smaller dictionary here) */
	{ CODEC_XZ, "xz", "xz --check=crc32 --x86 --lzma2=dict=1MiB -c" },
	/* the kernel uses -22 --ultra; same frame format, much slower to make */
	{ CODEC_ZSTD, "zstd", "zstd -q -19 -c" },
	/* the legacy framing the kernel's unlz4 reads */
	{ CODEC_LZ4, "lz4", "lz4 -q -l -9 -c" },
	{ CODEC_LZMA, "lzma", "lzma -9 -c" },
	{ CODEC_BZIP2, "bzip2", "bzip2 -9 -c" },
};
#define FX_NCODECS (sizeof(fx_codecs) / sizeof(fx_codecs[0]))

/*
 * Compresses in with the codec's tool inside dir. out gets the stream
 * followed by le32(in->len) when size_append is set, as in a bzImage.
 */
static inline int fx_compress(const char *dir, const struct fx_codec *c,
			      const struct fx_buf *in, int size_append, struct fx_buf *out)
{
	char src[4096], dst[4096], cmd[8192 + 256];
	int rc;

	snprintf(src, sizeof(src), "%s/plain", dir);
	snprintf(dst, sizeof(dst), "%s/packed.%s", dir, c->name);
	if ((rc = fx_write(src, in)))
		return rc;
	snprintf(cmd, sizeof(cmd), "%s <'%s' >'%s'", c->cmd, src, dst);
	if (system(cmd) != 0) {
		fprintf(stderr, "fixture command failed: %s\n", cmd);
		return -EIO;
	}
	if ((rc = fx_read(dst, 4, out)))
		return rc;
	if (size_append) {
		fx_put_le32(out->data + out->len, (uint32_t)in->len);
		out->len += 4;
	}
	unlink(src);
	unlink(dst);
	return 0;
}

#define FX_BOOT_VERSION	0x020f
#define FX_HEAD_SIZE	0x180	/* stands in for the decompressor before the payload */
#define FX_TAIL_SIZE	0x240	/* and for what follows it */

/* Offsets of the setup header fields (Documentation/arch/x86/boot.rst). */
#define FX_SETUP_SECTS	0x1f1
#define FX_HDRS		0x202
#define FX_VERSION	0x206
#define FX_LOADFLAGS	0x211
#define FX_PAYLOAD_OFF	0x248
#define FX_PAYLOAD_LEN	0x24c

static inline size_t fx_pm_start(unsigned setup_sects)
{
	return ((size_t)(setup_sects ? setup_sects : 4) + 1) * 512;
}

/*
 * A bzImage that only the payload loader could love: boot sector and setup
 * header, setup_sects sectors of setup, then a protected-mode part holding
 * FX_HEAD_SIZE filler bytes, the payload and FX_TAIL_SIZE more.
 */
static inline int fx_make_bzimage(const struct fx_buf *payload, unsigned setup_sects,
				  struct fx_buf *out)
{
	size_t pm = fx_pm_start(setup_sects);
	size_t len = pm + FX_HEAD_SIZE + payload->len + FX_TAIL_SIZE;
	uint8_t *d = malloc(len);

	if (!d)
		return -ENOMEM;
	memset(d, 0xcc, len);
	memset(d, 0, pm);
	d[FX_SETUP_SECTS] = setup_sects;
	d[0x1fe] = 0x55;
	d[0x1ff] = 0xaa;
	memcpy(d + FX_HDRS, "HdrS", 4);
	fx_put_le16(d + FX_VERSION, FX_BOOT_VERSION);
	d[FX_LOADFLAGS] = 0x01;	/* LOADED_HIGH */
	fx_put_le32(d + FX_PAYLOAD_OFF, FX_HEAD_SIZE);
	fx_put_le32(d + FX_PAYLOAD_LEN, payload->len);
	memcpy(d + pm + FX_HEAD_SIZE, payload->data, payload->len);
	out->data = d;
	out->len = len;
	return 0;
}

static inline struct fx_buf fx_dup(const struct fx_buf *b)
{
	struct fx_buf c = { malloc(b->len ? b->len : 1), b->len };

	if (c.data)
		memcpy(c.data, b->data, b->len);
	else
		c.len = 0;
	return c;
}

static char fx_dir[4096];

static inline int fx_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static inline void fx_cleanup(void)
{
	if (fx_dir[0])
		nftw(fx_dir, fx_rm_one, 16, FTW_DEPTH | FTW_PHYS);
	fx_dir[0] = 0;
}

/* Makes the temporary directory, removed at exit. NULL on failure. */
static inline const char *fx_tmpdir(void)
{
	const char *base = getenv("TMPDIR");

	snprintf(fx_dir, sizeof(fx_dir), "%s/vmmtrace-fx.XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(fx_dir))
		return NULL;
	atexit(fx_cleanup);
	return fx_dir;
}

/* $VMMTRACE_CACHE as scripts/common.sh computes it. */
static inline void fx_cache_path(char *buf, size_t size, const char *name)
{
	const char *c = getenv("VMMTRACE_CACHE"), *x = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");

	if (c && *c)
		snprintf(buf, size, "%s/%s", c, name);
	else if (x && *x)
		snprintf(buf, size, "%s/vmmtrace/%s", x, name);
	else
		snprintf(buf, size, "%s/.cache/vmmtrace/%s", home ? home : "", name);
}

#endif
