# SPDX-License-Identifier: GPL-2.0
# The KVM tier's payload: a tiny freestanding x86_64 "kernel" (docs/TEST-GUEST.md,
# "The payload"). Compiled with the entry-slot flags Linux uses for its own
# text (-pg -mfentry -mrecord-mcount, -mcmodel=kernel) and linked like a
# vmlinux, so vmmtrace boots and traces it as it does a kernel, in
# milliseconds. Its own flags, not CFLAGS: it is guest code, never built
# with the host's sanitizers.
PAYLOAD_DIR  := $(O)/tests/guest/payload
PAYLOAD_ELF  := $(PAYLOAD_DIR)/payload.elf
PAYLOAD_LDS  := tests/guest/payload/payload.ld
PAYLOAD_C    := $(sort $(wildcard tests/guest/payload/*.c))
PAYLOAD_S    := $(sort $(wildcard tests/guest/payload/*.S))
PAYLOAD_OBJ  := $(PAYLOAD_C:tests/guest/payload/%.c=$(PAYLOAD_DIR)/%.o) \
		$(PAYLOAD_S:tests/guest/payload/%.S=$(PAYLOAD_DIR)/%.o)
# No SSE (the host's emulator lacks much of it), no red zone (NMIs land on
# the current stack), no calls the compiler invents behind the code's back.
PAYLOAD_CFLAGS := -std=gnu11 -O2 -Wall -Wextra -Werror -MMD -MP -I. \
	-ffreestanding -nostdlib -fno-builtin -fno-tree-loop-distribute-patterns \
	-fno-pic -fno-pie -mcmodel=kernel -mno-red-zone -mgeneral-regs-only \
	-fno-stack-protector -fcf-protection=none -fno-asynchronous-unwind-tables \
	-fno-optimize-sibling-calls -pg -mfentry -mrecord-mcount

$(PAYLOAD_C:tests/guest/payload/%.c=$(PAYLOAD_DIR)/%.o): $(PAYLOAD_DIR)/%.o: tests/guest/payload/%.c
	@mkdir -p $(dir $@)
	$(CC) $(PAYLOAD_CFLAGS) -c -o $@ $<

$(PAYLOAD_S:tests/guest/payload/%.S=$(PAYLOAD_DIR)/%.o): $(PAYLOAD_DIR)/%.o: tests/guest/payload/%.S
	@mkdir -p $(dir $@)
	$(CC) -MMD -MP -I. -c -o $@ $<

$(PAYLOAD_ELF): $(PAYLOAD_OBJ) $(PAYLOAD_LDS)
	$(LD) -T $(PAYLOAD_LDS) -z noexecstack -o $@ $(PAYLOAD_OBJ)

all: $(PAYLOAD_ELF)
