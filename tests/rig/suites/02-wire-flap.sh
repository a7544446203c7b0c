#!/bin/bash
# Rig: link faults on the wire while fio writes and verifies.
#  1. QEMU takes the target's NIC link down (set_link off) for 4 s: the host
#     sees silence, recovers after the link returns.
#  2. The host guest takes its own NIC down (ip link set down) for 3 s.
# In both cases I/O resumes, no write fails and every block verifies.
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
ifa=$(rig_ifname "$RIG_MAC_A")

# fault NAME DOWN-SECS DOWN-CMD UP-CMD
fault() {
	local name=$1 secs=$2 down=$3 up=$4 t_off left=''
	fio_verify_start "$dev" 64M "/tmp/fio-$name.json"
	sleep 2
	t_off=$(now_ns)
	eval "$down" >/dev/null || not_ok "$name: fault injected ($down)"
	if wait_for "$secs" ctrl_not "$ctrl" live; then
		left=$WAIT_ELAPSED
	fi
	while [ "$(secs_since "$t_off" | cut -d. -f1)" -lt "$secs" ]; do sleep 0.2; done
	eval "$up" >/dev/null || not_ok "$name: fault removed ($up)"
	echo "# $name: controller left live after ${left:-never (within the outage)} s"
	if wait_for 45 ctrl_is "$ctrl" live; then
		ok "$name: controller live $WAIT_ELAPSED s after the link came back (outage $(secs_since "$t_off") s)"
	else
		not_ok "$name: controller live within 45 s of the link coming back" "state $(ctrl_state "$ctrl"); last error: $(rnvme_stat "$ctrl" last_error)"
		rig_path_facts A
	fi
	fio_verify_finish "/tmp/fio-$name.json" "$name: fio write+verify through the fault: no error, every block verified"
}

fault target-nic-off 4 "rig_q target set_link nica off" "rig_q target set_link nica on"
fault host-link-down 3 "ip link set $ifa down" "ip link set $ifa up"
echo "# error recoveries $(rnvme_stat "$ctrl" error_recoveries), reconnects $(rnvme_stat "$ctrl" reconnects), last error: $(rnvme_stat "$ctrl" last_error)"

rig_end
