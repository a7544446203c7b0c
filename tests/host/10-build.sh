#!/bin/bash
# Host-side build checks (TAP): the module builds warning-free against the
# target kernel, passes checkpatch and the version-check rule, and the build
# refuses mismatched or missing nvme-core private headers with a clear message.
# usage: tests/host/10-build.sh [KVER]
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
REPO=$(cd "$(dirname "$0")/../.." && pwd)
kver=${1:-$("$REPO/tools/kbuild/kver.sh")}
kdir=/lib/modules/$kver/build

# A private copy of the tree: these tests break builds on purpose.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$REPO/Makefile" "$REPO/Kbuild" "$REPO/drivers" "$REPO/include" "$work/"
mkdir -p "$work/tools" && cp -r "$REPO/tools/kbuild" "$work/tools/"
find "$work" \( -name '*.o' -o -name '*.ko' -o -name '.*.cmd' -o -name '*.mod*' \) -delete

t0=$(date +%s)
if out=$(make -C "$work" module KVER="$kver" 2>&1); then
	ok "rnvme.ko builds for $kver with -Werror ($(($(date +%s) - t0)) s)"
else
	not_ok "rnvme.ko builds for $kver with -Werror"
	echo "$out" | tail -n 30 | diag
fi
if grep -q 'LAYOUT .* match' <<<"$out"; then
	ok "struct layouts match $kver's nvme-core BTF: $(echo "$out" | grep -o '[0-9]* nvme-core structs')"
else
	not_ok "layout check ran and passed"
fi
if grep -qE '(^|[^A-Z_])(warning|error):' <<<"$out"; then
	not_ok "no compiler warnings"
	echo "$out" | grep -E 'warning|error' | head -n 20 | diag
else
	ok "no compiler warnings"
fi

cp_files=("$REPO"/drivers/rnvme/*.[ch] "$REPO"/drivers/rnvme/tests/*.[ch] "$REPO"/include/rnvme/*.h)
if cp_out=$("$REPO/tools/kbuild/checkpatch.sh" "${cp_files[@]}" 2>&1); then
	ok "checkpatch clean (${#cp_files[@]} files)"
else
	not_ok "checkpatch clean"
	echo "$cp_out" | head -n 30 | diag
fi

# Kernel-version differences live only under include/ (compat.h + probes).
if hits=$(grep -rnE 'LINUX_VERSION_CODE|KERNEL_VERSION\(' "$REPO/drivers"); then
	not_ok "no kernel version checks in drivers/"
	echo "$hits" | diag
else
	ok "no kernel version checks in drivers/"
fi

# Skew: a private header that differs from the kernel must stop the build.
hdr=$(ls -d "$work"/build/*/nvme-host 2>/dev/null | head -n 1)
if [ -n "$hdr" ] && [ -f "$hdr/nvme.h" ]; then
	sed -i 's/^struct nvme_request {/struct nvme_request {\n\tvoid *rnvme_test_skew;/' "$hdr/nvme.h"
	if out=$(make -C "$work" module KVER="$kver" 2>&1); then
		not_ok "a skewed nvme.h fails the build"
	elif grep -q "struct nvme_request differs" <<<"$out" && [ ! -e "$work/build/$kver/kbuild/rnvme.ko" ]; then
		ok "a skewed nvme.h fails the build, names the struct and removes the .ko"
	else
		not_ok "a skewed nvme.h fails the build with a clear message"
		echo "$out" | tail -n 10 | diag
	fi
else
	not_ok "private headers were extracted into the build tree"
fi

# Missing/mismatched source: a kernel build tree that claims another version.
fake=$work/fake-kdir
make_fake_kdir "$fake"
if out=$("$work/tools/kbuild/prepare.sh" fake "$fake" "$work/build/fake" 2>&1); then
	not_ok "a source/kernel version mismatch stops the build"
elif grep -q 'apt-get install linux-source-6.1=6.1.250-1' <<<"$out"; then
	ok "a source/kernel version mismatch stops the build and names the package to install"
else
	not_ok "a source/kernel version mismatch names the package to install"
	echo "$out" | diag
fi
if out=$(KSRC=$work/nonexistent "$work/tools/kbuild/prepare.sh" "$kver" "$kdir" "$work/build/ksrc" 2>&1); then
	not_ok "a bad KSRC= stops the build"
elif grep -q 'KSRC=' <<<"$out"; then
	ok "a bad KSRC= stops the build with a message naming KSRC"
else
	not_ok "a bad KSRC= gives a clear message"
	echo "$out" | diag
fi

echo "1..$n"
[ "$failed" = 0 ]
