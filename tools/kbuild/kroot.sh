#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# kroot.sh KVER: print the build root (tests/root/build.sh) that holds kernel
# KVER, when this machine itself does not (no /lib/modules/KVER/build here);
# print nothing otherwise.  make module and tests/vm/run-vm.sh use it, so a
# Debian 13 kernel is built with that release's compiler and booted with its
# user space without naming the root.  A debug kernel built in a root
# (tests/debug-kernel/build.sh --root) names its root in its cache entry.
#   RNVME_ROOT_CACHE  where the roots live (default /var/cache/rnvme/root)
#   RNVME_DEBUG_KERNEL_CACHE  the debug kernels (default /var/cache/rnvme/debug-kernel)
set -eu
kver=${1:?usage: kroot.sh KVER}
[ ! -d "/lib/modules/$kver/build" ] || exit 0
for r in "${RNVME_ROOT_CACHE:-/var/cache/rnvme/root}"/*/; do
	if [ -d "$r/lib/modules/$kver/build" ]; then
		echo "${r%/}"
		exit 0
	fi
done
for d in "${RNVME_DEBUG_KERNEL_CACHE:-/var/cache/rnvme/debug-kernel}"/*/; do
	[ -s "$d/buildroot" ] && [ -f "$d/stamp" ] || continue
	if [ "$(cat "$d/kernel.release" 2>/dev/null)" = "$kver" ]; then
		cat "$d/buildroot"
		exit 0
	fi
done
