#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The guest kernel's handshake with KVM: which paravirtual features KVM
# offered it (CPUID 0x40000001), which it turned on, when, on which vCPU,
# from which function and with which value (kvm-clock's pvclock area,
# steal time's, PV EOI's flag). The table goes to stderr after the run's
# summary; no trace is written (add --trace 'kvm*' -o boot.txt to get the
# kvm:msr events it was built from, next to the guest's kvm functions).
# --stop-at ends the guest once the kernel unpacks its initramfs, after its
# handshake and its switch to kvm-clock.
#
#   examples/handshake.sh [KERNEL]      e.g. Debian's /boot/vmlinuz-*
. "$(dirname "$0")/common.sh"

"$VMMTRACE" boot "$KERNEL" --handshake --stop-at populate_rootfs --console /dev/null
