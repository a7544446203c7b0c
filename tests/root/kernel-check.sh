#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kernel-check.sh KVER [SUITES]
#
# Following the kernel: one command that takes a Debian 13 kernel release
# (6.12.118+deb13-amd64, 7.3.4+deb13-amd64, the next 7.x), installs it into
# the trixie build root (tests/root/build.sh --kernel), builds rnvme.ko for
# it there with trixie's compiler (the probes, modpost, the nvme-core layout
# check against that kernel's BTF) and the hostile target, then boots it in
# the VM with the root as the guest's user space and runs the core suites:
# load, discover, connect, io-verify, reconnect, multipath, hostile (SUITES
# overrides the list; every suite checks dmesg; 10 installs the packages
# made in the root: RNVME_KERNEL_CHECK_PACKAGES=0 skips them).  Prints TAP and the line
# "N passed, N failed[, N skipped]"; exit non-zero when anything broke, with
# the log of what broke.  Output under RNVME_OUT/trixie (default build/trixie).
#   RNVME_KERNEL_CHECK_TIMEOUT  the VM's limit in seconds (default 1800)
# shellcheck source=../../tools/kbuild/strict.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tools/kbuild/strict.sh"
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
kver=${1:?usage: tests/root/kernel-check.sh KVER [SUITES]}
suites=${2:-01 02 03 04 09 10 14 15}
out=${RNVME_OUT:-$REPO/build}/trixie
mkdir -p "$out"
log=$out/kernel-check-$kver
pass=0 fail=0
ok() { echo "ok - $*"; pass=$((pass + 1)); }
not_ok() { # WHAT LOG
	echo "not ok - $1 (log: $2)"
	tail -n 20 "$2" | sed 's/^/# /'
	fail=$((fail + 1))
}
finish() {
	echo "$pass passed, $fail failed${1:+, $1 skipped}"
	[ "$fail" = 0 ]
	exit
}

t=$SECONDS
if root=$("$REPO/tests/root/build.sh" --no-default-kernels --kernel "$kver" 2> "$log.root.log" | tail -n 1) &&
	[ -d "$root/lib/modules/$kver/build" ]; then
	ok "$kver in the build root $root ($((SECONDS - t)) s)"
else
	not_ok "tests/root/build.sh --kernel $kver" "$log.root.log"
	finish
fi

t=$SECONDS
if make -C "$REPO" --no-print-directory module KVER="$kver" O="$out" > "$log.module.log" 2>&1; then
	ok "make module KVER=$kver: $(readelf -p .comment "$out/$kver/rnvme.ko" 2>/dev/null |
		grep -o 'GCC: .*' | sort -u | head -n 1), $(grep -o 'LAYOUT.*' "$log.module.log") ($((SECONDS - t)) s)"
else
	not_ok "make module KVER=$kver" "$log.module.log"
	finish
fi
if "$REPO/tests/root/run.sh" "$root" make -C "$REPO" --no-print-directory hostile O="$out" > "$log.hostile.log" 2>&1; then
	ok "the hostile target built in the root"
else
	not_ok "make hostile in the root" "$log.hostile.log"
fi

# The packages, made in the root by its own dpkg-buildpackage, debhelper and
# DKMS: tests/host/20-packaging.sh run there for this kernel (the .debs and
# what they hold, DKMS's build of the packaged source with the layout check,
# the pre-flight's refusals).  It leaves the .debs and a binaries-only DKMS
# tarball in $out/debs, which 10-dkms installs in the guest.
# RNVME_TEST_TOOLS_DEB=skip leaves out rnvme-tools (its C++ compile).
if [ "${RNVME_KERNEL_CHECK_PACKAGES:-1}" = 1 ]; then
	t=$SECONDS
	prc=0
	RNVME_OUT=$out "$REPO/tests/root/run.sh" "$root" "$REPO/tests/host/20-packaging.sh" "$kver" \
		> "$log.packaging.tap" 2>&1 || prc=$?
	np=$(grep -cE '^ok [0-9]+' "$log.packaging.tap" || true)
	nf=$(grep -cE '^not ok [0-9]+' "$log.packaging.tap" || true)
	if [ "$prc" = 0 ] && [ "$nf" = 0 ] && [ "$np" -gt 0 ]; then
		ok "the packages built in the root, DKMS built rnvme.ko for $kver: 20-packaging $np passed ($((SECONDS - t)) s)"
	else
		not_ok "20-packaging in the root for $kver: $np passed, $nf failed, exit $prc" "$log.packaging.tap"
		grep -E '^not ok' "$log.packaging.tap" | sed 's/^/# /' || true
	fi
fi

t=$SECONDS
# a failing suite makes run-all.sh exit non-zero: its total is still the report
vm_rc=0
RNVME_OUT=$out SUITES=$suites "$REPO/tests/run-all.sh" --kver "$kver" \
	--timeout "${RNVME_KERNEL_CHECK_TIMEOUT:-1800}" --out "$out/vm-$kver" > "$log.vm.log" 2>&1 || vm_rc=$?
grep -E '^[0-9][0-9]-[a-z-]+ +[0-9]+ passed' "$log.vm.log" | sed 's/^/# /' || true
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log.vm.log" | tail -n 1 || true)
if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed(,\ ([0-9]+)\ skipped)?$ ]]; then
	pass=$((pass + BASH_REMATCH[1])) fail=$((fail + BASH_REMATCH[2]))
	echo "# VM suites $suites on $kver with the root's user space: $line ($((SECONDS - t)) s)"
	[ "${BASH_REMATCH[2]}" = 0 ] || grep -E -A 12 '^ +not ok' "$log.vm.log" | head -n 60 | sed 's/^/# /' || true
	finish "${BASH_REMATCH[4]:-}"
fi
not_ok "VM suites on $kver reported no total (run-all.sh exit $vm_rc, $((SECONDS - t)) s)" "$log.vm.log"
finish
