# SPDX-License-Identifier: GPL-2.0
#
# rnvme top-level build.
#   make            build rnvme.ko (for KVER=, default: running kernel or the
#                   newest installed Debian 6.1 kernel) and the rnvme tool
#   make module     just the kernel module
#   make tool       just the C++ control tool
#   make check      install test dependencies, build everything, run the unit
#                   tests and the VM suites; ends with "N passed, N failed"
#   make demo       build, boot a VM, connect a Soft-RoCE target, do I/O
#   make checkpatch run the kernel's checkpatch on the module sources
#   make install    install rnvme.ko (into /lib/modules/KVER/updates) and the tool
#   make clean

KVER  ?= $(shell tools/kbuild/kver.sh)
KDIR  ?= /lib/modules/$(KVER)/build
BUILD ?= $(CURDIR)/build/$(KVER)
TOOL_BUILD ?= $(CURDIR)/build/tools
export KSRC

.PHONY: all module tool check demo checkpatch install install-module install-tool clean

all: module tool

module:
	@test -n "$(KVER)" || { echo "rnvme: cannot pick a kernel; pass KVER=" >&2; exit 1; }
	tools/kbuild/prepare.sh $(KVER) $(KDIR) $(BUILD)
	$(MAKE) -C $(KDIR) M=$(CURDIR) RNVME_GEN=$(BUILD) modules
	tools/kbuild/check-layout.sh $(KVER) $(KDIR) $(BUILD) $(CURDIR)/rnvme.ko

tool:
	cmake -S tools/rnvme -B $(TOOL_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(TOOL_BUILD) -j2

check:
	tests/check.sh

demo:
	tests/demo.sh

checkpatch:
	tools/kbuild/checkpatch.sh drivers/rnvme/*.[ch] include/rnvme/*.h

install: install-module install-tool

install-module: module
	install -D -m 0644 rnvme.ko /lib/modules/$(KVER)/updates/rnvme.ko
	depmod -a $(KVER)

install-tool: tool
	cmake --install $(TOOL_BUILD)

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) RNVME_GEN=$(BUILD) clean
	rm -rf build
