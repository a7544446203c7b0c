#!/bin/bash
# Install Debian's 6.12 backport kernel (image, headers, linux-source-6.12) and
# its PREEMPT_RT flavour (image, headers) at ONE version, for the kernels make
# check builds and boots (idempotent; quick when present).  Last lines:
# KVER612=6.12.N+deb12-amd64, KVER612RT=6.12.N+deb12-rt-amd64.
# (tests/setup-host.sh --with-612 installs the same together with the rest.)
# shellcheck source=../tools/kbuild/strict.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tools/kbuild/strict.sh"
# shellcheck source=lib/apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/apt.sh"
APT_WHO=setup-612
case "${1:-}" in
"") ;;
-h|--help) sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
*) echo "setup-612: unknown option '$1'" >&2; exit 2 ;;
esac
apt_require_root

K=$(apt_612_installed)
if [ -n "$K" ]; then
	echo "setup-612: already installed ($(apt_installed linux-source-6.12))"
	echo "KVER612=$K"
	echo "KVER612RT=${K%-amd64}-rt-amd64"
	exit 0
fi
V=$(apt_pick_612)
if [ -z "$V" ]; then
	apt_update
	V=$(apt_pick_612)
fi
[ -n "$V" ] || apt_die "no installation candidate for linux-source-6.12 (at a version that also has its amd64 and rt-amd64 images and headers)" \
	"Debian's 6.12 backport comes from bookworm-security (or bookworm-backports): add it to /etc/apt/sources.list, then run tests/setup-host.sh --update --with-612"
K=$(apt_abi_612 "$V")
KRT=${K%-amd64}-rt-amd64
apt_install "linux-image-$K=$V" "linux-headers-$K=$V" "linux-source-6.12=$V" \
	"linux-image-$KRT=$V" "linux-headers-$KRT=$V"
for k in "$K" "$KRT"; do
	[ -d "$SYSROOT/lib/modules/$k/build" ] || apt_die "headers for $k missing after the install" \
		"apt-get install --reinstall linux-headers-$k=$V"
	[ -s "$SYSROOT/lib/modules/$k/modules.dep" ] || { echo "== depmod $k"; depmod ${SYSROOT:+-b "$SYSROOT"} "$k"; }
done
echo "KVER612=$K"
echo "KVER612RT=$KRT"
