#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The direction dependencies must point (shared/docs/DESIGN.md §2, README
# "Layout"), checked over every quoted #include of the tree (and KVM's and
# the CPU's own system headers, below):
#
#   command line (vmm/cli) -> control (vmm/control) -> tracing (vmm/trace)
#     -> {output formats (vmm/output), image reader (vmm/image),
#         host boundary (vmm/host), arch/, proto/};
#   hosts behind the boundary: the VM core (vmm/kvm), QEMU (vmm/qemu)
#   devices (vmm/devices) -> VM core;  host-arch VMM code (vmm/kvm-x86_64) -> VM core;
#   one host never includes another (vmm/qemu never vmm/kvm)
#
# and: arch/ and proto/ depend on nothing of the project (arch/ sees only
# arch/ and proto/, proto/ only <stdint.h>/<stddef.h>); the VM core never
# includes the tracer, the control socket, the devices or its own arch
# extension; the image reader needs no KVM; the output formats need no
# engine and no host; nothing below the command line
# includes its header; KVM's and an arch's system headers stay in the KVM
# host. `layering.sh [ROOT]` checks ROOT (default: this tree)
# and prints one line per violation.
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 2
bad=0

# violation FILE LINE WHY
violation() { echo "FAIL: layering: $1 includes \"$2\": $3"; bad=$((bad + 1)); }

# The quoted includes of FILE, one per line.
quoted() { sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]+"([^"]+)".*/\1/p' "$1"; }
angled() { sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]+<([^>]+)>.*/\1/p' "$1"; }

# check_dir DIR ALLOWED-REGEX WHY: every quoted include of DIR's sources
# must match ALLOWED-REGEX (an ERE anchored at both ends).
check_dir() {
	local dir=$1 allowed=$2 why=$3 f i
	[ -d "$dir" ] || { echo "FAIL: layering: $dir is missing"; bad=$((bad + 1)); return; }
	while IFS= read -r f; do
		while IFS= read -r i; do
			[[ $i =~ ^($allowed)$ ]] || violation "$f" "$i" "$why"
		done < <(quoted "$f")
	done < <(find "$dir" -name '*.[chS]' | sort)
}

check_dir arch 'arch/[a-z0-9_/.-]+|proto/[a-z0-9_.-]+' "arch/ depends on nothing of the project but proto/"
check_dir proto 'proto/[a-z0-9_.-]+' "proto/ is freestanding"
while IFS= read -r f; do
	while IFS= read -r i; do
		case $i in stdint.h|stddef.h) ;; *) violation "$f" "<$i>" "proto/ headers use <stdint.h> only" ;; esac
	done < <(angled "$f")
done < <(find proto -name '*.h' | sort)
check_dir guest-stub 'proto/[a-z0-9_.-]+|guest-stub/[A-Za-z0-9_/.-]+' "the stub shares only the contract with the host (and its own files)"
check_dir vmm/util 'vmm/util/[a-z0-9_.-]+' "the utilities are the bottom layer"
check_dir vmm/host 'vmm/(host|util)/[a-z0-9_.-]+' "the host boundary is an interface: it names no host"
check_dir vmm/image 'vmm/(image|util)/[a-z0-9_.-]+|arch/[a-z0-9_/.-]+|proto/[a-z0-9_.-]+' \
	"the image reader needs no KVM, no VM and no tracer"
check_dir vmm/guest 'vmm/(guest|host|image|util)/[a-z0-9_.-]+|arch/[a-z0-9_/.-]+|proto/[a-z0-9_.-]+' \
	"what vmmtrace puts into a guest (stubs, their install, their data's geometry) serves the tracer and every host, and calls neither"
check_dir vmm/kvm 'vmm/(kvm|host|util)/[a-z0-9_.-]+|arch/[a-z0-9_/.-]+|proto/[a-z0-9_.-]+' \
	"the VM core calls no layer above it (the tracer registers hooks) and no arch extension"
check_dir vmm/devices 'vmm/(devices|kvm|util)/[a-z0-9_.-]+|proto/[a-z0-9_.-]+' \
	"devices depend on the VM core only"
check_dir vmm/qemu 'vmm/(qemu|host|guest|image|util)/[a-z0-9_.-]+|arch/[a-z0-9_/.-]+|proto/[a-z0-9_.-]+' \
	"the QEMU host is a host of its own: it reaches no other host (no KVM), no device model and no tracer"
for d in vmm/*/; do
	d=${d%/}
	case $d in vmm/cli|vmm/control|vmm/trace|vmm/output|vmm/guest|vmm/image|vmm/kvm|vmm/qemu|vmm/host|vmm/devices|vmm/util) continue ;; esac
	# A host-arch folder of the KVM host (vmm/kvm-x86_64, ...).
	check_dir "$d" "$d/[a-z0-9_.-]+|vmm/(kvm|host|devices|guest|image|util)/[a-z0-9_.-]+|arch/[a-z0-9_/.-]+|proto/[a-z0-9_.-]+" \
		"host-arch VMM code extends the VM core and calls no tracer"
done
check_dir vmm/output 'vmm/(output|image|util)/[a-z0-9_.-]+|arch/[a-z0-9_/.-]+|proto/[a-z0-9_.-]+' \
	"the output formats (writers, the raw reader, the taps) need nothing of the tracing engine or of any host (an arch's facts, such as x86's KVM handshake, are not a host)"
check_dir vmm/trace 'vmm/(trace|output|guest|host|image|util)/[a-z0-9_.-]+|arch/[a-z0-9_/.-]+|proto/[a-z0-9_.-]+' \
	"tracing sits below the control socket and the command line, and reaches a guest through the host boundary (vmm/host) only"
check_dir vmm/control 'vmm/(control|trace|output|guest|host|image|util)/[a-z0-9_.-]+|arch/[a-z0-9_/.-]+|proto/[a-z0-9_.-]+' \
	"the control socket sits below the command line, and reaches a guest through the tracer and the host boundary (vmm/host) only"
# The system headers of one hypervisor or one CPU: KVM's only in the KVM
# host (its core, its host-arch folders, the devices it runs) and the
# command line (the sandbox's ioctl list); an arch's kernel headers
# (<asm/...>) only in a KVM host-arch folder; x86 intrinsics only there and
# in the QEMU host's x86 file (its host clock, behind #if __x86_64__).
while IFS= read -r f; do
	while IFS= read -r i; do
		case $i in
		linux/kvm.h|linux/kvm_para.h|asm/kvm*)
			[[ $f =~ ^vmm/(kvm|kvm-[a-z0-9_]+|devices|cli)/ ]] ||
				violation "$f" "<$i>" "KVM's headers stay in the KVM host: the layers above reach it through the host boundary" ;;
		asm/*)
			[[ $f =~ ^vmm/kvm-[a-z0-9_]+/ ]] ||
				violation "$f" "<$i>" "an arch's kernel headers belong to its KVM host-arch folder" ;;
		cpuid.h|x86intrin.h|immintrin.h)
			[[ $f =~ ^vmm/kvm-x86_64/ || $f == vmm/qemu/host-qemu-x86.c ]] ||
				violation "$f" "<$i>" "x86 intrinsics belong to the x86_64 host code" ;;
		esac
	done < <(angled "$f")
done < <(find vmm arch proto guest-stub -name '*.[ch]' | sort)
# Nothing outside the command line includes its header, tests included.
while IFS= read -r f; do
	case $f in vmm/cli/*) continue ;; esac
	while IFS= read -r i; do
		[[ $i == vmm/cli/* ]] && violation "$f" "$i" "only the command line includes its own header"
	done < <(quoted "$f")
done < <(find vmm arch proto guest-stub tests bench -name '*.[ch]' 2>/dev/null | sort)
# No stray source in vmm/ itself: everything has a layer.
for f in vmm/*.[ch]; do
	[ -e "$f" ] && { echo "FAIL: layering: $f sits in no layer's folder"; bad=$((bad + 1)); }
done
[ "$bad" = 0 ] && echo "PASS: layering: every #include points down the layers"
exit $((bad > 0))
