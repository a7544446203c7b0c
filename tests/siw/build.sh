#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/siw/build.sh KVER KDIR OUTDIR
#
# Test equipment, not part of the product: Soft-iWARP (siw.ko) for a test
# kernel built without it.  Debian's 6.1 and 6.12 kernels have
# CONFIG_RDMA_SIW unset, so without this the only iWARP runs were on the
# debug kernel, where KASAN and TCG together move about 0.2 MB/s over siw.
# The driver's source comes from the kernel's own source (tools/kbuild/ksrc.sh:
# KSRC= or Debian's linux-source-X.Y, the exact version), never a copy kept
# here; it is built against KDIR as an external module.  The guest loads
# OUTDIR/siw.ko when modprobe finds no siw (fx_rdma_load, tests/lib/common.sh).
# A kernel that has siw gets nothing built (and OUTDIR/siw.ko is removed).
# shellcheck source=../../tools/kbuild/strict.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tools/kbuild/strict.sh"

[ $# = 3 ] || { echo "usage: tests/siw/build.sh KVER KDIR OUTDIR" >&2; exit 2; }
kver=$1 kdir=$2 out=$3
repo=$(cd "$(dirname "$0")/../.." && pwd)
conf=$kdir/include/config/auto.conf
[ -f "$conf" ] || { echo "siw: $conf missing: $kdir is not a configured build tree of $kver" >&2; exit 1; }
mkdir -p "$out"
if grep -qE '^CONFIG_RDMA_SIW=[ym]' "$conf"; then
	rm -f "$out/siw.ko"
	echo "siw: $kver has its own siw (CONFIG_RDMA_SIW): nothing to build"
	exit 0
fi
grep -qE '^CONFIG_INFINIBAND=[ym]' "$conf" ||
	{ echo "siw: $kver has no RDMA core (CONFIG_INFINIBAND): siw cannot be built for it" >&2; exit 1; }

"$repo/tools/kbuild/ksrc.sh" "$kdir" "$out/src" drivers/infiniband/sw/siw
make -C "$kdir" M="$out/src" CONFIG_RDMA_SIW=m modules
cp "$out/src/siw.ko" "$out/siw.ko"
echo "siw: $out/siw.ko for $kver"
