# SPDX-License-Identifier: GPL-2.0
# vmmtrace: one non-recursive Makefile. `make`, `make check`, `make SAN=address,undefined`,
# `make WERROR=0` to build without -Werror.
# For another host arch: `make CC=aarch64-linux-gnu-gcc STATIC=1 O=build/arm64
# build/arm64/vmmtrace` (docs/TESTING.md, "The arm64 test machine").
.DEFAULT_GOAL := all
O        ?= build
CC       ?= cc
WERROR   ?= 1
SAN      ?=
STATIC   ?= 0
# The host arch is the compiler's target: vmmtrace runs where it is built
# for, and its KVM host-arch code (vmm/kvm-$(HOSTARCH)/) follows.
CC_MACHINE := $(shell $(CC) -dumpmachine 2>/dev/null)
HOSTARCH ?= $(if $(filter aarch64-%,$(CC_MACHINE)),arm64,$(firstword $(subst -, ,$(CC_MACHINE))))
ifeq ($(wildcard vmm/kvm-$(HOSTARCH)/*.c),)
$(error HOSTARCH=$(HOSTARCH) (from $(CC) -dumpmachine): vmmtrace has no vmm/kvm-$(HOSTARCH)/)
endif
# The x86_64 guest stub is x86 code whatever the host: on another host, a cross compiler assembles it.
X86_CC      ?= $(if $(filter x86_64,$(HOSTARCH)),$(CC),x86_64-linux-gnu-gcc)
X86_OBJCOPY ?= $(if $(filter x86_64,$(HOSTARCH)),objcopy,x86_64-linux-gnu-objcopy)

CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -MMD -MP -I. -pthread
ifeq ($(WERROR),1)
CFLAGS_BASE += -Werror
endif
ifneq ($(SAN),)
CFLAGS_BASE += -fsanitize=$(SAN) -fno-omit-frame-pointer
LDFLAGS_SAN := -fsanitize=$(SAN)
endif
CFLAGS := $(CFLAGS_BASE) $(EXTRA_CFLAGS)
LIBS   := -lbpf -lseccomp -lz -llzma -lbz2 -lzstd -llz4 -lurcu-memb -lurcu-common -lfdt -pthread
LDFLAGS := $(LDFLAGS_SAN) $(EXTRA_LDFLAGS)
# STATIC=1: one file that runs on a machine with none of the libraries
# (the arm64 test machine's initramfs); libbpf's static archive needs libelf.
ifeq ($(STATIC),1)
LDFLAGS += -static
LIBS    += -lelf
endif

# arch/ holds the pure per-arch slot encodings, built for every arch
# (vmmtrace encode --arch). vmm/ is grouped by layer; the host-arch VMM code
# (vmm/kvm-$(HOSTARCH)/) extends the KVM core and is chosen here, at link time.
# Dependencies point down the layers: scripts/check-layering.sh.
ARCH_PURE_SRC := $(sort $(wildcard arch/*.c arch/*/*.c))
VMM_LAYERS    := cli control trace output guest image host kvm qemu devices util
VMM_SRC       := $(filter-out vmm/cli/main.c,$(sort $(foreach l,$(VMM_LAYERS),$(wildcard vmm/$(l)/*.c))))
ARCH_HOST_SRC := $(sort $(wildcard vmm/kvm-$(HOSTARCH)/*.c))
LIB_SRC       := $(VMM_SRC) $(ARCH_PURE_SRC) $(ARCH_HOST_SRC)
LIB_OBJ       := $(LIB_SRC:%.c=$(O)/%.o)
# The guest stub is freestanding code that runs inside the guest; its rules
# live next to it and add its embedded image to LIB_OBJ.
include guest-stub/x86_64/stub.mk
include guest-stub/arm64/stub.mk
include guest-stub/riscv64/stub.mk
include guest-stub/loongarch64/stub.mk
include tests/guest/payload/payload.mk
include tests/guest/psci-arm64/psci.mk
LIB           := $(O)/libvmmtrace.a
BIN           := $(O)/vmmtrace

# The test programs by tier (tests/run-all.sh; docs/TESTING.md): unit
# (hermetic), images (real kernel files, nothing booted), qemu.
UNIT_SRC  := $(sort $(wildcard tests/unit/test-*.c))
UNIT_BIN  := $(UNIT_SRC:%.c=$(O)/%)
IMAGES_SRC := $(sort $(wildcard tests/images/test-*.c))
IMAGES_BIN := $(IMAGES_SRC:%.c=$(O)/%)
QEMUT_SRC := $(sort $(wildcard tests/qemu/test-*.c))
QEMUT_BIN := $(QEMUT_SRC:%.c=$(O)/%)

all: $(BIN) $(UNIT_BIN) $(IMAGES_BIN) $(QEMUT_BIN) guest-stub

# A dependency file names its target under both spellings of O, relative
# and absolute (scripts/arm64-machine.sh gives $$root/build/arm64): with
# one only, a build under the other found no header dependencies and kept
# objects compiled against old headers.
dep_targets = -MT $(patsubst $(CURDIR)/%,%,$(abspath $(1))) -MT $(abspath $(1))

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(call dep_targets,$@) -c -o $@ $<

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

# vmmtrace --version: the release (VERSION) and the commit it was built from.
VERSION  := $(shell cat VERSION)
GIT_REV  := $(shell git rev-parse --short=12 HEAD 2>/dev/null)
$(O)/vmm/cli/main.o: CFLAGS += -DVMMTRACE_VERSION='"$(VERSION)$(if $(GIT_REV), ($(GIT_REV)))"'
# The commit read above, kept in a file that changes only with it: a new
# commit rebuilds main.o, so --version never names an older one.
GIT_REV_FILE := $(O)/.git-rev
$(shell mkdir -p $(O) && { echo '$(GIT_REV)' | cmp -s - $(GIT_REV_FILE) || echo '$(GIT_REV)' >$(GIT_REV_FILE); })
$(O)/vmm/cli/main.o: VERSION $(GIT_REV_FILE)

$(BIN): $(O)/vmm/cli/main.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(O)/tests/%: tests/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(call dep_targets,$@) -o $@ $< $(LIB) $(LIBS)

guest-stub::

# Packages and cached guests first (scripts/prepare-tests.sh): the build
# itself needs the packages on a machine where scripts/setup.sh never ran.
NPROC := $(shell nproc 2>/dev/null || echo 2)
check:
	scripts/prepare-tests.sh
	$(MAKE) -j$(NPROC) all
	$(MAKE) -j$(NPROC) O=$(O)/san SAN=address,undefined all
	tests/run-all.sh

# The long tiers (docs/TESTING.md): KVM's stock-kernel boots, stress and
# exact counts, and the KVM tests with long boots under the sanitizers.
check-long:
	scripts/prepare-tests.sh
	$(MAKE) -j$(NPROC) all
	$(MAKE) -j$(NPROC) O=$(O)/san SAN=address,undefined all
	tests/run-all.sh e2e san-long

# make install [PREFIX=/usr/local] [DESTDIR=...]: the binary, its man
# pages, the examples and the user documentation.
PREFIX ?= /usr/local
DESTDIR ?=
MAN_PAGES := $(sort $(wildcard docs/man/*.1))
install: $(BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/doc/vmmtrace/examples
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/vmmtrace
	install -m 644 $(MAN_PAGES) $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 README.md LICENSE docs/*.md $(DESTDIR)$(PREFIX)/share/doc/vmmtrace/
	install -m 644 examples/README.md $(DESTDIR)$(PREFIX)/share/doc/vmmtrace/examples/
	install -m 755 examples/*.sh $(DESTDIR)$(PREFIX)/share/doc/vmmtrace/examples/

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/vmmtrace $(MAN_PAGES:docs/man/%=$(DESTDIR)$(PREFIX)/share/man/man1/%)
	rm -rf $(DESTDIR)$(PREFIX)/share/doc/vmmtrace

unit: $(UNIT_BIN)
	tests/run-all.sh unit

clean:
	rm -rf $(O)

.PHONY: all check check-long unit clean guest-stub install uninstall
-include $(shell find $(O) -name '*.d' 2>/dev/null)
