#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Make (or bring up to date) the Debian 13 "trixie" build and test root: a
# debootstrap of trixie with trixie-backports, holding trixie's compiler
# (gcc 14), the headers, image and linux-source of each trixie kernel rnvme
# supports, and the user space the VM suites run on a Debian 13 host (nvme-cli
# 2.13, libnvme 1.13, fio, rdma-core) and the tool and packages build with.
#
#   /var/cache/rnvme/root/trixie/          the root (tests/root/run.sh runs in it;
#                                          run-vm.sh --root boots it as the guest's /)
#   /var/cache/rnvme/root/trixie.log       debootstrap's and apt's output
#   /var/cache/rnvme/root/trixie/.rnvme-packages  the package set last installed
#
# usage: tests/root/build.sh [--kernel KVER]... [--no-default-kernels] [--update]
#   The default kernels are trixie's own (linux-image-amd64's dependency in
#   trixie) and the newest in trixie-backports.  --kernel KVER adds one more
#   (e.g. 7.4.1+deb13-amd64: "following the kernel", Documentation/packaging.rst);
#   its packages come from whichever of trixie, trixie-backports has them.
#   --update runs apt-get update in the root even when nothing is missing.
#   RNVME_ROOT_CACHE  base directory (default /var/cache/rnvme/root)
#   RNVME_MIRROR      Debian mirror (default http://deb.debian.org/debian)
# A fresh root takes 4-8 minutes and about 3.5 GB (most of it the two kernels'
# images, headers and source tarballs); a complete one returns in a second.
# Output: a line KVER_TRIXIE=... for each kernel in the root, then the root's
# directory as the last line.  Errors name what failed and what to do.
# shellcheck source=../../tools/kbuild/strict.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tools/kbuild/strict.sh"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
base=${RNVME_ROOT_CACHE:-/var/cache/rnvme/root}
mirror=${RNVME_MIRROR:-http://deb.debian.org/debian}
suite=trixie
root=$base/$suite
log=$base/$suite.log

die() {
	echo "root: error: $1" >&2
	[ -z "${2:-}" ] || echo "root: what to do: $2" >&2
	exit 1
}
say() { echo "root: $*" >&2; }

extra=() defaults=1 update=0
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) extra+=("${2:?--kernel needs a kernel release such as 7.3.4+deb13-amd64}"); shift 2 ;;
	--no-default-kernels) defaults=0; shift ;;
	--update) update=1; shift ;;
	-h|--help) sed -n '3,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
done
for k in "${extra[@]}"; do
	[[ $k =~ ^[0-9]+\.[0-9]+\.[0-9]+\+deb13-(amd64|rt-amd64|cloud-amd64)$ ]] ||
		die "--kernel $k is not a Debian 13 kernel release (like 6.12.117+deb13-amd64 or 7.3.4+deb13-amd64)"
done
[ "$(id -u)" = 0 ] || die "must run as root (debootstrap, chroot)" "run it as root, e.g. sudo $0"
command -v debootstrap >/dev/null ||
	die "debootstrap not found" "apt-get install debootstrap (tests/setup-host.sh installs it)"
mkdir -p "$base" || die "cannot create $base"

# Everything the root needs besides the kernels, in one list: its hash says
# whether an existing root is complete.
PKGS=(
	# module build (the kernel's own compiler comes with linux-headers' dependencies)
	build-essential pahole kmod xz-utils zstd
	# guest user space of the VM suites (the same roles as in tests/setup-host.sh)
	fio nvme-cli rdma-core iproute2 ibverbs-utils python3 jq iputils-ping ethtool
	util-linux procps file systemd udev python3-prometheus-client
	# the C++ tool and the hostile target, built against trixie's libraries
	cmake pkg-config g++ libnvme-dev libnl-3-dev libnl-route-3-dev libcli11-dev
	nlohmann-json3-dev libfmt-dev libgtest-dev libgmock-dev libibverbs-dev librdmacm-dev
	# packaging (openssl: DKMS makes its module signing key with it)
	dkms dpkg-dev debhelper dh-dkms python3-docutils openssl
	# the 7.x debug kernel (tests/debug-kernel/build.sh --root)
	flex bison bc libelf-dev libssl-dev
)
pkg_key=$(printf '%s\n' "${PKGS[@]}" | sha256sum | cut -c1-16)

inroot() { "$here/run.sh" "$root" "$@"; }
apt_in() { # apt-get ARGS... in the root, output to the log
	say "apt-get $* (log: $log)"
	inroot env DEBIAN_FRONTEND=noninteractive apt-get -q -y -o Dpkg::Use-Pty=0 "$@" >> "$log" 2>&1 ||
		{ tail -n 25 "$log" >&2; die "apt-get $* in $root failed (the lines above; log: $log)" \
			"fix what apt reports (network, mirror $mirror), then run $0 again; rm -rf $root starts over"; }
}

t0=$SECONDS
if [ ! -f "$root/.rnvme-debootstrap" ]; then
	rm -rf "$root"
	say "debootstrap $suite (minbase) into $root from $mirror (log: $log)"
	: > "$log"
	debootstrap --variant=minbase "$suite" "$root" "$mirror" >> "$log" 2>&1 ||
		{ tail -n 25 "$log" >&2; die "debootstrap $suite failed (the lines above; log: $log)" \
			"check the network and that this machine's debian-archive-keyring knows Debian 13's key (apt-get install debian-archive-keyring), then run $0 again"; }
	cat > "$root/etc/apt/sources.list" <<SRC
deb $mirror $suite main
deb $mirror $suite-updates main
deb http://deb.debian.org/debian-security $suite-security main
deb $mirror $suite-backports main
SRC
	# No initramfs for the kernels installed here: the VM boots its own
	# (tests/vm/run-vm.sh), and mkinitramfs in a chroot is minutes of TCG-free
	# waste.  A local diversion, so initramfs-tools' own copy never lands.
	inroot dpkg-divert --local --rename --add /usr/sbin/update-initramfs >> "$log" 2>&1
	ln -sf /bin/true "$root/usr/sbin/update-initramfs"
	# no daemons started by package scripts inside the chroot
	printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
	chmod +x "$root/usr/sbin/policy-rc.d"
	touch "$root/.rnvme-debootstrap"
	update=1
	say "debootstrap done in $((SECONDS - t0)) s"
fi

[ "$update" = 0 ] || apt_in update
if [ "$(cat "$root/.rnvme-packages" 2>/dev/null)" != "$pkg_key" ]; then
	[ "$update" = 1 ] || apt_in update
	update=1
	apt_in install --no-install-recommends "${PKGS[@]}"
	echo "$pkg_key" > "$root/.rnvme-packages"
fi

# cand PKG [RELEASE]: the version apt in the root would install
cand() {
	inroot apt-cache policy "$1" 2>/dev/null | awk -v r="${2:-}" '
		/Candidate:/ && r == "" && $2 != "(none)" { print $2; exit }
		/Version table:/ { t = 1; next }
		!t || r == "" { next }
		/ (https?|file):|status$/ { if (v != "" && index($0, " " r "/")) { print v; exit } next }
		{ v = $1 == "***" ? $2 : $1 }' || true
}
# abi PKG-VERSION: the kernel release of a Debian 13 kernel version
# (6.12.117-1 -> 6.12.117+deb13-amd64, 7.3.4-1~bpo13+1 -> 7.3.4+deb13-amd64)
abi() { echo "${1%%-*}+deb13-amd64"; }

kernels=()
if [ "$defaults" = 1 ]; then
	# the candidate: trixie's own, or its point or security update
	v=$(cand linux-image-amd64)
	[ -n "$v" ] || { apt_in update; update=1; v=$(cand linux-image-amd64); }
	[ -n "$v" ] || die "no linux-image-amd64 in $suite" "check $root/etc/apt/sources.list and the mirror"
	kernels+=("$(abi "$v")")
	v=$(cand linux-image-amd64 "$suite-backports")
	[ -n "$v" ] || die "no linux-image-amd64 in $suite-backports" "check $root/etc/apt/sources.list and the mirror"
	kernels+=("$(abi "$v")")
fi
kernels+=("${extra[@]}")

for k in "${kernels[@]}"; do
	series=$(echo "$k" | cut -d. -f1-2)
	flav=${k#*+deb13-}
	if [ -r "$root/boot/vmlinuz-$k" ] && [ -d "$root/lib/modules/$k/build" ] &&
		[ -r "$root/usr/src/linux-source-$series.tar.xz" ]; then
		continue
	fi
	[ "$update" = 1 ] || { apt_in update; update=1; }
	# the image's version names the source package version to take
	rel=""
	for r in "$suite" "$suite-updates" "$suite-security" "$suite-backports"; do
		v=$(cand "linux-image-$k" "$r")
		[ -z "$v" ] || { rel=$r; break; }
	done
	[ -n "$rel" ] || die "no linux-image-$k in $suite or its updates and backports" \
		"apt-cache policy 'linux-image-*+deb13-$flav' in the root lists what exists: tests/root/run.sh $root apt-cache search linux-image-$series"
	src=$(cand "linux-source-$series" "$rel")
	[ "$src" = "$v" ] || die "linux-source-$series in $rel is ${src:-missing}, not $v like linux-image-$k" \
		"nvme-core's private headers must come from the kernel's exact source; wait for the mirror or pick another --kernel"
	say "kernel $k: image, headers and linux-source-$series $v from $rel"
	apt_in install --no-install-recommends -t "$rel" "linux-image-$k=$v" "linux-headers-$k=$v" "linux-source-$series=$v"
	[ -d "$root/lib/modules/$k/build" ] || die "headers for $k missing in the root after the install" "see $log"
	[ -s "$root/lib/modules/$k/modules.dep" ] || inroot depmod "$k"
done

for k in "${kernels[@]}"; do
	echo "KVER_TRIXIE=$k"
done
say "root ready in $((SECONDS - t0)) s: $(du -sh --exclude=proc --exclude=sys "$root" 2>/dev/null | cut -f1) in $root"
echo "$root"
