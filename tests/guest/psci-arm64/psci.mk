# SPDX-License-Identifier: GPL-2.0
# The PSCI payload (docs/TEST-GUEST.md, "The PSCI payload"): a freestanding
# arm64 guest cross-built with Debian's aarch64-linux-gnu-gcc, as the arm64
# stub is, into a raw Image that vmmtrace's arm64 KVM host boots
# (tests/kvm-arm64/trace.sh runs it in the arm64 machine). Guest code: its
# own flags, never the host's. The MMU stays off, so strict alignment.
PSCI_A64_DIR   := $(O)/tests/guest/psci-arm64
PSCI_A64_IMAGE := $(PSCI_A64_DIR)/psci.Image
PSCI_A64_ELF   := $(PSCI_A64_DIR)/psci.elf
PSCI_A64_OBJ   := $(PSCI_A64_DIR)/head.o $(PSCI_A64_DIR)/psci.o
PSCI_A64_CFLAGS := -std=gnu11 -O2 -Wall -Wextra -Werror -ffreestanding -nostdlib -fno-builtin -fno-pic \
	-mgeneral-regs-only -mstrict-align -fno-stack-protector -fno-asynchronous-unwind-tables \
	-fno-tree-loop-distribute-patterns

$(PSCI_A64_DIR)/psci.o: tests/guest/psci-arm64/psci.c
	@mkdir -p $(dir $@)
	$(A64_CC) $(PSCI_A64_CFLAGS) -c -o $@ $<

$(PSCI_A64_DIR)/head.o: tests/guest/psci-arm64/head.S
	@mkdir -p $(dir $@)
	$(A64_CC) -c -o $@ $<

$(PSCI_A64_ELF): $(PSCI_A64_OBJ) tests/guest/psci-arm64/psci.ld
	$(A64_CC) -nostdlib -static -Wl,--build-id=none -Wl,-z,noexecstack -Wl,--no-warn-rwx-segments -T tests/guest/psci-arm64/psci.ld -o $@ $(PSCI_A64_OBJ)

$(PSCI_A64_IMAGE): $(PSCI_A64_ELF)
	$(A64_OBJCOPY) -O binary $< $@

all: $(PSCI_A64_IMAGE)
