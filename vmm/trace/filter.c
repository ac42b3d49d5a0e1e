// SPDX-License-Identifier: GPL-2.0
/*
 * ftrace-compatible function filters. A pattern is classified the way
 * ftrace classifies what is written to set_ftrace_filter: a '*' at the start
 * and/or the end makes a prefix, suffix or substring match on the rest, taken
 * literally; a '*' anywhere else, or any '?', '[' or '\', makes the whole
 * pattern a glob(7). Keeping the cheap forms cheap matters: filters run over
 * every one of the ~100,000 kernel symbols.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/trace/filter.h"

void filter_init(struct filter *f)
{
	memset(f, 0, sizeof(*f));
}

void filter_destroy(struct filter *f)
{
	for (size_t i = 0; i < f->count; i++)
		free(f->pats[i].search);
	free(f->pats);
	memset(f, 0, sizeof(*f));
}

static enum filter_kind classify(const char *p, size_t len, size_t *skip, size_t *keep)
{
	enum filter_kind kind = FILTER_FULL;

	*skip = 0;
	*keep = len;
	for (size_t i = 0; i < len; i++) {
		if (p[i] == '[' || p[i] == '?' || p[i] == '\\')
			return FILTER_GLOB;
		if (p[i] != '*')
			continue;
		if (i == 0) {
			kind = FILTER_END;	/* also for "*" alone: matches all */
		} else if (i == len - 1) {
			kind = kind == FILTER_END ? FILTER_MIDDLE : FILTER_FRONT;
			*keep = len - 1;
			break;
		} else {
			return FILTER_GLOB;
		}
	}
	if (kind == FILTER_END || kind == FILTER_MIDDLE)
		*skip = 1;
	return kind;
}

int filter_add(struct filter *f, const char *pattern, struct errbuf *err)
{
	const char *p = pattern;
	struct filter_pattern *fp;
	size_t skip, keep, len;
	int exclude = *p == '!';

	p += exclude;
	len = strlen(p);
	if (!len)
		return err_set(err, EINVAL, "empty filter pattern '%s'", pattern);
	if (isdigit((unsigned char)*p))
		return err_set(err, EINVAL, "filter '%s': selecting functions by index is not supported", pattern);
	if (strchr(p, ':'))
		return err_set(err, EINVAL, "filter '%s': ftrace filter commands (':mod:' and the like) are not supported", pattern);
	if (f->count == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 8;
		void *n = realloc(f->pats, cap * sizeof(*f->pats));

		if (!n)
			return err_set(err, ENOMEM, "out of memory");
		f->pats = n;
		f->cap = cap;
	}
	fp = &f->pats[f->count];
	fp->kind = classify(p, len, &skip, &keep);
	if (fp->kind == FILTER_GLOB)
		skip = 0, keep = len;
	fp->search = strndup(p + skip, keep - skip);
	if (!fp->search)
		return err_set(err, ENOMEM, "out of memory");
	fp->len = keep - skip;
	fp->exclude = exclude;
	f->count++;
	f->includes += !exclude;
	return 0;
}

int filter_add_list(struct filter *f, const char *patterns, struct errbuf *err)
{
	const char *p = patterns;

	while (*p) {
		size_t n;
		char *one;
		int rc;

		while (isspace((unsigned char)*p))
			p++;
		n = strcspn(p, " \t\r\n\v\f");
		if (!n)
			break;
		one = strndup(p, n);
		if (!one)
			return err_set(err, ENOMEM, "out of memory");
		rc = filter_add(f, one, err);
		free(one);
		if (rc)
			return rc;
		p += n;
	}
	return 0;
}

/* One [...] class at *pat (past the '['): 1 match, 0 no match, -1 malformed. */
static int class_match(const char **pat, unsigned char c)
{
	const char *p = *pat;
	int inverted = *p == '!', match = 0;
	unsigned char a, b;

	p += inverted;
	a = (unsigned char)*p++;
	do {
		if (!a)
			return -1;
		b = a;
		if (p[0] == '-' && p[1] != ']') {
			b = (unsigned char)p[1];
			if (!b)
				return -1;
			p += 2;
		}
		match |= a <= c && c <= b;
		a = (unsigned char)*p++;
	} while (a != ']');
	*pat = p;
	return match != inverted;
}

int filter_glob_match(const char *pat, const char *str)
{
	/* A later '*' supersedes an earlier one, so one backtrack point is enough. */
	const char *back_pat = NULL, *back_str = NULL;

	for (;;) {
		unsigned char c = (unsigned char)*str++, d = (unsigned char)*pat++;
		int m;

		if (d == '*') {
			if (!*pat)
				return 1;
			back_pat = pat;
			back_str = --str;
			continue;
		}
		if (d == '?') {
			m = c != 0;
		} else if (d == '[' && (m = class_match(&pat, c)) >= 0) {
			m = m && c;	/* "[!x]" must not match the end of the name */
		} else {
			if (d == '\\' && *pat)
				d = (unsigned char)*pat++;
			if (c == d && !d)
				return 1;
			m = c == d;
		}
		if (m)
			continue;
		if (!c || !back_pat)
			return 0;
		pat = back_pat;
		str = ++back_str;
	}
}

static int pattern_match(const struct filter_pattern *p, const char *name)
{
	size_t n;

	switch (p->kind) {
	case FILTER_FULL: return !strcmp(name, p->search);
	case FILTER_FRONT: return !strncmp(name, p->search, p->len);
	case FILTER_MIDDLE: return strstr(name, p->search) != NULL;
	case FILTER_END:
		n = strlen(name);
		return n >= p->len && !memcmp(name + n - p->len, p->search, p->len);
	case FILTER_GLOB: return filter_glob_match(p->search, name);
	}
	return 0;
}

int filter_match(const struct filter *f, const char *name)
{
	int included = f->includes == 0;

	for (size_t i = 0; i < f->count; i++) {
		const struct filter_pattern *p = &f->pats[i];

		if (p->exclude) {
			if (pattern_match(p, name))
				return 0;	/* set_ftrace_notrace wins */
		} else if (!included && pattern_match(p, name)) {
			included = 1;
		}
	}
	return included;
}

/* The text symbols at sym's address: [*first, *last). */
static void function_names(const struct symtab *tab, const struct symbol *sym,
			   const struct symbol **first, const struct symbol **last)
{
	const struct symbol *a = sym, *b = sym + 1, *end = tab->syms + tab->count;

	while (a > tab->syms && a[-1].addr == sym->addr)
		a--;
	while (b < end && b->addr == sym->addr)
		b++;
	*first = a;
	*last = b;
}

int filter_match_function(const struct filter *f, const struct symtab *tab, const struct symbol *sym)
{
	const struct symbol *first, *last;
	int included = f->includes == 0;

	function_names(tab, sym, &first, &last);
	for (size_t i = 0; i < f->count; i++) {
		const struct filter_pattern *p = &f->pats[i];

		if (!p->exclude && included)
			continue;
		for (const struct symbol *a = first; a < last; a++) {
			if (!symtab_is_text(a->type) || !pattern_match(p, symtab_name(tab, a)))
				continue;
			if (p->exclude)
				return 0;
			included = 1;
			break;
		}
	}
	return included;
}
