#!/bin/bash
# Boot the Debian test kernel in QEMU (TCG) with the host root shared read-only
# (9p + tmpfs overlay) and run one command inside the guest.
#
# usage: tests/vm/run-vm.sh [--kver KVER | --kernel-dir DIR] [--root DIR] [--timeout SECS] [--mem MB]
#                           [--smp N] [--out DIR] [--qemu-arg ARG]... [--append OPT]... [--icount] [-v]
#                           -- GUEST_CMD [ARGS...]
#
# The guest sees the host / read-only (9p + tmpfs overlay), and the checkout
# (REPO) and the build root (RNVME_OUT, default REPO/build) at their host paths
# through shares of their own (with a tmpfs overlay each): a checkout under
# /tmp, /run or /var/tmp, which the guest mounts fresh, works like any other.
# GUEST_CMD must live in one of those. It runs with REPO, KVER and
# RESULTS=/results set; the --out directory is /results in the guest. Exit
# status = GUEST_CMD's status.
# Environment passed to the guest: HOST_DRIVER TRANSPORT SUITES VERBOSE and every
# variable whose name starts with RNVME_, TEST_ or BENCH_. --qemu-arg adds one
# QEMU argument (the two-VM rig adds NICs, a monitor and a shared directory);
# --append adds one kernel boot option (e.g. initcall_debug).
# RNVME_VM_LOCK_HELD=1: the caller already holds the VM lock (the rig boots two).
# RNVME_QEMU_CPU=MODEL: QEMU's -cpu instead of the one chosen below (the test
# guests run without ERMS/FSRM, and Debian's 6.12 without CMPXCHG16B).
# --kernel-dir DIR boots a kernel built by tests/debug-kernel/build.sh (DIR is
# the cache directory it prints) instead of a Debian kernel from /boot: bzImage
# from DIR/build, modules from DIR/root/lib/modules/KVER (bind-mounted at
# /lib/modules/KVER in the guest), 3 GiB unless --mem, sanitizer boot options.
# --root DIR boots a kernel of a build root (tests/root/build.sh: Debian 13) with
# that root as the guest's / instead of the host's: kernel DIR/boot/vmlinuz-KVER,
# its modules and the root's user space (nvme-cli, libnvme, fio, rdma-core),
# so the suites test a Debian 13 host.  A --kver that only a build root holds
# picks that root by itself (tools/kbuild/kroot.sh).
# --icount: one vCPU, single-threaded TCG and -icount shift=0,sleep=off, so the
# guest clock counts instructions (1 ns = 1 instruction) and time-based figures
# in the guest repeat exactly whatever the host does (make bench; two vCPUs
# hang at "Booting SMP configuration" under icount).
# shellcheck source=../../tools/kbuild/strict.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tools/kbuild/strict.sh"

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
VMDIR=$REPO/tests/vm

kver=
kdir=
groot=
timeout_s=1800
mem=
smp=2
extra_qemu=()
user_append=
icount=0
OUT_ROOT=${RNVME_OUT:-$REPO/build}
out=$OUT_ROOT/vm/out
verbose=${VERBOSE:-0}
accel=${RNVME_VM_ACCEL:-tcg,thread=multi}

usage() {
	sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
	exit "${1:-2}"
}
die() { echo "run-vm: error: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
	case "$1" in
	--kver) kver=${2:?--kver needs a value}; shift 2 ;;
	--kernel-dir) kdir=${2:?--kernel-dir needs a value}; shift 2 ;;
	--root) groot=${2:?--root needs a value}; shift 2 ;;
	--timeout) timeout_s=${2:?--timeout needs a value}; shift 2 ;;
	--mem) mem=${2:?--mem needs a value}; shift 2 ;;
	--smp) smp=${2:?--smp needs a value}; shift 2 ;;
	--qemu-arg) extra_qemu+=("${2:?--qemu-arg needs a value}"); shift 2 ;;
	--append) user_append="$user_append ${2:?--append needs a value}"; shift 2 ;;
	--icount) icount=1; shift ;;
	--out) out=${2:?--out needs a value}; shift 2 ;;
	-v|--verbose) verbose=1; shift ;;
	-h|--help) usage 0 ;;
	--) shift; break ;;
	*) die "unknown option '$1' (the guest command goes after --)" ;;
	esac
done
[ $# -ge 1 ] || usage 2
[[ $timeout_s =~ ^[0-9]+$ ]] || die "--timeout must be a number of seconds"
[ -n "$mem" ] || { if [ -n "$kdir" ]; then mem=3072; else mem=2048; fi; }
[[ $mem =~ ^[0-9]+$ ]] || die "--mem must be a number of MiB"
[[ $smp =~ ^[1-9][0-9]*$ ]] || die "--smp must be a number of CPUs"
boot_extra=
if [ "$icount" = 1 ]; then
	smp=1 accel=tcg,thread=single
	extra_qemu=(-icount shift=0,sleep=off "${extra_qemu[@]}")
	# Fewer sources of run-to-run difference in a counted guest: no zeroing
	# of every allocated page (its cost follows the allocator's state: +/-5 %
	# of a 128 KiB write's instructions between two runs) and no random
	# kernel-stack offset per syscall.  RDRAND stays: without it the kernel's
	# RNG is seeded only after about 140 s of guest time, at a moment that
	# differs between runs, and until then every get_random_u32() runs
	# ChaCha20 (+1.3 % on the workload running at that moment).
	boot_extra=" init_on_alloc=0 randomize_kstack_offset=off"
fi

modroot=/ moddir=
if [ -n "$kdir" ]; then
	kdir=$(realpath -e "$kdir" 2>/dev/null) || die "--kernel-dir $kdir does not exist"
	[ -f "$kdir/stamp" ] || die "$kdir is not a finished debug-kernel build (no stamp; run tests/debug-kernel/build.sh)"
	dk=$(cat "$kdir/kernel.release")
	[ -z "$kver" ] || [ "$kver" = "$dk" ] || die "--kver $kver does not match $kdir ($dk)"
	kver=$dk
	kernel=$kdir/build/arch/x86/boot/bzImage
	modroot=$kdir/root
	moddir=$modroot/lib/modules/$kver
	[ -r "$kernel" ] || die "$kernel missing"
	[ -f "$moddir/modules.dep" ] || die "$moddir/modules.dep missing"
else
	[ -n "$kver" ] || kver=$("$REPO/tests/lib/kver.sh") || die "no test kernel; run tests/setup-host.sh"
	[ -n "$groot" ] || [ -r "/boot/vmlinuz-$kver" ] || groot=$("$REPO/tools/kbuild/kroot.sh" "$kver")
fi
if [ -n "$groot" ]; then
	[ -z "$kdir" ] || die "--root and --kernel-dir do not go together"
	groot=$(realpath -e "$groot" 2>/dev/null) || die "--root $groot does not exist (tests/root/build.sh makes it)"
	kernel=$groot/boot/vmlinuz-$kver
	modroot=$groot
	[ -r "$kernel" ] || die "kernel image $kernel not found (tests/root/build.sh --kernel $kver)"
	[ -f "$groot/lib/modules/$kver/modules.dep" ] || die "$groot/lib/modules/$kver/modules.dep missing (tests/root/build.sh --kernel $kver)"
elif [ -z "$kdir" ]; then
	kernel=/boot/vmlinuz-$kver
	[ -r "$kernel" ] || die "kernel image $kernel not found (install linux-image-$kver)"
	[ -d "/lib/modules/$kver/kernel" ] || die "/lib/modules/$kver missing"
fi
for t in qemu-system-x86_64 busybox cpio gzip flock timeout modprobe sha256sum; do
	command -v "$t" >/dev/null || die "'$t' not found; run tests/setup-host.sh"
done
busybox_bin=$(command -v busybox)
file -L "$busybox_bin" 2>/dev/null | grep 'statically linked' >/dev/null \
	|| [ ! -x /usr/bin/file ] || die "$busybox_bin is not static (install busybox-static)"

gcmd=$(realpath -e "$1" 2>/dev/null) || die "guest command '$1' not found"
shift
[ -x "$gcmd" ] || die "guest command $gcmd is not executable"

# Host directories the guest mounts at their own paths: the checkout and the
# build root (when it is outside the checkout).
shares=("$REPO")
mkdir -p "$OUT_ROOT"
OUT_ROOT=$(realpath -e "$OUT_ROOT")
case "$OUT_ROOT/" in "$REPO"/*) ;; *) shares+=("$OUT_ROOT") ;; esac
inshare=0
for d in "${shares[@]}"; do
	case "$gcmd" in "$d"/*) inshare=1 ;; esac
done
case "$gcmd" in /dev/*|/proc/*|/sys/*|/tmp/*|/run/*|/var/tmp/*) [ "$inshare" = 1 ] ||
	die "guest command $gcmd is outside the checkout ($REPO) in a directory the guest mounts fresh" ;;
esac

mkdir -p "$out"
out=$(realpath -e "$out")
case "$out" in /) die "--out must not be /" ;; esac

# ---------------------------------------------------------------- lock
if [ "${RNVME_VM_LOCK_HELD:-0}" != 1 ]; then
	# (otherwise the caller, tests/rig/run-rig.sh, holds it for both of its guests)
	# shellcheck source-path=SCRIPTDIR source=vm-lock.sh
	. "$VMDIR/vm-lock.sh"
	vm_lock_acquire 9
fi

# ---------------------------------------------------------------- initramfs
# Modules needed to reach the host root; builtins are skipped.
initramfs_mods="virtio_pci 9pnet_virtio 9p overlay"
cache=$OUT_ROOT/vm/$kver
initrd=$cache/initramfs.cpio.gz

resolve_modules() {
	local m line
	for m in $initramfs_mods; do
		modprobe -d "$modroot" -S "$kver" --show-depends "$m" 2>/dev/null || die "modprobe cannot resolve '$m' for $kver"
	done | while read -r line; do
		case "$line" in
		insmod\ *) line=${line#insmod }; echo "${line%% *}" ;;
		builtin\ *) ;;
		*) echo "run-vm: unexpected modprobe output: $line" >&2 ;;
		esac
	done | awk '!seen[$0]++'
}

build_initramfs() {
	local mods key stage m base
	mods=$(resolve_modules)
	key=$( {
		echo "kver=$kver kernel=$kernel"
		sha256sum "$VMDIR/initramfs-init.sh" "$busybox_bin"
		for m in $mods; do stat -c '%n %s %Y' "$m"; done
	} | sha256sum | cut -d' ' -f1)
	if [ -s "$initrd" ] && [ "$(cat "$cache/initramfs.key" 2>/dev/null)" = "$key" ]; then
		return 0
	fi
	echo "run-vm: building initramfs for $kver in $cache" >&2
	mkdir -p "$cache"
	stage=$(mktemp -d "$cache/stage.XXXXXX")
	mkdir -p "$stage"/{bin,dev,proc,sys,newroot,lower,rw,modules}
	cp "$busybox_bin" "$stage/bin/busybox"
	ln -s busybox "$stage/bin/sh"
	install -m 0755 "$VMDIR/initramfs-init.sh" "$stage/init"
	: > "$stage/modules.list"
	for m in $mods; do
		base=$(basename "$m")
		case "$m" in
		*.ko.xz) base=${base%.xz}; xz -dc "$m" > "$stage/modules/$base" ;;
		*.ko.zst) base=${base%.zst}; zstd -qdc "$m" > "$stage/modules/$base" ;;
		*.ko.gz) base=${base%.gz}; gzip -dc "$m" > "$stage/modules/$base" ;;
		*) cp "$m" "$stage/modules/$base" ;;
		esac
		echo "$base" >> "$stage/modules.list"
	done
	(cd "$stage" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet -R 0:0) \
		| gzip -9 > "$initrd.tmp"
	mv "$initrd.tmp" "$initrd"
	echo "$key" > "$cache/initramfs.key"
	cp "$stage/modules.list" "$cache/modules.used"
	rm -rf "$stage"
	echo "run-vm: initramfs: $(tr '\n' ' ' < "$cache/modules.used")" >&2
}
build_initramfs

# ---------------------------------------------------------------- guest command
rm -rf "$out/.vm"
rm -f "$out/exit-code" "$out/dmesg.txt" "$out/console.log" "$out/.vm/guest-cpus"
mkdir -p "$out/.vm"
# The initramfs runs the guest init from the results share: no host path (which
# may hold spaces or be hidden by the guest's fresh /tmp) on the kernel command line.
install -m 0755 "$VMDIR/guest-init.sh" "$out/.vm/guest-init.sh"
{
	printf 'REPO=%q\nKVER=%q\n' "$REPO" "$kver"
	printf 'SHARES=('
	printf '%q ' "${shares[@]}"
	printf ')\n'
	printf 'GUEST_CMD=('
	printf '%q ' "$gcmd" "$@"
	printf ')\n'
	for v in HOST_DRIVER TRANSPORT SUITES VERBOSE $(compgen -e | grep -E '^(RNVME_|TEST_|BENCH_)' || true); do
		[ -n "${!v+x}" ] || continue
		printf 'export %s=%q\n' "$v" "${!v}"
	done
} > "$out/.vm/cmd.sh"

# ---------------------------------------------------------------- QEMU
console=$out/console.log
machine=pc
append="console=ttyS0 panic=-1 quiet rnvme_init=/results/.vm/guest-init.sh"
append="$append nokaslr tsc=reliable no_timer_check mitigations=off"
append="$append$boot_extra$user_append"
if [ -n "$kdir" ]; then
	# Debug kernel: guest-init.sh bind-mounts its modules at /lib/modules/KVER;
	# every KASAN report is printed (not just the first); soft lockups are
	# reported after 60 s instead of 20 s (TCG with KASAN is slow); a 16 MiB log
	# keeps the sanitizer gate's dmesg marks from being overwritten;
	# The q35 machine: on the default i440fx machine this kernel spent 17 s
	# in the ACPI setup of each PCI interrupt link (64 s of an 80 s boot);
	# acpi=noirq or pci=noacpi avoided that but also skipped the MADT, and
	# the guest came up with one CPU (05-poll and 06-options then saw
	# fewer queues in CI). q35 boots in 13 s with both vCPUs.
	append="$append rnvme_moddir=$moddir kasan_multi_shot watchdog_thresh=30 log_buf_len=16M"
	machine=q35
fi
# No CMPXCHG16B in the guest: QEMU 7.2's TCG helper for the unlocked form
# (SLUB's per-CPU freelist update, "cmpxchg16b %gs:(%rsi)") computes EFLAGS
# from a stale cc_op, so a guest once in a while resumes with EFLAGS holding a
# pointer's low bits (TF and DF set: a #DB, then stacks written backwards).
# Seen twice on Debian's 6.12 guest (EFLAGS 0x04345742 and 0x07e35762, the
# second exactly RAX | ZF | bit 1). Without the feature SLUB takes its slab
# lock instead. Only for Debian's 6.12 binary kernels, 12's and 13's (where it
# was seen), and the 7.x ones (the same SLUB fast path): on
# 6.1 without the feature, nvme-cli's "nvme disconnect" aborted twice in
# 11-storm's concurrent cycles (it never did with it). The icount bench keeps
# the full model, so its instruction counts stay comparable with earlier runs.
#
# No ERMS/FSRM in the test guests: with them the kernel copies and clears
# pages with "rep movsb"/"rep stosb", which TCG runs one byte an iteration,
# where "rep movsq" moves eight.  04-io-verify on 6.1, one run after the
# other: 118 s with them, 94 s without (fio's 96 MiB write+verify 26.4 ->
# 16.2 s; the 4 KiB jobs unchanged).  The icount bench keeps them too.
# RNVME_QEMU_CPU=MODEL overrides the whole choice.
cpu=max
if [ "$icount" = 0 ]; then
	cpu=max,-erms,-fsrm
	case $kver in
	*-rt-amd64) ;;
	6.12.*+deb*-amd64 | [7-9].*+deb*-amd64) cpu=$cpu,-cx16 ;;
	esac
fi
cpu=${RNVME_QEMU_CPU:-$cpu}
qemu=(qemu-system-x86_64 -M "$machine" -accel "$accel" -cpu "$cpu" -smp "$smp" -m "$mem"
	-nic none -nographic -no-reboot
	-kernel "$kernel" -initrd "$initrd" -append "$append"
	-virtfs "local,path=${groot:-/},mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
	-virtfs "local,path=$out,mount_tag=results,security_model=none,multidevs=remap")
i=0
for d in "${shares[@]}"; do
	qemu+=(-virtfs "local,path=$d,mount_tag=share$i,security_model=none,readonly=on,multidevs=remap")
	i=$((i + 1))
done
qemu+=("${extra_qemu[@]}")

echo "run-vm: kernel $kver${groot:+ with the root $groot}, ${mem} MiB, $smp vCPU, -accel $accel -cpu $cpu$([ "$icount" = 0 ] || echo " -icount shift=0,sleep=off"), timeout ${timeout_s}s, out $out" >&2
echo "run-vm: guest command: $gcmd $*" >&2
t0=$(date +%s%N)
timeout -k 10 "$timeout_s" "${qemu[@]}" < /dev/null > "$console" 2>&1 &
qpid=$!
tailpid=
if [ "$verbose" = 1 ]; then
	tail -n +1 -F "$console" 2>/dev/null &
	tailpid=$!
fi
# shellcheck disable=SC2317 # invoked by trap
cleanup() {
	[ -z "$tailpid" ] || kill "$tailpid" 2>/dev/null || true
	# QEMU runs under timeout(1): stop both, so no VM outlives its runner
	pkill -TERM -P "$qpid" 2>/dev/null || true
	kill "$qpid" 2>/dev/null || true
}
trap cleanup EXIT
trap 'echo "run-vm: interrupted" >&2; exit 130' INT TERM

# seconds since a `date +%s%N` stamp, 2 decimals
elapsed() { awk -v a="$1" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }'; }
boot_s=
while kill -0 "$qpid" 2>/dev/null; do
	if [ -z "$boot_s" ] && [ -s "$out/.vm/guest-started" ]; then
		boot_s=$(elapsed "$t0")
		# (a leading newline keeps it on its own line when the console is streamed)
		[ "$verbose" = 1 ] && echo >&2
		echo "run-vm: boot time: $boot_s s (QEMU start -> guest init; guest uptime $(cat "$out/.vm/guest-started") s)" >&2
	fi
	sleep 0.2
done
qrc=0
wait "$qpid" || qrc=$?
total=$(elapsed "$t0")
sleep 0.3
[ -n "$tailpid" ] && kill "$tailpid" 2>/dev/null
tailpid=

echo "run-vm: VM wall time: $total s" >&2
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	echo "run-vm: FAIL: VM killed after the ${timeout_s}s timeout" >&2
fi
if [ ! -s "$out/exit-code" ]; then
	echo "run-vm: FAIL: the guest did not record an exit code (qemu status $qrc)." >&2
	echo "run-vm: last console lines ($console):" >&2
	tail -n 40 "$console" | sed 's/^/    /' >&2
	exit 1
fi
rc=$(cat "$out/exit-code")
[[ $rc =~ ^[0-9]+$ ]] || { echo "run-vm: FAIL: bad exit code '$rc'" >&2; exit 1; }
# A guest that came up with fewer CPUs than asked for runs the suites with
# fewer queues and without the concurrency they are meant to exercise.
cpus=$(cat "$out/.vm/guest-cpus" 2>/dev/null || true)
if [ -n "$cpus" ] && [ "$cpus" != "$smp" ]; then
	echo "run-vm: FAIL: the guest brought up $cpus of $smp vCPUs (boot options: $append)" >&2
	[ "$rc" != 0 ] || rc=1
fi
echo "run-vm: guest command exit code $rc (console: $console, dmesg: $out/dmesg.txt)" >&2
exit "$rc"
