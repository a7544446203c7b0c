# shellcheck shell=bash disable=SC2034 # constants are used by the rig suites
# shellcheck disable=SC2153 # HOST_IP4/TGT_IP4 come from common.sh
# Helpers for the two-VM fault rig (tests/rig/run-rig.sh). Sourced after
# common.sh by the target guest (tests/rig/guest-target.sh) and by the rig
# suites in the host guest (tests/rig/suites/NN-*.sh).
#
# Wires (tap devices bridged in a network namespace of run-rig.sh's, or QEMU
# socket netdevs on 127.0.0.1: RIG_WIRE, written to $RIG/wire):
#   path A: NIC 52:54:00:72:0a:xx  host 192.0.2.1    target 192.0.2.2    rxe "rxea"
#   path B: NIC 52:54:00:72:0b:xx  host 198.51.100.1 target 198.51.100.2 rxe "rxeb"
# QEMU device ids of the NICs (for set_link): nica, nicb.

RIG=/rig
RIG_MAC_A=52:54:00:72:0a
RIG_MAC_B=52:54:00:72:0b
HOST_IP4_B=198.51.100.1
TGT_IP4_B=198.51.100.2
RIG_PEER_TIMEOUT=${RIG_PEER_TIMEOUT:-120}

# rig_mount: mount the directory shared by both guests and the build machine.
rig_mount() {
	mkdir -p "$RIG"
	mountpoint -q "$RIG" && return 0
	mount -t 9p -o trans=virtio,version=9p2000.L,rw,msize=262144,cache=none rig "$RIG"
}

# rig_ifname PREFIX: the interface whose MAC starts with PREFIX.
rig_ifname() {
	local d mac
	for d in /sys/class/net/*; do
		read -r mac < "$d/address" 2>/dev/null || continue
		case "$mac" in "$1":*) basename "$d"; return 0 ;; esac
	done
	return 1
}

# rig_rxe_active NAME: the rxe device's port is ACTIVE.
rig_rxe_active() { rdma link show "$1/1" 2>/dev/null | grep 'state ACTIVE' >/dev/null; }

# rig_path_up A|B host|target: address, link and rxe device of one path.
rig_path_up() {
	local path=$1 role=$2 mac ip dev rxe
	case "$path" in
	A) mac=$RIG_MAC_A rxe=rxea ip=$HOST_IP4; [ "$role" = target ] && ip=$TGT_IP4 ;;
	B) mac=$RIG_MAC_B rxe=rxeb ip=$HOST_IP4_B; [ "$role" = target ] && ip=$TGT_IP4_B ;;
	*) echo "# rig_path_up: bad path $path"; return 2 ;;
	esac
	dev=$(rig_ifname "$mac") || { echo "# no NIC with MAC $mac:*"; return 1; }
	ip addr replace "$ip/24" dev "$dev" || return 1
	ip link set "$dev" up || return 1
	rdma link show "$rxe/1" >/dev/null 2>&1 || rdma link add "$rxe" type rxe netdev "$dev" || return 1
	wait_for 30 rig_rxe_active "$rxe" || { echo "# $rxe not ACTIVE"; rdma link show | diag; return 1; }
}

# rig_fabric_up host|target: NIC driver, both paths, Soft-RoCE.
rig_fabric_up() {
	modprobe -a virtio_net rdma_rxe || return 1
	wait_for 10 rig_ifname "$RIG_MAC_B" || { echo "# the rig NICs did not appear"; return 1; }
	rig_path_up A "$1" && rig_path_up B "$1"
}

# ---------------------------------------------------------------- host guest side

RIG_SEQ=0
# rig_request DIR SUFFIX TIMEOUT TEXT: queue a request, wait for its reply.
# Prints the reply text; returns its status (124 when no reply came).
rig_request() {
	local dir=$1 suffix=$2 limit=$3 text=$4 base
	RIG_SEQ=$((RIG_SEQ + 1))
	base=$dir/$(printf '%05d' "$RIG_SEQ")-$$
	printf '%s\n' "$text" > "$base.tmp"
	mv "$base.tmp" "$base.$suffix"
	if ! wait_for "$limit" test -e "$base.rc"; then
		echo "# no reply to '$text' within $limit s"
		return 124
	fi
	cat "$base.out" 2>/dev/null
	return "$(cat "$base.rc")"
}

# rig_t CMD...: run a command in the target guest's agent (see guest-target.sh).
rig_t() { rig_request "$RIG/cmd" cmd "${RIG_T_TIMEOUT:-60}" "$*"; }

# rig_q target|host ACTION ARGS...: a QEMU monitor action done by run-rig.sh.
rig_q() { rig_request "$RIG/qemu" req "${RIG_Q_TIMEOUT:-120}" "$*"; }

# rig_wait_target: wait until the target guest has its subsystem exported.
rig_wait_target() {
	wait_for "$RIG_PEER_TIMEOUT" test -e "$RIG/target-ready" ||
		{ echo "# target guest not ready after $RIG_PEER_TIMEOUT s"; return 1; }
}

# rig_setup: host-side preamble of a rig suite (fabric, host driver, target mark).
rig_setup() {
	rig_mount || bail "cannot mount the rig share"
	rig_wait_target || bail "target guest not ready"
	rig_fabric_up host || bail "cannot set up the host side of the wires"
	rig_path_answers A || bail "path A: the target does not answer ping (below RDMA: the wire, a NIC or the target guest, not the host driver)"
	rig_path_answers B || bail "path B: the target does not answer ping (below RDMA: the wire, a NIC or the target guest, not the host driver)"
	fx_host_driver_load || bail "cannot load the host driver ($HOST_DRIVER)"
	rig_t rt_mark "$(basename "$0" .sh)" >/dev/null || bail "target agent does not answer"
}

# rig_connect A|B [OPTS]: connect one path to TEST_NQN; prints the controller name.
rig_connect() {
	local tgt=$TGT_IP4 src=$HOST_IP4 out
	[ "$1" = B ] && tgt=$TGT_IP4_B src=$HOST_IP4_B
	out=$(nvmf_write "transport=$TRANSPORT,traddr=$tgt,trsvcid=$TGT_PORT,nqn=$TEST_NQN,host_traddr=$src,hostnqn=$HOST_NQN,hostid=$HOST_ID${2:+,$2}") ||
		{ echo "connect path $1 failed: $out" >&2; return 1; }
	[[ $out =~ instance=([0-9]+) ]] || { echo "connect path $1: unexpected reply '$out'" >&2; return 1; }
	echo "nvme${BASH_REMATCH[1]}"
}

# rig_path_facts A|B: what each end knows of one path, as TAP comments, for a
# failure that may be the wire's or Soft-RoCE's and not the host driver's:
# the host's NIC and rxe port, its neighbour entry and one ping of the
# target, and the target's NIC and rxe port (its agent answers or not).
rig_path_facts() {
	local mac=$RIG_MAC_A rxe=rxea tgt=$TGT_IP4 dev
	[ "$1" = B ] && mac=$RIG_MAC_B rxe=rxeb tgt=$TGT_IP4_B
	dev=$(rig_ifname "$mac") || { echo "# path $1: no host NIC with MAC $mac:*"; return 0; }
	echo "# path $1 host: $(ip -br link show "$dev" 2>&1 | tr -s ' ') | $(rdma link show "$rxe/1" 2>&1 | tr '\n' ' ')"
	echo "# path $1 host: neighbour $(ip neigh show "$tgt" dev "$dev" 2>&1 | tr '\n' ' '); ping $tgt: $(ping -c 1 -W 2 -I "$dev" "$tgt" 2>&1 | grep -E 'received|unreachable' | tr '\n' ' ')"
	echo "# path $1 host: $(grep -E "^ *$dev:" /proc/net/dev | tr -s ' ')"
	# the target's transmit side: a virtio-net TX ring that stopped (its
	# skbs then pin rxe QPs: the 50 s __rxe_cleanup wait) shows here
	echo "# path $1 target: $(RIG_T_TIMEOUT=20 rig_t "d=\$(rig_ifname $mac); ip -br link show \$d; rdma link show $rxe/1; echo tx_timeout \$(cat /sys/class/net/\$d/queues/tx-0/tx_timeout); grep -E \"^ *\$d:\" /proc/net/dev; tc -s qdisc show dev \$d | grep -E 'backlog|dropped'; ethtool -S \$d 2>&1 | grep -E 'tx_queue_0|kicks|timeout'" 2>&1 | tr -s ' ' | tr '\n' ' ')"
}

# rig_path_answers A|B: the target answers a ping over the path within 10 s
# (IP, below every RDMA layer); prints the path's facts when it does not.
rig_path_answers() {
	local mac=$RIG_MAC_A tgt=$TGT_IP4 dev
	[ "$1" = B ] && mac=$RIG_MAC_B tgt=$TGT_IP4_B
	dev=$(rig_ifname "$mac") || { rig_path_facts "$1"; return 1; }
	wait_for 10 ping -c 1 -W 1 -I "$dev" "$tgt" >/dev/null 2>&1 && return 0
	rig_path_facts "$1"
	return 1
}

ctrl_state() { cat "/sys/class/nvme/$1/state" 2>/dev/null; }

# state_watch CTRL T0 FILE: background; appends "SECS-SINCE-T0 STATE" to FILE
# whenever CTRL's state changes (every 0.1 s; "gone" when it disappears).
state_watch() {
	local c=$1 t0=$2 f=$3 last='' s
	: > "$f"
	while :; do
		read -r s 2>/dev/null < "/sys/class/nvme/$c/state" || s=gone
		if [ "$s" != "$last" ]; then
			echo "$(secs_since "$t0") $s" >> "$f"
			last=$s
		fi
		[ "$s" = gone ] && return 0
		sleep 0.1
	done
}
# state_time FILE STATE: seconds of the first change to STATE in a state_watch file.
state_time() { awk -v s="$2" '$2 == s { print $1; exit }' "$1"; }
ctrl_is() { [ "$(ctrl_state "$1")" = "$2" ]; }
ctrl_not() { [ -e "/sys/class/nvme/$1" ] && [ "$(ctrl_state "$1")" != "$2" ]; }
ctrl_gone() { [ ! -e "/sys/class/nvme/$1" ]; }
rnvme_stat() { cat "/sys/class/nvme/$1/rnvme/$2" 2>/dev/null; }

# rig_target_dmesg_check: TAP point, no kernel warnings on the target since rt_mark.
rig_target_dmesg_check() {
	local out rc=0
	out=$(rig_t rt_dmesg_check) || rc=$?
	if [ "$rc" = 0 ]; then
		ok "no kernel warnings on the target guest during $(basename "$0" .sh)"
	else
		not_ok "no kernel warnings on the target guest during $(basename "$0" .sh)" "$out" \
			"wires: RIG_WIRE=$(cat "$RIG/wire" 2>/dev/null || echo unknown)"
	fi
}

# FIO_VERIFY_ARGS: fio write-then-verify job used through the faults.
fio_verify_start() { # DEV SIZE OUTFILE [EXTRA...]: start fio in the background; FIO_PID
	local dev=$1 size=$2 outf=$3
	shift 3
	fio --name=rigverify --filename="$dev" --ioengine=libaio --direct=1 --iodepth=16 \
		--rw=randwrite --bs=16k --size="$size" --verify=crc32c --do_verify=1 \
		--verify_fatal=1 --output-format=json --output="$outf" "$@" \
		> "$outf.stderr" 2>&1 &
	FIO_PID=$!
}

# fio_verify_finish OUTFILE DESC [LIMIT-SECS]: wait for the fio_verify_start job
# (killed after LIMIT, default 240 s) and make its TAP point.
fio_verify_finish() {
	local rc=0
	if ! wait_for "${3:-240}" sh -c "! kill -0 $FIO_PID"; then
		not_ok "fio finished within ${3:-240} s"
		kill -9 "$FIO_PID"
		# an I/O stuck in the kernel keeps fio unkillable: do not wait forever
		if ! wait_for 30 sh -c "! kill -0 $FIO_PID"; then
			not_ok "fio ($FIO_PID) still alive 30 s after SIGKILL: I/O stuck in the kernel" \
				"$(cat "/proc/$FIO_PID/stack" 2>/dev/null | head -n 12)"
			return 1
		fi
	fi
	wait "$FIO_PID" || rc=$?
	fio_verify_result "$1" "$rc" "$2"
}

# fio_verify_result OUTFILE FIO-RC DESC: TAP point for a write+verify run; prints stalls.
fio_verify_result() {
	local outf=$1 rc=$2 desc=$3 summary
	summary=$(python3 - "$outf" <<'EOF' 2>&1
import json, sys
j = json.load(open(sys.argv[1]))
job = j["jobs"][0]
w, r = job["write"], job["read"]
def mx(d):
    c = d.get("clat_ns") or {}
    return c.get("max", 0) / 1e9
print(f"errors={job['error']} written={w['io_kbytes']} KiB verified-read={r['io_kbytes']} KiB "
      f"max write completion={mx(w):.2f} s max read completion={mx(r):.2f} s")
EOF
	)
	echo "# fio: $summary"
	if [ "$rc" = 0 ] && [[ $summary == errors=0\ * ]]; then
		ok "$desc"
	else
		# what the host's kernel said meanwhile: why the I/O failed
		not_ok "$desc" "fio exit $rc" "$(tail -n 15 "$outf.stderr" 2>/dev/null)" \
			"host kernel since the suite began (nvme/rnvme/rxe lines, last 40):" \
			"$(dmesg | awk -v m="$FX_DMESG_MARK" 'found { print } index($0, m) { found = 1 }' |
				grep -E 'nvme|rnvme|rxe|blk|I/O error' | tail -n 40)"
	fi
}

# rig_end: host-side teardown of a rig suite, target back to its exported
# state, target dmesg check, then the usual suite_end.
rig_end() {
	fx_host_disconnect_all
	rig_t rt_reset >/dev/null || echo "# target reset failed"
	rig_target_dmesg_check
	suite_end
}

# (path_ns is in common.sh)
# path_ana CTRL: the path's ANA state as the host sees it.
path_ana() { cat "/sys/block/$(path_ns "$1")/ana_state" 2>/dev/null; }
path_ana_is() { [ "$(path_ana "$1")" = "$2" ]; }

# rig_connect_both [OPTS]: two paths to TEST_NQN; sets CTRL_A, CTRL_B, HEAD_DEV.
rig_connect_both() {
	CTRL_A=$(rig_connect A "$1") || return 1
	CTRL_B=$(rig_connect B "$1") || return 1
	HEAD_DEV=$(wait_ns_dev "$CTRL_A" 30) || return 1
	local other
	other=$(wait_ns_dev "$CTRL_B" 30) || return 1
	[ "$other" = "$HEAD_DEV" ] || { echo "# paths lead to different disks: $HEAD_DEV, $other"; return 1; }
}
