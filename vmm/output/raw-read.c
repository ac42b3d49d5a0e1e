// SPDX-License-Identifier: GPL-2.0
/*
 * Reads vmmtrace's raw chunks (proto/raw.h). The file is mapped and walked
 * once at open: every chunk's two checksums are verified, the header and
 * symbols are decoded, the good event chunks are remembered for replay.
 * Everything in the file is untrusted: lengths are bounded by the file,
 * varints by their chunk, counts by the bytes that could hold them.
 *
 * How a walk tells a cut from damage: the writer emits whole chunks, so a
 * kill leaves a prefix of one at the end: fewer bytes than a chunk header,
 * or a good header whose payload runs past the end. That is the cut. A
 * header that does not check out is damage (or, if only zero bytes follow,
 * the zero-filled tail a power cut leaves: a cut too); the walk then looks
 * for the next good header byte by byte. A good header over a bad payload
 * is damage of that chunk alone; its length, covered by the header's own
 * checksum, says where the next chunk starts.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "vmm/output/raw-decode.h"
#include "vmm/output/raw-read.h"
#include "vmm/output/raw.h"

struct raw_reader {
	const uint8_t *map;
	size_t size;
	struct trace_meta meta;
	char *kernel;
	struct symtab syms;
	uint64_t *event_offs;		/* the good event chunks, by file offset */
	size_t nevent, event_cap;
	struct fnargs *fnargs;		/* the prototypes the file holds (RAW_CHUNK_PROTOS) */
	struct ring_event *scratch;	/* one chunk's events, decoded before any is handed on */
	size_t scratch_cap;
	struct raw_read_report rep;
};

enum raw_check { RAW_OK, RAW_CUT, RAW_BAD_HEADER, RAW_BAD_PAYLOAD };

static enum raw_check raw_check_chunk(const struct raw_reader *r, uint64_t off, struct raw_chunk *c)
{
	if (r->size - off < sizeof(*c))
		return RAW_CUT;
	memcpy(c, r->map + off, sizeof(*c));
	if (c->magic != RAW_MAGIC || c->hdr_crc != raw_chunk_hdr_crc(c) || c->length > RAW_MAX_PAYLOAD)
		return RAW_BAD_HEADER;
	if (r->size - off - sizeof(*c) < c->length)
		return RAW_CUT;
	if (c->payload_crc != (uint32_t)crc32(0, r->map + off + sizeof(*c), c->length))
		return RAW_BAD_PAYLOAD;
	return RAW_OK;
}

static void raw_damage(struct raw_reader *r, uint64_t off, uint64_t bytes, const char *why)
{
	if (r->rep.ndamage < RAW_READ_MAX_DAMAGE)
		r->rep.damage[r->rep.ndamage++] = (struct raw_read_damage){ off, bytes, why };
	r->rep.damaged++;
}

static int raw_all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/* The next offset after off where a chunk header checks out, or the file's size. */
static uint64_t raw_resync(const struct raw_reader *r, uint64_t off)
{
	struct raw_chunk c;

	for (off++; off + sizeof(c) <= r->size; off++) {
		const uint8_t *p = memchr(r->map + off, RAW_MAGIC & 0xff, r->size - off);

		if (!p)
			break;
		off = (uint64_t)(p - r->map);
		if (off + sizeof(c) > r->size)
			break;
		if (raw_check_chunk(r, off, &c) != RAW_BAD_HEADER)
			return off;
	}
	return r->size;
}

static int raw_parse_header(struct raw_reader *r, const uint8_t *p, uint32_t len, struct errbuf *err,
			    const char *path)
{
	struct raw_header h;

	if (len < sizeof(h))
		return err_set(err, EINVAL, "%s: header chunk too short (%u bytes)", path, len);
	memcpy(&h, p, sizeof(h));
	if (h.kernel_len > len - sizeof(h))
		return err_set(err, EINVAL, "%s: header chunk's kernel path runs past it", path);
	r->kernel = h.kernel_len ? strndup((const char *)p + sizeof(h), h.kernel_len) : NULL;
	if (h.kernel_len && !r->kernel)
		return err_set(err, ENOMEM, "out of memory reading %s", path);
	r->meta.tsc_khz = h.tsc_khz;
	r->meta.tsc_base = h.tsc_base;
	r->meta.ncpus = h.ncpus;
	r->meta.kernel = r->kernel;
	r->meta.graph = !!(h.graph & RAW_GRAPH_ON);
	r->meta.graph_retval = !!(h.graph & RAW_GRAPH_RETVAL);
	r->meta.graph_depth = h.graph_depth < VT_SHADOW_FRAMES ? h.graph_depth : 0;
	return 0;
}

/*
 * Walks count inflated symbols; adds them to tab when not NULL. The reader
 * walks once without a table first, so a chunk that does not decode adds
 * nothing.
 */
static int raw_walk_symbols(const uint8_t *q, const uint8_t *end, uint32_t count, struct symtab *tab)
{
	uint64_t addr = 0, delta, n;
	char type;

	for (uint32_t i = 0; i < count; i++) {
		q = raw_get_varint(q, end, &delta);
		if (!q || q == end)
			return -EINVAL;
		addr += delta;
		type = (char)*q++;
		q = raw_get_varint(q, end, &n);
		if (!q || !n || n > (uint64_t)(end - q) || memchr(q, 0, n))
			return -EINVAL;
		if (tab && symtab_add(tab, addr, type, (const char *)q, n))
			return -ENOMEM;
		q += n;
	}
	return q == end ? 0 : -EINVAL;
}

/* Appends the symbols of one chunk to r->syms; -EINVAL when they do not decode. */
static int raw_parse_symbols(struct raw_reader *r, const uint8_t *p, uint32_t len)
{
	struct raw_symbols h;
	uint8_t *plain;
	uLongf size;
	int rc = -EINVAL;

	if (len < sizeof(h))
		return -EINVAL;
	memcpy(&h, p, sizeof(h));
	if (h.encoding != RAW_SYMS_ZLIB || h.stored != len - sizeof(h) || h.size > (1u << 30))
		return -EINVAL;
	plain = malloc(h.size ? h.size : 1);
	if (!plain)
		return -ENOMEM;
	size = h.size;
	if (uncompress(plain, &size, p + sizeof(h), h.stored) == Z_OK && size == h.size)
		rc = raw_walk_symbols(plain, plain + size, h.count, NULL);
	if (!rc)
		rc = raw_walk_symbols(plain, plain + size, h.count, &r->syms);
	free(plain);
	return rc;
}

static int raw_note_events(struct raw_reader *r, uint64_t off, const uint8_t *p, uint32_t len)
{
	struct raw_events h;

	if (len < sizeof(h))
		return -EINVAL;
	memcpy(&h, p, sizeof(h));
	if (r->nevent == r->event_cap) {
		size_t cap = r->event_cap ? 2 * r->event_cap : 256;
		uint64_t *n = realloc(r->event_offs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->event_offs = n;
		r->event_cap = cap;
	}
	r->event_offs[r->nevent++] = off;
	r->rep.event_chunks++;
	r->rep.events += h.count;
	return 0;
}

static void raw_note_trailer(struct raw_reader *r, const uint8_t *p, uint32_t len)
{
	struct raw_trailer t;

	memset(&t, 0, sizeof(t));
	memcpy(&t, p, len < sizeof(t) ? len : sizeof(t));
	r->rep.have_trailer = 1;
	r->rep.stats.events = t.events;
	r->rep.stats.dropped_stub = t.dropped_stub;
	r->rep.stats.lost = t.lost;
	r->rep.have_phase = !!(t.flags & RAW_TRAILER_PHASE);
	r->rep.early_events = t.early_events;
	r->rep.ftrace_init_tsc = t.ftrace_init_tsc;
}

/* A prototypes chunk (proto/raw.h); -EINVAL when it does not decode whole. */
static int raw_parse_protos(struct raw_reader *r, const uint8_t *p, uint32_t len)
{
	const uint8_t *end = p + len;
	uint32_t count;

	if (len < 4)
		return -EINVAL;
	memcpy(&count, p, 4);
	p += 4;
	if (count > len / 11)	/* each takes at least 8 + 3 bytes */
		return -EINVAL;
	for (uint32_t i = 0; i < count; i++) {
		struct kbtf_proto proto;
		uint64_t addr;
		size_t n;

		if (end - p < 8)
			return -EINVAL;
		memcpy(&addr, p, 8);
		p += 8;
		if (!(n = fnargs_decode(p, (size_t)(end - p), &proto)))
			return -EINVAL;
		p += n;
		if (fnargs_add(r->fnargs, addr, &proto))
			return -ENOMEM;
	}
	return p == end ? 0 : -EINVAL;
}

/* One good chunk after the header: by its type. -ENOMEM only. */
static int raw_take_chunk(struct raw_reader *r, uint64_t off, const struct raw_chunk *c)
{
	const uint8_t *p = r->map + off + sizeof(*c);
	int rc = 0;

	switch (c->type) {
	case RAW_CHUNK_SYMBOLS:
		rc = raw_parse_symbols(r, p, c->length);
		if (!rc)
			r->rep.have_symbols = 1;
		break;
	case RAW_CHUNK_EVENTS:
		rc = raw_note_events(r, off, p, c->length);
		break;
	case RAW_CHUNK_TRAILER:
		raw_note_trailer(r, p, c->length);
		break;
	case RAW_CHUNK_PROTOS:
		rc = raw_parse_protos(r, p, c->length);
		break;
	case RAW_CHUNK_HEADER:
		rc = -EINVAL;	/* a second header: not from our writer */
		break;
	default:
		r->rep.unknown_chunks++;
		break;
	}
	if (rc == -ENOMEM)
		return rc;
	if (rc) {
		raw_damage(r, off, sizeof(*c) + c->length, "contents do not decode");
		return 0;
	}
	r->rep.chunks++;
	return 0;
}

/* Walks the chunks after the header chunk; -ENOMEM only. */
static int raw_walk(struct raw_reader *r, uint64_t off, uint64_t next_seq)
{
	struct raw_chunk c;
	uint64_t to;
	int rc;

	while (off < r->size) {
		switch (raw_check_chunk(r, off, &c)) {
		case RAW_OK:
			if (c.seq > next_seq)
				r->rep.missing_chunks += c.seq - next_seq;
			next_seq = c.seq + 1;
			rc = raw_take_chunk(r, off, &c);
			if (rc)
				return rc;
			off += sizeof(c) + c.length;
			break;
		case RAW_CUT:
			r->rep.cut = 1;
			r->rep.cut_offset = off;
			r->rep.cut_bytes = r->size - off;
			return 0;
		case RAW_BAD_PAYLOAD:
			raw_damage(r, off, sizeof(c) + c.length, "payload checksum");
			next_seq = c.seq + 1;
			off += sizeof(c) + c.length;
			break;
		case RAW_BAD_HEADER:
			if (raw_all_zero(r->map + off, r->size - off)) {
				r->rep.cut = 1;
				r->rep.cut_offset = off;
				r->rep.cut_bytes = r->size - off;
				return 0;
			}
			to = raw_resync(r, off);
			raw_damage(r, off, to - off, "header checksum");
			off = to;
			break;
		}
	}
	return 0;
}

static int raw_map(struct raw_reader *r, const char *path, struct errbuf *err)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *m;

	if (fd < 0)
		return err_set(err, errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return err_set(err, EINVAL, "%s: not a regular file", path);
	}
	if (st.st_size == 0) {
		close(fd);
		return err_set(err, ENODATA, "%s: empty file, not a vmmtrace raw trace", path);
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return err_set(err, errno, "%s: mmap: %s", path, strerror(errno));
	r->map = m;
	r->size = (size_t)st.st_size;
	r->rep.file_size = r->size;
	return 0;
}

/* The header chunk at offset 0: what makes the file readable at all. */
static int raw_open_header(struct raw_reader *r, const char *path, struct errbuf *err)
{
	struct raw_chunk c = { 0 };
	uint32_t magic = 0;

	memcpy(&magic, r->map, r->size < 4 ? r->size : 4);
	if (r->size < 4 && !memcmp(&magic, &(uint32_t){ RAW_MAGIC }, r->size))
		return err_set(err, EINVAL, "%s: cut before the end of its header chunk (%zu bytes)",
			       path, r->size);
	if (magic != RAW_MAGIC)
		return err_set(err, EINVAL, "%s: not a vmmtrace raw trace (no VTR1 magic at offset 0)", path);
	/* Before the checksums: a newer version may have laid its header out otherwise. */
	memcpy(&c, r->map, r->size < sizeof(c) ? r->size : sizeof(c));
	if (r->size >= 6 && c.version > RAW_VERSION)
		return err_set(err, EPROTONOSUPPORT, "%s: raw format version %u is newer than this vmmtrace reads (%u)",
			       path, c.version, RAW_VERSION);
	switch (raw_check_chunk(r, 0, &c)) {
	case RAW_CUT:
		return err_set(err, EINVAL, "%s: cut before the end of its header chunk (%zu bytes)",
			       path, r->size);
	case RAW_BAD_HEADER:
	case RAW_BAD_PAYLOAD:
		return err_set(err, EINVAL, "%s: header chunk damaged at offset 0 (checksum)", path);
	case RAW_OK:
		break;
	}
	if (c.type != RAW_CHUNK_HEADER)
		return err_set(err, EINVAL, "%s: first chunk is of type %u, not the header", path, c.type);
	r->rep.chunks = 1;
	return raw_parse_header(r, r->map + sizeof(c), c.length, err, path);
}

int raw_read_open(struct raw_reader **out, const char *path, struct errbuf *err)
{
	struct raw_reader *r = calloc(1, sizeof(*r));
	struct raw_chunk c;
	int rc;

	if (r && !(r->fnargs = fnargs_new(NULL))) {
		free(r);
		r = NULL;
	}
	if (!r)
		return err_set(err, ENOMEM, "out of memory reading %s", path);
	r->meta.fnargs = r->fnargs;	/* events recorded with --args carry VT_REC_FLAG_ARGS */
	symtab_init(&r->syms);
	rc = raw_map(r, path, err);
	if (!rc)
		rc = raw_open_header(r, path, err);
	if (!rc) {
		memcpy(&c, r->map, sizeof(c));
		rc = raw_walk(r, sizeof(c) + c.length, 1);
		if (rc)
			err_set(err, -rc, "out of memory reading %s", path);
	}
	if (!rc && r->rep.have_symbols) {
		rc = symtab_finish(&r->syms);
		if (rc)
			err_set(err, -rc, "out of memory for the symbols of %s", path);
		r->meta.syms = &r->syms;
	}
	if (rc) {
		raw_read_close(r);
		return rc;
	}
	*out = r;
	return 0;
}

void raw_read_close(struct raw_reader *r)
{
	if (!r)
		return;
	if (r->map)
		munmap((void *)r->map, r->size);
	symtab_destroy(&r->syms);
	fnargs_free(r->fnargs);
	free(r->kernel);
	free(r->event_offs);
	free(r->scratch);
	free(r);
}

const struct trace_meta *raw_read_meta(const struct raw_reader *r)
{
	return &r->meta;
}

const struct raw_read_report *raw_read_report(const struct raw_reader *r)
{
	return &r->rep;
}

/* Decodes the event chunk at off into r->scratch; the count, or -EINVAL/-ENOMEM. */
static long raw_decode_chunk(struct raw_reader *r, uint64_t off)
{
	struct raw_chunk c;
	struct raw_events h;
	const uint8_t *p, *end;

	memcpy(&c, r->map + off, sizeof(c));
	p = r->map + off + sizeof(c);
	end = p + c.length;
	memcpy(&h, p, sizeof(h));
	p += sizeof(h);
	/* Every record takes at least 2 bytes: a count beyond that is damage. */
	if (h.count > (uint64_t)(end - p) / 2)
		return -EINVAL;
	if (h.count > r->scratch_cap) {
		struct ring_event *s = realloc(r->scratch, h.count * sizeof(*s));

		if (!s)
			return -ENOMEM;
		r->scratch = s;
		r->scratch_cap = h.count;
	}
	return raw_decode_records(p, end, h.count, c.version, r->scratch, &r->rep.skipped_records);
}

int raw_read_replay(struct raw_reader *r, raw_event_fn *fn, void *opaque)
{
	for (size_t i = 0; i < r->nevent; i++) {
		long n = raw_decode_chunk(r, r->event_offs[i]);
		int rc;

		if (n == -ENOMEM)
			return -ENOMEM;
		if (n < 0) {
			struct raw_chunk c;

			struct raw_events h;

			memcpy(&c, r->map + r->event_offs[i], sizeof(c));
			memcpy(&h, r->map + r->event_offs[i] + sizeof(c), sizeof(h));
			raw_damage(r, r->event_offs[i], sizeof(c) + c.length, "events do not decode");
			r->rep.chunks--;
			r->rep.event_chunks--;
			r->rep.events -= h.count;
			/* Decoded once: drop it so a second replay neither sees nor counts it again. */
			memmove(&r->event_offs[i], &r->event_offs[i + 1], (r->nevent - i - 1) * sizeof(uint64_t));
			r->nevent--;
			i--;
			continue;
		}
		for (long k = 0; k < n; k++) {
			rc = fn(opaque, &r->scratch[k]);
			if (rc)
				return rc;
		}
	}
	return 0;
}

struct raw_convert {
	const struct trace_writer_ops *ops;
	struct trace_writer *w;
	uint64_t events;
};

static int raw_convert_event(void *opaque, const struct ring_event *ev)
{
	struct raw_convert *cv = opaque;

	cv->events++;
	return cv->ops->event(cv->w, ev);
}

int raw_read_convert(struct raw_reader *r, const struct trace_writer_ops *ops, FILE *out,
		     struct errbuf *err)
{
	struct raw_convert cv = { .ops = ops };
	struct trace_stats st;
	int rc, rc2;

	rc = ops->open(&cv.w, out, &r->meta, err);
	if (rc)
		return rc;
	rc = raw_read_replay(r, raw_convert_event, &cv);
	if (rc)
		err_set(err, -rc, "converting to %s: %s", ops->name, strerror(-rc));
	st = r->rep.stats;
	st.events = cv.events;
	rc2 = ops->close(cv.w, &st, rc ? NULL : err);
	return rc ? rc : rc2;
}
