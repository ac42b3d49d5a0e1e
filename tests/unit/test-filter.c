// SPDX-License-Identifier: GPL-2.0
/*
 * Filters against the rules of Documentation/trace/ftrace.rst:
 *   <match>*            functions that begin with <match>
 *   *<match>            functions that end with <match>
 *   *<match>*           functions that have <match> in it
 *   <match1>*<match2>   functions that begin with <match1> and end with <match2>
 * plus glob(7) (the kernel's glob_match: ?, [..], [!..], backslash), '!' to
 * exclude, and how several patterns combine.
 */
#include <errno.h>
#include <string.h>

#include "tests/unit/check.h"
#include "vmm/trace/filter.h"

static const char *const names[] = {
	"sys_nanosleep", "hrtimer_interrupt", "hrtimer_start", "hrtimer_start_range_ns",
	"hrtimer_cancel", "__hrtimer_run_queues", "mutex_lock", "mutex_unlock",
	"_raw_spin_lock", "spin_lock_irqsave", "start_kernel", "x86_64_start_kernel",
	"do_sys_open.constprop.0", "a*b", "vfs_read", "vfs_write", "ksys_read",
};
#define NNAMES (sizeof(names) / sizeof(names[0]))

/* The names the patterns select, as a space-separated list. */
static const char *select_names(const char *const *pats, unsigned npats)
{
	static char out[1024];
	struct filter f;
	struct errbuf err;

	filter_init(&f);
	out[0] = 0;
	for (unsigned i = 0; i < npats; i++)
		if (filter_add(&f, pats[i], &err)) {
			snprintf(out, sizeof(out), "error: %s", err.msg);
			filter_destroy(&f);
			return out;
		}
	for (unsigned i = 0; i < NNAMES; i++) {
		if (filter_match(&f, names[i])) {
			strcat(out, out[0] ? " " : "");
			strcat(out, names[i]);
		}
	}
	filter_destroy(&f);
	return out;
}

#define EXPECT(want, ...)                                                        \
	do {                                                                     \
		const char *const pats_[] = { __VA_ARGS__ };                     \
		const char *got_ = select_names(pats_, sizeof(pats_) / sizeof(pats_[0])); \
		CHECK(!strcmp(got_, want), "%s -> [%s]", #__VA_ARGS__, got_);    \
	} while (0)

static void check_forms(void)
{
	EXPECT("sys_nanosleep", "sys_nanosleep");
	EXPECT("", "nanosleep");
	EXPECT("hrtimer_interrupt hrtimer_start hrtimer_start_range_ns hrtimer_cancel", "hrtimer_*");
	EXPECT("mutex_lock _raw_spin_lock", "*_lock");
	EXPECT("mutex_lock mutex_unlock _raw_spin_lock spin_lock_irqsave", "*lock*");
	EXPECT("hrtimer_start hrtimer_start_range_ns", "hrtimer_*start*");
	EXPECT("hrtimer_start_range_ns", "hrtimer*_ns");
	EXPECT("start_kernel x86_64_start_kernel", "*start_kernel");
	EXPECT("sys_nanosleep do_sys_open.constprop.0 vfs_read vfs_write ksys_read", "*s_*");
	EXPECT("do_sys_open.constprop.0", "do_sys_open*");
	EXPECT("", "do_sys_open");
}

static void check_match_all(void)
{
	static const char all[] = "sys_nanosleep hrtimer_interrupt hrtimer_start hrtimer_start_range_ns "
		"hrtimer_cancel __hrtimer_run_queues mutex_lock mutex_unlock _raw_spin_lock "
		"spin_lock_irqsave start_kernel x86_64_start_kernel do_sys_open.constprop.0 a*b "
		"vfs_read vfs_write ksys_read";

	CHECK(!strcmp(select_names(NULL, 0), all), "no pattern selects everything");
	EXPECT(all, "*");
	EXPECT(all, "**");
}

static void check_globs(void)
{
	EXPECT("vfs_read", "vfs_re?d");
	EXPECT("vfs_read vfs_write", "vfs_[rw]*");
	EXPECT("vfs_write", "vfs_[!r]*");
	EXPECT("vfs_read vfs_write", "vfs_[q-x]*");
	EXPECT("a*b", "a\\*b");
	EXPECT("", "a\\*c");
	EXPECT("vfs_read ksys_read", "*s_r?ad");
	/* An unclosed '[' is an ordinary character, as in glob_match(). */
	EXPECT("", "vfs_[read");
	CHECK(filter_glob_match("[a-", "[a-") && filter_glob_match("*x[", "ax[") &&
	      !filter_glob_match("a?", "a") && filter_glob_match("a*b*c", "aXbYbZc") &&
	      filter_glob_match("[]]", "]") && !filter_glob_match("*a", "") && filter_glob_match("*", ""),
	      "glob(7) corner cases");
	/* An inverted class never matches the end of the name (the matcher
	 * once stepped past the NUL: fuzz-control found it). The extra NUL
	 * makes the old code answer 1 rather than read out of bounds. */
	static const char two_nuls[] = "a\0";
	CHECK(!filter_glob_match("a[!x]", two_nuls) && !filter_glob_match("a[!x]*", two_nuls) &&
	      !filter_glob_match("*[!a]", "a") && filter_glob_match("a[!x]", "ab"),
	      "[!..] does not match the end of the name");
}

static void check_combining(void)
{
	EXPECT("sys_nanosleep hrtimer_interrupt", "sys_nanosleep", "hrtimer_interrupt");
	EXPECT("hrtimer_interrupt hrtimer_start hrtimer_start_range_ns hrtimer_cancel mutex_lock mutex_unlock",
	       "hrtimer_*", "mutex_*");
	/* Excludes are removed whatever their position, as set_ftrace_notrace. */
	EXPECT("hrtimer_interrupt hrtimer_cancel", "hrtimer_*", "!hrtimer_start*");
	EXPECT("hrtimer_interrupt hrtimer_cancel", "!hrtimer_start*", "hrtimer_*");
	EXPECT("hrtimer_interrupt", "hrtimer_interrupt", "!*cancel", "hrtimer_cancel");
	/* Only excludes: everything else ("*_*_*" is a glob: two underscores or more). */
	EXPECT("sys_nanosleep hrtimer_interrupt hrtimer_start hrtimer_cancel start_kernel a*b",
	       "!*_*_*", "!vfs_*", "!ksys_read", "!mutex_*");
	EXPECT("", "*", "!*");
}

static void check_errors(void)
{
	struct filter f;
	struct errbuf err;

	filter_init(&f);
	CHECK(filter_add(&f, "", &err) == -EINVAL, "empty pattern: %s", err.msg);
	CHECK(filter_add(&f, "!", &err) == -EINVAL, "lone '!': %s", err.msg);
	CHECK(filter_add(&f, "12", &err) == -EINVAL && strstr(err.msg, "index"), "index form: %s", err.msg);
	CHECK(filter_add(&f, "write*:mod:ext3", &err) == -EINVAL && strstr(err.msg, "command"),
	      "filter commands: %s", err.msg);
	CHECK(f.count == 0, "nothing was added");
	CHECK(filter_add_list(&f, "  vfs_*\t!vfs_write  ksys_read ", &err) == 0 && f.count == 3 &&
	      filter_match(&f, "vfs_read") && !filter_match(&f, "vfs_write") && filter_match(&f, "ksys_read") &&
	      !filter_match(&f, "mutex_lock"), "a whitespace-separated list, as one write to set_ftrace_filter");
	filter_destroy(&f);
}

/* Select one function by one of its names (riscv64 6.12: sys_getpriority is __se_sys_getpriority). */
static int select_fn(struct symtab *tab, const char *pat, const char *pat2, const char *name)
{
	const struct symbol *s = symtab_find_name(tab, name);
	struct filter f;
	struct errbuf err;
	int r;

	filter_init(&f);
	if (filter_add(&f, pat, &err) || (pat2 && filter_add(&f, pat2, &err)) || !s) {
		filter_destroy(&f);
		return -1;
	}
	r = filter_match_function(&f, tab, s);
	filter_destroy(&f);
	return r;
}

static void check_aliases(void)
{
	struct symtab tab;
	int ok;

	symtab_init(&tab);
	ok = !symtab_add(&tab, 0x1000, 'T', "__pfx_sys_getpriority", 21) &&
	     !symtab_add(&tab, 0x1010, 'T', "sys_getpriority", 15) &&
	     !symtab_add(&tab, 0x1010, 'T', "__se_sys_getpriority", 20) &&
	     !symtab_add(&tab, 0x1010, 'd', "a_data_alias", 12) &&
	     !symtab_add(&tab, 0x1080, 'T', "vfs_read", 8) && !symtab_finish(&tab);
	CHECK(ok, "a table of aliases");
	if (!ok)
		goto out;
	CHECK(select_fn(&tab, "__se_sys_getpriority", NULL, "sys_getpriority") == 1,
	      "the function named by its other name (__se_sys_getpriority)");
	CHECK(select_fn(&tab, "*se_sys_get*", NULL, "sys_getpriority") == 1, "a glob on its other name");
	CHECK(select_fn(&tab, "sys_getpriority", NULL, "__se_sys_getpriority") == 1,
	      "from either symbol, by its first name");
	CHECK(select_fn(&tab, "sys_*", "!__se_*", "sys_getpriority") == 0,
	      "an exclude that matches one of its names removes it");
	CHECK(select_fn(&tab, "a_data_alias", NULL, "sys_getpriority") == 0,
	      "a data symbol at the same address is not one of its names");
	CHECK(select_fn(&tab, "__pfx_*", NULL, "sys_getpriority") == 0,
	      "the padding symbol before it is not one of its names");
	CHECK(select_fn(&tab, "*getpriority", NULL, "vfs_read") == 0, "another function is not selected");
	CHECK(select_fn(&tab, "!vfs_*", NULL, "sys_getpriority") == 1, "only excludes: every other function");
out:
	symtab_destroy(&tab);
}

int main(void)
{
	check_aliases();
	check_forms();
	check_match_all();
	check_globs();
	check_combining();
	check_errors();
	return check_exit();
}
