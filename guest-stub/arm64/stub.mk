# SPDX-License-Identifier: GPL-2.0
# The arm64 guest stub, cross-assembled with Debian's aarch64-linux-gnu-gcc
# (scripts/packages-arch.txt) into a flat image: its config block at offset
# 0, the entry after it; embedded in vmmtrace as vt_stub_blob_arm64, which
# the QEMU host installs in an arm64 guest. The same source built with
# VT_STUB_ONE_PAGE (a full ring waits on the stub's own page) is
# vt_stub_blob_arm64_1p, for a kernel whose stub has only _end's guard page.
A64_CC      ?= aarch64-linux-gnu-gcc
A64_OBJCOPY ?= aarch64-linux-gnu-objcopy
A64_READELF ?= aarch64-linux-gnu-readelf
A64_STUB_DIR := $(O)/guest-stub/arm64
A64_STUB_OBJ := $(A64_STUB_DIR)/stub.o
A64_STUB_BIN := $(A64_STUB_DIR)/stub.bin
A64_STUB_EMB := $(A64_STUB_DIR)/stub-embed.o
A64_STUB1_OBJ := $(A64_STUB_DIR)/stub-1p.o
A64_STUB1_BIN := $(A64_STUB_DIR)/stub-1p.bin
A64_STUB1_EMB := $(A64_STUB_DIR)/stub-1p-embed.o

$(A64_STUB_OBJ): guest-stub/arm64/stub.S proto/trace.h
	@mkdir -p $(dir $@)
	$(A64_CC) -I. -ffreestanding -nostdlib -fno-pic -c -o $@ $<
	@# A flat image keeps no relocation: a branch to a global symbol would stay "b .".
	@! $(A64_READELF) -rW $@ | grep -q R_AARCH64 || { echo "$@: relocations left: branch to local labels" >&2; rm -f $@; exit 1; }

$(A64_STUB1_OBJ): guest-stub/arm64/stub.S proto/trace.h
	@mkdir -p $(dir $@)
	$(A64_CC) -I. -DVT_STUB_ONE_PAGE -ffreestanding -nostdlib -fno-pic -c -o $@ $<
	@# A flat image keeps no relocation: a branch to a global symbol would stay "b .".
	@! $(A64_READELF) -rW $@ | grep -q R_AARCH64 || { echo "$@: relocations left: branch to local labels" >&2; rm -f $@; exit 1; }

$(A64_STUB_BIN): $(A64_STUB_OBJ)
	$(A64_OBJCOPY) -O binary -j .text $< $@

$(A64_STUB1_BIN): $(A64_STUB1_OBJ)
	$(A64_OBJCOPY) -O binary -j .text $< $@
	@test "$$(stat -c %s $@)" -le 4096 || { echo "$@: more than a page" >&2; rm -f $@; exit 1; }

$(A64_STUB_EMB): $(A64_STUB_BIN) guest-stub/embed.S
	$(CC) -c -DSTUB_BIN='"$(A64_STUB_BIN)"' -DSTUB_SYM=vt_stub_blob_arm64 -o $@ guest-stub/embed.S

$(A64_STUB1_EMB): $(A64_STUB1_BIN) guest-stub/embed.S
	$(CC) -c -DSTUB_BIN='"$(A64_STUB1_BIN)"' -DSTUB_SYM=vt_stub_blob_arm64_1p -o $@ guest-stub/embed.S

LIB_OBJ += $(A64_STUB_EMB) $(A64_STUB1_EMB)
guest-stub:: $(A64_STUB_BIN) $(A64_STUB1_BIN)
