// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/trace.h"
#include "vmm/output/fnargs.h"

_Static_assert(KBTF_ARG_REGS == VT_REC_NARGS, "the stub records the registers ftrace prints");

struct fnargs_slot {
	uint64_t addr;			/* 0: empty */
	int known;			/* proto holds the BTF's prototype */
	struct kbtf_proto proto;
};

struct fnargs {
	pthread_mutex_t lock;
	struct kernel_btf *kb;
	struct fnargs_slot *slots;
	size_t cap, used;		/* cap: a power of two */
};

struct fnargs *fnargs_new(struct kernel_btf *kb)
{
	struct fnargs *fa = calloc(1, sizeof(*fa));

	if (!fa)
		return NULL;
	fa->cap = 256;
	fa->slots = calloc(fa->cap, sizeof(*fa->slots));
	if (!fa->slots) {
		free(fa);
		return NULL;
	}
	fa->kb = kb;
	pthread_mutex_init(&fa->lock, NULL);
	return fa;
}

void fnargs_free(struct fnargs *fa)
{
	if (!fa)
		return;
	pthread_mutex_destroy(&fa->lock);
	free(fa->slots);
	free(fa);
}

static size_t fnargs_hash(uint64_t addr)
{
	addr ^= addr >> 33;
	addr *= 0xff51afd7ed558ccdULL;
	return (size_t)(addr ^ (addr >> 33));
}

static struct fnargs_slot *fnargs_slot(struct fnargs *fa, uint64_t addr)
{
	size_t i = fnargs_hash(addr) & (fa->cap - 1);

	while (fa->slots[i].addr && fa->slots[i].addr != addr)
		i = (i + 1) & (fa->cap - 1);
	return &fa->slots[i];
}

/* A slot for addr, new or not; NULL when out of memory. */
static struct fnargs_slot *fnargs_insert(struct fnargs *fa, uint64_t addr)
{
	struct fnargs_slot *s;

	if ((fa->used + 1) * 2 > fa->cap) {
		struct fnargs_slot *old = fa->slots;
		size_t oldcap = fa->cap;

		fa->slots = calloc(oldcap * 2, sizeof(*fa->slots));
		if (!fa->slots) {
			fa->slots = old;
			return NULL;
		}
		fa->cap = oldcap * 2;
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].addr)
				*fnargs_slot(fa, old[i].addr) = old[i];
		free(old);
	}
	s = fnargs_slot(fa, addr);
	if (!s->addr) {
		s->addr = addr;
		s->known = 0;
		fa->used++;
	}
	return s;
}

int fnargs_lookup(struct fnargs *fa, uint64_t addr, const char *name, struct kbtf_proto *out)
{
	struct fnargs_slot *s;
	int known = 0;

	if (!fa || !addr)
		return 0;
	pthread_mutex_lock(&fa->lock);
	s = fnargs_slot(fa, addr);
	if (s->addr) {
		known = s->known;
		if (known)
			*out = s->proto;
	} else if (name && fa->kb && (s = fnargs_insert(fa, addr))) {
		/* Looked up once per function: a function the BTF does not know stays unknown. */
		s->known = kbtf_func_proto(fa->kb, name, &s->proto) == 0;
		known = s->known;
		if (known)
			*out = s->proto;
	}
	pthread_mutex_unlock(&fa->lock);
	return known;
}

int fnargs_add(struct fnargs *fa, uint64_t addr, const struct kbtf_proto *p)
{
	struct fnargs_slot *s;

	if (!addr)
		return 0;
	pthread_mutex_lock(&fa->lock);
	s = fnargs_insert(fa, addr);
	if (s) {
		s->known = 1;
		s->proto = *p;
	}
	pthread_mutex_unlock(&fa->lock);
	return s ? 0 : -ENOMEM;
}

/* The low `size` bytes of v, sign-extended when asked. */
static uint64_t fnargs_cut(uint64_t v, unsigned size, int sign)
{
	unsigned bits = size * 8;

	if (bits >= 64)
		return v;
	v &= (1ULL << bits) - 1;
	if (sign && (v >> (bits - 1)))
		v |= ~0ULL << bits;
	return v;
}

int fnargs_format(const struct kbtf_proto *p, const uint64_t *args, char *buf, size_t len)
{
	size_t n = 0;
	unsigned a = 0;

#define PUT(...) do { \
		int w_ = snprintf(buf + (n < len ? n : len), n < len ? len - n : 0, __VA_ARGS__); \
		n += w_ > 0 ? (size_t)w_ : 0; \
	} while (0)
	PUT("(");
	if (!p) {
		/* No prototype: the registers as they are. */
		for (unsigned i = 0; i < VT_REC_NARGS; i++)
			PUT("%s0x%" PRIx64, i ? ", " : "", args[i]);
		PUT(")");
		return (int)n;
	}
	for (unsigned i = 0; i < p->nparams; i++, a++) {
		const struct kbtf_param *q = &p->p[i];

		if (i)
			PUT(", ");
		if (a >= KBTF_ARG_REGS || i >= p->kept) {
			PUT("...");
			goto out;
		}
		if (*q->name)
			PUT("%s=", q->name);
		switch (q->kind) {
		case KBTF_ARG_SINT:
			PUT("%" PRId64, (int64_t)fnargs_cut(args[a], q->size, 1));
			break;
		case KBTF_ARG_UINT:
			PUT("0x%" PRIx64, fnargs_cut(args[a], q->size, 0));
			break;
		case KBTF_ARG_ENUM:
			if (q->is_signed)
				PUT("%" PRId64, (int64_t)fnargs_cut(args[a], q->size, 1));
			else
				PUT("%" PRIu64, fnargs_cut(args[a], q->size, 0));
			break;
		case KBTF_ARG_OTHER:
			PUT("(%s)[0x%" PRIx64, q->type, args[a]);
			for (unsigned x = 8; x < q->size; x += 8) {
				PUT(":");
				if (++a >= KBTF_ARG_REGS) {
					PUT("...]");
					goto out;
				}
				PUT("0x%" PRIx64, args[a]);
			}
			PUT("]");
			break;
		case KBTF_ARG_UNKNOWN:
			PUT("?");	/* and still the value, as ftrace does */
			__attribute__((fallthrough));
		default:
			PUT("0x%" PRIx64, args[a]);
			break;
		}
	}
	if (p->variadic)
		PUT("%s...", p->nparams ? ", " : "");
out:
	PUT(")");
#undef PUT
	return (int)n;
}

/*
 * Wire form: nparams, kept, variadic, then per kept parameter: kind, size,
 * is_signed, name length, name, type length, type.
 */
size_t fnargs_encode(const struct kbtf_proto *p, uint8_t *buf)
{
	uint8_t *q = buf;

	*q++ = p->nparams;
	*q++ = p->kept;
	*q++ = p->variadic;
	for (unsigned i = 0; i < p->kept && i < KBTF_ARG_REGS; i++) {
		const struct kbtf_param *r = &p->p[i];
		size_t nl = strnlen(r->name, sizeof(r->name) - 1), tl = strnlen(r->type, sizeof(r->type) - 1);

		*q++ = r->kind;
		*q++ = r->size;
		*q++ = r->is_signed;
		*q++ = (uint8_t)nl;
		memcpy(q, r->name, nl);
		q += nl;
		*q++ = (uint8_t)tl;
		memcpy(q, r->type, tl);
		q += tl;
	}
	return (size_t)(q - buf);
}

/* A name from a file: printable ASCII, no separators that would garble a line. */
static int fnargs_name_ok(const uint8_t *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] <= 0x20 || s[i] > 0x7e || s[i] == ',' || s[i] == '(' || s[i] == ')' || s[i] == '=')
			return 0;
	return 1;
}

size_t fnargs_decode(const uint8_t *buf, size_t len, struct kbtf_proto *p)
{
	const uint8_t *q = buf, *end = buf + len;

	memset(p, 0, sizeof(*p));
	if (len < 3)
		return 0;
	p->nparams = *q++;
	p->kept = *q++;
	p->variadic = *q++;
	if (p->kept > KBTF_ARG_REGS || p->kept > p->nparams || p->variadic > 1)
		return 0;
	for (unsigned i = 0; i < p->kept; i++) {
		struct kbtf_param *r = &p->p[i];
		size_t nl, tl;

		if (end - q < 4)
			return 0;
		r->kind = *q++;
		r->size = *q++;
		r->is_signed = *q++;
		nl = *q++;
		if (r->kind >= KBTF_ARG_KINDS || !r->size || r->is_signed > 1 || nl >= sizeof(r->name) ||
		    (size_t)(end - q) < nl + 1 || !fnargs_name_ok(q, nl))
			return 0;
		if (r->kind != KBTF_ARG_OTHER && r->size > 8)
			return 0;
		memcpy(r->name, q, nl);
		q += nl;
		tl = *q++;
		if (tl >= sizeof(r->type) || (size_t)(end - q) < tl || !fnargs_name_ok(q, tl))
			return 0;
		memcpy(r->type, q, tl);
		q += tl;
	}
	return (size_t)(q - buf);
}
