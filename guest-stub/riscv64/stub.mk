# SPDX-License-Identifier: GPL-2.0
# The riscv64 guest stub, cross-assembled with Debian's riscv64-linux-gnu
# tools (scripts/packages-arch.txt), linked at 0 so that no relocation is
# left, and flattened: its config block at offset 0, the entry after it.
# Embedded in vmmtrace as vt_stub_blob_riscv64, which the QEMU host
# installs in a riscv64 guest.
RV_CC      ?= riscv64-linux-gnu-gcc
RV_LD      ?= riscv64-linux-gnu-ld
RV_OBJCOPY ?= riscv64-linux-gnu-objcopy
RV_NM      ?= riscv64-linux-gnu-nm
RV_STUB_DIR := $(O)/guest-stub/riscv64
RV_STUB_OBJ := $(RV_STUB_DIR)/stub.o
RV_STUB_ELF := $(RV_STUB_DIR)/stub.elf
RV_STUB_BIN := $(RV_STUB_DIR)/stub.bin
RV_STUB_EMB := $(RV_STUB_DIR)/stub-embed.o

$(RV_STUB_OBJ): guest-stub/riscv64/stub.S proto/trace.h
	@mkdir -p $(dir $@)
	$(RV_CC) -I. -march=rv64ima_zicsr -mabi=lp64 -ffreestanding -nostdlib -c -o $@ $<

$(RV_STUB_ELF): $(RV_STUB_OBJ)
	$(RV_LD) -Ttext=0 --no-relax -e vt_stub_entry -o $@ $<

# The assembler rounds .text up to its 4 KiB alignment (the doorbell's
# page): the image ends at vt_stub_end.
$(RV_STUB_BIN): $(RV_STUB_ELF)
	$(RV_OBJCOPY) -O binary -j .text $< $@
	truncate -s $$(printf '%d' 0x$$($(RV_NM) $< | awk '$$3 == "vt_stub_end" { print $$1 }')) $@

$(RV_STUB_EMB): $(RV_STUB_BIN) guest-stub/embed.S
	$(CC) -c -DSTUB_BIN='"$(RV_STUB_BIN)"' -DSTUB_SYM=vt_stub_blob_riscv64 -o $@ guest-stub/embed.S

LIB_OBJ += $(RV_STUB_EMB)
guest-stub:: $(RV_STUB_BIN)
