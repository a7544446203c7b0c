#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# prepare.sh KVER KDIR OUTDIR
#
# Gets nvme-core's private headers (drivers/nvme/host/nvme.h, fabrics.h) for
# the kernel rnvme is built against and runs the feature probes.  The headers
# are not in linux-headers packages and the project never carries copies: they
# come from KSRC= (a kernel tree) or Debian's linux-source-X.Y tarball, whose
# version must match the target kernel exactly.  The struct layouts are
# checked against nvme-core.ko's BTF after the build (check-layout.sh).
# shellcheck source=strict.sh
. "$(dirname "${BASH_SOURCE[0]}")/strict.sh"

kver=$1 kdir=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
priv=$out/nvme-host
mkdir -p "$priv"

[ -f "$kdir/Makefile" ] || {
	echo "rnvme: error: no kernel build tree at $kdir (install linux-headers-$kver, or pass KDIR=)" >&2
	exit 1
}
# ksrc.sh says what is missing and what to install; nothing to add to that
"$here/ksrc.sh" "$kdir" "$priv" drivers/nvme/host/nvme.h drivers/nvme/host/fabrics.h || exit

"$here/probe.sh" "$kdir" "$priv" "$out/rnvme_config.h"
