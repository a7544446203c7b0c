#!/bin/busybox sh
# /init of the rnvme test initramfs (runs under busybox, PID 1).
# Loads the modules listed in /modules.list, mounts the host root (9p, read-only)
# under a tmpfs overlay, mounts the writable results share, and switch_roots into
# the guest init named on the kernel command line (rnvme_init=PATH).
/bin/busybox --install -s /bin
export PATH=/bin

fail() {
	echo "rnvme-initramfs: FATAL: $*"
	echo "rnvme-initramfs: powering off"
	poweroff -f
	echo o > /proc/sysrq-trigger
	sleep 60
}

mkdir -p /proc /sys /dev /newroot /lower /rw
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null

guest_init=
# shellcheck disable=SC2013 # the command line is one line of words
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	rnvme_init=*) guest_init=${arg#rnvme_init=} ;;
	esac
done
[ -n "$guest_init" ] || fail "no rnvme_init= on the kernel command line"

while read -r mod; do
	[ -n "$mod" ] || continue
	insmod "/modules/$mod" || fail "insmod $mod failed"
done < /modules.list

mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose hostroot /lower \
	|| fail "cannot mount the host root (9p tag hostroot)"
mount -t tmpfs -o mode=0755 rw /rw || fail "tmpfs for overlay"
mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot \
	|| fail "overlay mount failed"
mkdir -p /newroot/results
mount -t 9p -o trans=virtio,version=9p2000.L,rw,msize=262144,cache=none results /newroot/results \
	|| fail "cannot mount the results share (9p tag results)"
[ -x "/newroot$guest_init" ] || fail "guest init $guest_init not found/executable (run-vm.sh puts it on the results share)"

umount /proc /sys 2>/dev/null
umount /dev 2>/dev/null
# shellcheck disable=SC2093 # only returns on failure
exec switch_root /newroot "$guest_init"
fail "switch_root failed"
