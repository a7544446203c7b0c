#!/bin/bash
# Opt-in (make fresh-root): the newcomer's path for real.  debootstrap a
# minimal Debian 12 root, put only git and make in it, clone this checkout
# (its committed HEAD) into an unusual path there, and run the README's
# command in a chroot: everything else (kernels, QEMU, compilers, libraries)
# must come from the project's own set-up scripts.
#
# usage: tests/fresh-root.sh [--target demo|check] [--root DIR] [--keep]
#   --target  make target run in the fresh root (default demo; check is the
#             whole make check, about 45 minutes)
#   --root    where to build the root (default /var/tmp/rnvme-fresh-root);
#             removed first, and afterwards unless --keep
# The chroot shares the host's VM lock and its ticket queue
# (/tmp/rnvme-vm.lock, /tmp/rnvme-vm.queue), so its VMs take turns with the
# other VM runs on the machine.  Needs root and the network.
# shellcheck source=../tools/kbuild/strict.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tools/kbuild/strict.sh"
REPO=$(cd "$(dirname "$0")/.." && pwd)
target=demo root=/var/tmp/rnvme-fresh-root keep=0
while [ $# -gt 0 ]; do
	case "$1" in
	--target) target=${2:?}; shift 2 ;;
	--root) root=${2:?}; shift 2 ;;
	--keep) keep=1; shift ;;
	-h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "fresh-root: unknown option '$1'" >&2; exit 2 ;;
	esac
done
case "$target" in demo|check) ;; *) echo "fresh-root: --target demo or check" >&2; exit 2 ;; esac
[ "$(id -u)" = 0 ] || { echo "fresh-root: run as root (debootstrap, chroot, mounts)" >&2; exit 1; }
case "$root" in /|/usr|/var|/tmp|"") echo "fresh-root: --root $root is not a scratch directory" >&2; exit 2 ;; esac

t0=$(date +%s)
mounts=()
cleanup() {
	local m i
	for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
		m=${mounts[$i]}
		umount -R -l "$m" 2>/dev/null || true
	done
	if [ "$keep" = 0 ]; then rm -rf --one-file-system "$root"; fi
}
trap cleanup EXIT
bind() { # SRC DST (recursive: /dev/shm, /dev/pts come along)
	if [ -d "$1" ]; then mkdir -p "$2"; else touch "$2"; fi
	mount --rbind "$1" "$2"
	mount --make-rslave "$2"
	mounts+=("$2")
}

if ! command -v debootstrap >/dev/null; then
	echo "== apt-get install debootstrap"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap
fi
rm -rf --one-file-system "$root"
mkdir -p "$root"
echo "== debootstrap bookworm (minbase) into $root"
STRICT_HINT="check the network and that deb.debian.org is reachable" \
	debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian > "$root.debootstrap.log" 2>&1 ||
	{ tail -n 20 "$root.debootstrap.log" >&2; exit 1; }
cat > "$root/etc/apt/sources.list" <<'EOF'
deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
for d in proc sys dev; do bind "/$d" "$root/$d"; done
touch /tmp/rnvme-vm.lock
mkdir -p /tmp/rnvme-vm.queue
bind /tmp/rnvme-vm.lock "$root/tmp/rnvme-vm.lock"
bind /tmp/rnvme-vm.queue "$root/tmp/rnvme-vm.queue"
echo "== in the fresh root: apt-get install git make (all a newcomer has)"
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
	sh -c 'apt-get update -q && apt-get install -y -q --no-install-recommends git make ca-certificates' \
	> "$root.apt.log" 2>&1 || { tail -n 20 "$root.apt.log" >&2; exit 1; }
clone=/srv/ci/some/deep/path/rnvme
mkdir -p "$root$(dirname "$clone")"
git clone -q "$REPO" "$root$clone"
echo "== clone of $(git -C "$REPO" rev-parse --short HEAD) at $clone in the fresh root; running: make $target"
t1=$(date +%s)
rc=0
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb \
	sh -c "cd '$clone' && make $target" || rc=$?
echo "fresh-root: make $target exited $rc after $(($(date +%s) - t1)) s (debootstrap and git/make: $((t1 - t0)) s)"
exit "$rc"
