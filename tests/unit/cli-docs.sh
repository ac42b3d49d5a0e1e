#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Every option a subcommand's parser accepts (the getopt_long table of its
# source file) appears in its `--help` and in its man page
# (docs/man/vmmtrace-CMD.1): adding an option without its help line or its
# page fails here. Every page renders with man(1) without a warning, and
# `make install DESTDIR=...` installs a binary that runs, its pages and
# its examples.
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
MAN="$TOP/docs/man"

# options FILE: the long options of the getopt_long table(s) in FILE, one a
# line (but --help, which every command has and its usage line says).
options() {
	sed -n '/struct option longopts\[\] = {/,/};/p' "$TOP/$1" | grep -oE '\{ "[a-z0-9-]+"' | tr -d '{" ' |
		grep -vx help | sort -u
}

for pair in boot:vmm/cli/boot-opts.c attach:vmm/cli/cmd-attach.c report:vmm/cli/cmd-report.c \
	symbols:vmm/cli/cmd-symbols.c $( [ -e "$TOP/vmm/cli/cmd-diff.c" ] && echo diff:vmm/cli/cmd-diff.c); do
	cmd=${pair%%:*} src=${pair#*:}
	mapfile -t opts < <(options "$src")
	check "$cmd: its parser's options are found (${#opts[@]})" [ "${#opts[@]}" -gt 2 ]
	"$VMMTRACE" "$cmd" --help >"$TMPD/$cmd.help" 2>&1
	page="$MAN/vmmtrace-$cmd.1"
	check "$cmd: a man page" [ -f "$page" ]
	sed 's/\\-/-/g; s/\\e/\\/g' "$page" >"$TMPD/$cmd.page" 2>/dev/null
	missing_help="" missing_page=""
	for o in "${opts[@]}"; do
		grep -qE -- "--$o([^a-z0-9-]|$)" "$TMPD/$cmd.help" || missing_help+=" --$o"
		grep -qE -- "--$o([^a-z0-9-]|$)" "$TMPD/$cmd.page" || missing_page+=" --$o"
	done
	check "$cmd: every option has its --help line (missing:${missing_help:- none})" [ -z "$missing_help" ]
	check "$cmd: every option is in vmmtrace-$cmd(1) (missing:${missing_page:- none})" [ -z "$missing_page" ]
done
# encode parses --arch by hand; detach, status, nmi and stop take none but --help.
check "encode: --arch in its --help and page" eval "\"$VMMTRACE\" encode --help | grep -q -- --arch && grep -q 'arch' '$MAN/vmmtrace-encode.1'"
for cmd in detach status nmi stop; do
	check "$cmd: a man page" [ -f "$MAN/vmmtrace-$cmd.1" ]
done
# Every command of the dispatcher has a page, and vmmtrace(1) names it.
mapfile -t cmds < <(sed -n '/static const struct command commands\[\] = {/,/};/p' "$TOP/vmm/cli/main.c" |
	grep -oE '\{ "[a-z]+"' | tr -d '{" ')
for cmd in "${cmds[@]}"; do
	check "vmmtrace(1) names $cmd, which has its page" \
		eval "grep -q 'vmmtrace-$cmd' '$MAN/vmmtrace.1' && [ -f '$MAN/vmmtrace-$cmd.1' ]"
done

if command -v man >/dev/null; then
	for page in "$MAN"/*.1; do
		warn=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
		check "$(basename "$page") renders without a warning${warn:+ ($warn)}" \
			eval "MANWIDTH=80 man -l '$page' 2>/dev/null | grep -q '^NAME' && [ -z \"$warn\" ]"
	done
else
	echo "SKIP: man(1) is not installed: the pages' rendering is not checked"
fi

check "vmmtrace --version names a release" eval "\"$VMMTRACE\" --version | grep -qE '^vmmtrace [0-9]+\\.[0-9]+\\.[0-9]+'"
make -s -C "$TOP" install DESTDIR="$TMPD/root" PREFIX=/usr >"$TMPD/install.log" 2>&1
check "make install DESTDIR=... PREFIX=/usr: status 0" [ $? = 0 ]
check "the installed binary runs: $("$TMPD/root/usr/bin/vmmtrace" --version 2>&1)" \
	eval "\"$TMPD/root/usr/bin/vmmtrace\" --version | grep -q '^vmmtrace '"
n=$(ls "$TMPD/root/usr/share/man/man1/" 2>/dev/null | wc -l)
check "the man pages are installed ($n of $(ls "$MAN"/*.1 | wc -l))" [ "$n" = "$(ls "$MAN"/*.1 | wc -l)" ]
check "the examples and the docs are installed" \
	eval "[ -x '$TMPD/root/usr/share/doc/vmmtrace/examples/boot-trace.sh' ] && [ -f '$TMPD/root/usr/share/doc/vmmtrace/TRACING.md' ]"
finish
