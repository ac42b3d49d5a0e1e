#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The lean 6.12 kernels through every check the 6.1 lean kernels pass
# (tests/qemu/lean612.sh whole: '*' to the reboot, 20 attach/detach
# cycles, riscv64's exact counts, x86-qemu.sh on IBT, kCFI and call
# padding); make check runs its quick part. About 8 minutes.
LEAN612_FULL=1 exec bash "$(dirname "$0")/../qemu/lean612.sh" "$@"
