#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Debian's stock arm64 kernel under QEMU with --graph --trace '*' to the
# reboot, pointer authentication and BTI on: the part of
# tests/qemu/stock-arm64.sh that takes longest, in the long tier.
STOCK_ARM64_PART=graph exec bash "$(dirname "$0")/../qemu/stock-arm64.sh"
