#!/bin/bash
# Prepare a Debian 12 host for the rnvme build and VM test harness (idempotent).
#
# usage: tests/setup-host.sh [--update]
#   Installs, pinned to ONE Debian version V (the candidate of linux-source-6.1):
#     linux-image-6.1.0-NN-amd64=V linux-headers-6.1.0-NN-amd64=V linux-source-6.1=V
#   plus QEMU, busybox-static, fio, nvme-cli, rdma tools, build tools and the C++
#   tool dependencies. When everything is already installed it returns quickly
#   without touching apt (pass --update to force "apt-get update" and a re-check).
#   The last line printed is KVER=6.1.0-NN-amd64 (also: tests/lib/kver.sh).
set -euo pipefail

force=0
case "${1:-}" in
--update) force=1 ;;
"") ;;
-h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
*) echo "setup-host: unknown option '$1'" >&2; exit 2 ;;
esac

if [ "$(id -u)" != 0 ]; then
	echo "setup-host: must run as root (apt-get install)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive

PKGS=(
	# VM harness
	qemu-system-x86 busybox-static cpio xz-utils gzip kmod util-linux procps file
	# guest tests
	fio nvme-cli rdma-core iproute2 ibverbs-utils
	# module build
	build-essential pahole
	# bench chart
	python3-matplotlib
	# C++ tool
	cmake pkg-config libnvme-dev libnl-3-dev libnl-route-3-dev libcli11-dev
	nlohmann-json3-dev libfmt-dev libgtest-dev libgmock-dev libibverbs-dev
	# packaging (tools/packaging, tests/host/20-packaging.sh, suite 10-dkms)
	dkms dpkg-dev debhelper dh-dkms python3-docutils
)

installed_version() { dpkg-query -W -f='${db:Status-Abbrev} ${Version}' "$1" 2>/dev/null | awk '$1 == "ii" { print $2 }'; }

missing_pkgs() {
	local p
	for p in "${PKGS[@]}"; do
		[ -n "$(installed_version "$p")" ] || echo "$p"
	done
}

# abi_of_version V: the ABI name NN (as in 6.1.0-NN-amd64) of Debian kernel version V.
abi_of_version() {
	local v=$1 nn
	nn=$(apt-cache show "linux-image-amd64=$v" 2>/dev/null |
		sed -n 's/^Depends:.*linux-image-6\.1\.0-\([0-9]\+\)-amd64 .*/\1/p' | head -n 1)
	if [ -z "$nn" ]; then
		nn=$(apt-cache show "linux-headers-amd64=$v" 2>/dev/null |
			sed -n 's/^Depends:.*linux-headers-6\.1\.0-\([0-9]\+\)-amd64 .*/\1/p' | head -n 1)
	fi
	if [ -z "$nn" ]; then
		# Fall back to scanning the 6.1 image packages for one with version V.
		local pkg
		for pkg in $(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' | awk '{ print $1 }'); do
			if apt-cache madison "$pkg" | awk -F'|' '{ gsub(/ /, "", $2); print $2 }' | grep -qx "$v"; then
				nn=${pkg#linux-image-6.1.0-}
				nn=${nn%-amd64}
				break
			fi
		done
	fi
	echo "$nn"
}

# Fast path: linux-source-6.1 installed, its kernel image+headers installed at the
# same version, and every other package present.
V=$(installed_version linux-source-6.1)
NN=
if [ "$force" = 0 ] && [ -n "$V" ]; then
	for img in /boot/vmlinuz-6.1.0-*-amd64; do
		[ -e "$img" ] || continue
		k=${img#/boot/vmlinuz-}
		if [ "$(installed_version "linux-image-$k")" = "$V" ] &&
			[ "$(installed_version "linux-headers-$k")" = "$V" ]; then
			NN=${k#6.1.0-}
			NN=${NN%-amd64}
		fi
	done
	if [ -n "$NN" ] && [ -z "$(missing_pkgs)" ]; then
		echo "setup-host: everything already installed (kernel $V, ABI 6.1.0-$NN-amd64)"
		echo "KVER=6.1.0-$NN-amd64"
		exit 0
	fi
fi

echo "setup-host: apt-get update"
apt-get update -q

V=$(apt-cache policy linux-source-6.1 | awk '/Candidate:/ { print $2 }')
if [ -z "$V" ] || [ "$V" = "(none)" ]; then
	echo "setup-host: no candidate for linux-source-6.1 (is bookworm/bookworm-security in sources.list?)" >&2
	exit 1
fi
NN=$(abi_of_version "$V")
if [ -z "$NN" ]; then
	echo "setup-host: cannot find the ABI name of kernel version $V (no linux-image-6.1.0-NN-amd64 at $V)" >&2
	exit 1
fi
KVER=6.1.0-$NN-amd64
echo "setup-host: test kernel: linux-source-6.1 $V -> $KVER"

want=("linux-image-$KVER=$V" "linux-headers-$KVER=$V" "linux-source-6.1=$V")
mapfile -t miss < <(missing_pkgs)
need=0
[ "$(installed_version "linux-image-$KVER")" = "$V" ] || need=1
[ "$(installed_version "linux-headers-$KVER")" = "$V" ] || need=1
[ "$(installed_version linux-source-6.1)" = "$V" ] || need=1
if [ "$need" = 1 ] || [ "${#miss[@]}" -gt 0 ]; then
	echo "setup-host: installing: ${want[*]} ${miss[*]}"
	apt-get install -y -q --no-install-recommends "${want[@]}" "${PKGS[@]}"
else
	echo "setup-host: all packages present"
fi

[ -r "/boot/vmlinuz-$KVER" ] || { echo "setup-host: /boot/vmlinuz-$KVER missing after install" >&2; exit 1; }
[ -d "/lib/modules/$KVER/build" ] || { echo "setup-host: headers for $KVER missing" >&2; exit 1; }
[ -r /usr/src/linux-source-6.1.tar.xz ] || { echo "setup-host: /usr/src/linux-source-6.1.tar.xz missing" >&2; exit 1; }
# modprobe in the guest needs modules.dep for the test kernel.
[ -s "/lib/modules/$KVER/modules.dep" ] || depmod "$KVER"
echo "KVER=$KVER"
