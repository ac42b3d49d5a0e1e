# SPDX-License-Identifier: GPL-2.0
# The arm64 guest stub, cross-assembled with Debian's aarch64-linux-gnu-gcc
# (scripts/packages-arch.txt) into a flat image: its config block at offset
# 0, the entry after it. The QEMU backend's tests install it for now; it is
# not yet embedded in vmmtrace.
A64_CC      ?= aarch64-linux-gnu-gcc
A64_OBJCOPY ?= aarch64-linux-gnu-objcopy
A64_STUB_DIR := $(O)/guest-stub/arm64
A64_STUB_OBJ := $(A64_STUB_DIR)/stub.o
A64_STUB_BIN := $(A64_STUB_DIR)/stub.bin

$(A64_STUB_OBJ): guest-stub/arm64/stub.S proto/trace.h
	@mkdir -p $(dir $@)
	$(A64_CC) -I. -ffreestanding -nostdlib -fno-pic -c -o $@ $<

$(A64_STUB_BIN): $(A64_STUB_OBJ)
	$(A64_OBJCOPY) -O binary -j .text $< $@

guest-stub:: $(A64_STUB_BIN)
