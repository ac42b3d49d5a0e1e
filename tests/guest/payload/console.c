// SPDX-License-Identifier: GPL-2.0
/*
 * The payload's console (COM1), its command line and its way out (the
 * i8042 reset line, which vmmtrace reports as a reboot: exit status 0).
 * Every function here has an fentry slot like the rest of the payload's C,
 * so `--trace '*'` covers them too.
 */
#include "tests/guest/payload/payload.h"

#define COM1        0x3f8
#define COM1_LSR    (COM1 + 5)
#define LSR_DR      0x01
#define LSR_THRE    0x20
#define I8042_CMD   0x64
#define I8042_RESET 0xfe
#define LINE_MAX    160

static inline void outb(uint16_t port, uint8_t v)
{
	asm volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint8_t inb(uint16_t port)
{
	uint8_t v;

	asm volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

void con_init(void)
{
	outb(COM1 + 1, 0);	/* no interrupts: the payload polls */
	outb(COM1 + 3, 3);	/* 8 data bits, no parity, one stop bit */
}

/* One CPU prints at a time; an exception handler that finds it taken waits a while, then prints anyway. */
static int con_lock;

static void con_write(const char *s, unsigned n)
{
	unsigned long spins = 0;

	while (__atomic_exchange_n(&con_lock, 1, __ATOMIC_ACQUIRE) && ++spins < 100000000)
		cpu_relax();
	for (unsigned i = 0; i < n; i++) {
		while (!(inb(COM1_LSR) & LSR_THRE))
			cpu_relax();
		outb(COM1, (uint8_t)s[i]);
	}
	__atomic_store_n(&con_lock, 0, __ATOMIC_RELEASE);
}

/* A byte from the host (vmmtrace feeds its stdin to COM1), or -1. */
int con_getc(void)
{
	return inb(COM1_LSR) & LSR_DR ? inb(COM1) : -1;
}

struct line {
	char buf[LINE_MAX];
	unsigned len;
};

static void line_putc(struct line *l, char c)
{
	if (l->len < LINE_MAX)
		l->buf[l->len++] = c;
}

static void line_number(struct line *l, unsigned long v, unsigned base)
{
	char digits[24];
	unsigned n = 0;

	do {
		digits[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	while (n)
		line_putc(l, digits[--n]);
}

/* printf's %s %c %d %u %x with an optional l; enough for result lines. */
void pr(const char *fmt, ...)
{
	struct line l = { .len = 0 };
	va_list ap;

	va_start(ap, fmt);
	for (const char *p = fmt; *p; p++) {
		int lng = 0;

		if (*p != '%') {
			line_putc(&l, *p);
			continue;
		}
		if (*++p == 'l') {
			lng = 1;
			p++;
		}
		switch (*p) {
		case 's':
			for (const char *s = va_arg(ap, const char *); *s; s++)
				line_putc(&l, *s);
			break;
		case 'c': line_putc(&l, (char)va_arg(ap, int)); break;
		case 'd': {
			long v = lng ? va_arg(ap, long) : va_arg(ap, int);

			if (v < 0) {
				line_putc(&l, '-');
				v = -v;
			}
			line_number(&l, (unsigned long)v, 10);
			break;
		}
		case 'u': line_number(&l, lng ? va_arg(ap, unsigned long) : va_arg(ap, unsigned), 10); break;
		case 'x': line_number(&l, lng ? va_arg(ap, unsigned long) : va_arg(ap, unsigned), 16); break;
		case '%': line_putc(&l, '%'); break;
		default: line_putc(&l, '?'); break;
		}
		if (!*p)
			break;
	}
	va_end(ap);
	con_write(l.buf, l.len);
}

NORETURN void reset(void)
{
	outb(I8042_CMD, I8042_RESET);
	for (;;)
		asm volatile("cli; hlt");
}

static int key_is(const char *word, const char *key, const char **value)
{
	while (*key && *word == *key) {
		word++;
		key++;
	}
	if (*key || *word != '=')
		return 0;
	*value = word + 1;
	return 1;
}

static unsigned long parse_number(const char *s)
{
	unsigned long v = 0;

	while (*s >= '0' && *s <= '9')
		v = v * 10 + (unsigned long)(*s++ - '0');
	return v;
}

/* vt.KEY=NUMBER words; vmmtrace's own words (console=ttyS0 ...) are skipped. */
void params_parse(const char *cmdline, struct params *p)
{
	static const struct {
		const char *key;
		unsigned long offset;
	} keys[] = {
		{ "vt.a", __builtin_offsetof(struct params, a) },
		{ "vt.b", __builtin_offsetof(struct params, b) },
		{ "vt.irqon", __builtin_offsetof(struct params, irqon) },
		{ "vt.ftrace", __builtin_offsetof(struct params, ftrace) },
		{ "vt.a2", __builtin_offsetof(struct params, a2) },
		{ "vt.b2", __builtin_offsetof(struct params, b2) },
		{ "vt.cpus", __builtin_offsetof(struct params, cpus) },
		{ "vt.loop", __builtin_offsetof(struct params, loop) },
		{ "vt.spin", __builtin_offsetof(struct params, spin) },
		{ "vt.hostile", __builtin_offsetof(struct params, hostile) },
		{ "vt.insncost", __builtin_offsetof(struct params, insncost) },
	};
	const char *s = cmdline, *value;

	memset(p, 0, sizeof(*p));
	while (s && *s) {
		while (*s == ' ')
			s++;
		for (unsigned i = 0; i < ARRAY_SIZE(keys); i++)
			if (key_is(s, keys[i].key, &value))
				*(unsigned long *)((char *)p + keys[i].offset) = parse_number(value);
		while (*s && *s != ' ')
			s++;
	}
}

/* The compiler may call these for struct copies, even freestanding. */
void *memcpy(void *dst, const void *src, unsigned long n)
{
	char *d = dst;
	const char *s = src;

	while (n--)
		*d++ = *s++;
	return dst;
}

void *memset(void *dst, int c, unsigned long n)
{
	char *d = dst;

	while (n--)
		*d++ = (char)c;
	return dst;
}
