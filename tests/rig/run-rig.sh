#!/bin/bash
# Two-VM fault rig: a target guest and a host guest, each with two virtio NICs,
# joined by two wires (path A and path B): by default a bridge per wire between
# two tap devices in a network namespace of the rig's own (RIG_WIRE=tap), or
# QEMU socket netdevs on 127.0.0.1 (RIG_WIRE=stream|dgram).  Nothing leaves
# the machine. Each guest runs its own Soft-RoCE devices, so a
# fault on one end (QEMU set_link, ip link, rdma link delete, a stopped VM) is a
# real fault on the wire for the other end.
#
# usage: tests/rig/run-rig.sh [--kver KVER | --kernel-dir DIR] [--timeout SECS] [--out DIR] [-v]
#   SUITES="01 03"   rig suites to run (tests/rig/suites/NN-*.sh; default all)
#   --kernel-dir DIR both guests boot the debug kernel (as tests/vm/run-vm.sh)
# Results: the host guest's TAP in DIR/suites (as tests/run-all.sh expects),
# the target guest's console and dmesg in DIR/target, the shared rig directory
# (command queues, logs) in DIR/rig. Exit status = the host guest's.
#
# Guests talk to this script through files in the shared rig directory:
#   rig/cmd/N.cmd    host guest -> target guest agent (tests/rig/guest-target.sh)
#   rig/qemu/N.req   host guest -> this script: "target|host set_link NIC on|off",
#                    "target|host stop|cont", "target|host pause SECS" (stop, wait, cont)
# Replies are N.out + N.rc (written last).
# shellcheck source=../../tools/kbuild/strict.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tools/kbuild/strict.sh"
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

kver='' kdir=() timeout_s=1800 out=${RNVME_OUT:-$REPO/build}/vm/rig verbose=()
while [ $# -gt 0 ]; do
	case "$1" in
	--kver) kver=${2:?}; shift 2 ;;
	--kernel-dir) kdir=(--kernel-dir "${2:?}"); shift 2 ;;
	--timeout) timeout_s=${2:?}; shift 2 ;;
	--out) out=${2:?}; shift 2 ;;
	-v|--verbose) verbose=(-v); shift ;;
	-h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "run-rig: unknown option '$1'" >&2; exit 2 ;;
	esac
done
die() { echo "run-rig: error: $*" >&2; exit 2; }
log() { echo "run-rig: $*" >&2; }
# Memory per guest (target, host); run-vm.sh checks the kernel itself.
tmem=1536 hmem=2048 append=()
if [ "${#kdir[@]}" -gt 0 ]; then
	kd=${kdir[1]}
	[ -r "$kd/kernel.release" ] || die "--kernel-dir $kd: no kernel.release (not a tests/debug-kernel/build.sh cache directory)"
	dk=$(cat "$kd/kernel.release")
	[ -z "$kver" ] || [ "$kver" = "$dk" ] || die "--kver $kver does not match $kd ($dk)"
	kver=$dk
	# The wires are virtio NICs: the guests need virtio_net.
	md=$kd/root/lib/modules/$kver
	grep -E '(^|/)virtio_net\.ko' "$md/modules.dep" "$md/modules.builtin" >/dev/null 2>&1 ||
		die "the kernel in $kd has no virtio_net (CONFIG_VIRTIO_NET): the rig's wires are virtio NICs; add CONFIG_VIRTIO_NET=m to tests/debug-kernel/rnvme-debug.config and rebuild (make debug-kernel)"
	# KASAN's shadow memory and kmemleak: run-vm.sh's default for this kernel is 3 GiB
	tmem=2048 hmem=3072
else
	[ -n "$kver" ] || kver=$("$REPO/tests/lib/kver.sh")
	# A long rig run (make soak: some 3 KB of kernel log per fault) must not
	# overrun the log ring (128 KiB on Debian's kernels), or the dmesg checks
	# from the suite's mark on see nothing. (run-vm.sh gives the debug kernel 16M.)
	append=(--append log_buf_len=8M)
fi
command -v python3 >/dev/null || die "python3 not found (the QEMU monitor client needs it)"
command -v ss >/dev/null || die "ss not found (iproute2)"

mkdir -p "$out"
out=$(realpath "$out")
rig=$out/rig
rm -rf "$rig" "$out/target"
mkdir -p "$rig/cmd" "$rig/qemu" "$out/target"
# UNIX socket paths are limited to 108 bytes: keep the monitors in a short dir.
sockdir=$(mktemp -d /tmp/rnvme-rig.XXXXXX)

# One lock for both guests: the rig is one VM workload.
# shellcheck source-path=SCRIPTDIR source=../vm/vm-lock.sh
. "$REPO/tests/vm/vm-lock.sh"
vm_lock_acquire 9
export RNVME_VM_LOCK_HELD=1

# The wires: RIG_WIRE=stream is a TCP connection per wire (the
# target listens): lossless with back-pressure, as RoCE's PFC fabric is, but
# frames queue behind a stopped peer and arrive late in a burst.
# RIG_WIRE=dgram joins the two NICs by UDP datagrams, one per frame, each QEMU
# bound to its own port: a frame the other end cannot take (its VM stopped, its
# socket buffer full) is lost, a lossy fabric: under fio, SENDs then went
# unacknowledged for 1.5 s and rnvme's ACK watchdog called the path silent
# every 10-40 s (tests/README.md).
# RIG_WIRE=tap (default) bridges two tap devices per wire inside a network
# namespace made for the run (no address, no route, no other port: nothing
# reaches the machine's own network), and the QEMUs run in it.  The kernel
# moves the frames: QEMU 7.2's socket netdev stalled for good under two-path
# fio load (a wire that neither a guest NIC reset nor set_link revived; make
# soak, README).  A frame for a stopped VM waits in its tap's queue (20000
# frames); past that it is dropped, as a switch drops for a dead port.
RIG_WIRE=${RIG_WIRE:-tap}
if [ "$RIG_WIRE" = tap ] && [ ! -c /dev/net/tun ]; then
	modprobe tun 2>/dev/null || true
	if [ ! -c /dev/net/tun ]; then
		log "WARNING: no /dev/net/tun (the tun driver) for RIG_WIRE=tap: falling back to RIG_WIRE=stream, whose QEMU socket wires can stall under load (tests/README.md)"
		RIG_WIRE=stream
	fi
fi
# the guests name the wire in a failing target check (tests/lib/rig.sh)
echo "$RIG_WIRE" > "$rig/wire"
case "$RIG_WIRE" in
stream) ss_proto=t ;;
dgram) ss_proto=u ;;
tap) ss_proto=t ;;
*) die "RIG_WIRE must be tap, dgram or stream, not '$RIG_WIRE'" ;;
esac
port_free() { ! ss -Hl$ss_proto -n "sport = :$1" | grep . >/dev/null; }
picked=" "
pick_port() {
	local p
	for _ in $(seq 1 50); do
		p=$((20000 + (RANDOM % 20000)))
		if port_free "$p" && [[ $picked != *" $p "* ]]; then
			echo "$p"
			return 0
		fi
	done
	return 1
}
# pa/pb: the target's end of wires A and B; ha/hb: the host's (dgram only)
pa=$(pick_port) || die "no free port on 127.0.0.1"
picked="$picked$pa "
pb=$(pick_port) || die "no free port on 127.0.0.1"
picked="$picked$pb "
ha=$(pick_port) || die "no free port on 127.0.0.1"
picked="$picked$ha "
hb=$(pick_port) || die "no free port on 127.0.0.1"

# nic ID LOCAL-PORT PEER-PORT MAC listen|connect: QEMU arguments for one NIC on
# one wire.
nic_args() {
	echo "-netdev"
	if [ "$RIG_WIRE" = tap ]; then
		# the tap is named after the NIC and the role (MAC suffix)
		echo "tap,id=net$1,ifname=${1#nic}${4##*:},script=no,downscript=no,vhost=off"
	elif [ "$RIG_WIRE" = dgram ]; then
		echo "socket,id=net$1,udp=127.0.0.1:$3,localaddr=127.0.0.1:$2"
	elif [ "$5" = listen ]; then
		echo "socket,id=net$1,listen=127.0.0.1:$2"
	else
		echo "socket,id=net$1,connect=127.0.0.1:$3"
	fi
	echo "-device"
	echo "virtio-net-pci,netdev=net$1,id=$1,mac=$4"
}
common_args() { # MONITOR-SOCKET
	echo "-monitor"
	echo "unix:$1,server=on,wait=off"
	echo "-virtfs"
	echo "local,path=$rig,mount_tag=rig,security_model=none,multidevs=remap"
}
vm_args() { # ROLE LISTEN|CONNECT MAC-SUFFIX LOCAL-A PEER-A LOCAL-B PEER-B
	local a
	while IFS= read -r a; do printf -- '--qemu-arg\n%s\n' "$a"; done < <(
		nic_args nica "$4" "$5" "52:54:00:72:0a:$3" "$2"
		nic_args nicb "$6" "$7" "52:54:00:72:0b:$3" "$2"
		common_args "$sockdir/$1.mon")
}
mapfile -t targs < <(vm_args target listen 02 "$pa" "$ha" "$pb" "$hb")
mapfile -t hargs < <(vm_args host connect 01 "$ha" "$pa" "$hb" "$pb")

tpid='' hpid='' netns='' inns=()
# shellcheck disable=SC2317 # invoked by trap
cleanup() {
	local p
	for p in $hpid $tpid; do kill "$p" 2>/dev/null || true; done
	sleep 1
	for p in $hpid $tpid; do pkill -TERM -P "$p" 2>/dev/null || true; done
	rm -rf "$sockdir"
	[ -z "$netns" ] || ip netns delete "$netns" 2>/dev/null || true
}
trap cleanup EXIT
trap 'log interrupted; exit 130' INT TERM

if [ "$RIG_WIRE" = tap ]; then
	command -v ip >/dev/null || die "ip not found (iproute2)"
	netns=rnvme-rig-$$
	# wire A: bridge wa with taps a01 (host) and a02 (target); wire B: wb, b01, b02
	if ! o=$(ip netns add "$netns" 2>&1) || ! o=$(ip -n "$netns" -batch - 2>&1 <<-EOB
		link set lo up
		link add wa type bridge stp_state 0 forward_delay 0
		link add wb type bridge stp_state 0 forward_delay 0
		tuntap add a01 mode tap
		tuntap add a02 mode tap
		tuntap add b01 mode tap
		tuntap add b02 mode tap
		link set a01 master wa txqueuelen 20000 up
		link set a02 master wa txqueuelen 20000 up
		link set b01 master wb txqueuelen 20000 up
		link set b02 master wb txqueuelen 20000 up
		link set wa up
		link set wb up
	EOB
	); then
		die "RIG_WIRE=tap: cannot build the wires in network namespace $netns ($o); run as root, or with RIG_WIRE=stream"
	fi
	inns=(ip netns exec "$netns")
	log "wires (taps bridged in network namespace $netns): path A a01 <-> a02, path B b01 <-> b02 (host <-> target); rig dir $rig"
elif [ "$RIG_WIRE" = dgram ]; then
	log "wires (UDP) on 127.0.0.1: path A :$ha <-> :$pa, path B :$hb <-> :$pb (host <-> target); rig dir $rig"
else
	log "wires (TCP) on 127.0.0.1:$pa (path A) and :$pb (path B); rig dir $rig"
fi
"${inns[@]}" "$REPO/tests/vm/run-vm.sh" --kver "$kver" "${kdir[@]}" "${append[@]}" --timeout "$timeout_s" --mem "$tmem" --smp 1 \
	--out "$out/target" "${targs[@]}" -- "$REPO/tests/rig/guest-target.sh" \
	> "$out/target/run-vm.log" 2>&1 &
tpid=$!
# The host guest's QEMU connects to the target's sockets (stream), or sends
# to the ports the target bound (dgram): wait until they are open.  Taps
# take frames whether or not the other end is up, but the host's run-vm.sh
# must not start before the target's QEMU does: both would build a missing
# initramfs at once (run-vm.sh builds it before it starts QEMU, which then
# opens its monitor socket).
target_up() {
	if [ "$RIG_WIRE" = tap ]; then
		[ -S "$sockdir/target.mon" ]
	else
		! port_free "$pa" && ! port_free "$pb"
	fi
}
for _ in $(seq 1 1500); do
	target_up && break
	kill -0 "$tpid" 2>/dev/null || { cat "$out/target/run-vm.log" >&2; die "target VM exited early"; }
	sleep 0.2
done
target_up || die "target VM did not start its QEMU in 300 s (see $out/target/run-vm.log)"

"${inns[@]}" "$REPO/tests/vm/run-vm.sh" --kver "$kver" "${kdir[@]}" "${append[@]}" --timeout "$timeout_s" --mem "$hmem" --smp 2 \
	--out "$out" "${hargs[@]}" "${verbose[@]}" -- "$REPO/tests/rig/guest-host.sh" &
hpid=$!

# hmp VM COMMAND...: one monitor command to the target or host VM.
hmp() {
	local vm=$1
	shift
	python3 "$REPO/tests/rig/hmp.py" "$sockdir/$vm.mon" "$@"
}

# Serve the host guest's QEMU requests until it powers off.
serve() { # REQUEST-FILE
	local req=$1 base vm action arg1 arg2 rc=0 o
	base=${req%.req}
	read -r vm action arg1 arg2 < "$req" || true
	case "$vm" in target|host) ;; *) echo "bad VM '$vm'" > "$base.out"; echo 2 > "$base.rc"; return ;; esac
	case "$action" in
	set_link)
		o=$(hmp "$vm" set_link "$arg1" "$arg2" 2>&1) || rc=$?
		;;
	stop|cont)
		o=$(hmp "$vm" "$action" 2>&1) || rc=$?
		;;
	pause)
		[[ $arg1 =~ ^[0-9]+$ ]] || arg1=5
		o=$(hmp "$vm" stop 2>&1) || rc=$?
		sleep "$arg1"
		o="$o$(hmp "$vm" cont 2>&1)" || rc=$?
		;;
	*) o="unknown action '$action'"; rc=2 ;;
	esac
	log "qemu request $(basename "$req"): $vm $action $arg1 $arg2 -> rc $rc"
	printf '%s\n' "$o" > "$base.out"
	echo "$rc" > "$base.rc.tmp"
	mv "$base.rc.tmp" "$base.rc"
	rm -f "$req"
}
while kill -0 "$hpid" 2>/dev/null; do
	for req in "$rig"/qemu/*.req; do
		[ -e "$req" ] || continue
		serve "$req"
	done
	sleep 0.1
done
hrc=0
wait "$hpid" || hrc=$?
hpid=''

# Let the target guest check its own log and power off.
touch "$rig/shutdown"
for _ in $(seq 1 600); do
	kill -0 "$tpid" 2>/dev/null || break
	sleep 0.2
done
trc=0
if kill -0 "$tpid" 2>/dev/null; then
	log "target VM did not power off within 120 s; killing it"
	trc=1
else
	wait "$tpid" || trc=$?
fi
tpid=''
log "target guest exit status $trc (console $out/target/console.log, dmesg $out/target/dmesg.txt)"
if [ "$trc" != 0 ]; then
	tail -n 30 "$out/target/console.log" 2>/dev/null | sed 's/^/    target: /' >&2
	[ "$hrc" != 0 ] || hrc=$trc
fi
exit "$hrc"
