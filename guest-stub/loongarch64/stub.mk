# SPDX-License-Identifier: GPL-2.0
# The loongarch64 guest stub, assembled by clang-19 (Debian 12 has no
# loongarch64 binutils or gcc; scripts/packages-arch.txt), linked at 0 by
# ld.lld-19 so that no relocation is left, and flattened by llvm-objcopy-19:
# its config block at offset 0, the entry after it, vt_stub_doorbell on the
# next 16 KiB page. Embedded in vmmtrace as vt_stub_blob_loongarch64, which
# the QEMU host installs (16 KiB aligned) in a loongarch64 guest.
LA_CC      ?= clang-19
LA_LD      ?= ld.lld-19
LA_OBJCOPY ?= llvm-objcopy-19
LA_NM      ?= llvm-nm-19
LA_READELF ?= llvm-readelf-19
LA_STUB_DIR := $(O)/guest-stub/loongarch64
LA_STUB_OBJ := $(LA_STUB_DIR)/stub.o
LA_STUB_ELF := $(LA_STUB_DIR)/stub.elf
LA_STUB_BIN := $(LA_STUB_DIR)/stub.bin
LA_STUB_EMB := $(LA_STUB_DIR)/stub-embed.o

# clang-19 does not relax assembler input for LoongArch (and ignores
# -mno-relax there, with a warning), so branches to local labels are
# resolved when assembling. The one relocation left in the object is
# pcaddi's PCREL20_S2 to the config block (pc-relative: the link at 0
# resolves it and the image stays position independent); any other kind
# (R_LARCH_RELAX, an absolute address, a branch to a global symbol) fails.
$(LA_STUB_OBJ): guest-stub/loongarch64/stub.S proto/trace.h
	@mkdir -p $(dir $@)
	$(LA_CC) --target=loongarch64-linux-gnu -I. -ffreestanding -nostdlib -c -o $@ $<
	@! $(LA_READELF) -rW $@ | grep R_LARCH | grep -v R_LARCH_PCREL20_S2 >&2 || { echo "$@: relocations other than pcaddi's PCREL20_S2 left" >&2; rm -f $@; exit 1; }

$(LA_STUB_ELF): $(LA_STUB_OBJ)
	$(LA_LD) -Ttext=0 --no-relax -e vt_stub_entry -o $@ $<

# The assembler rounds .text up to its 16 KiB alignment (the doorbell's
# page): the image ends at vt_stub_end.
$(LA_STUB_BIN): $(LA_STUB_ELF)
	$(LA_OBJCOPY) -O binary -j .text $< $@
	truncate -s $$(printf '%d' 0x$$($(LA_NM) $< | awk '$$3 == "vt_stub_end" { print $$1 }')) $@

$(LA_STUB_EMB): $(LA_STUB_BIN) guest-stub/embed.S
	$(CC) -c -DSTUB_BIN='"$(LA_STUB_BIN)"' -DSTUB_SYM=vt_stub_blob_loongarch64 -o $@ guest-stub/embed.S

LIB_OBJ += $(LA_STUB_EMB)
guest-stub:: $(LA_STUB_BIN)
