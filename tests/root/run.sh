#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh ROOT CMD [ARG]...
#
# Run CMD inside a build root made by tests/root/build.sh (a Debian 13 tree
# on this Debian 12 machine), so a trixie kernel is built by trixie's own
# compiler, kbuild, pahole and dpkg database.  The checkout and the build
# directory (RNVME_OUT, default REPO/build) appear inside at their host paths
# (bind mounts in a private mount namespace: they vanish with the command),
# and the debug kernels' cache (RNVME_DEBUG_KERNEL_CACHE, default
# /var/cache/rnvme/debug-kernel) when it exists, with /proc, /sys, /dev and a
# fresh /tmp; CMD starts in the caller's
# directory when that is one of them (else in /).  The environment passed in is
# PATH, HOME, LANG and every variable whose name starts with RNVME_, KVER,
# KDIR, KSRC, O or TEST_.  Exit status: CMD's.
# shellcheck source=../../tools/kbuild/strict.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tools/kbuild/strict.sh"
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

die() {
	echo "root-run: error: $*" >&2
	exit 2
}
[ $# -ge 2 ] || die "usage: tests/root/run.sh ROOT CMD [ARG]..."
root=$(realpath -e "$1" 2>/dev/null) || die "build root $1 does not exist (tests/root/build.sh makes it)"
shift
[ -x "$root/usr/bin/env" ] || die "$root is not a Debian root (no usr/bin/env; tests/root/build.sh makes one)"
[ "$(id -u)" = 0 ] || die "must run as root (chroot and bind mounts)"
command -v unshare >/dev/null || die "unshare not found (apt-get install util-linux)"

out=${RNVME_OUT:-$REPO/build}
mkdir -p "$out"
out=$(realpath -e "$out")
binds=("$REPO")
case "$out/" in "$REPO"/*) ;; *) binds+=("$out") ;; esac
# the debug kernels' cache: one built in a root (tests/debug-kernel/build.sh
# --root) is built, and rnvme is built for it, inside that root
dkc=${RNVME_DEBUG_KERNEL_CACHE:-/var/cache/rnvme/debug-kernel}
[ ! -d "$dkc" ] || binds+=("$(realpath -e "$dkc")")

envs=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8)
for v in $(compgen -e | grep -E '^(RNVME_.*|KVER|KDIR|KSRC|O|TEST_.*)$' || true); do
	envs+=("$v=${!v}")
done
[ -n "${RNVME_OUT:-}" ] || envs+=("RNVME_OUT=$out")
# the command starts in the caller's directory when the root shows it
cwd=/
for d in "${binds[@]}"; do
	case "$PWD/" in "$d"/*) cwd=$PWD ;; esac
done

# The mounts are made in the child's own mount namespace: nothing to undo.
# shellcheck disable=SC2016 # expanded by the inner shell
exec unshare --mount --propagation private -- bash -c '
	. "$1"; shift
	root=$1; shift
	n=$1; shift
	for ((i = 0; i < n; i++)); do
		mkdir -p "$root$1"
		mount --bind "$1" "$root$1"
		shift
	done
	mount -t proc proc "$root/proc"
	mount -t sysfs sysfs "$root/sys"
	mount --rbind /dev "$root/dev"
	mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
	cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
	cwd=$1; shift
	exec chroot "$root" /usr/bin/env -i -C "$cwd" "$@"
' root-run "$REPO/tools/kbuild/strict.sh" "$root" "${#binds[@]}" "${binds[@]}" "$cwd" "${envs[@]}" "$@"
