#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What `make check` needs before it builds and runs the tests, on a machine
# where scripts/setup.sh may never have run: the Debian packages (installed
# when we are root or have password-less sudo, otherwise named in a warning)
# and the cached test guests (Debian's stock amd64 and arm64 kernels, the lean kernels of
# x86_64 (also with the W+X check), arm64, riscv64 and loongarch64 (also with a built-in
# device tree), the 6.12 ones, the initramfs). Quick
# when everything is there already.
#
# scripts/setup.sh sources this file for the package list and the steps.
set -euo pipefail
prep_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$prep_here/common.sh"

# The Debian 12 packages, and why (README "Dependencies"). SETUP_PACKAGES:
# what the first trace needs (scripts/setup.sh): vmmtrace's build, the
# lean x86_64 kernel and its initramfs, and QEMU where /dev/kvm does not
# open. TEST_PACKAGES: what `make check` needs besides (the other guests,
# the test tools and the oracles).
# SETUP_KERNEL_PACKAGES: the part of them the lean kernel's build needs,
# installed first so that setup.sh builds the kernel while it installs
# the rest.
SETUP_KERNEL_PACKAGES=(
	gcc make					# build
	dwarves						# pahole: the lean test kernel's BTF
	linux-source-6.1 flex bison bc libelf-dev libssl-dev patch	# the lean test kernel (patch: its test-only fix)
	busybox-static cpio xz-utils			# the test initramfs; unpacking the kernel's source
)
SETUP_PACKAGES=(
	"${SETUP_KERNEL_PACKAGES[@]}"
	pkg-config					# build
	linux-libc-dev					# <linux/kvm.h>, <asm/bootparam.h>
	liblzma-dev zlib1g-dev libzstd-dev liblz4-dev libbz2-dev	# kernel payloads
	liburcu-dev					# data shared between threads
	libfdt-dev					# device trees (the QEMU host's guests)
	libseccomp-dev					# the boot's seccomp sandbox (docs/SANDBOX.md)
	libbpf-dev					# the guest kernel's BTF: task names and pids (docs/TASKS.md)
	qemu-system-x86					# the first trace where /dev/kvm does not open
	# The guest stubs vmmtrace embeds (guest-stub/*/stub.mk): arm64 and
	# riscv64 with Debian's cross gcc, loongarch64 with clang-19 and lld-19.
	gcc-aarch64-linux-gnu gcc-riscv64-linux-gnu clang-19 lld-19 llvm-19
)
TEST_PACKAGES=(
	lzma zstd lz4 bzip2				# codec fixtures
	qemu-system-arm qemu-system-misc opensbi	# the QEMU host backend: arm64 and riscv64 guests (OpenSBI: riscv64's firmware)
	gdb strace python3				# test tools: QEMU's gdbstub, syscall checks, control socket
	man-db						# the man pages rendered (tests/unit/cli-docs.sh)
	protobuf-compiler				# protoc --decode_raw reads the Perfetto trace (tests/interop/perfetto-protoc.sh, tests/e2e/tasks.sh)
	clang						# fuzzing
	trace-cmd libtracecmd-dev libtracefs-dev libtraceevent-dev	# trace.dat oracle: trace-cmd report, libtracecmd reader
	libxml2-utils chromium				# the boot chart: xmllint (tests/unit/answers.sh), headless Chromium (tests/interop/chart-chromium.sh)
)
# The cross tools of the slot tests and the other guests (scripts/packages-arch.txt, one a line).
while IFS= read -r prep_line; do
	prep_line=${prep_line%%#*}
	for prep_pkg in $prep_line; do TEST_PACKAGES+=("$prep_pkg"); done
done <"$prep_here/packages-arch.txt"
# What prep_missing_packages and prep_install_packages look at: everything, unless setup.sh says otherwise.
PREP_PACKAGES=("${SETUP_PACKAGES[@]}" "${TEST_PACKAGES[@]}")

# Prints the packages of PREP_PACKAGES that are not installed.
prep_missing_packages() {
	local installed
	installed=$(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${PREP_PACKAGES[@]}" 2>/dev/null |
		awk '$2 == "installed" { print $1 }' || true)
	for p in "${PREP_PACKAGES[@]}"; do
		grep -qx "$p" <<<"$installed" || echo "$p"
	done | sort -u
}

# Sets PREP_SUDO to how we become root: "" as root, "sudo" otherwise.
# With "noninteractive", only password-less sudo counts. Fails without either.
prep_find_root() {
	PREP_SUDO=
	[ "$(id -u)" = 0 ] && return 0
	command -v sudo >/dev/null 2>&1 || return 1
	if [ "${1:-}" = noninteractive ]; then
		sudo -n true 2>/dev/null || return 1
	fi
	PREP_SUDO=sudo
}

prep_apt_lists_present() {
	compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null
}

prep_apt_update() {
	say "apt-get update"
	$PREP_SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
}

# Installs what is missing. Runs apt-get update only when something must be
# installed, when there are no package lists at all (fetch-debian-kernel.sh
# resolves the kernel from them), or when SETUP_APT_UPDATE=1.
prep_install_packages() {
	local missing
	missing=$(prep_missing_packages | tr '\n' ' ')
	if [ -z "$missing" ] && prep_apt_lists_present && [ "${SETUP_APT_UPDATE:-0}" != 1 ]; then
		say "all ${#PREP_PACKAGES[@]} packages are installed"
		return 0
	fi
	prep_apt_update
	[ -n "$missing" ] || return 0
	say "installing: $missing"
	# apt's lines go to stderr with the rest of what set-up says: stdout is the default job's trace.
	# shellcheck disable=SC2086
	$PREP_SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends $missing </dev/null >&2
}

# Builds the guest of the first trace: the lean x86_64 kernel and its initramfs.
prep_first_guest() {
	"$prep_here/build-lean-kernel.sh" x86_64
	"$prep_here/build-initramfs.sh"
}

# Fetches or builds every cached guest the tests boot, saying once what and why.
prep_guests() {
	prep_first_guest
	say "the tests' other guests: Debian's stock kernels (what users have: 6.1 and 6.12), the lean kernel" \
		"with the W+X check (as on hardware KVM), the arm64, riscv64 and loongarch64 lean kernels (the QEMU" \
		"host), the lean 6.12 kernels, their initramfs"
	if ! "$prep_here/fetch-debian-kernel.sh"; then
		# Stale package lists can name a kernel the mirror no longer has.
		prep_find_root noninteractive || die "cannot fetch Debian's kernel (apt-get update as root may help)"
		prep_apt_update
		"$prep_here/fetch-debian-kernel.sh"
	fi
	# Debian's arm64 kernel is a multiarch download: arm64 must be a foreign architecture.
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		prep_find_root noninteractive || die "Debian's arm64 kernel needs: dpkg --add-architecture arm64 && apt-get update (as root)"
		$PREP_SUDO dpkg --add-architecture arm64
		prep_apt_update
	fi
	# Debian 12's own kernels (6.1), then the 6.12 ones of its security suite.
	local flavour
	for flavour in arm64 amd64-6.12 arm64-6.12 arm64-16k-6.12; do
		if ! "$prep_here/fetch-debian-kernel.sh" "$flavour"; then
			prep_find_root noninteractive || die "cannot fetch Debian's $flavour kernel (apt-get update as root may help)"
			prep_apt_update
			"$prep_here/fetch-debian-kernel.sh" "$flavour"
		fi
	done
	"$prep_here/build-lean-kernel.sh" x86_64-wx
	"$prep_here/build-lean-kernel.sh" arm64
	prep_arm64_nopad
	"$prep_here/build-lean-kernel.sh" riscv64
	"$prep_here/build-lean-kernel.sh" riscv64-nostrict
	"$prep_here/build-lean-kernel.sh" loongarch64
	"$prep_here/build-lean-kernel.sh" loongarch64-dtb
	# Linux 6.12 as it builds what users run (issue 36): call ops, BTI, IBT, kCFI, call padding.
	"$prep_here/build-lean-kernel.sh" arm64-6.12
	# 6.12 without padding below _etext: the guard page, mapped in the tables the kernel builds itself.
	prep_arm64_nopad lean-arm64-6.12 lean-arm64-6.12-nopad
	# 6.12 built with gcc: WITH_ARGS without call ops, no BTI, no pointer authentication.
	"$prep_here/build-lean-kernel.sh" arm64-6.12-gcc
	"$prep_here/build-lean-kernel.sh" x86_64-6.12
	"$prep_here/build-lean-kernel.sh" riscv64-6.12
	"$prep_here/build-lean-kernel.sh" riscv64-6.12-nostrict
	# QEMU 10 beside the system's 7.2, for --deterministic on several vCPUs.
	"$prep_here/fetch-qemu-backports.sh"
	"$prep_here/build-initramfs.sh" arm64
	"$prep_here/build-initramfs.sh" riscv64
	"$prep_here/build-initramfs.sh" loongarch64
	prep_arm64_machine
}

# vmmtrace's arm64 build, static, for the arm64 test machine
# (scripts/arm64-machine.sh; the kvm-arm64 tier): Debian's arm64 libraries
# beside the amd64 ones (multiarch; arm64 is a foreign architecture by
# now), then libfdt and busybox, which are not multi-arch, unpacked into
# the cache's arm64 sysroot.
PREP_ARM64_LIBS=(liburcu-dev libbpf-dev libseccomp-dev libelf-dev zlib1g-dev liblzma-dev
	libbz2-dev libzstd-dev liblz4-dev)
prep_arm64_machine() {
	local p missing=()
	for p in "${PREP_ARM64_LIBS[@]}"; do
		[ "$(dpkg-query -W -f='${db:Status-Status}' "$p:arm64" 2>/dev/null)" = installed ] ||
			missing+=("$p:arm64")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		say "the arm64 build of vmmtrace (the arm64 test machine): ${missing[*]}"
		prep_find_root noninteractive || die "the arm64 test machine needs: apt-get install ${missing[*]} (as root)"
		$PREP_SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2 ||
			{ prep_apt_update; $PREP_SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2; }
	fi
	"$prep_here/arm64-machine.sh" --prepare
}

# The lean arm64 kernel as one with no room for the stub below _etext (a
# kernel whose text ends within 8 KiB of a 64 KiB boundary): its Image with
# those 8 KiB made non-zero, which vmmtrace then does not take for padding
# (never executed: the kernel runs the same), its System.map and BTF. Derived
# again whenever the lean kernel is newer (docs/STUB-PLACEMENT.md).
# prep_arm64_nopad [SRC DST]: lean-arm64 to lean-arm64-nopad by default.
prep_arm64_nopad() {
	local src=$VMMTRACE_CACHE/${1:-lean-arm64} dst=$VMMTRACE_CACHE/${2:-lean-arm64-nopad}
	[ -f "$dst/Image" ] && [ "$dst/Image" -nt "$src/Image" ] && return 0
	mkdir -p "$dst"
	python3 - "$src" "$dst" <<'PY' || die "cannot derive $dst from $src"
import sys
src, dst = sys.argv[1], sys.argv[2]
syms = {}
for line in open(src + "/System.map"):
    f = line.split()
    if len(f) == 3 and f[2] in ("_text", "_etext"):
        syms[f[2]] = int(f[0], 16)
img = bytearray(open(src + "/Image", "rb").read())
end = syms["_etext"] - syms["_text"]
if any(img[end - 8192:end]):
    sys.exit("the 8 KiB below _etext are not zeros in " + src + "/Image")
img[end - 8192:end] = b"\xa5" * 8192
open(dst + "/Image.new", "wb").write(img)
PY
	# Its symbols and types are the lean kernel's (vmmtrace reads vmlinux.btf beside the Image).
	for f in System.map vmlinux.btf; do
		ln -sfn "$(readlink -f "$src/$f")" "$dst/$f"
	done
	mv "$dst/Image.new" "$dst/Image"
	say "$(basename "$dst") derived from $(basename "$src") (no padding below _etext) in $dst"
}

prep_main() {
	local missing
	if prep_find_root noninteractive; then
		prep_install_packages
	else
		missing=$(prep_missing_packages | tr '\n' ' ')
		[ -z "$missing" ] || say "WARNING: not root, cannot install missing packages: $missing" \
			"(run scripts/setup.sh, or: sudo apt-get install $missing)"
	fi
	prep_guests
	say "test prerequisites ready (cache: $VMMTRACE_CACHE)"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	prep_main "$@"
fi
