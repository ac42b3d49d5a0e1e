// SPDX-License-Identifier: GPL-2.0
/*
 * Payload codecs on fixtures made by each codec's own tool: detection,
 * byte-identical round trips (with and without the kernel's trailing size
 * word), the output limit, and corrupt or cut streams, which must give an
 * error, never a crash or a success with wrong bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check.h"
#include "tests/unit/fixtures.h"
#include "vmm/image/decompress.h"

#define MAX_OUT (256u << 20)

static const char *dir;

/* Decompresses and compares; returns 1 when the output equals want. */
static int roundtrip(const struct fx_codec *c, const struct fx_buf *packed, size_t hint,
		     const struct fx_buf *want, const char *what)
{
	struct errbuf err = { "" };
	uint8_t *out = NULL;
	size_t out_len = 0;
	int rc, same;

	rc = decompress_buffer(c->codec, packed->data, packed->len, hint, MAX_OUT, &out, &out_len, &err);
	same = !rc && out_len == want->len && !memcmp(out, want->data, want->len);
	CHECK(same, "%s %s: round trip of %zu bytes (rc %d, %zu bytes out%s%s)", c->name, what,
	      want->len, rc, out_len, rc ? ": " : "", rc ? err.msg : "");
	free(out);
	return same;
}

/* A damaged stream must fail with a message and leave *out alone. */
static void expect_error(const struct fx_codec *c, const uint8_t *in, size_t len,
			 const struct fx_buf *orig, const char *what)
{
	struct errbuf err = { "" };
	uint8_t *out = (uint8_t *)&err;
	size_t out_len = 12345;
	int rc;

	rc = decompress_buffer(c->codec, in, len, orig->len, MAX_OUT, &out, &out_len, &err);
	CHECK(rc < 0 && err.msg[0] && out == (uint8_t *)&err && out_len == 12345,
	      "%s %s: rejected (rc %d: %s)", c->name, what, rc, err.msg);
	if (!rc) {
		if (out_len == orig->len && !memcmp(out, orig->data, orig->len))
			printf("INFO: %s %s decoded to the original bytes\n", c->name, what);
		free(out);
	}
}

static void test_detect(const struct fx_buf *elf, struct fx_buf packed[])
{
	static const uint8_t lzo[] = { 0x89, 'L', 'Z', 'O', 0, 0x0d, 0x0a, 0x1a, 0x0a };
	static const uint8_t gz1[] = { 0x1f };
	uint8_t rnd[256];

	for (size_t i = 0; i < FX_NCODECS; i++)
		CHECK(decompress_detect(packed[i].data, packed[i].len) == fx_codecs[i].codec,
		      "detect %s stream (got %s)", fx_codecs[i].name,
		      decompress_codec_name(decompress_detect(packed[i].data, packed[i].len)));
	CHECK(decompress_detect(elf->data, elf->len) == CODEC_NONE, "detect an ELF as uncompressed");
	CHECK(decompress_detect(lzo, sizeof(lzo)) == CODEC_LZO, "detect lzo");
	CHECK(decompress_detect(rnd, 0) == CODEC_UNKNOWN, "detect: empty input is unknown");
	CHECK(decompress_detect(gz1, 1) == CODEC_UNKNOWN, "detect: one byte of gzip magic is unknown");
	srand(7);
	for (size_t i = 0; i < sizeof(rnd); i++)
		rnd[i] = rand() >> 7;
	rnd[0] = 0x42;	/* not a magic's first byte */
	CHECK(decompress_detect(rnd, sizeof(rnd)) == CODEC_UNKNOWN, "detect: random bytes are unknown");
	CHECK(!strcmp(decompress_codec_name(CODEC_XZ), "xz") &&
	      !strcmp(decompress_codec_name(CODEC_LZ4), "lz4") &&
	      !strcmp(decompress_codec_name((enum codec)99), "unknown"), "codec names");
}

static void test_unsupported(const struct fx_buf *elf)
{
	struct errbuf err = { "" };
	uint8_t *out = NULL;
	size_t out_len = 0;
	int rc;

	rc = decompress_buffer(CODEC_LZO, elf->data, elf->len, 0, MAX_OUT, &out, &out_len, &err);
	CHECK(rc == -ENOTSUP && strstr(err.msg, "lzo") && !out, "lzo is refused with ENOTSUP (%s)", err.msg);
	rc = decompress_buffer(CODEC_UNKNOWN, elf->data, elf->len, 0, MAX_OUT, &out, &out_len, &err);
	CHECK(rc == -EINVAL && !out, "unknown codec is refused with EINVAL (%s)", err.msg);
	rc = decompress_buffer(CODEC_NONE, elf->data, elf->len, 0, MAX_OUT, &out, &out_len, NULL);
	CHECK(rc < 0 && !out, "CODEC_NONE is not a decompressor, and err may be NULL (rc %d)", rc);
}

/*
 * An .lzma header asking for a 4 GiB dictionary (tests/fuzz/seeds/image/
 * lzma-4g-dict, found by fuzz-image): liblzma would allocate it before
 * producing a byte; the decoder's memory limit refuses it instead.
 */
static void test_lzma_dict_bomb(void)
{
	static const uint8_t bomb[] = { 0x5d, 0x00, 0x00, 0x00, 0xff, 0x00, 0x00, 0x5d, 0x5d,
					0x5d, 0x5d, 0x4d, 0x5d, 0xfa, 0x9b, 0xff, 0x1f, 0x00 };
	struct errbuf err = { "" };
	uint8_t *out = NULL;
	size_t out_len = 0;
	int rc;

	rc = decompress_buffer(CODEC_LZMA, bomb, sizeof(bomb), 0, MAX_OUT, &out, &out_len, &err);
	CHECK(rc == -EINVAL && !out && strstr(err.msg, "decoder memory"),
	      "lzma: a 4 GiB dictionary is refused, not allocated (%s)", err.msg);
}

/* The same for zstd: an 8-byte frame header asking for a 2 GiB window
 * (tests/fuzz/seeds/image/zstd-2g-window). */
static void test_zstd_window_bomb(void)
{
	static const uint8_t bomb[] = { 0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xa8, 0xb5, 0xa9 };
	struct errbuf err = { "" };
	uint8_t *out = NULL;
	size_t out_len = 0;
	int rc;

	rc = decompress_buffer(CODEC_ZSTD, bomb, sizeof(bomb), 0, MAX_OUT, &out, &out_len, &err);
	CHECK(rc == -EINVAL && !out, "zstd: a 2 GiB window is refused, not allocated (%s)", err.msg);
}

static void test_codec(const struct fx_codec *c, const struct fx_buf *elf, const struct fx_buf *packed)
{
	struct fx_buf bare = { 0 }, bad;
	struct errbuf err = { "" };
	uint8_t *out = NULL;
	size_t out_len = 0, n = packed->len;
	int rc;

	roundtrip(c, packed, elf->len, elf, "with size word, exact hint");
	roundtrip(c, packed, 0, elf, "with size word, no hint");
	roundtrip(c, packed, 4096, elf, "with size word, small hint");
	roundtrip(c, packed, (size_t)MAX_OUT * 4, elf, "with size word, hint above the limit");
	if (fx_compress(dir, c, elf, 0, &bare)) {
		CHECK(0, "%s: compress the fixture", c->name);
		return;
	}
	roundtrip(c, &bare, 0, elf, "bare stream");

	/* The bare stream, so that only the limit can fail this. */
	rc = decompress_buffer(c->codec, bare.data, bare.len, 0, elf->len / 2, &out, &out_len, &err);
	CHECK(rc == -EFBIG && !out, "%s: output above max_out (%zu of %zu bytes) is refused (rc %d: %s)",
	      c->name, elf->len, elf->len / 2, rc, err.msg);
	if (!rc)
		free(out);
	out = NULL;
	fx_free(&bare);

	expect_error(c, packed->data, n / 2, elf, "cut in half");
	expect_error(c, packed->data, n - 40, elf, "without its last 40 bytes");
	expect_error(c, packed->data, 16, elf, "cut to 16 bytes");
	expect_error(c, packed->data, 4, elf, "cut to its magic");
	expect_error(c, packed->data, 0, elf, "empty");

	/* 0xff runs: an lz4 literal length that never ends, garbage elsewhere. */
	bad = fx_dup(packed);
	memset(bad.data + n / 3, 0xff, n / 3);
	expect_error(c, bad.data, n, elf, "with its middle third overwritten");
	fx_free(&bad);

	/* Random bytes after a valid header. */
	bad = fx_dup(packed);
	srand(11);
	for (size_t i = 24; i < n; i++)
		bad.data[i] = rand() >> 3;
	expect_error(c, bad.data, n, elf, "random after 24 bytes of header");
	fx_free(&bad);
}

/*
 * lz4's legacy framing has 8 MiB blocks: check a payload of several blocks,
 * and one that fills its last block exactly so that the kernel's trailing
 * size word directly follows a full block.
 */
static void test_lz4_blocks(void)
{
	static const size_t sizes[] = { (9u << 20), (16u << 20) };
	const struct fx_codec *lz4 = NULL;

	for (size_t i = 0; i < FX_NCODECS; i++)
		if (fx_codecs[i].codec == CODEC_LZ4)
			lz4 = &fx_codecs[i];
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct fx_buf elf = { 0 }, packed = { 0 };
		char what[64];

		if (fx_make_elf(sizes[i] - FX_TEXT_OFF - FX_DATA_SIZE, EM_X86_64, &elf) ||
		    fx_compress(dir, lz4, &elf, 1, &packed)) {
			CHECK(0, "lz4: make a %zu MiB fixture", sizes[i] >> 20);
			fx_free(&elf);
			continue;
		}
		snprintf(what, sizeof(what), "%zu MiB (%zu blocks), with size word", sizes[i] >> 20,
			 (sizes[i] + (8u << 20) - 1) / (8u << 20));
		roundtrip(lz4, &packed, elf.len, &elf, what);
		packed.len -= 4;
		snprintf(what, sizeof(what), "%zu MiB, bare stream", sizes[i] >> 20);
		roundtrip(lz4, &packed, elf.len, &elf, what);
		fx_free(&packed);
		fx_free(&elf);
	}
}

int main(void)
{
	struct fx_buf elf = { 0 }, packed[FX_NCODECS] = { { 0 } };

	dir = fx_tmpdir();
	CHECK(dir != NULL, "make a temporary directory");
	CHECK(fx_make_elf(256 << 10, EM_X86_64, &elf) == 0, "make the fixture ELF (%zu bytes)", elf.len);
	if (!dir || !elf.data)
		return 1;
	for (size_t i = 0; i < FX_NCODECS; i++)
		CHECK(fx_compress(dir, &fx_codecs[i], &elf, 1, &packed[i]) == 0,
		      "%s: compress the fixture with `%s` (%zu bytes)", fx_codecs[i].name,
		      fx_codecs[i].cmd, packed[i].len);
	for (size_t i = 0; i < FX_NCODECS; i++)
		if (!packed[i].data)
			return 1;

	test_detect(&elf, packed);
	test_unsupported(&elf);
	for (size_t i = 0; i < FX_NCODECS; i++)
		test_codec(&fx_codecs[i], &elf, &packed[i]);
	test_lz4_blocks();
	test_lzma_dict_bomb();
	test_zstd_window_bomb();

	for (size_t i = 0; i < FX_NCODECS; i++)
		fx_free(&packed[i]);
	fx_free(&elf);
	return check_exit();
}
