#!/bin/bash
# Rig: the target disables its port (nvmet drops the controller) and re-enables
# it within a few reconnect_delay periods, while fio writes and then verifies.
# I/O must resume on the reconnected controller, no write may fail, and every
# acknowledged write must read back intact. Meanwhile the target lowers the
# subsystem's queue limit (attr_qid_max): the reconnect renegotiates the
# I/O queue count.  The host logs why the controller left live: the CM's
# DISCONNECTED on a live controller, at warning level.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
# shellcheck source-path=SCRIPTDIR source=../../lib/rig.sh
. "$(dirname "$0")/../lib/rig.sh"

suite_begin
rig_setup

ctrl=$(rig_connect A "reconnect_delay=1,ctrl_loss_tmo=60") || bail "connect path A"
dev=$(wait_ns_dev "$ctrl" 30) || bail "no namespace on $ctrl"
ok "connected $ctrl ($dev) over path A"
rec0=$(rnvme_stat "$ctrl" reconnects)
qc0=$(ctrl_attr "$ctrl" queue_count)
echo "# queue_count before (admin + I/O queues): $qc0"

fio_verify_start "$dev" 64M /tmp/fio-flap.json
sleep 2
t_off=$(now_ns)
rig_t rt_port_off 1 >/dev/null || not_ok "target port 1 disabled"
rig_t "echo 1 > \$SUB/attr_qid_max" >/dev/null || not_ok "target subsystem limited to 1 I/O queue"
if wait_for 20 ctrl_not "$ctrl" live; then
	ok "controller left 'live' $WAIT_ELAPSED s after the port went away ($(ctrl_state "$ctrl"))"
else
	not_ok "controller left 'live' after the port went away" "state $(ctrl_state "$ctrl")"
fi
# nvmet disconnects the port's queues: the host says so, not only "starting error recovery"
line=$(fx_dmesg_since_mark | grep -m1 "RDMA CM disconnected on a live controller")
if [ "$HOST_DRIVER" = inbox ]; then
	tap_skip "nvme_rdma logs the CM event at debug level only" "the host logs the target's disconnect"
elif [ -n "$line" ]; then
	ok "the host logs the target's disconnect: ${line#*] }"
else
	not_ok "the host logs the target's disconnect (a warning naming the CM event)" \
		"$(fx_dmesg_since_mark | grep -E "nvme|rnvme" | head -n 6)"
fi
# Down for ~3 reconnect_delay periods: the first attempts must fail.
while [ "$(secs_since "$t_off" | cut -d. -f1)" -lt 3 ]; do sleep 0.2; done
rig_t rt_port_on 1 >/dev/null || not_ok "target port 1 re-enabled"
if wait_for 30 ctrl_is "$ctrl" live; then
	ok "controller live again $WAIT_ELAPSED s after the port came back (outage $(secs_since "$t_off") s)"
else
	not_ok "controller live again within 30 s of the port coming back" "state $(ctrl_state "$ctrl")"
fi
# The failed reconnect attempts send none of the held writes: the hold runs
# once, from the loss, and is not renewed by each attempt's teardown.
if [ "$HOST_DRIVER" = rnvme ]; then
	nhold=$(fx_dmesg_since_mark | grep -c "commands the lost controller may still execute")
	last=$(rnvme_stat "$ctrl" last_hold_ms)
	hold=$(rnvme_stat "$ctrl" failover_hold_ms)
	if [ "$nhold" -le 1 ] && [ "${last:-0}" -le $(( ${hold:-0} + 3000 )) ]; then
		ok "the failover hold ran $nhold time(s), the last for ${last:-0} ms (hold ${hold:-?} ms)"
	else
		not_ok "the failover hold ran once, no longer than the hold" \
			"$nhold hold lines, last hold ${last:-?} ms, hold ${hold:-?} ms"
	fi
fi
echo "# reconnect attempts $(rnvme_stat "$ctrl" reconnect_attempts), last error: $(rnvme_stat "$ctrl" last_error)"
qc1=$(ctrl_attr "$ctrl" queue_count)
if [ "${qc0:-0}" -gt 2 ] && [ "$qc1" = 2 ]; then
	ok "reconnect renegotiated the queue count: $qc0 -> $qc1 (target attr_qid_max=1)"
elif [ "${qc0:-0}" -le 2 ]; then
	tap_skip "host guest has one CPU: only one I/O queue to begin with" "queue count renegotiated"
else
	not_ok "reconnect renegotiated the queue count" "before $qc0, after $qc1"
fi
rec1=$(rnvme_stat "$ctrl" reconnects)
if [ -n "$rec0" ] && [ -n "$rec1" ] && [ "$rec1" -gt "$rec0" ]; then
	ok "sysfs reconnects counter went $rec0 -> $rec1"
else
	not_ok "sysfs reconnects counter increased" "before '$rec0' after '$rec1'"
fi
fio_verify_finish /tmp/fio-flap.json "fio write+verify through the port flap: no error, every block verified"

rig_end
