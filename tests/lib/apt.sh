# shellcheck shell=bash
# Package helpers for tests/setup-host.sh and tests/setup-612.sh.  Every query
# here succeeds with empty output when a package is absent or apt has no answer
# (so "$(...)" never ends a set -e script); installing prints what it does and
# how long it took; apt_die prints what failed and what to do, then exits 1.
# SETUP_SYSROOT (tests only, tests/host/05-setup.sh): prefix for the files the
# scripts look at after an install (/boot, /lib/modules, /usr/src).
APT_WHO=${APT_WHO:-setup}
SYSROOT=${SETUP_SYSROOT:-}
apt_updated=0

apt_die() { # WHAT HINT
	echo "$APT_WHO: error: $1" >&2
	echo "$APT_WHO: what to do: $2" >&2
	exit 1
}

apt_require_root() {
	[ "$(id -u)" = 0 ] ||
		apt_die "must run as root (it installs packages with apt-get)" "run it as root, e.g. sudo $0"
}

# apt_installed PKG: the installed version, or nothing
apt_installed() {
	local out
	out=$(dpkg-query -W -f='${db:Status-Abbrev} ${Version}' "$1" 2>/dev/null) || return 0
	awk '$1 == "ii" { print $2 }' <<< "$out"
}

# apt_missing PKG...: the packages that are not installed, one per line
apt_missing() {
	local p
	for p in "$@"; do
		[ -n "$(apt_installed "$p")" ] || echo "$p"
	done
}

apt_update() {
	[ "$apt_updated" = 0 ] || return 0
	echo "== apt-get update"
	local t0=$SECONDS
	apt-get update -q ||
		apt_die "apt-get update failed (exit $?)" \
			"check the network and the mirrors in /etc/apt/sources.list (bookworm, bookworm-updates, bookworm-security), then run $0 again"
	apt_updated=1
	echo "== apt-get update done in $((SECONDS - t0)) s"
}

# apt_candidate PKG: the version apt would install, or nothing
apt_candidate() {
	local out
	out=$(apt-cache policy "$1" 2>/dev/null) || return 0
	awk '/Candidate:/ && $2 != "(none)" { print $2 }' <<< "$out"
}

# apt_abi_61 V: the ABI name NN (as in 6.1.0-NN-amd64) of Debian kernel version V
apt_abi_61() {
	local v=$1 out meta pkg nn=
	for meta in linux-image-amd64 linux-headers-amd64; do
		out=$(apt-cache show "$meta=$v" 2>/dev/null) || continue
		nn=$(sed -n 's/^Depends:.*linux-[a-z]*-6\.1\.0-\([0-9]\+\)-amd64 .*/\1/p' <<< "$out" | head -n 1)
		[ -z "$nn" ] || { echo "$nn"; return 0; }
	done
	# Fall back to the 6.1 image packages: the one that has version V.
	out=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' 2>/dev/null) || return 0
	for pkg in $(awk '{ print $1 }' <<< "$out"); do
		out=$(apt-cache madison "$pkg" 2>/dev/null) || continue
		if awk -F'|' '{ gsub(/ /, "", $2); print $2 }' <<< "$out" | grep -xF -- "$v" >/dev/null; then
			nn=${pkg#linux-image-6.1.0-}
			echo "${nn%-amd64}"
			return 0
		fi
	done
	return 0
}

# apt_versions PKG: every version the mirrors offer, newest first, one per line
apt_versions() {
	local out
	out=$(apt-cache madison "$1" 2>/dev/null) || return 0
	awk -F'|' '{ gsub(/ /, "", $2); if ($2 != "" && !seen[$2]++) print $2 }' <<< "$out"
}

# apt_pick_61: "V NN" for the newest linux-source-6.1 version V that has a
# linux-image-6.1.0-NN-amd64 at the same version, or nothing.  The mirror
# publishes a new upload's source package before its amd64 images now and
# then (seen: linux-source-6.1 6.1.192-3 beside images at 6.1.192-2), so the
# candidate alone may have no kernel to boot.
apt_pick_61() {
	local v nn
	for v in $(apt_versions linux-source-6.1); do
		nn=$(apt_abi_61 "$v")
		[ -z "$nn" ] || { echo "$v $nn"; return 0; }
	done
	return 0
}

# apt_abi_612 V: 6.12.117-1~deb12u1 -> 6.12.117+deb12-amd64
apt_abi_612() { sed -E 's/^([0-9]+\.[0-9]+\.[0-9]+)-.*/\1+deb12-amd64/' <<< "$1"; }

# apt_pick_612: the newest linux-source-6.12 version V whose kernel has its
# image and headers, and those of its PREEMPT_RT flavour, at V too, or nothing
apt_pick_612() {
	local v k p ok
	for v in $(apt_versions linux-source-6.12); do
		k=$(apt_abi_612 "$v")
		ok=1
		for p in "linux-image-$k" "linux-headers-$k" "linux-image-${k%-amd64}-rt-amd64" \
			"linux-headers-${k%-amd64}-rt-amd64"; do
			apt_versions "$p" | grep -xF -- "$v" >/dev/null || { ok=0; break; }
		done
		[ "$ok" = 0 ] || { echo "$v"; return 0; }
	done
	return 0
}

# apt_612_installed: KVER of the 6.12 kernel when linux-source-6.12 and the
# image and headers of it and of its PREEMPT_RT flavour (KVER with -rt-amd64)
# are installed at one version, else nothing
apt_612_installed() {
	local v k p
	v=$(apt_installed linux-source-6.12)
	[ -n "$v" ] || return 0
	k=$(apt_abi_612 "$v")
	for p in "linux-image-$k" "linux-headers-$k" "linux-image-${k%-amd64}-rt-amd64" \
		"linux-headers-${k%-amd64}-rt-amd64"; do
		[ "$(apt_installed "$p")" = "$v" ] || return 0
	done
	echo "$k"
}

# apt_install PKG[=VER]...: one apt-get transaction, announced and timed
apt_install() {
	local t0=$SECONDS rc=0
	echo "== installing $# packages: $*"
	echo "== (a fresh machine downloads about 1 GB: the kernel sources, QEMU, compilers; several minutes)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" || rc=$?
	[ "$rc" = 0 ] ||
		apt_die "apt-get install of $# packages failed (exit $rc; its output is above)" \
			"fix what apt reports (network, a held or broken package: apt-get -f install, disk space), then run $0 again"
	echo "== installed $# packages in $((SECONDS - t0)) s"
}
