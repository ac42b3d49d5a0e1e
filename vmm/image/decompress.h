/* SPDX-License-Identifier: GPL-2.0 */
/* Kernel payload decompression through the codec libraries. */
#ifndef VMM_DECOMPRESS_H
#define VMM_DECOMPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/util/error.h"

enum codec {
	CODEC_NONE,	/* not compressed (an ELF already) */
	CODEC_GZIP,
	CODEC_XZ,
	CODEC_ZSTD,
	CODEC_LZ4,	/* the kernel's lz4 "legacy" framing */
	CODEC_LZMA,	/* lzma-alone (.lzma) */
	CODEC_BZIP2,
	CODEC_LZO,	/* recognised, not supported */
	CODEC_UNKNOWN,
};

enum codec decompress_detect(const uint8_t *data, size_t len);
const char *decompress_codec_name(enum codec codec);

/*
 * Decompresses len bytes of in. size_hint (0 if unknown) sizes the first
 * output buffer, unless it is over 64 times len (not believed). Output
 * larger than max_out is refused. *out is malloc'ed.
 */
int decompress_buffer(enum codec codec, const uint8_t *in, size_t len,
		      size_t size_hint, size_t max_out, uint8_t **out,
		      size_t *out_len, struct errbuf *err);

#endif
