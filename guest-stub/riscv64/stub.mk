# SPDX-License-Identifier: GPL-2.0
# The riscv64 guest stub, cross-assembled with Debian's riscv64-linux-gnu
# tools (scripts/packages-arch.txt), linked at 0 so that no relocation is
# left, and flattened: its config block at offset 0, the entry after it.
# The QEMU backend's tests install it for now; it is not yet embedded.
RV_CC      ?= riscv64-linux-gnu-gcc
RV_LD      ?= riscv64-linux-gnu-ld
RV_OBJCOPY ?= riscv64-linux-gnu-objcopy
RV_STUB_DIR := $(O)/guest-stub/riscv64
RV_STUB_OBJ := $(RV_STUB_DIR)/stub.o
RV_STUB_ELF := $(RV_STUB_DIR)/stub.elf
RV_STUB_BIN := $(RV_STUB_DIR)/stub.bin

$(RV_STUB_OBJ): guest-stub/riscv64/stub.S proto/trace.h
	@mkdir -p $(dir $@)
	$(RV_CC) -I. -march=rv64ima_zicsr -mabi=lp64 -ffreestanding -nostdlib -c -o $@ $<

$(RV_STUB_ELF): $(RV_STUB_OBJ)
	$(RV_LD) -Ttext=0 --no-relax -e vt_stub_entry -o $@ $<

$(RV_STUB_BIN): $(RV_STUB_ELF)
	$(RV_OBJCOPY) -O binary -j .text $< $@

guest-stub:: $(RV_STUB_BIN)
