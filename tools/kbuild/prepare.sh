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

die() {
	echo "rnvme: error: $*" >&2
	exit 1
}

[ -f "$kdir/Makefile" ] ||
	die "no kernel build tree at $kdir (install linux-headers-$kver, or pass KDIR=)"

vh=$kdir/include/generated/uapi/linux/version.h
[ -f "$vh" ] || die "$vh missing: $kdir is not a configured kernel build tree"
code=$(awk '/define LINUX_VERSION_CODE/ {print $3}' "$vh")
maj=$((code >> 16)) min=$(((code >> 8) & 255))
sub=$(awk '/define LINUX_VERSION_SUBLEVEL/ {print $3}' "$vh")
[ -n "$sub" ] || sub=$((code & 255))
series=$maj.$min
want="$series.$sub"
pkgid=""
if [ -f "$kdir/include/generated/package.h" ]; then
	pkgid=$(sed -n 's/.*LINUX_PACKAGE_ID " *Debian \([^"]*\)".*/\1/p' \
		"$kdir/include/generated/package.h")
fi

stamp_want=""
if [ -n "${KSRC:-}" ]; then
	src_ver=$(awk '/^VERSION =/ {v=$3} /^PATCHLEVEL =/ {p=$3}
		       /^SUBLEVEL =/ {s=$3} END {print v "." p "." s}' \
		       "$KSRC/Makefile" 2>/dev/null) ||
		die "KSRC=$KSRC has no kernel Makefile"
	[ "$src_ver" = "$want" ] ||
		die "KSRC=$KSRC is Linux $src_ver but $kver is $want; point KSRC at the $want source"
	for f in nvme.h fabrics.h; do
		[ -f "$KSRC/drivers/nvme/host/$f" ] ||
			die "KSRC=$KSRC lacks drivers/nvme/host/$f"
	done
	stamp_want="ksrc $KSRC $src_ver"
	if [ "$(cat "$priv/.source" 2>/dev/null)" != "$stamp_want" ]; then
		cp "$KSRC/drivers/nvme/host/nvme.h" "$KSRC/drivers/nvme/host/fabrics.h" "$priv/"
		echo "$stamp_want" > "$priv/.source"
	fi
else
	tarball=/usr/src/linux-source-$series.tar.xz
	pkg=linux-source-$series
	if [ ! -f "$tarball" ]; then
		hint="apt-get install $pkg${pkgid:+=$pkgid}"
		die "kernel source for $kver not found ($tarball missing).
rnvme needs nvme-core's private headers from the matching source: run
  $hint
or pass KSRC=/path/to/linux-$want"
	fi
	have=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || true)
	if [ -n "$pkgid" ] && [ "$have" != "$pkgid" ]; then
		die "$pkg is version ${have:-unknown} but $kver was built from Debian $pkgid.
Install the matching source:  apt-get install $pkg=$pkgid
(or: apt-get download $pkg=$pkgid, unpack it and pass KSRC=)"
	fi
	top=linux-source-$series
	stamp_want="tarball $tarball ${have:-?} $(stat -c %Y "$tarball")"
	if [ "$(cat "$priv/.source" 2>/dev/null)" != "$stamp_want" ]; then
		echo "  EXTRACT nvme-core private headers from $tarball"
		tmp=$(mktemp -d)
		trap 'rm -rf "$tmp"' EXIT
		tar -xJf "$tarball" -C "$tmp" \
			"$top/drivers/nvme/host/nvme.h" "$top/drivers/nvme/host/fabrics.h" \
			"$top/Makefile" ||
			die "could not extract drivers/nvme/host/{nvme,fabrics}.h from $tarball"
		src_ver=$(awk '/^VERSION =/ {v=$3} /^PATCHLEVEL =/ {p=$3}
			       /^SUBLEVEL =/ {s=$3} END {print v "." p "." s}' "$tmp/$top/Makefile")
		[ "$src_ver" = "$want" ] ||
			die "$tarball holds Linux $src_ver but $kver is $want: install $pkg${pkgid:+=$pkgid}"
		cp "$tmp/$top/drivers/nvme/host/nvme.h" "$tmp/$top/drivers/nvme/host/fabrics.h" "$priv/"
		echo "$stamp_want" > "$priv/.source"
	fi
fi

"$here/probe.sh" "$kdir" "$priv" "$out/rnvme_config.h"
