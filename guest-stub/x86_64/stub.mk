# SPDX-License-Identifier: GPL-2.0
# The x86_64 guest stub: assembled freestanding, flattened to a binary image
# (its config block at offset 0, the entry after it) and embedded in vmmtrace.
STUB_DIR := $(O)/guest-stub/x86_64
STUB_OBJ := $(STUB_DIR)/stub.o
STUB_BIN := $(STUB_DIR)/stub.bin
STUB_EMB := $(STUB_DIR)/stub-embed.o

$(STUB_OBJ): guest-stub/x86_64/stub.S guest-stub/x86_64/stub-macros.S guest-stub/x86_64/stub-chain.S proto/trace.h
	@mkdir -p $(dir $@)
	$(X86_CC) -I. -ffreestanding -nostdlib -fno-pic -c -o $@ $<

$(STUB_BIN): $(STUB_OBJ)
	$(X86_OBJCOPY) -O binary -j .text $< $@

# The host side sees the image as vt_stub_blob_x86_64[] .. vt_stub_blob_x86_64_end.
$(STUB_EMB): $(STUB_BIN) guest-stub/embed.S guest-stub/x86_64/stub.mk
	$(CC) -c -DSTUB_BIN='"$(STUB_BIN)"' -DSTUB_SYM=vt_stub_blob_x86_64 -o $@ guest-stub/embed.S

LIB_OBJ += $(STUB_EMB)
guest-stub:: $(STUB_BIN)
