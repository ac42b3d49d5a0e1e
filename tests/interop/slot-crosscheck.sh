#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Cross-checks the arch/ slot encoders, through `vmmtrace encode`, against
# GNU binutils: thousands of random (PC, target) pairs per arch, including
# the range edges, are encoded into one blob per batch, disassembled once with
# objdump, and every decoded target must equal the requested one. Targets one
# step past either edge, and far ones, must be refused with exit status 2.
# loongarch64 has no binutils in Debian 12: its words are decoded by a
# decoder written here from the ISA manual's I26 format instead.
# SLOT_SEED=N repeats a run; SLOT_PAIRS=N sets pairs per batch (3 batches).
. "$(dirname "$0")/../lib.sh"

SEED=${SLOT_SEED:-$(( $(date +%s) % 1000000 ))}
PAIRS=${SLOT_PAIRS:-1200}
RANDOM=$SEED
echo "INFO: slot-crosscheck seed $SEED, $PAIRS pairs x 3 batches per arch (SLOT_SEED=$SEED repeats)"

require_file "$VMMTRACE"

# need TOOL PACKAGE: fails, naming the Debian package, when TOOL is missing.
need() {
	command -v "$1" >/dev/null 2>&1 && return 0
	fail "$1 not found: install Debian package $2 (scripts/packages-arch.txt)"
	return 1
}

# Sets R to 64 random bits (bash arithmetic is 64-bit two's complement).
rand64() { R=$(( (RANDOM << 60) ^ (RANDOM << 45) ^ (RANDOM << 30) ^ (RANDOM << 15) ^ RANDOM )); }

# Per arch: objdump, its -m name, bytes per call, reach (target - pc) and
# target alignment. These restate the ISA limits independently of arch/.
declare -A OBJDUMP=( [x86_64]=objdump [arm64]=aarch64-linux-gnu-objdump
	[riscv64]=riscv64-linux-gnu-objdump [loongarch64]= )
declare -A PKG=( [x86_64]=binutils [arm64]=binutils-aarch64-linux-gnu
	[riscv64]=binutils-riscv64-linux-gnu )
declare -A MACH=( [x86_64]=i386:x86-64 [arm64]=aarch64 [riscv64]=riscv:rv64 )
declare -A STRIDE=( [x86_64]=5 [arm64]=4 [riscv64]=8 [loongarch64]=4 )
declare -A RMIN=( [x86_64]=$(( -(1 << 31) + 5 )) [arm64]=$(( -(1 << 27) ))
	[riscv64]=$(( -(1 << 31) - 2048 )) [loongarch64]=$(( -(1 << 27) )) )
declare -A RMAX=( [x86_64]=$(( (1 << 31) - 1 + 5 )) [arm64]=$(( (1 << 27) - 4 ))
	[riscv64]=$(( (1 << 31) - 2049 )) [loongarch64]=$(( (1 << 27) - 4 )) )
declare -A ALIGN=( [x86_64]=1 [arm64]=4 [riscv64]=2 [loongarch64]=4 )

# gen_pairs ARCH BASE FILE: "pc target" lines in hex, pc = BASE + i*stride.
# Every eighth pair sits on an edge; the rest are spread over the range.
gen_pairs() {
	local arch=$1 base=$2 out=$3 i pc d span
	local min=${RMIN[$arch]} max=${RMAX[$arch]} al=${ALIGN[$arch]}
	max=$(( max & ~(al - 1) ))
	span=$(( max - min + 1 ))
	for (( i = 0; i < PAIRS; i++ )); do
		pc=$(( base + i * STRIDE[$arch] ))
		rand64
		case $(( i % 8 )) in
		0) d=$min ;;
		1) d=$max ;;
		2) d=$(( min + (R & 0xffff) )) ;;
		3) d=$(( max - (R & 0xffff) )) ;;
		4) d=$(( (R & 0x1ffff) - 0x10000 )) ;;
		*) d=$(( min + (R & 0x7fffffffffffffff) % span )) ;;
		esac
		d=$(( d & ~(al - 1) ))
		printf '%x %x\n' "$pc" $(( pc + d ))
	done >"$out"
}

# to_blob ARCH < encode-output > blob: words little-endian, x86 bytes as is.
to_blob() {
	if [ "$1" = x86_64 ]; then
		perl -ne 'print pack("C*", map { hex } split)'
	else
		perl -ne 'print pack("V", hex($_))'
	fi
}

# decoded_targets ARCH BLOB BASE: "pc target" per call objdump decoded.
decoded_targets() {
	local arch=$1
	"${OBJDUMP[$arch]}" -D -b binary -m "${MACH[$arch]}" --adjust-vma="0x$3" "$2" |
	awk -v arch="$arch" '
		function norm(s) { sub(/^0x/, "", s); sub(/^0+/, "", s); return s == "" ? "0" : tolower(s) }
		/^ *[0-9a-f]+:\t/ {
			split($0, f, "\t"); addr = f[1]; sub(/^ */, "", addr); sub(/:$/, "", addr)
			ins = f[3]; ops = f[4]
			if (arch == "x86_64" && ins ~ /^call/) { n = split(ins, w, " +"); print norm(addr), norm(w[n]) }
			else if (arch == "arm64" && ins == "bl") print norm(addr), norm(ops)
			else if (arch == "riscv64" && ins == "auipc" && ops ~ /^t0,/) hi = addr
			else if (arch == "riscv64" && ins == "jalr" && ops ~ /^t0,.*\(?t0\)? # 0x/) {
				t = ops; sub(/.*# /, "", t); print norm(hi), norm(t)
			}
		}'
}

# la64_decoded_targets BASE < words: decodes bl (opcode 0x15, I26 offs).
la64_decoded_targets() {
	local pc=$(( 0x$1 )) w offs
	while read -r w; do
		w=$(( 0x$w ))
		if (( (w >> 26) == 0x15 )); then
			offs=$(( ((w >> 10) & 0xffff) | ((w & 0x3ff) << 16) ))
			offs=$(( (offs << 38) >> 38 ))
			printf '%x %x\n' "$pc" $(( pc + offs * 4 ))
		fi
		pc=$(( pc + 4 ))
	done
}

# check_batch ARCH BASE: one encode run and one objdump run for PAIRS pairs.
check_batch() {
	local arch=$1 base=$2 pairs=$TMPD/$1-$2.pairs got=$TMPD/$1-$2.got bad
	gen_pairs "$arch" "$base" "$pairs"
	awk '{ print "call 0x" $1 " 0x" $2 }' "$pairs" |
		"$VMMTRACE" encode --arch "$arch" - >"$TMPD/words" 2>"$TMPD/err" ||
		{ fail "$arch: vmmtrace encode refused an in-range pair: $(cat "$TMPD/err")"; return; }
	if [ "$arch" = loongarch64 ]; then
		la64_decoded_targets "$(printf '%x' "$base")" <"$TMPD/words" >"$got"
	else
		to_blob "$arch" <"$TMPD/words" >"$TMPD/blob"
		decoded_targets "$arch" "$TMPD/blob" "$(printf '%x' "$base")" >"$got"
	fi
	bad=$(awk 'NR == FNR { want[$1] = $2; next }
		($1 in want) && want[$1] == $2 { ok++; next }
		{ if (nbad++ < 3) printf "pc %s decoded %s want %s; ", $1, $2, want[$1] }
		END { if (ok + nbad != '"$PAIRS"' || nbad) printf "%d of '"$PAIRS"' matched", ok }' \
		"$pairs" "$got")
	if [ -z "$bad" ]; then
		pass "$arch: $PAIRS calls from base 0x$(printf '%x' "$base") decode to their targets"
	else
		fail "$arch: base 0x$(printf '%x' "$base"): $bad"
	fi
}

# refuses ARCH PC DELTA: a call that must be refused with status 2.
refuses() {
	local pc=$2 t=$(( $2 + $3 )) rc
	"$VMMTRACE" encode --arch "$1" call "$(printf '0x%x' "$pc")" "$(printf '0x%x' "$t")" \
		>/dev/null 2>"$TMPD/err"
	rc=$?
	[ "$rc" = 2 ] && grep -q 'cannot reach' "$TMPD/err" && return 0
	echo "   $1: call 0x$(printf '%x' "$pc") -> 0x$(printf '%x' "$t"): status $rc, $(cat "$TMPD/err")"
	return 1
}

check_refusals() {
	local arch=$1 al=${ALIGN[$1]} min=${RMIN[$1]} max=${RMAX[$1]} pc i ok=1
	max=$(( max & ~(al - 1) ))
	rand64; pc=$(( (0xffffffff80000000 + (R & 0x3fffffff)) & ~7 ))
	refuses "$arch" $pc $(( max + al )) || ok=0
	refuses "$arch" $pc $(( min - al )) || ok=0
	refuses "$arch" $pc $(( 1 << 40 )) || ok=0
	refuses "$arch" $pc $(( -(1 << 40) )) || ok=0
	for (( i = 0; i < 12; i++ )); do
		rand64
		refuses "$arch" $pc $(( (max + al + (R & 0x7fffffff) * al) )) || ok=0
		refuses "$arch" $pc $(( (min - al - (R & 0x7fffffff) * al) )) || ok=0
	done
	check "$arch: 28 out-of-range targets (edge+1, far, random) refused with status 2" \
		test "$ok" = 1
}

# mnemonic ARCH WANT INSN...: objdump's text for one encoded instruction.
mnemonic() {
	local arch=$1 want=$2 text
	shift 2
	"$VMMTRACE" encode --arch "$arch" "$@" | to_blob "$arch" >"$TMPD/one"
	text=$("${OBJDUMP[$arch]}" -D -b binary -m "${MACH[$arch]}" "$TMPD/one" |
		awk -F'\t' '/^ *[0-9a-f]+:\t/ { printf "%s%s %s", sep, $3, $4; sep = "; " }' |
		sed 's/  */ /g; s/ *$//; s/ ;/;/g')
	check "$arch: encode $* disassembles as '$want' (got '$text')" test "$text" = "$want"
}

for arch in x86_64 arm64 riscv64 loongarch64; do
	if [ -n "${OBJDUMP[$arch]}" ]; then
		need "${OBJDUMP[$arch]}" "${PKG[$arch]}" || continue
	fi
	need perl perl-base || continue
	st=${STRIDE[$arch]}
	rand64; check_batch "$arch" $(( (0xffffffff80000000 + (R & 0x7ffffff)) & ~7 ))
	rand64; check_batch "$arch" $(( R & ~7 ))
	rand64; check_batch "$arch" $(( (R & 0xffff) & ~7 ))
	check_refusals "$arch"
done

if need objdump binutils; then
	mnemonic x86_64 "nopl 0x0(%rax,%rax,1)" nop
fi
if need aarch64-linux-gnu-objdump binutils-aarch64-linux-gnu; then
	mnemonic arm64 "nop" nop
	mnemonic arm64 "mov x9, x30" save-ra
	mnemonic arm64 "mov x9, x30; nop" slot disabled 0x1000 0x2000
	mnemonic arm64 "mov x9, x30; bl 0x2004" slot enabled 0 0x2004
fi
if need riscv64-linux-gnu-objdump binutils-riscv64-linux-gnu; then
	mnemonic riscv64 "nop" nop
	mnemonic riscv64 "auipc t0,0x1; nop" slot disabled 0 0x1000
	mnemonic riscv64 "auipc t0,0x1; jalr t0,t0 # 0x1000" slot enabled 0 0x1000
fi
finish
