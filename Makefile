# SPDX-License-Identifier: GPL-2.0-only
#
# sroce: software RoCEv2 device (kernel module) and its rdma-core provider.
#
#   make                  build sroce.ko (Debian 6.1 headers) and the provider
#   make KVER=6.12.*+deb12-amd64   build the module for another installed kernel
#   make KDIR=/path       build the module against a kernel build tree
#   make check            every test: host unit tests, checkpatch, both kernels'
#                         builds, every VM selftest on 6.1 and on 6.12, the
#                         debug lane and the two-host lane
#   make check-debug      only the debug lane: the KASAN/lockdep/kmemleak/UBSAN
#                         guest kernel (scripts/debug-kernel) and its selftests
#   make demo             boot a guest with two sroce devices and show them
#   make install [DESTDIR=...] / make uninstall
#
# Each kernel version gets its own build directory (build/kmod/KVER) whose
# sources are symlinks into kernel/, so builds for 6.1 and 6.12 coexist.

SHELL := /bin/bash
TOP := $(CURDIR)

# Default: the newest installed Debian 6.1 kernel.  KVER may be a glob.
KVER_DEFAULT := $(notdir $(lastword $(sort $(wildcard /lib/modules/6.1.0-*-amd64))))
KVER ?= $(KVER_DEFAULT)
override KVER := $(notdir $(lastword $(sort $(wildcard /lib/modules/$(KVER)))))$(if $(wildcard /lib/modules/$(KVER)),,$(KVER))
KDIR ?= /lib/modules/$(KVER)/build
KBUILD_DIR := $(TOP)/build/kmod/$(KVER)
PROVIDER_BUILD := $(TOP)/build/provider

DESTDIR ?=
MULTIARCH := $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
PROVIDER_DIR := /usr/lib/$(MULTIARCH)/libibverbs
DRIVER_CONF_DIR := /etc/libibverbs.d
MODULE_DIR := /lib/modules/$(KVER)/updates

.PHONY: all module provider check check-debug unit checkpatch demo bench install uninstall clean

all: module provider

module:
	@test -d "$(KDIR)" || { echo "error: no kernel build tree at $(KDIR) (install linux-headers-$(KVER), or pass KDIR=)" >&2; exit 1; }
	@scripts/kbuild-tree "$(TOP)" "$(KBUILD_DIR)"
	$(MAKE) -C "$(KDIR)" M="$(KBUILD_DIR)" W=1 SROCE_KTEST=m modules
	@echo "built $(KBUILD_DIR)/sroce.ko for $(KVER)"

provider:
	cmake -S provider -B "$(PROVIDER_BUILD)" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build "$(PROVIDER_BUILD)" -j$$(nproc)

unit: provider
	ctest --test-dir "$(PROVIDER_BUILD)" --output-on-failure

checkpatch:
	scripts/checkpatch

check:
	scripts/check

check-debug:
	scripts/check --debug

demo: all
	scripts/demo

bench: all
	scripts/bench

install: all
	install -D -m 0644 "$(KBUILD_DIR)/sroce.ko" "$(DESTDIR)$(MODULE_DIR)/sroce.ko"
	install -D -m 0755 "$(PROVIDER_BUILD)/libsroce-rdmav34.so" "$(DESTDIR)$(PROVIDER_DIR)/libsroce-rdmav34.so"
	install -D -m 0644 provider/sroce.driver "$(DESTDIR)$(DRIVER_CONF_DIR)/sroce.driver"
	@if [ -z "$(DESTDIR)" ]; then depmod -a "$(KVER)"; fi

uninstall:
	rm -f "$(DESTDIR)$(MODULE_DIR)/sroce.ko" "$(DESTDIR)$(PROVIDER_DIR)/libsroce-rdmav34.so" \
	      "$(DESTDIR)$(DRIVER_CONF_DIR)/sroce.driver"
	@if [ -z "$(DESTDIR)" ] && [ -d "/lib/modules/$(KVER)" ]; then depmod -a "$(KVER)"; fi

clean:
	rm -rf build
