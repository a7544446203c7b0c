#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ksrc.sh KDIR DEST PATH...
#
# Copies PATHs (files, or directories whose files are wanted) from the source
# of the kernel whose build tree is KDIR into DEST, flat.  The source is KSRC=
# (a kernel tree) or Debian's linux-source-X.Y tarball under /usr/src, and its
# version must be the kernel's exactly (for the tarball, the Debian package
# version too, when the build tree names it).  DEST/.source records what was
# copied from where, so a second call with the same source does nothing.
# Users: prepare.sh (nvme-core's private headers) and tests/siw/build.sh
# (Soft-iWARP for the test kernels, which Debian builds without it).
# shellcheck source=strict.sh
. "$(dirname "${BASH_SOURCE[0]}")/strict.sh"

kdir=$1 dest=$2
shift 2
[ $# -gt 0 ] || { echo "usage: ksrc.sh KDIR DEST PATH..." >&2; exit 2; }
mkdir -p "$dest"

die() {
	echo "rnvme: error: $*" >&2
	exit 1
}

[ -f "$kdir/Makefile" ] ||
	die "no kernel build tree at $kdir (install the linux-headers package of the kernel, or pass KDIR=)"
vh=$kdir/include/generated/uapi/linux/version.h
[ -f "$vh" ] || die "$vh missing: $kdir is not a configured kernel build tree"
code=$(awk '/define LINUX_VERSION_CODE/ {print $3}' "$vh")
maj=$((code >> 16)) min=$(((code >> 8) & 255))
sub=$(awk '/define LINUX_VERSION_SUBLEVEL/ {print $3}' "$vh")
[ -n "$sub" ] || sub=$((code & 255))
series=$maj.$min
want="$series.$sub"
kname=$(cat "$kdir/include/config/kernel.release" 2>/dev/null || echo "$want")
pkgid=""
if [ -f "$kdir/include/generated/package.h" ]; then
	pkgid=$(sed -n 's/.*LINUX_PACKAGE_ID " *Debian \([^"]*\)".*/\1/p' \
		"$kdir/include/generated/package.h")
fi

# src_version FILE: "V.P.S" of a kernel Makefile
src_version() {
	awk '/^VERSION =/ {v=$3} /^PATCHLEVEL =/ {p=$3}
	     /^SUBLEVEL =/ {s=$3} END {print v "." p "." s}' "$1"
}

# copy_from TOP PATH: copy PATH under TOP (a file, or a directory's files) into DEST
copy_from() {
	if [ -d "$1/$2" ]; then
		find "$1/$2" -maxdepth 1 -type f -exec cp {} "$dest/" \;
	else
		cp "$1/$2" "$dest/"
	fi
}

if [ -n "${KSRC:-}" ]; then
	[ -f "$KSRC/Makefile" ] || die "KSRC=$KSRC has no kernel Makefile"
	src_ver=$(src_version "$KSRC/Makefile")
	[ "$src_ver" = "$want" ] ||
		die "KSRC=$KSRC is Linux $src_ver but $kname is $want; point KSRC at the $want source"
	for p in "$@"; do
		[ -e "$KSRC/$p" ] || die "KSRC=$KSRC lacks $p"
	done
	stamp_want="ksrc $KSRC $src_ver: $*"
	if [ "$(cat "$dest/.source" 2>/dev/null)" != "$stamp_want" ]; then
		for p in "$@"; do
			copy_from "$KSRC" "$p"
		done
		echo "$stamp_want" > "$dest/.source"
	fi
	exit 0
fi

tarball=/usr/src/linux-source-$series.tar.xz
pkg=linux-source-$series
if [ ! -f "$tarball" ]; then
	die "kernel source for $kname not found ($tarball missing).
$* come from the matching source: run
  apt-get install $pkg${pkgid:+=$pkgid}
or pass KSRC=/path/to/linux-$want"
fi
have=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || true)
if [ -n "$pkgid" ] && [ "$have" != "$pkgid" ]; then
	die "$pkg is version ${have:-unknown} but $kname was built from Debian $pkgid.
Install the matching source:  apt-get install $pkg=$pkgid
(or: apt-get download $pkg=$pkgid, unpack it and pass KSRC=)"
fi
top=linux-source-$series
stamp_want="tarball $tarball ${have:-?} $(stat -c %Y "$tarball"): $*"
[ "$(cat "$dest/.source" 2>/dev/null)" != "$stamp_want" ] || exit 0
echo "  EXTRACT $* from $tarball"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
members=("$top/Makefile")
for p in "$@"; do
	members+=("$top/$p")
done
tar -xJf "$tarball" -C "$tmp" "${members[@]}" ||
	die "could not extract $* from $tarball"
src_ver=$(src_version "$tmp/$top/Makefile")
[ "$src_ver" = "$want" ] ||
	die "$tarball holds Linux $src_ver but $kname is $want: install $pkg${pkgid:+=$pkgid}"
for p in "$@"; do
	copy_from "$tmp/$top" "$p"
done
echo "$stamp_want" > "$dest/.source"
