/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Function filters with ftrace's glob syntax (set_ftrace_filter,
 * Documentation/trace/ftrace.rst): foo, foo*, *foo, *foo*, foo*bar and
 * glob(7) classes; a leading '!' excludes. Patterns combine as ftrace's two
 * filter files do: the includes are a union (none means every function) and
 * anything an exclude matches is removed, as set_ftrace_notrace does.
 */
#ifndef VMM_FILTER_H
#define VMM_FILTER_H

#include <stddef.h>

#include "vmm/image/symtab.h"
#include "vmm/util/error.h"

enum filter_kind {
	FILTER_FULL,		/* foo */
	FILTER_FRONT,		/* foo*: search is "foo" */
	FILTER_END,		/* *foo */
	FILTER_MIDDLE,		/* *foo* */
	FILTER_GLOB,		/* anything else: glob(7) on the whole pattern */
};

struct filter_pattern {
	char *search;		/* what is compared, per kind */
	size_t len;
	enum filter_kind kind;
	int exclude;
};

struct filter {
	struct filter_pattern *pats;
	size_t count, cap;
	size_t includes;
};

void filter_init(struct filter *f);
void filter_destroy(struct filter *f);

/* Adds one pattern; -EINVAL for an empty one, an index or a ':command'. */
int filter_add(struct filter *f, const char *pattern, struct errbuf *err);
/* Adds whitespace-separated patterns, as one write to set_ftrace_filter. */
int filter_add_list(struct filter *f, const char *patterns, struct errbuf *err);

/* Does the filter select name? */
int filter_match(const struct filter *f, const char *name);
/*
 * Does the filter select the function sym starts, by any of its names (the
 * text symbols at its address, e.g. sys_getpriority and
 * __se_sys_getpriority)? An include that matches one name selects it; an
 * exclude that matches one name removes it.
 */
int filter_match_function(const struct filter *f, const struct symtab *tab, const struct symbol *sym);
/* True when every name passes (no patterns at all). */
static inline int filter_selects_all(const struct filter *f)
{
	return f->count == 0;
}

/* glob(7) match of the whole string: ?, *, [a-z], [!a-z], backslash escapes. */
int filter_glob_match(const char *pattern, const char *str);

#endif
