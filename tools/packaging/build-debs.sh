#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-debs.sh [--out DIR] [--indep] [--stage-only DIR]
#
# Builds the Debian packages rnvme-dkms and rnvme-tools with the standard
# tooling (dpkg-buildpackage, debhelper, dh-dkms).  The repository keeps its
# packaging under tools/packaging/debian (the top level is fixed), so this
# stages a source tree -- the files the packages are made of, plus debian/ --
# under build/debs/stage/rnvme-VERSION and runs dpkg-buildpackage there.
# The .deb files land in build/debs/ (or --out DIR).
#
#   --indep           build only rnvme-dkms (architecture-independent; no C++
#                     compile, seconds instead of minutes)
#   --stage-only DIR  only write the DKMS source tree (what rnvme-dkms puts in
#                     /usr/src/rnvme-VERSION) to DIR and exit; used by the
#                     host test to run `dkms build` from a staged tree.
#
# Environment: DEB_BUILD_OPTIONS is passed through (parallel=2 by default).
# shellcheck source=../kbuild/strict.sh
. "$(dirname "${BASH_SOURCE[0]}")/../kbuild/strict.sh"

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PKG=$REPO/tools/packaging
out=${RNVME_OUT:-$REPO/build}/debs
stage_only=""
indep=0

die() { echo "build-debs: error: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
	case "$1" in
	--out) out=${2:?--out needs a directory}; shift 2 ;;
	--indep) indep=1; shift ;;
	--stage-only) stage_only=${2:?--stage-only needs a directory}; shift 2 ;;
	-h|--help) sed -n '3,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown option '$1'" ;;
	esac
done

# Version: debian/changelog is the source of truth; dkms.conf must agree.
deb_ver=$(dpkg-parsechangelog -l "$PKG/debian/changelog" -SVersion) ||
	die "cannot read $PKG/debian/changelog (is dpkg-dev installed?)"
up_ver=${deb_ver%-*}
dkms_ver=$(sed -n 's/^PACKAGE_VERSION="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$REPO/dkms.conf")
[ "$dkms_ver" = "$up_ver" ] ||
	die "dkms.conf PACKAGE_VERSION ($dkms_ver) differs from debian/changelog's upstream version ($up_ver); update one of them"

# The module source as DKMS sees it (same list as debian/rules installs).
stage_dkms_tree() {
	local d=$1
	rm -rf "$d"
	mkdir -p "$d/tools/packaging"
	cp -a "$REPO/Makefile" "$REPO/Kbuild" "$REPO/dkms.conf" "$REPO/drivers" "$REPO/include" "$d/"
	cp -a "$REPO/tools/kbuild" "$d/tools/"
	cp -a "$PKG/dkms-preflight.sh" "$d/tools/packaging/"
	find "$d" \( -name '*.o' -o -name '*.ko' -o -name '.*.cmd' -o -name '*.mod' -o -name '*.mod.c' \
		-o -name modules.order -o -name Module.symvers \) -delete
}

if [ -n "$stage_only" ]; then
	stage_dkms_tree "$stage_only"
	echo "build-debs: DKMS source tree for rnvme $up_ver staged in $stage_only"
	exit 0
fi

tools=(dpkg-buildpackage dh dh_dkms)
[ "$indep" = 1 ] || tools+=(cmake rst2man)
for t in "${tools[@]}"; do
	command -v "$t" >/dev/null ||
		die "'$t' not found: apt-get install dpkg-dev debhelper dh-dkms cmake python3-docutils (or run tests/setup-host.sh)"
done

stage=${RNVME_OUT:-$REPO/build}/debs/stage
src=$stage/rnvme-$up_ver
rm -rf "$stage"
mkdir -p "$src/tools" "$out"
stage_dkms_tree "$src"
rm -f "$src/dkms.conf"
cp -a "$REPO/dkms.conf" "$REPO/README.md" "$src/"
cp -a "$PKG" "$src/tools/"
rm -rf "$src/tools/packaging/debian"
cp -a "$PKG/debian" "$src/debian"
mkdir -p "$src/tools/rnvme" "$src/Documentation"
(cd "$REPO/tools/rnvme" && tar --exclude=./build --exclude='./build-*' -cf - .) | tar -xf - -C "$src/tools/rnvme"
cp -a "$REPO/Documentation/." "$src/Documentation/"

what=-b
[ "$indep" = 0 ] || what=-A
echo "build-debs: building rnvme $deb_ver ($([ "$indep" = 1 ] && echo rnvme-dkms only || echo all packages)) in $src"
log=$stage/dpkg-buildpackage.log
if ! (cd "$src" && DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS:-parallel=2 nocheck} \
	dpkg-buildpackage "$what" -us -uc) > "$log" 2>&1; then
	tail -n 40 "$log" >&2
	die "dpkg-buildpackage failed; full log: $log"
fi
shopt -s nullglob
debs=("$stage"/*.deb)
[ "${#debs[@]}" -gt 0 ] || die "dpkg-buildpackage produced no .deb (log: $log)"
rm -f "$out"/rnvme-dkms_*.deb
[ "$indep" = 1 ] || rm -f "$out"/rnvme-tools_*.deb "$out"/rnvme-tools-dbgsym_*.deb
mv "${debs[@]}" "$out/"
for f in "$stage"/*.buildinfo "$stage"/*.changes; do mv "$f" "$out/"; done
echo "build-debs: packages in $out:"
printf '  %s\n' "$out"/*.deb
