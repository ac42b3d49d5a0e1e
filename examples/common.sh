# SPDX-License-Identifier: GPL-2.0
# What the examples share: which vmmtrace and which kernel. Sourced.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The build beside the examples (a source tree), else the vmmtrace on PATH (make install).
if [ -z "${VMMTRACE:-}" ]; then
	if [ -x "$here/../build/vmmtrace" ]; then VMMTRACE=$here/../build/vmmtrace; else VMMTRACE=$(command -v vmmtrace || echo vmmtrace); fi
fi
KERNEL=${1:-${VMMTRACE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vmmtrace}/lean/bzImage}
for f in "$VMMTRACE" "$KERNEL"; do
	[ -e "$f" ] || { echo "$0: $f is missing: run scripts/setup.sh first, or name a kernel" >&2; exit 2; }
done
