#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# An arm64 kernel (no KVM needed): its symbols and entry slots, read from
# the Image itself; a traced boot under QEMU (vmmtrace boot --host qemu)
# of the early boot functions, with their arguments, up to kernel_init;
# then an untraced boot until the kernel, finding no root file system,
# panics: exit status 3, the panic repeated on stderr.
#
#   examples/arm64-qemu.sh [IMAGE]      (default: the lean arm64 test kernel)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VMMTRACE=${VMMTRACE:-$here/../build/vmmtrace}
IMAGE=${1:-${VMMTRACE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vmmtrace}/lean-arm64/Image}
for f in "$VMMTRACE" "$IMAGE"; do
	[ -e "$f" ] || { echo "$0: $f is missing: run scripts/setup.sh first, or name an Image" >&2; exit 2; }
done

echo "### vmmtrace symbols IMAGE start_kernel --slots"
"$VMMTRACE" symbols "$IMAGE" start_kernel --slots
echo "### vmmtrace boot IMAGE --trace ... --args --stop-at kernel_init (the trace)"
"$VMMTRACE" boot "$IMAGE" --host qemu --trace start_kernel --trace setup_arch --trace 'early_init_dt_scan*' \
	--trace sched_init --trace rest_init --args --stop-at kernel_init </dev/null | grep -v '^\['
echo "### vmmtrace boot IMAGE --host qemu --cpus 2 (the console; the last lines)"
set +e
"$VMMTRACE" boot "$IMAGE" --host qemu --cpus 2 </dev/null | tail -n 3
rc=${PIPESTATUS[0]}
set -e
echo "### exit status $rc (3: the guest kernel panicked)"
