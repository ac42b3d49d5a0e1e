#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What vmmtrace finds in a kernel image without booting it: symbols
# recovered from the image's own kallsyms tables (no System.map needed), and
# the function-entry slots it can patch, with their bytes and state.
#
#   examples/symbols.sh [KERNEL]
. "$(dirname "$0")/common.sh"

echo "### vmmtrace symbols KERNEL start_kernel setup_arch"
"$VMMTRACE" symbols "$KERNEL" start_kernel setup_arch
echo "### vmmtrace symbols KERNEL 'vfs_*' (the first five)"
"$VMMTRACE" symbols "$KERNEL" 'vfs_*' 2>/dev/null | sed -n 1,5p
echo "### vmmtrace symbols KERNEL --slots 'vfs_read' 'vfs_write'"
"$VMMTRACE" symbols "$KERNEL" --slots vfs_read vfs_write
