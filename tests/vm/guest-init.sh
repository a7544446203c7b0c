#!/bin/bash
# PID 1 of the rnvme test VM after switch_root (root = host / read-only + tmpfs overlay).
# Reads the command to run from /results/.vm/cmd.sh (written by run-vm.sh), runs it,
# stores its exit code in /results/exit-code and dmesg in /results/dmesg.txt, powers off.
set -u
unset rnvme_init
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb LANG=C.UTF-8 LC_ALL=C

poweroff_now() {
	sync
	umount /results 2>/dev/null
	echo o > /proc/sysrq-trigger 2>/dev/null
	/bin/busybox poweroff -f 2>/dev/null
	sleep 30
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null || mount -t tmpfs -o mode=0755 dev /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t tmpfs -o mode=1777 tmpfs /var/tmp 2>/dev/null
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
# devtmpfs has no /dev/std{in,out,err} (udev makes them elsewhere); the
# kselftest runner writes test output to /dev/stdout (tests/selftests): without
# the link that is a regular file here and the output is lost
for fd in 0:stdin 1:stdout 2:stderr; do
	[ -e "/dev/${fd#*:}" ] || ln -s "/proc/self/fd/${fd%%:*}" "/dev/${fd#*:}"
done
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
# A kernel booted with run-vm.sh --kernel-dir keeps its modules outside /lib/modules
# on the host: bind them where modprobe looks (the overlay makes the mount point).
# shellcheck disable=SC2013 # the command line is one line of words
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	rnvme_moddir=*)
		mkdir -p "/lib/modules/$(uname -r)"
		mount --bind "${arg#rnvme_moddir=}" "/lib/modules/$(uname -r)" ||
			echo "rnvme-guest: cannot bind-mount ${arg#rnvme_moddir=} at /lib/modules/$(uname -r)" >&2
		;;
	esac
done
modprobe configfs 2>/dev/null
mount -t configfs configfs /sys/kernel/config 2>/dev/null
echo 1 > /proc/sys/kernel/sysrq
echo 7 > /proc/sys/kernel/printk 2>/dev/null || true

# Guest boot done: tell the host (it measures the boot time from this file).
read -r up _ < /proc/uptime
echo "$up" > /results/.vm/guest-started
nproc > /results/.vm/guest-cpus 2>/dev/null || true

hostname rnvme-vm
echo rnvme-vm > /etc/hostname
ip link set lo up
mkdir -p /etc/nvme /etc/modprobe.d

if [ ! -r /results/.vm/cmd.sh ]; then
	echo "rnvme-guest: /results/.vm/cmd.sh missing" >&2
	poweroff_now
fi
# Defines REPO, KVER, SHARES=(...), GUEST_CMD=(...) and exported pass-through variables.
# shellcheck disable=SC1091
. /results/.vm/cmd.sh
export REPO KVER RESULTS=/results

# SHARES[i] is the host directory exported as 9p tag shareI (read-only): mount it
# at the same path, writable through a tmpfs overlay like the rest of /.  This
# is what makes a checkout under /tmp (hidden by the fresh tmpfs above) visible.
i=0
for d in "${SHARES[@]}"; do
	lower=/run/rnvme-share/$i
	mkdir -p "$lower" "$lower.rw" "$d"
	if ! mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose "share$i" "$lower" ||
		! mount -t tmpfs tmpfs "$lower.rw" || ! mkdir -p "$lower.rw/upper" "$lower.rw/work" ||
		! mount -t overlay overlay -o "lowerdir=$lower,upperdir=$lower.rw/upper,workdir=$lower.rw/work" "$d"; then
		echo "rnvme-guest: FATAL: cannot mount host directory $d (9p tag share$i)" >&2
		echo 125 > /results/exit-code
		poweroff_now
	fi
	i=$((i + 1))
done

if [ "$(uname -r)" != "$KVER" ]; then
	echo "rnvme-guest: WARNING running kernel $(uname -r) != requested $KVER" >&2
fi

echo "rnvme-guest: boot done at ${up}s uptime; running: ${GUEST_CMD[*]}"
cd "$REPO" || cd /
rc=0
"${GUEST_CMD[@]}" < /dev/null || rc=$?
echo "rnvme-guest: command exited with $rc"
dmesg > /results/dmesg.txt 2>&1
echo "$rc" > /results/exit-code
poweroff_now
