#!/bin/bash
# shellcheck disable=SC2317 # helpers are invoked indirectly (check, wait_for)
# 14-multipath: native multipath over two Soft-RoCE paths in one guest (path A:
# veth0/veth1 with rxe0/rxe1, path B: veth2/veth3 with rxe2/rxe3), one
# subsystem behind two nvmet ports, round-robin, default connect options.
# fio writes and verifies through the multipath disk at QD1 and QD16 while
#  (a) path A's link goes down on the host (ip link set veth0 down) and comes
#      back (link up, the fabric's routes re-applied as a network manager
#      would), and
#  (c) the target removes path A's port and brings it back.
# Each run prints the longest I/O stall (fio's largest completion latency)
# and must stay within STALL_MAX (3 s) with zero verify errors; path A must be
# live again within reconnect_delay (10 s default; a port event skips the
# wait) + 2 s of the link's or port's return, and carry I/O again.  Under
# HOST_DRIVER=inbox (in-tree nvme_rdma) the stalls and returns are measured
# and printed, not judged.  (b), a path that silently drops packets, needs a
# real wire: tests/rig.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
suite_begin

STALL_MAX=${TEST_STALL_MAX:-3}
OUTAGE=${TEST_OUTAGE_SECS:-6}
# A link outage longer than the target's keep-alive timeout (5 s) makes the
# target tear the association down and send its DREQs into the dead link,
# which leaves Soft-RoCE's GSI QP on the target in the error state for good:
# no connection to that port would ever be accepted again (seen on the slow
# debug kernel).  A real NIC retries; keep the link outage below that here.
LINK_OUTAGE=${TEST_LINK_OUTAGE_SECS:-3}
RECONNECT_DELAY=10	# nvme-fabrics' default; the suite connects with defaults
# the return bound: reconnect_delay + 2 s (the issue's), stretched on a
# debug kernel where one association takes several seconds under KASAN
RETURN_MAX=$((RECONNECT_DELAY + 2))
fx_debug_kernel && RETURN_MAX=$((RETURN_MAX * 2))
is_rnvme() { [ "$HOST_DRIVER" != inbox ]; }
is_rnvme || MEASURE_ONLY=1

modprobe nvme-core
[ "$(cat /sys/module/nvme_core/parameters/multipath 2>/dev/null)" = Y ] ||
	tap_skip_all "nvme_core native multipath is off"
fx_setup --nqn "$TEST_NQN" --port 1
fx_pathb_up || bail "cannot set up path B (veth2/veth3, ${RNVME_RDMA}2/${RNVME_RDMA}3)"
fx_target_up --nqn "$TEST_NQN" --port 2 --traddr "$TGT_IP4_B" || bail "cannot export path B's port"
link_a=$NVMET_CFS/ports/1/subsystems/$TEST_NQN

connect_path() { # TRADDR SRC: prints nvmeN
	local out
	out=$(nvmf_write "transport=$TRANSPORT,traddr=$1,trsvcid=$TGT_PORT,nqn=$TEST_NQN,host_traddr=$2") || return 1
	[[ $out =~ instance=([0-9]+) ]] || { echo "# connect $1: $out" >&2; return 1; }
	echo "nvme${BASH_REMATCH[1]}"
}
ctrl_a=$(connect_path "$TGT_IP4" "$HOST_IP4") || bail "connect path A"
ctrl_b=$(connect_path "$TGT_IP4_B" "$HOST_IP4_B") || bail "connect path B"
head_dev=$(wait_ns_dev "$ctrl_a" 30) || bail "no namespace on path A"
dev_b=$(wait_ns_dev "$ctrl_b" 30) || bail "no namespace on path B"
[ "$head_dev" = "$dev_b" ] || bail "the two paths lead to different disks ($head_dev, $dev_b)"
for f in /sys/class/nvme-subsystem/nvme-subsys*/iopolicy; do
	[ -e "$(dirname "$f")/$ctrl_a" ] && echo round-robin > "$f"
done
ok "two paths to $TEST_NQN behind $head_dev: $ctrl_a (A, $RDMA_DEV0) and $ctrl_b (B, ${RNVME_RDMA}2), round-robin, default options"

state_is() { grep -qx "$2" "/sys/class/nvme/$1/state" 2>/dev/null; }

# fabric faults on path A and their repair
link_down() { ip link set veth0 down; }
# Back up, and what the kernel dropped with the link (path A's policy route
# and permanent neighbour) restored in the same breath, without flushing
# anything: the reconnect starts on the port event and must not race a
# route flush (a packet routed into lo in that window waits a whole RC
# timeout, 2.1 s, for its retransmission).
link_up() {
	local mac1
	read -r mac1 < /sys/class/net/veth1/address
	printf '%s\n' "link set veth0 up" \
		"route replace $TGT_IP4 dev veth0 src $HOST_IP4 table 100" \
		"neigh replace $TGT_IP4 lladdr $mac1 dev veth0 nud permanent" | ip -4 -batch -
}
port_down() { rm -f "$link_a"; }
port_up() { [ -e "$link_a" ] || ln -s "$NVMET_CFS/subsystems/$TEST_NQN" "$link_a"; }

# the RDMA devices' error and retry counters (hw_counters), as NAME=VALUE
# lines; rdma_counters_diff BEFORE AFTER prints the ones that moved, so a
# stall says whether a path's packets were retried (RC timeout, 2.1 s here)
rdma_counters() {
	local f
	for f in /sys/class/infiniband/*/ports/1/hw_counters/*; do
		[ -r "$f" ] || continue
		case "$f" in *_pkts|*_bytes|*/rdma_sends|*/rdma_recvs|*/ack_deferred) continue ;; esac
		echo "$(basename "$(dirname "$(dirname "$(dirname "$(dirname "$f")")")")").$(basename "$f")=$(cat "$f")"
	done 2>/dev/null
}
rdma_counters_diff() {
	awk -F= 'NR == FNR { v[$1] = $2; next } ($1 in v) && $2 != v[$1] { printf "%s +%d ", $1, $2 - v[$1] }' \
		<(printf '%s\n' "$1") <(printf '%s\n' "$2")
}

# scenario NAME QD FAULT REPAIR: fio runs from 3 s before the fault until the
# checks after the repair are done (path A live again and carrying I/O), then
# is stopped (fio_stall_stop); its runtime, long enough for the slowest
# allowed return, is only the upper bound.
scenario() {
	local name=$1 qd=$2 fault=$3 repair=$4 out=/tmp/fio-mp-$1-$2.json rc=0 runtime t0
	# (plus the failover hold, during which the held writes keep fio waiting)
	runtime=$((3 + OUTAGE + RETURN_MAX + 4 + $(cat "/sys/class/nvme/$ctrl_a/rnvme/failover_hold_ms" 2>/dev/null || echo 0) / 1000))
	t0=$(now_ns)
	local c0 held0
	c0=$(rdma_counters)
	held0=$(cat "/sys/class/nvme/$ctrl_a/rnvme/held_commands" 2>/dev/null || echo 0)
	FIO_STALL_LATLOG=1 fio_stall_start "$head_dev" "$qd" "$runtime" "$out"
	sleep 3
	local tf
	tf=$(now_ns)
	$fault
	if [ "$fault" = link_down ]; then sleep "$LINK_OUTAGE"; else sleep "$OUTAGE"; fi
	state_is "$ctrl_a" connecting
	tap_measured "$name QD$qd: path A out of service (connecting) during the outage" $? "state $(ctrl_attr "$ctrl_a" state)"
	$repair || echo "# repair of $name failed"
	path_back_within "$ctrl_a" "$name QD$qd: path A" "$RETURN_MAX"
	if is_rnvme; then
		check "$name QD$qd: path A is back on $RDMA_DEV0 (not looped through the target's device)" \
			test "$(cat "/sys/class/nvme/$ctrl_a/rnvme/rdma_device")" = "$RDMA_DEV0"
	fi
	fio_stall_stop
	rc=$FIO_RC
	echo "# $name QD$qd: fio ended $(secs_since "$t0") s after its start (stopped after the checks; bound $runtime s)"
	local summary stall
	summary=$(fio_stall_result "$out")
	local rstall wstall
	read -r ferr stall nw nr rstall wstall <<< "$summary"
	if [ "$rc" != 0 ] || [ "${ferr:-x}" != 0 ]; then
		not_ok "$name QD$qd: fio wrote and verified through the outage" "fio exit $rc, $summary" "$(tail -n 15 "$out.stderr")"
		return
	fi
	ok "$name QD$qd: fio wrote $nw and verified $nr blocks through the outage, 0 errors"
	# reads fail over at once; a write the lost controller may still
	# execute waits for rnvme's failover hold (2 x KATO + CQT) first
	tap_within "$name QD$qd: longest read stall" "$rstall" "$STALL_MAX"
	tap_within "$name QD$qd: longest write stall (bound $STALL_MAX s + the failover hold, $(cat "/sys/class/nvme/$ctrl_a/rnvme/failover_hold_ms" 2>/dev/null || echo 0) ms)" \
		"$wstall" "$(failover_hold_stall_max "$ctrl_a" "$STALL_MAX")"
	is_rnvme && echo "# $name QD$qd: commands held by the failover hold: $(($(cat "/sys/class/nvme/$ctrl_a/rnvme/held_commands") - held0)), the last hold $(cat "/sys/class/nvme/$ctrl_a/rnvme/last_hold_ms") ms"
	local lat l0 l1 slow
	read -r lat l0 l1 slow <<< "$(fio_stall_longest "$out" "$tf")"
	echo "# $name QD$qd: the longest completion ($lat s) ran from ${l0:-?} to ${l1:-?} s after the fault; ${slow:-?} took over 1 s; RDMA counters that moved: $(rdma_counters_diff "$c0" "$(rdma_counters)")"
	if is_rnvme; then
		local r=/sys/class/nvme/$ctrl_a/rnvme
		echo "# $ctrl_a counters: error_recoveries $(cat "$r/error_recoveries"), reconnects $(cat "$r/reconnects"), last_outage_ms $(cat "$r/last_outage_ms"), last_error: $(cat "$r/last_error")"
	fi
}

if is_rnvme; then
	p=/sys/module/rnvme/parameters
	check "ack_timeout is -1 (automatic) and retry_count 7 by default" test "$(cat $p/ack_timeout) $(cat $p/retry_count)" = "-1 7"
	check_fails "ack_timeout=32 is refused" bash -c "echo 32 > $p/ack_timeout"
	check_fails "ack_timeout=-2 is refused" bash -c "echo -2 > $p/ack_timeout"
	check_fails "retry_count=0 is refused" bash -c "echo 0 > $p/retry_count"
	check "ack_timeout and retry_count unchanged by the refusals" test "$(cat $p/ack_timeout) $(cat $p/retry_count)" = "-1 7"
	check "ack_watchdog_ms is 1500 by default" test "$(cat $p/ack_watchdog_ms)" = 1500
	check_fails "ack_watchdog_ms=99 is refused" bash -c "echo 99 > $p/ack_watchdog_ms"
	check_fails "ack_watchdog_ms=600001 is refused" bash -c "echo 600001 > $p/ack_watchdog_ms"
	check "ack_watchdog_ms=0 (off) is accepted" bash -c "echo 0 > $p/ack_watchdog_ms && echo 1500 > $p/ack_watchdog_ms"
	check "ack_watchdog_ms back at 1500" test "$(cat $p/ack_watchdog_ms)" = 1500
	# Off, the watchdog's checks stop waking; on again, the live
	# controllers' checks resume at once (counted by the workqueue
	# tracepoint: a run of rnvme_ack_wd_work is one check of a controller).
	wd_runs() { # SECS
		local T=/sys/kernel/tracing
		echo 0 > $T/tracing_on
		echo > $T/trace
		echo 1 > $T/tracing_on
		sleep "$1"
		echo 0 > $T/tracing_on
		grep -c 'function rnvme_ack_wd_work' $T/trace
	}
	T=/sys/kernel/tracing
	if { [ -d $T/events ] || mount -t tracefs nodev $T 2>/dev/null; } &&
		echo 1 > $T/events/workqueue/workqueue_execute_start/enable; then
		echo 0 > $p/ack_watchdog_ms
		# a check queued before the switch may still run once
		sleep 1
		n_off=$(wd_runs 3)
		echo 1500 > $p/ack_watchdog_ms
		n_on=$(wd_runs 3)
		echo 0 > $T/events/workqueue/workqueue_execute_start/enable
		check "ack_watchdog_ms=0: no check wakes in 3 s ($n_off runs)" test "$n_off" = 0
		# two live controllers, a check each per 375 ms: some 16
		check "ack_watchdog_ms=1500 again: the live controllers are checked ($n_on runs in 3 s)" test "$n_on" -ge 4
	else
		tap_skip "the watchdog's wakeups: no tracefs workqueue events"
	fi
fi

# No spurious failover: healthy I/O at QD16 over both paths for HEALTHY_SECS
# (30 s in make check; the issue's 10 minutes with TEST_HEALTHY_SECS=600)
# starts no error recovery on either path.
HEALTHY_SECS=${TEST_HEALTHY_SECS:-30}
rec() { cat "/sys/class/nvme/$1/rnvme/error_recoveries" 2>/dev/null || echo n/a; }
r0="$(rec "$ctrl_a") $(rec "$ctrl_b")"
hc0=$(rdma_counters)
fio_stall_start "$head_dev" 16 "$HEALTHY_SECS" /tmp/fio-mp-healthy.json
rc=0
wait "$FIO_PID" || rc=$?
read -r ferr stall nw nr _ <<< "$(fio_stall_result /tmp/fio-mp-healthy.json)"
r1="$(rec "$ctrl_a") $(rec "$ctrl_b")"
echo "# healthy: RDMA counters that moved: $(rdma_counters_diff "$hc0" "$(rdma_counters)")"
if [ "$rc" = 0 ] && [ "${ferr:-x}" = 0 ] && [ "$r0" = "$r1" ] && state_is "$ctrl_a" live && state_is "$ctrl_b" live; then
	ok "healthy: ${HEALTHY_SECS} s of QD16 I/O ($nw writes, $nr verified), no error recovery on either path, longest completion $stall s"
else
	not_ok "healthy: ${HEALTHY_SECS} s of QD16 I/O without a failover" "fio exit $rc errors ${ferr:-?}; error_recoveries A B: $r0 -> $r1"
fi

for qd in 1 16; do
	scenario link-down "$qd" link_down link_up
	scenario port-removal "$qd" port_down port_up
done

check "path B stayed live throughout" state_is "$ctrl_b" live
fx_host_disconnect_all
fx_pathb_down
suite_end
