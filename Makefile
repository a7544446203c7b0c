# SPDX-License-Identifier: GPL-2.0
#
# rnvme top-level build.
#   make            build rnvme.ko (for KVER=, default: running kernel or the
#                   newest installed Debian 6.1 kernel) and the rnvme tool
#   make module     just the kernel module (and rnvme_kunit.ko, the KUnit
#                   suites, when the target kernel has CONFIG_KUNIT)
#   make tool       just the C++ control tool
#   make hostile    the misbehaving user-space test target (tests/hostile)
#   make siw        Soft-iWARP (siw.ko) built from the kernel's source for a
#                   test kernel without it, such as Debian's (tests/siw)
#   make check      install test dependencies, build everything, run the unit
#                   tests and the VM suites; ends with "N passed, N failed"
#   make demo       build, boot a VM, connect a Soft-RoCE target, do I/O
#   make fresh-root (opt-in) debootstrap a bare Debian 12 root with only git and
#                   make, clone HEAD into it and run make demo there
#                   (FRESH_TARGET=check for make check; tests/fresh-root.sh)
#   make bench      fio: rnvme vs in-tree nvme_rdma and nvme_tcp, ratio table
#   make soak       (opt-in) the two-VM rig's soak: SOAK_S seconds (default
#                   1800) of random faults on two multipath paths under fio
#                   write+verify (tests/rig/suites/soak.sh); SOAK_KERNEL_DIR=DIR
#                   boots the debug kernel; TAP in build/vm/soak/suites/soak.tap
#   make checkpatch run the kernel's checkpatch --strict on the module sources
#   make debug-kernel  build (or reuse) the KASAN/lockdep/kmemleak 6.12 test
#                   kernel (tests/debug-kernel/build.sh, cached under
#                   /var/cache/rnvme/debug-kernel) and rnvme.ko for it
#   make install    install rnvme.ko (into /lib/modules/KVER/updates) and the tool
#   make clean
#
# O=DIR puts everything built (module, tool, VM and check output, .debs) under
# DIR instead of ./build, so a read-only checkout works: make check O=/srv/out.
# Scripts see it as RNVME_OUT.

# Only O= chooses it (not an inherited RNVME_OUT: make -C on a copy of the
# tree, as the host tests do, must build into that copy).
RNVME_OUT := $(abspath $(or $(O),$(CURDIR)/build))
ifeq ($(RNVME_OUT),/)
$(error O=/ is not a build directory (make clean removes it))
endif
# O= means something else to the kernel's make: do not pass it down.
MAKEOVERRIDES := $(filter-out O=%,$(MAKEOVERRIDES))
unexport O
KVER  ?= $(shell tools/kbuild/kver.sh)
KDIR  ?= /lib/modules/$(KVER)/build
BUILD ?= $(RNVME_OUT)/$(KVER)
TOOL_BUILD ?= $(RNVME_OUT)/tools
# CMake build type of `make tool` (make check's unit-test build uses Debug)
TOOL_BUILD_TYPE ?= RelWithDebInfo
export KSRC RNVME_OUT

.PHONY: all module tool hostile siw check demo bench soak fresh-root checkpatch install install-module install-tool clean debug-kernel

all: module tool

# Objects go to build/KVER/kbuild (a symlink mirror of the sources), so each
# kernel has its own; the result is build/KVER/rnvme.ko, also copied to
# ./rnvme.ko for convenience (the last kernel built).
# A kernel this machine has no headers for but a build root has (a Debian 13
# kernel on Debian 12: tests/root/build.sh) is built inside that root, by its
# release's own compiler and kbuild; KROOT= (empty) builds here regardless.
KROOT ?= $(if $(KVER),$(shell tools/kbuild/kroot.sh $(KVER)))

module:
	@test -n "$(KVER)" || { echo "rnvme: cannot pick a kernel; pass KVER=" >&2; exit 1; }
ifneq ($(KROOT),)
	@echo "rnvme: building for $(KVER) in the build root $(KROOT) (tests/root/run.sh)"
	tests/root/run.sh $(KROOT) make --no-print-directory -C $(CURDIR) module \
		KVER=$(KVER) $(if $(O),O=$(RNVME_OUT)) KROOT= RNVME_BENCH_HOOKS=$(RNVME_BENCH_HOOKS)
else
	@! grep -rnE 'LINUX_VERSION_CODE|KERNEL_VERSION\(' drivers || \
		{ echo "rnvme: kernel version checks belong in include/rnvme/compat.h (one probe per API), not in drivers/" >&2; exit 1; }
	tools/kbuild/prepare.sh $(KVER) $(KDIR) $(BUILD)
	tools/kbuild/shadow.sh $(CURDIR) $(BUILD)/kbuild
	$(MAKE) -C $(KDIR) M=$(BUILD)/kbuild RNVME_GEN=$(BUILD) RNVME_BENCH_HOOKS=$(RNVME_BENCH_HOOKS) modules
	tools/kbuild/check-layout.sh $(KVER) $(KDIR) $(BUILD) $(BUILD)/kbuild/rnvme.ko
	cp $(BUILD)/kbuild/rnvme.ko $(BUILD)/rnvme.ko
	$(if $(O),,cp $(BUILD)/rnvme.ko $(CURDIR)/rnvme.ko)
	rm -f $(BUILD)/rnvme_kunit.ko
	if grep -qs '^CONFIG_KUNIT=' $(KDIR)/include/config/auto.conf; then \
		cp $(BUILD)/kbuild/rnvme_kunit.ko $(BUILD)/rnvme_kunit.ko; fi
endif

tool:
	cmake -S tools/rnvme -B $(TOOL_BUILD) -DCMAKE_BUILD_TYPE=$(TOOL_BUILD_TYPE) >/dev/null
	cmake --build $(TOOL_BUILD) -j2

# Test equipment for suite 15-hostile, not part of the product.
HOSTILE_CXXFLAGS = -std=c++20 -O2 -g -Wall -Wextra -Werror -Wshadow
hostile:
	@mkdir -p $(RNVME_OUT)/hostile
	$(CXX) $(HOSTILE_CXXFLAGS) -o $(RNVME_OUT)/hostile/rnvme-hostile-target \
		tests/hostile/target.cc -lrdmacm -libverbs

# Test equipment too: build/KVER/siw/siw.ko, which the guest loads when the
# kernel has no siw of its own.
siw:
	tests/siw/build.sh $(KVER) $(KDIR) $(BUILD)/siw

check:
	tests/check.sh

demo:
	tests/demo.sh

bench:
	tests/bench.sh

# The soak boots the test kernel make check's rig uses (tests/lib/kver.sh, the
# Debian 6.1 one) unless KVER= is given; SOAK_KERNEL_DIR=DIR (a debug-kernel
# cache directory, rnvme built for it by make debug-kernel) boots that
# instead. The guest runner's per-suite limit and the VMs' limit grow with
# SOAK_S. TEST_SOAK_SEED=N repeats a fault schedule.
SOAK_S ?= 1800
SOAK_OUT = $(RNVME_OUT)/vm/soak
SOAK_KERNEL = $(if $(SOAK_KERNEL_DIR),--kernel-dir $(SOAK_KERNEL_DIR),$(if $(filter command line environment environment override,$(origin KVER)),--kver $(KVER)))
soak:
	@case "$(SOAK_S)" in ''|*[!0-9]*) echo "soak: SOAK_S=$(SOAK_S) is not a number of seconds" >&2; exit 2 ;; esac
	@echo "soak: $(SOAK_S) s of faults on the two-VM rig (about $$(( ($(SOAK_S) + 300) / 60 )) min in all); results in $(SOAK_OUT)"
	@if [ "$$(id -u)" = 0 ] && [ "$${RNVME_SKIP_SETUP:-0}" != 1 ]; then \
		echo "== installing what the soak needs (tests/setup-host.sh)"; \
		mkdir -p "$(RNVME_OUT)"; \
		if ! tests/setup-host.sh > "$(RNVME_OUT)/soak-setup.log" 2>&1; then \
			tail -n 30 "$(RNVME_OUT)/soak-setup.log" >&2; \
			echo "soak: tests/setup-host.sh failed (the lines above; log: $(RNVME_OUT)/soak-setup.log)" >&2; exit 1; \
		fi; \
		grep -E '^(==|setup-host|KVER)' "$(RNVME_OUT)/soak-setup.log" || true; \
	fi
	@if [ -z "$(SOAK_KERNEL_DIR)" ]; then \
		k=$(if $(filter command line environment environment override,$(origin KVER)),$(KVER),$$(tests/lib/kver.sh)) && \
		echo "== building rnvme.ko for $$k" && mkdir -p "$(RNVME_OUT)" && \
		$(MAKE) --no-print-directory module KVER="$$k" O="$(RNVME_OUT)" > "$(RNVME_OUT)/soak-module.log" 2>&1 || \
		{ echo "soak: make module KVER=$$k failed (log: $(RNVME_OUT)/soak-module.log)" >&2; exit 1; }; \
	fi
	@rc=0; SUITES=soak TEST_SOAK_S=$(SOAK_S) RNVME_SUITE_TIMEOUT=$$(($(SOAK_S) + 700)) \
		tests/run-all.sh --rig $(SOAK_KERNEL) --timeout $$(($(SOAK_S) + 900)) --out $(SOAK_OUT) || rc=$$?; \
	grep -E '^# soak(:| summary:)' $(SOAK_OUT)/suites/soak.tap 2>/dev/null | grep -v '^# soak: seed' ; \
	echo "soak: TAP $(SOAK_OUT)/suites/soak.tap, raw data $(SOAK_OUT)/soak/, host guest $(SOAK_OUT)/console.log, target guest $(SOAK_OUT)/target/"; \
	exit $$rc

fresh-root:
	tests/fresh-root.sh --target $(or $(FRESH_TARGET),demo)

# The debug kernel's build tree is KDIR, its extracted source KSRC.
debug-kernel:
	@dir=$$(tests/debug-kernel/build.sh | tail -n 1) && \
	$(MAKE) --no-print-directory module KVER=$$(cat $$dir/kernel.release) \
		KDIR=$$dir/build KSRC=$$dir/src && \
	echo "debug kernel: $$dir (run: tests/run-all.sh --kernel-dir $$dir)"

checkpatch:
	tools/kbuild/checkpatch.sh drivers/rnvme/*.[ch] drivers/rnvme/tests/*.[ch] include/rnvme/*.h

install: install-module install-tool

install-module: module
	install -D -m 0644 $(BUILD)/rnvme.ko /lib/modules/$(KVER)/updates/rnvme.ko
	depmod -a $(KVER)

install-tool: tool
	cmake --install $(TOOL_BUILD)

clean:
	rm -rf $(RNVME_OUT) $(if $(O),,rnvme.ko)

# ---- packaging (tools/packaging; see Documentation/packaging.rst) ----
#   make deb           build rnvme-dkms and rnvme-tools .debs into build/debs/
#   make dkms-install  register this tree with DKMS (/usr/src/rnvme-VER),
#                      build and install for KVER, install the modprobe.d redirect
#   make dkms-remove   undo dkms-install (all kernels)
RNVME_PKG_VER = $(shell sed -n 's/^PACKAGE_VERSION="\{0,1\}\([^"]*\)"\{0,1\}$$/\1/p' dkms.conf)
.PHONY: deb dkms-install dkms-remove
deb:
	tools/packaging/build-debs.sh

dkms-install:
	tools/packaging/build-debs.sh --stage-only /usr/src/rnvme-$(RNVME_PKG_VER)
	dkms add -m rnvme -v $(RNVME_PKG_VER)
	dkms build -m rnvme -v $(RNVME_PKG_VER) -k $(KVER)
	dkms install -m rnvme -v $(RNVME_PKG_VER) -k $(KVER)
	install -D -m 0644 tools/packaging/modprobe.d/rnvme.conf /etc/modprobe.d/rnvme.conf

dkms-remove:
	-dkms remove -m rnvme -v $(RNVME_PKG_VER) --all
	rm -rf /usr/src/rnvme-$(RNVME_PKG_VER)
	rm -f /etc/modprobe.d/rnvme.conf
