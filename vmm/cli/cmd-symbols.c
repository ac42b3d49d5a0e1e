// SPDX-License-Identifier: GPL-2.0
/*
 * vmmtrace symbols: the kernel's functions and patchable slots, from the
 * image alone (kallsyms recovered from .rodata) or from symbols the user
 * gives (--system-map, an unstripped vmlinux), checked against each other.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arch/slot.h"
#include "vmm/cli/cmd.h"
#include "vmm/guest/guest.h"
#include "vmm/trace/filter.h"
#include "vmm/image/image.h"
#include "vmm/image/kallsyms.h"
#include "vmm/util/log.h"
#include "vmm/image/mcount.h"
#include "vmm/image/symtab.h"
#include "vmm/image/sysmap.h"
#include "vmm/trace/task.h"

struct symbols_opts {
	const char *kernel;
	const char *sysmap;
	const char *btf;
	int slots;
	int tasks;
	int args;
	int functions;
	int verbose;
	struct filter filter;
};

/* Everything one run holds, released by symbols_release(). */
struct symbols_run {
	struct kernel_image img;
	struct symtab kallsyms, given;
	struct kallsyms_layout layout;
	struct mcount_table mcount;
	const struct symtab *tab;	/* the table in use */
	const char *source;
	int have_kallsyms, have_given, have_mcount;
	char kallsyms_why[512], mcount_why[512];
	double t_open, t_symbols, t_mcount;
};

static const char symbols_usage[] =
	"usage: vmmtrace symbols KERNEL [GLOB...] [options]\n"
	"  KERNEL             a bzImage, an arm64 or riscv64 Image (or Image.gz), or a\n"
	"                     vmlinux; symbols come from the kallsyms\n"
	"                     tables in the image, or from its .symtab if it has one\n"
	"  GLOB               ftrace filter patterns: foo, foo*, *foo, *foo*, foo*bar,\n"
	"                     !pattern to exclude (default: everything)\n"
	"  --slots            list the patchable entry slots: address, function,\n"
	"                     current bytes and state (original, disabled,\n"
	"                     enabled-elsewhere, unknown)\n"
	"  --functions        list only functions that have a slot (what ftrace's\n"
	"                     available_filter_functions lists)\n"
	"  --system-map FILE  use these symbols (a System.map or /proc/kallsyms copy)\n"
	"                     and report where they disagree with the image's kallsyms\n"
	"  --tasks            instead of symbols, where the tracer finds the task and\n"
	"                     context of a call: per-CPU offsets, task_struct members\n"
	"                     from the kernel's BTF (docs/TASKS.md)\n"
	"  --args             instead of symbols, the parameters --args prints for each\n"
	"                     traceable function: name=kind (ptr, sintN, uintN, enumN,\n"
	"                     senumN, KIND/N for what ftrace shows in words), from BTF\n"
	"  --btf FILE         the kernel's types from FILE (raw BTF or an ELF with\n"
	"                     .BTF) instead of the image's .BTF section\n"
	"  -v, --verbose      timings and table addresses on stderr\n";

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* 0, -1 after --help, or an exit status. */
static int symbols_parse(int argc, char **argv, struct symbols_opts *o)
{
	static const struct option longopts[] = {
		{ "slots", no_argument, NULL, 's' },
		{ "functions", no_argument, NULL, 'f' },
		{ "system-map", required_argument, NULL, 'm' },
		{ "tasks", no_argument, NULL, 'T' },
		{ "args", no_argument, NULL, 'A' },
		{ "btf", required_argument, NULL, 'B' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct errbuf err;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (c) {
		case 's': o->slots = 1; break;
		case 'f': o->functions = 1; break;
		case 'm': o->sysmap = optarg; break;
		case 'T': o->tasks = 1; break;
		case 'A': o->args = 1; break;
		case 'B': o->btf = optarg; break;
		case 'v': o->verbose++; break;
		case 'h': fputs(symbols_usage, stdout); return -1;
		default:
			return cmd_fail("symbols", EXIT_BAD_INPUT,
					"unknown or incomplete option '%s' (see --help)",
					argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cmd_fail("symbols", EXIT_BAD_INPUT, "KERNEL is missing (see --help)");
	o->kernel = argv[optind++];
	for (; optind < argc; optind++)
		if (filter_add(&o->filter, argv[optind], &err))
			return cmd_fail("symbols", EXIT_BAD_INPUT, "%s", err.msg);
	return 0;
}

static void report_diff(const char *what, const struct symtab *given, const struct symtab *ks)
{
	struct symtab_diff d;

	if (symtab_compare(given, ks, &d))
		return;
	if (!symtab_diff_disagreements(&d)) {
		log_info("%s agrees with the image's kallsyms (%zu symbols; %zu per-cpu typed 'A' there; %zu only in %s)",
			 what, d.same + d.percpu_abs, d.percpu_abs, d.ref_only, what);
		return;
	}
	fprintf(stderr, "vmmtrace symbols: warning: %s disagrees with the image's kallsyms: %zu of %zu recovered symbols differ (%zu absent, %zu at other addresses, %zu of other types)\n",
		what, symtab_diff_disagreements(&d), ks->count, d.missing, d.addr_differs, d.type_differs);
	for (size_t i = 0; i < d.nexamples; i++)
		fprintf(stderr, "vmmtrace symbols:   %s\n", d.examples[i]);
}

static int load_given(struct symbols_opts *o, struct symbols_run *run)
{
	struct errbuf err;
	int rc;

	if (o->sysmap) {
		rc = sysmap_read_file(o->sysmap, &run->given, &err);
		if (rc)
			return cmd_fail("symbols", EXIT_BAD_INPUT, "%s", err.msg);
		run->source = o->sysmap;
		run->have_given = 1;
	} else if (!run->img.is_bzimage) {
		rc = sysmap_read_elf(&run->img.elf, &run->given, &err);
		if (rc == -ENOENT)
			return 0;
		if (rc)
			return cmd_fail("symbols", EXIT_BAD_INPUT, "%s: %s", o->kernel, err.msg);
		run->source = ".symtab";
		run->have_given = 1;
	}
	if (run->have_given && symtab_finish(&run->given))
		return cmd_fail("symbols", EXIT_BAD_INPUT, "out of memory");
	return 0;
}

static int load_symbols(struct symbols_opts *o, struct symbols_run *run)
{
	struct errbuf err;
	int rc;

	rc = kallsyms_recover(&run->img.elf, &run->kallsyms, &run->layout, &err);
	/* What a relocatable arm64 Image's relocations say of data symbols kallsyms lacks (image.h). */
	if (!rc && (image_add_recovered(&run->img, &run->kallsyms) < 0 || symtab_finish(&run->kallsyms)))
		return cmd_fail("symbols", EXIT_BAD_INPUT, "out of memory");
	run->have_kallsyms = !rc;
	if (rc)
		snprintf(run->kallsyms_why, sizeof(run->kallsyms_why), "%s", err.msg);
	rc = load_given(o, run);
	if (rc)
		return rc;
	if (!run->have_given && !run->have_kallsyms)
		return cmd_fail("symbols", EXIT_BAD_INPUT, "%s: %s; give the kernel's symbols with --system-map FILE (or use its unstripped vmlinux)",
				    o->kernel, run->kallsyms_why);
	if (run->have_given && run->have_kallsyms)
		report_diff(run->source, &run->given, &run->kallsyms);
	else if (run->have_given)
		fprintf(stderr, "vmmtrace symbols: note: %s is used unchecked: %s\n",
			run->source, run->kallsyms_why);
	run->tab = run->have_given ? &run->given : &run->kallsyms;
	if (!run->have_given)
		run->source = "kallsyms";
	return 0;
}

static void print_symbol(const struct symtab *tab, const struct symbol *s)
{
	printf("%016llx %c %s\n", (unsigned long long)s->addr, s->type, symtab_name(tab, s));
}

/* Symbols (or, with --functions, functions with a slot) that pass the filter. */
static size_t print_symbols(const struct symbols_opts *o, const struct symbols_run *run)
{
	const struct symtab *tab = run->tab;
	size_t shown = 0;

	if (o->functions) {
		const struct symbol *last = NULL;

		for (size_t i = 0; i < run->mcount.count; i++) {
			const struct symbol *f = run->mcount.slots[i].func;

			if (f && f != last && filter_match_function(&o->filter, tab, f)) {
				print_symbol(tab, f);
				shown++;
			}
			last = f ? f : last;
		}
		return shown;
	}
	for (size_t i = 0; i < tab->count; i++) {
		if (filter_match(&o->filter, symtab_name(tab, &tab->syms[i]))) {
			print_symbol(tab, &tab->syms[i]);
			shown++;
		}
	}
	return shown;
}

/* One line per traceable function matching the globs: its parameters as --args reads them. */
static size_t print_args(const struct symbols_opts *o, const struct symbols_run *run, struct kernel_btf *kb)
{
	static const char *const kinds[] = { "?", "ptr", "sint", "uint", "enum", "" };
	const struct symtab *tab = run->tab;
	const struct symbol *last = NULL;
	size_t shown = 0;

	for (size_t i = 0; i < run->mcount.count; i++) {
		const struct symbol *f = run->mcount.slots[i].func;
		struct kbtf_proto p;

		if (!f || f == last || !filter_match_function(&o->filter, tab, f)) {
			last = f ? f : last;
			continue;
		}
		last = f;
		shown++;
		if (kbtf_func_proto(kb, symtab_name(tab, f), &p)) {
			printf("%s ?\n", symtab_name(tab, f));
			continue;
		}
		printf("%s", symtab_name(tab, f));
		for (unsigned k = 0; k < p.kept; k++) {
			const struct kbtf_param *q = &p.p[k];

			if (q->kind == KBTF_ARG_OTHER)
				printf(" %s=%s/%u", q->name, q->type, q->size);
			else if (q->kind == KBTF_ARG_PTR || q->kind == KBTF_ARG_UNKNOWN)
				printf(" %s=%s", q->name, kinds[q->kind]);
			else
				printf(" %s=%s%s%u", q->name, q->kind == KBTF_ARG_ENUM && q->is_signed ? "s" : "",
				       kinds[q->kind], q->size);
		}
		if (p.nparams > p.kept)
			printf(" +%u", p.nparams - p.kept);
		printf("%s\n", p.variadic ? " ..." : "");
	}
	return shown;
}

static void print_slot(const struct mcount_table *mt, const struct symtab *tab,
		       const struct mcount_slot *s)
{
	char name[1200], bytes[3 * SLOT_MAX_BYTES + 1] = "";

	if (s->func)
		snprintf(name, sizeof(name), "%s", symtab_name(tab, s->func));
	else if (s->near)
		snprintf(name, sizeof(name), "[no-symbol:%s+%#llx]", symtab_name(tab, s->near),
			 (unsigned long long)(s->addr - s->near->addr));
	else
		snprintf(name, sizeof(name), "[no-symbol]");
	for (unsigned i = 0; i < mt->ops->layout->slot_bytes; i++)
		snprintf(bytes + 3 * i, sizeof(bytes) - 3 * i, i < s->len ? "%02x " : "?? ", s->bytes[i]);
	printf("%016llx %s %s%s\n", (unsigned long long)s->addr, name, bytes,
	       slot_state_name((enum slot_state)s->state));
}

/* Slots of matching functions; those without a symbol only when unfiltered. */
static size_t print_slots(const struct symbols_opts *o, const struct symbols_run *run)
{
	size_t shown = 0;

	for (size_t i = 0; i < run->mcount.count; i++) {
		const struct mcount_slot *s = &run->mcount.slots[i];

		if (s->func ? filter_match_function(&o->filter, run->tab, s->func)
			    : filter_selects_all(&o->filter)) {
			print_slot(&run->mcount, run->tab, s);
			shown++;
		}
	}
	return shown;
}

/* "N original, N disabled, ..." over the states an image can show: with no
 * stub known, none is enabled (mcount_classify). */
static void format_states(const struct mcount_table *mt, char *buf, size_t n)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int st = 0; st < SLOT_STATE_COUNT && used < n; st++)
		if (st != SLOT_ENABLED)
			used += (size_t)snprintf(buf + used, n - used, "%s%zu %s", used ? ", " : "",
						 mt->states[st], slot_state_name((enum slot_state)st));
}

static void print_summary(const struct symbols_run *run, size_t shown)
{
	char layout[300] = "", slots[700], states[200];
	const struct mcount_table *mt = &run->mcount;

	if (run->have_kallsyms && !run->have_given)
		kallsyms_layout_describe(&run->layout, layout, sizeof(layout));
	if (run->have_mcount) {
		format_states(mt, states, sizeof(states));
		snprintf(slots, sizeof(slots), "%zu slots (%zu in .init.text; %s), %zu without a symbol",
			 mt->count, mt->init, states, mt->no_symbol);
	} else
		snprintf(slots, sizeof(slots), "no slots (%s)", run->mcount_why);
	fprintf(stderr, "vmmtrace symbols: %zu symbols from %s%s%s%s, %s; %zu listed\n",
		run->tab->count, run->source, layout[0] ? " (" : "", layout, layout[0] ? ")" : "",
		slots, shown);
}

static void log_details(const struct symbols_run *run)
{
	const struct kallsyms_layout *l = &run->layout;

	log_info("timings: open+decompress %.3f s, symbols %.3f s, slots %.3f s",
		 run->t_open, run->t_symbols, run->t_mcount);
	if (run->have_kallsyms)
		log_info("kallsyms: num_syms %#llx names %#llx markers %#llx seqs %#llx token_table %#llx token_index %#llx addresses %#llx relative_base %#llx = %#llx",
			 (unsigned long long)l->num_syms_va, (unsigned long long)l->names_va,
			 (unsigned long long)l->markers_va, (unsigned long long)l->seqs_va,
			 (unsigned long long)l->token_table_va, (unsigned long long)l->token_index_va,
			 (unsigned long long)l->addresses_va, (unsigned long long)l->relative_base_va,
			 (unsigned long long)l->relative_base);
	if (run->have_mcount)
		log_info("__mcount_loc at %#llx: %zu zero entries skipped; __fentry__ at %#llx; %s",
			 (unsigned long long)run->mcount.table_va, run->mcount.zero,
			 (unsigned long long)run->mcount.fentry,
			 run->mcount.pre ? "the records point before the functions (call ops: an 8-byte literal each)" :
			 "the records point at the slots");
}

static int symbols_run(struct symbols_opts *o, struct symbols_run *run)
{
	const struct guest_arch *ga;
	struct errbuf err;
	double t = now();
	size_t shown;
	int rc;

	if (image_open(o->kernel, &run->img, &err))
		return cmd_fail("symbols", EXIT_BAD_INPUT, "%s", err.msg);
	run->t_open = now() - t;
	t = now();
	rc = load_symbols(o, run);
	if (rc)
		return rc;
	run->t_symbols = now() - t;
	t = now();
	ga = guest_arch_of(run->img.arch);
	rc = ga ? mcount_read(&run->img.elf, run->tab, guest_slot_ops(ga), &run->mcount, &err) :
		  err_set(&err, EOPNOTSUPP, "no slot encodings for %s", image_arch_name(run->img.arch));
	run->have_mcount = !rc;
	if (rc && (o->slots || o->functions))
		return cmd_fail("symbols", EXIT_BAD_INPUT, "%s: %s", o->kernel, err.msg);
	if (rc)
		snprintf(run->mcount_why, sizeof(run->mcount_why), "%s", err.msg);
	run->t_mcount = now() - t;
	if (o->args) {
		struct task_layout l;
		struct kernel_btf kb;

		if (!run->have_mcount)
			return cmd_fail("symbols", EXIT_BAD_INPUT, "%s: %s", o->kernel, run->mcount_why);
		if (task_layout_find(&run->img, run->tab, o->btf, &l, &kb, &err))
			return cmd_fail("symbols", EXIT_BAD_INPUT, "%s", err.msg);
		if (!kb.btf)
			return cmd_fail("symbols", EXIT_BAD_INPUT, "%s: no BTF that describes it (%s); "
					"--btf FILE", o->kernel, l.btf);
		shown = print_args(o, run, &kb);
		kbtf_close(&kb);
		if (fflush(stdout))
			return cmd_fail("symbols", EXIT_BAD_INPUT, "writing the output: %s", strerror(errno));
		log_info("%zu functions", shown);
		return EXIT_OK;
	}
	if (o->tasks) {
		struct task_layout l;

		if (task_layout_find(&run->img, run->tab, o->btf, &l, NULL, &err))
			return cmd_fail("symbols", EXIT_BAD_INPUT, "%s", err.msg);
		task_layout_print(&l, stdout);
		if (fflush(stdout))
			return cmd_fail("symbols", EXIT_BAD_INPUT, "writing the output: %s", strerror(errno));
		return EXIT_OK;
	}
	shown = o->slots ? print_slots(o, run) : print_symbols(o, run);
	if (fflush(stdout))
		return cmd_fail("symbols", EXIT_BAD_INPUT, "writing the output: %s", strerror(errno));
	log_details(run);
	print_summary(run, shown);
	return EXIT_OK;
}

static void symbols_release(struct symbols_run *run)
{
	mcount_destroy(&run->mcount);
	symtab_destroy(&run->given);
	symtab_destroy(&run->kallsyms);
	image_close(&run->img);
}

int cmd_symbols(int argc, char **argv)
{
	struct symbols_opts o;
	struct symbols_run run;
	int rc;

	memset(&o, 0, sizeof(o));
	memset(&run, 0, sizeof(run));
	filter_init(&o.filter);
	symtab_init(&run.kallsyms);
	symtab_init(&run.given);
	rc = symbols_parse(argc, argv, &o);
	if (!rc) {
		log_set_level(LOG_WARN + o.verbose);
		rc = symbols_run(&o, &run);
	}
	symbols_release(&run);
	filter_destroy(&o.filter);
	return rc < 0 ? EXIT_OK : rc;
}
