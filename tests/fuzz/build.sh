# SPDX-License-Identifier: GPL-2.0
# Sourced by tests/interop/fuzz-targets.sh and scripts/fuzz.sh: builds the
# libFuzzer targets of tests/fuzz/ with clang under ASan and UBSan. The
# project's sources go into one instrumented archive (build/fuzz/lib.a)
# rather than per-target source lists, so that a target whose code reaches
# into another layer (compat-insn.c into vcpu.c) links without the list
# having to follow every include. Only stale objects are rebuilt.

FUZZ_TARGETS="image sysmap control ring compat slot raw gdb"
# The suite's fixed budget per target: executions from seed 1, about ten
# seconds each on a 2-core machine. A fixed seed and count make the suite
# replay the same inputs on every machine, so that it fails on a regression
# and never on a new find of the day; finding is scripts/fuzz.sh's job.
fuzz_suite_runs() {
	case $1 in
	image) echo 15000 ;; sysmap) echo 300000 ;; control) echo 300000 ;;
	ring) echo 100000 ;; compat) echo 1000000 ;; slot) echo 800000 ;;
	raw) echo 20000 ;; kallsyms) echo 200000 ;; gdb) echo 100000 ;; *) echo 100000 ;;
	esac
}
FUZZ_DIR=${FUZZ_DIR:-$TOP/build/fuzz}
FUZZ_CFLAGS="-g -O1 -std=c11 -D_GNU_SOURCE -I. -pthread -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
FUZZ_LIBS="-lbpf -lz -llzma -lbz2 -lzstd -llz4 -lurcu-memb -lurcu-common -lfdt -pthread"

# The sources of build/libvmmtrace.a, as the Makefile lists them (every
# layer's folder, the KVM host's code for this machine's arch, x86_64);
# the embedded stubs come from the plain build (make), guest code that no
# sanitizer touches.
fuzz_lib_sources() {
	ls arch/*.c arch/*/*.c vmm/*/*.c | grep -v '^vmm/cli/main\.c$' | grep -vE '^vmm/kvm-'
	ls vmm/kvm-x86_64/*.c
}
fuzz_stub_objects() {
	ls "$TOP"/build/guest-stub/*/stub*-embed.o
}

# fuzz_build_lib: 0 when build/fuzz/lib.a is up to date.
fuzz_build_lib() {
	local src obj stale=0 newest_h
	mkdir -p "$FUZZ_DIR/obj"
	# A header change can change any object: rebuild everything older than it.
	newest_h=$(ls -t proto/*.h arch/*.h vmm/*/*.h 2>/dev/null | head -n 1)
	for src in $(fuzz_lib_sources); do
		obj=$FUZZ_DIR/obj/$(echo "${src%.c}" | tr / _).o
		if [ ! -e "$obj" ] || [ "$src" -nt "$obj" ] || [ "$newest_h" -nt "$obj" ]; then
			stale=1
			clang $FUZZ_CFLAGS -fsanitize=fuzzer-no-link,address,undefined -c "$src" -o "$obj" ||
				return 1
		fi
	done
	# Objects of sources that are gone (moved or removed) must not linger in the archive.
	for obj in "$FUZZ_DIR"/obj/*.o; do
		[ -e "$obj" ] || continue
		fuzz_lib_sources | tr / _ | sed 's/\.c$/.o/' | grep -qxF "$(basename "$obj")" || { rm -f "$obj"; stale=1; }
	done
	fuzz_stub_objects >/dev/null 2>&1 || { echo "fuzz: no embedded stubs: run make first" >&2; return 1; }
	# A stub added to the build (or gone) changes the archive too.
	fuzz_stub_objects | cmp -s - "$FUZZ_DIR/stubs.list" || { fuzz_stub_objects >"$FUZZ_DIR/stubs.list"; stale=1; }
	if [ $stale = 1 ] || [ ! -e "$FUZZ_DIR/lib.a" ]; then
		rm -f "$FUZZ_DIR/lib.a"
		ar rcs "$FUZZ_DIR/lib.a" "$FUZZ_DIR"/obj/*.o $(fuzz_stub_objects) || return 1
	fi
}

# fuzz_build TARGET: build/fuzz/fuzz-TARGET from tests/fuzz/fuzz-TARGET.c.
fuzz_build() {
	# shellcheck disable=SC2086
	clang $FUZZ_CFLAGS -fsanitize=fuzzer,address,undefined "tests/fuzz/fuzz-$1.c" \
		"$FUZZ_DIR/lib.a" $FUZZ_LIBS -o "$FUZZ_DIR/fuzz-$1"
}

# fuzz_run TARGET SECONDS LOG [libFuzzer options...]: the corpus is
# build/fuzz/corpus-TARGET (kept between runs), seeded from
# tests/fuzz/seeds/TARGET; crashes land as build/fuzz/crash-TARGET-*.
fuzz_run() {
	local t=$1 secs=$2 log=$3
	shift 3
	mkdir -p "$FUZZ_DIR/corpus-$t"
	"$FUZZ_DIR/fuzz-$t" -max_total_time="$secs" -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$FUZZ_DIR/crash-$t-" "$@" \
		"$FUZZ_DIR/corpus-$t" "tests/fuzz/seeds/$t" >"$log" 2>&1
}
