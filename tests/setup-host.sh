#!/bin/bash
# Prepare a Debian 12 host for the rnvme build and VM test harness (idempotent).
#
# usage: tests/setup-host.sh [--update] [--with-612]
#   Installs, pinned to ONE Debian version V (the newest linux-source-6.1 with
#   an amd64 image at the same version, normally its candidate):
#     linux-image-6.1.0-NN-amd64=V linux-headers-6.1.0-NN-amd64=V linux-source-6.1=V
#   plus QEMU, busybox-static, fio, nvme-cli, rdma tools, build tools (also the
#   debug kernel's: flex, bison, libelf, libssl) and the C++ tool's libraries.
#   --with-612  also Debian's 6.12 backport kernel (image, headers and
#               linux-source-6.12 at one version, and the image and headers of
#               its PREEMPT_RT flavour) in the same apt transaction
#               (tests/setup-612.sh does only that part)
#   --update    run "apt-get update" and re-check even when everything is present
#   When everything is already installed it returns quickly without touching apt.
#   Every step is printed before it runs; a failure names the command and what to
#   do, and exits non-zero.  The last lines are KVER=6.1.0-NN-amd64 (also:
#   tests/lib/kver.sh) and, with --with-612, KVER612=6.12.N+deb12-amd64.
# shellcheck source=../tools/kbuild/strict.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tools/kbuild/strict.sh"
# shellcheck source=lib/apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/apt.sh"
APT_WHO=setup-host

force=0 with612=0 K612=
while [ $# -gt 0 ]; do
	case "$1" in
	--update) force=1 ;;
	--with-612) with612=1 ;;
	-h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "setup-host: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done
apt_require_root

PKGS=(
	# VM harness
	qemu-system-x86 busybox-static cpio xz-utils gzip kmod util-linux procps file
	# guest tests (jq: the tool's suites read its JSON; linux-perf: make bench)
	fio nvme-cli rdma-core iproute2 ibverbs-utils python3 jq linux-perf
	# rig: rig_path_facts pings the target over a path that failed, reads NIC stats
	iputils-ping ethtool
	# tool suite 08-stats: a real Prometheus text parser for rnvme stats --prometheus
	python3-prometheus-client
	# tool suite 07-causes: systemd-analyze verify on the boot units (a minbase
	# root has no systemd); tool suite 03: systemd-udevd runs the udev rule
	systemd udev
	# module build
	build-essential pahole
	# debug kernel build (tests/debug-kernel/build.sh)
	flex bison bc libelf-dev libssl-dev
	# bench chart
	python3-matplotlib
	# C++ tool
	cmake pkg-config libnvme-dev libnl-3-dev libnl-route-3-dev libcli11-dev
	nlohmann-json3-dev libfmt-dev libgtest-dev libgmock-dev libibverbs-dev
	# the hostile test target (tests/hostile, suite 15-hostile)
	librdmacm-dev
	# packaging (tools/packaging, tests/host/20-packaging.sh, suite 10-dkms)
	dkms dpkg-dev debhelper dh-dkms python3-docutils
	# the Debian 13 build and test root (tests/root/build.sh)
	debootstrap
)

# kernel_61_ready V: prints NN when linux-image/headers-6.1.0-NN-amd64 are
# installed at exactly version V
kernel_61_ready() {
	local v=$1 img k
	for img in "$SYSROOT"/boot/vmlinuz-6.1.0-*-amd64; do
		[ -e "$img" ] || continue
		k=${img##*/vmlinuz-}
		if [ "$(apt_installed "linux-image-$k")" = "$v" ] &&
			[ "$(apt_installed "linux-headers-$k")" = "$v" ]; then
			k=${k#6.1.0-}
			echo "${k%-amd64}"
			return 0
		fi
	done
	return 0
}

# Fast path: linux-source-6.1 installed, its kernel image+headers installed at the
# same version, (6.12 likewise,) and every other package present.
if [ "$force" = 0 ]; then
	V=$(apt_installed linux-source-6.1)
	NN=
	[ -z "$V" ] || NN=$(kernel_61_ready "$V")
	K612=
	[ "$with612" = 0 ] || K612=$(apt_612_installed)
	mapfile -t miss < <(apt_missing "${PKGS[@]}")
	if [ -n "$NN" ] && [ "${#miss[@]}" = 0 ] && { [ "$with612" = 0 ] || [ -n "$K612" ]; }; then
		echo "setup-host: everything already installed (kernel $V, ABI 6.1.0-$NN-amd64${K612:+, 6.12: $K612})"
		echo "KVER=6.1.0-$NN-amd64"
		[ -z "$K612" ] || echo "KVER612=$K612"
		[ -z "$K612" ] || echo "KVER612RT=${K612%-amd64}-rt-amd64"
		exit 0
	fi
fi

apt_update

V=$(apt_candidate linux-source-6.1)
[ -n "$V" ] || apt_die "no installation candidate for linux-source-6.1" \
	"add bookworm and bookworm-security to /etc/apt/sources.list(.d) (deb http://deb.debian.org/debian-security bookworm-security main), then run tests/setup-host.sh --update"
cand=$V
read -r V NN <<< "$(apt_pick_61)" || true
[ -n "${NN:-}" ] || apt_die "no linux-image-6.1.0-NN-amd64 at any version of linux-source-6.1 (candidate $cand)" \
	"bookworm-security may be missing or the mirror half-updated: check /etc/apt/sources.list, then run tests/setup-host.sh --update"
KVER=6.1.0-$NN-amd64
[ "$V" = "$cand" ] || echo "setup-host: linux-source-6.1 $cand has no amd64 image yet; taking $V, the newest that has one"
echo "setup-host: test kernel: linux-source-6.1 $V -> $KVER"

want=("linux-image-$KVER=$V" "linux-headers-$KVER=$V" "linux-source-6.1=$V")
if [ "$with612" = 1 ]; then
	V612=$(apt_pick_612)
	[ -n "$V612" ] || apt_die "no installation candidate for linux-source-6.12 (at a version that also has its amd64 and rt-amd64 images and headers)" \
		"Debian's 6.12 backport comes from bookworm-security (or bookworm-backports): add it to /etc/apt/sources.list, then run tests/setup-host.sh --update --with-612"
	K612=$(apt_abi_612 "$V612")
	[ -n "$K612" ] || apt_die "cannot derive the 6.12 kernel release from version $V612" "report this: tests/lib/apt.sh apt_abi_612 expects 6.12.N-…"
	K612RT=${K612%-amd64}-rt-amd64
	echo "setup-host: second kernel: linux-source-6.12 $V612 -> $K612 and its PREEMPT_RT flavour $K612RT"
	want+=("linux-image-$K612=$V612" "linux-headers-$K612=$V612" "linux-source-6.12=$V612"
		"linux-image-$K612RT=$V612" "linux-headers-$K612RT=$V612")
fi
mapfile -t miss < <(apt_missing "${PKGS[@]}")
todo=()
for w in "${want[@]}"; do
	[ "$(apt_installed "${w%%=*}")" = "${w#*=}" ] || todo+=("$w")
done
todo+=("${miss[@]}")
if [ "${#todo[@]}" -gt 0 ]; then
	apt_install "${todo[@]}"
else
	echo "setup-host: all packages present"
fi

[ -r "$SYSROOT/boot/vmlinuz-$KVER" ] || apt_die "/boot/vmlinuz-$KVER missing after the install" \
	"apt-get install --reinstall linux-image-$KVER=$V"
[ -d "$SYSROOT/lib/modules/$KVER/build" ] || apt_die "headers for $KVER missing after the install" \
	"apt-get install --reinstall linux-headers-$KVER=$V"
[ -r "$SYSROOT/usr/src/linux-source-6.1.tar.xz" ] || apt_die "/usr/src/linux-source-6.1.tar.xz missing after the install" \
	"apt-get install --reinstall linux-source-6.1=$V"
# modprobe in the guest needs modules.dep for the test kernel.
for k in "$KVER" ${K612:+"$K612"} ${K612RT:+"$K612RT"}; do
	[ -s "$SYSROOT/lib/modules/$k/modules.dep" ] || { echo "== depmod $k"; depmod ${SYSROOT:+-b "$SYSROOT"} "$k"; }
done
echo "KVER=$KVER"
[ "$with612" = 0 ] || echo "KVER612=$K612"
[ "$with612" = 0 ] || echo "KVER612RT=$K612RT"
