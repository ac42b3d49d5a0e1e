// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel payload codecs, each through its library: zlib, liblzma (xz and
 * lzma-alone), libzstd, liblz4, libbz2. Output grows geometrically up to
 * max_out, so a hostile stream cannot make us allocate without bound.
 */
#include <bzlib.h>
#include <errno.h>
#include <lz4.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "vmm/image/decompress.h"

/* The compression ratio beyond which a size hint is not believed. */
#define DECOMPRESS_MAX_RATIO 64

struct outbuf {
	uint8_t *data;
	size_t len, cap, max;
};

static int outbuf_grow(struct outbuf *o, size_t need, struct errbuf *err)
{
	size_t cap = o->cap ? o->cap : (o->max < (1 << 20) ? o->max : 1 << 20);
	uint8_t *p;

	if (need > o->max)
		return err_set(err, EFBIG, "decompressed payload exceeds %zu bytes", o->max);
	while (cap < need)
		cap = cap > o->max / 2 ? o->max : cap * 2;
	if (cap <= o->cap)
		return 0;
	p = realloc(o->data, cap);
	if (!p)
		return err_set(err, ENOMEM, "out of memory for %zu bytes of payload", cap);
	o->data = p;
	o->cap = cap;
	return 0;
}

enum codec decompress_detect(const uint8_t *d, size_t len)
{
	static const uint8_t elf[] = { 0x7f, 'E', 'L', 'F' };
	static const uint8_t xz[] = { 0xfd, '7', 'z', 'X', 'Z', 0 };
	static const uint8_t zstd[] = { 0x28, 0xb5, 0x2f, 0xfd };
	static const uint8_t lz4[] = { 0x02, 0x21, 0x4c, 0x18 };
	static const uint8_t lzo[] = { 0x89, 'L', 'Z', 'O' };

	if (len >= 4 && !memcmp(d, elf, 4))
		return CODEC_NONE;
	if (len >= 2 && d[0] == 0x1f && (d[1] == 0x8b || d[1] == 0x9e))
		return CODEC_GZIP;
	if (len >= 6 && !memcmp(d, xz, 6))
		return CODEC_XZ;
	if (len >= 4 && !memcmp(d, zstd, 4))
		return CODEC_ZSTD;
	if (len >= 4 && !memcmp(d, lz4, 4))
		return CODEC_LZ4;
	if (len >= 4 && !memcmp(d, lzo, 4))
		return CODEC_LZO;
	if (len >= 3 && d[0] == 'B' && d[1] == 'Z' && d[2] == 'h')
		return CODEC_BZIP2;
	/* lzma-alone: properties byte 0x5d (lc=3 lp=0 pb=2), as the kernel uses. */
	if (len >= 13 && d[0] == 0x5d && d[1] == 0 && d[2] == 0)
		return CODEC_LZMA;
	return CODEC_UNKNOWN;
}

const char *decompress_codec_name(enum codec codec)
{
	static const char *const names[] = {
		[CODEC_NONE] = "none", [CODEC_GZIP] = "gzip", [CODEC_XZ] = "xz",
		[CODEC_ZSTD] = "zstd", [CODEC_LZ4] = "lz4", [CODEC_LZMA] = "lzma",
		[CODEC_BZIP2] = "bzip2", [CODEC_LZO] = "lzo", [CODEC_UNKNOWN] = "unknown",
	};
	return codec <= CODEC_UNKNOWN ? names[codec] : "unknown";
}

static int inflate_gzip(const uint8_t *in, size_t len, struct outbuf *o, struct errbuf *err)
{
	z_stream z = { 0 };
	int ret, rc = 0;

	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return err_set(err, ENOMEM, "zlib initialisation failed");
	z.next_in = (Bytef *)in;
	z.avail_in = len > UINT32_MAX ? UINT32_MAX : (uInt)len;
	do {
		if (o->len == o->cap && (rc = outbuf_grow(o, o->cap + 1, err)))
			break;
		z.next_out = o->data + o->len;
		z.avail_out = (uInt)(o->cap - o->len);
		ret = inflate(&z, Z_NO_FLUSH);
		o->len = o->cap - z.avail_out;
		if (ret == Z_STREAM_END)
			break;
		if (ret != Z_OK && ret != Z_BUF_ERROR) {
			rc = err_set(err, EINVAL, "gzip payload is corrupt (%s)", z.msg ? z.msg : "zlib error");
			break;
		}
		if (ret == Z_BUF_ERROR && z.avail_in == 0) {
			rc = err_set(err, EINVAL, "gzip payload is truncated");
			break;
		}
	} while (1);
	inflateEnd(&z);
	return rc;
}

#define LZMA_MAX_DECODER_MEM (256ull << 20)

static int inflate_lzma(enum codec codec, const uint8_t *in, size_t len,
			struct outbuf *o, struct errbuf *err)
{
	lzma_stream s = LZMA_STREAM_INIT;
	lzma_ret ret;
	int rc = 0;

	/*
	 * liblzma allocates the dictionary the stream's header asks for, before
	 * any output: without a limit, 18 bytes of .lzma header get a 4 GiB
	 * malloc (found by tests/fuzz/fuzz-image.c). Kernel builds use at most
	 * 64 MiB (lzma -9; xz: 32 MiB), so 256 MiB refuses only hostile ones.
	 */
	ret = codec == CODEC_XZ ? lzma_stream_decoder(&s, LZMA_MAX_DECODER_MEM, 0)
				: lzma_alone_decoder(&s, LZMA_MAX_DECODER_MEM);
	if (ret != LZMA_OK)
		return err_set(err, ENOMEM, "liblzma initialisation failed");
	s.next_in = in;
	s.avail_in = len;
	do {
		if (o->len == o->cap && (rc = outbuf_grow(o, o->cap + 1, err)))
			break;
		s.next_out = o->data + o->len;
		s.avail_out = o->cap - o->len;
		/* LZMA_FINISH: the payload is all there is; a cut stream errors. */
		ret = lzma_code(&s, LZMA_FINISH);
		o->len = o->cap - s.avail_out;
		if (ret == LZMA_STREAM_END)
			break;
		if (ret == LZMA_MEMLIMIT_ERROR) {
			rc = err_set(err, EINVAL, "%s payload wants more than %u MiB of decoder memory",
				     decompress_codec_name(codec), (unsigned)(LZMA_MAX_DECODER_MEM >> 20));
			break;
		}
		if (ret != LZMA_OK && ret != LZMA_BUF_ERROR) {
			rc = err_set(err, EINVAL, "%s payload is corrupt (liblzma error %d)",
				     decompress_codec_name(codec), (int)ret);
			break;
		}
		if (ret == LZMA_BUF_ERROR && s.avail_in == 0 && s.avail_out) {
			rc = err_set(err, EINVAL, "%s payload is truncated", decompress_codec_name(codec));
			break;
		}
	} while (1);
	lzma_end(&s);
	return rc;
}

static int inflate_zstd(const uint8_t *in, size_t len, struct outbuf *o, struct errbuf *err)
{
	ZSTD_DStream *z = ZSTD_createDStream();
	ZSTD_inBuffer ib = { in, len, 0 };
	size_t ret = 1;
	int rc = 0;

	if (!z)
		return err_set(err, ENOMEM, "zstd initialisation failed");
	/* The build appends the decompressed size after the frame: not a frame. */
	ret = ZSTD_findFrameCompressedSize(in, len);
	if (!ZSTD_isError(ret))
		ib.size = ret;
	ret = 1;
	/*
	 * The kernel's zstd payloads use a window of up to 2^27 (zstd -22
	 * --ultra). libzstd allocates the window the frame header asks for
	 * before any output: at 2^31, 8 bytes of header got a 2 GiB malloc
	 * (found by tests/fuzz/fuzz-image.c). 2^28 is the 256 MiB lzma gets.
	 */
	ZSTD_DCtx_setParameter(z, ZSTD_d_windowLogMax, 28);
	while (ib.pos < ib.size || ret != 0) {
		ZSTD_outBuffer ob;

		if (o->len == o->cap && (rc = outbuf_grow(o, o->cap + 1, err)))
			break;
		ob = (ZSTD_outBuffer){ o->data + o->len, o->cap - o->len, 0 };
		ret = ZSTD_decompressStream(z, &ob, &ib);
		o->len += ob.pos;
		if (ZSTD_isError(ret)) {
			rc = err_set(err, EINVAL, "zstd payload is corrupt (%s)", ZSTD_getErrorName(ret));
			break;
		}
		if (ret == 0 && ib.pos == ib.size)
			break;
		if (ib.pos == ib.size && ob.pos < ob.size && ret != 0) {
			rc = err_set(err, EINVAL, "zstd payload is truncated");
			break;
		}
	}
	ZSTD_freeDStream(z);
	return rc;
}

/*
 * The kernel's lz4 payload is the "legacy" framing (magic 0x184c2102, then
 * blocks of <le32 compressed size><data>, each up to 8 MiB decompressed),
 * which liblz4's frame API does not read; the blocks are plain LZ4 blocks.
 */
static int inflate_lz4(const uint8_t *in, size_t len, struct outbuf *o, struct errbuf *err)
{
	const size_t block_max = 8 << 20;
	size_t pos = 4;
	int rc;

	/* The last 4 bytes are the size word mkpiggy appends, not a block. */
	while (len > pos && len - pos > 4) {
		uint32_t csize = in[pos] | in[pos + 1] << 8 | in[pos + 2] << 16 | (uint32_t)in[pos + 3] << 24;
		int n;

		pos += 4;
		if (csize == 0x184c2102)	/* concatenated stream */
			continue;
		if (csize > len - pos || csize > INT32_MAX)
			return err_set(err, EINVAL, "lz4 payload is truncated");
		if ((rc = outbuf_grow(o, o->len + block_max, err)))
			return rc;
		n = LZ4_decompress_safe((const char *)in + pos, (char *)o->data + o->len,
					(int)csize, (int)block_max);
		if (n < 0)
			return err_set(err, EINVAL, "lz4 payload is corrupt");
		o->len += n;
		pos += csize;
		if (n < (int)block_max)	/* a short block ends the stream */
			break;
	}
	if (o->len == 0)
		return err_set(err, EINVAL, "lz4 payload is empty or truncated");
	return 0;
}

static int inflate_bzip2(const uint8_t *in, size_t len, struct outbuf *o, struct errbuf *err)
{
	bz_stream s = { 0 };
	int ret, rc = 0;

	if (BZ2_bzDecompressInit(&s, 0, 0) != BZ_OK)
		return err_set(err, ENOMEM, "libbz2 initialisation failed");
	s.next_in = (char *)in;
	s.avail_in = len > UINT32_MAX ? UINT32_MAX : (unsigned int)len;
	do {
		if (o->len == o->cap && (rc = outbuf_grow(o, o->cap + 1, err)))
			break;
		s.next_out = (char *)o->data + o->len;
		s.avail_out = (unsigned int)(o->cap - o->len);
		ret = BZ2_bzDecompress(&s);
		o->len = o->cap - s.avail_out;
		if (ret == BZ_STREAM_END)
			break;
		if (ret != BZ_OK) {
			rc = err_set(err, EINVAL, "bzip2 payload is corrupt (libbz2 error %d)", ret);
			break;
		}
		if (s.avail_in == 0 && s.avail_out) {
			rc = err_set(err, EINVAL, "bzip2 payload is truncated");
			break;
		}
	} while (1);
	BZ2_bzDecompressEnd(&s);
	return rc;
}

int decompress_buffer(enum codec codec, const uint8_t *in, size_t len,
		      size_t size_hint, size_t max_out, uint8_t **out,
		      size_t *out_len, struct errbuf *err)
{
	struct outbuf o = { .max = max_out };
	int rc;

	/*
	 * A hint is trusted for the first allocation only up to what the
	 * payload could plausibly hold (kernels compress 3-10 times): a 2 KB
	 * payload claiming 400 MB got that much allocated at once (found by
	 * tests/fuzz/fuzz-image.c, a timeout under ASan). Past it, the output
	 * grows as it comes.
	 */
	if (size_hint && size_hint <= max_out && size_hint / DECOMPRESS_MAX_RATIO <= len &&
	    (rc = outbuf_grow(&o, size_hint, err)))
		return rc;
	switch (codec) {
	case CODEC_GZIP:
		rc = inflate_gzip(in, len, &o, err);
		break;
	case CODEC_XZ:
	case CODEC_LZMA:
		rc = inflate_lzma(codec, in, len, &o, err);
		break;
	case CODEC_ZSTD:
		rc = inflate_zstd(in, len, &o, err);
		break;
	case CODEC_LZ4:
		rc = inflate_lz4(in, len, &o, err);
		break;
	case CODEC_BZIP2:
		rc = inflate_bzip2(in, len, &o, err);
		break;
	case CODEC_LZO:
		rc = err_set(err, ENOTSUP, "lzo-compressed kernels are not supported (no lzo library dependency); use a vmlinux");
		break;
	default:
		rc = err_set(err, EINVAL, "payload compression format not recognised");
		break;
	}
	if (rc) {
		free(o.data);
		return rc;
	}
	*out = o.data;
	*out_len = o.len;
	return 0;
}
