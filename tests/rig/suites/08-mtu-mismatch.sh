#!/bin/bash
# Rig: the two ends of a wire disagree on the MTU. The target's NIC gets MTU
# 4200 (Soft-RoCE: 4096-byte RDMA MTU) while the host keeps 1500 (1024). The
# connection must settle on the smaller path MTU: 128 KiB writes (multi-packet
# RDMA READs and WRITEs) complete and verify. Then the other way round (host
# 4200, target 1500), reported as measured: I/O ends within 60 s without bad
# data, or it is still pending (the large frames never arrive) and deleting
# the controller ends it - never a hang, never bad data.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
# shellcheck source-path=SCRIPTDIR source=../../lib/rig.sh
. "$(dirname "$0")/../lib/rig.sh"

suite_begin
rig_setup
ifa=$(rig_ifname "$RIG_MAC_A")

fio_mtu() { # DEV OUT: 32 MiB of 128 KiB writes, then verify
	timeout 300 fio --name=mtu --filename="$1" --ioengine=libaio --direct=1 --iodepth=8 \
		--rw=randwrite --bs=128k --size=32M --verify=crc32c --do_verify=1 --verify_fatal=1 \
		--output-format=json --output="$2" > "$2.stderr" 2>&1
}

# 1. target larger
rig_t rt_mtu A 4200 >/dev/null || not_ok "target MTU 4200 on path A"
sleep 1
echo "# host $ifa MTU $(cat "/sys/class/net/$ifa/mtu"); target: $(rig_t 'rdma link show rxea/1 -d | head -n 2 | tr "\n" " "')"
ctrl=$(rig_connect A "reconnect_delay=1,ctrl_loss_tmo=30") || bail "connect path A (target MTU 4200)"
dev=$(wait_ns_dev "$ctrl" 30) || bail "no namespace on $ctrl"
t=$(now_ns)
rc=0
fio_mtu "$dev" /tmp/fio-mtu1.json || rc=$?
echo "# target MTU 4200 / host 1500: fio $(secs_since "$t") s"
fio_verify_result /tmp/fio-mtu1.json "$rc" "target MTU 4200, host 1500: 128 KiB writes complete and verify"
check "controller still live with the MTU mismatch" ctrl_is "$ctrl" live
echo "# error recoveries during the run: $(rnvme_stat "$ctrl" error_recoveries)"
fx_host_disconnect_all

# 2. host larger
rig_t rt_mtu A 1500 >/dev/null || not_ok "target MTU back to 1500"
ip link set "$ifa" mtu 4200 || not_ok "host MTU 4200 on path A"
sleep 1
echo "# host $ifa MTU 4200; target MTU 1500"
if ctrl=$(rig_connect A "reconnect_delay=1,ctrl_loss_tmo=20,fast_io_fail_tmo=10"); then
	dev=$(wait_ns_dev "$ctrl" 30)
	t=$(now_ns)
	fio --name=mtu2 --filename="$dev" --ioengine=libaio --direct=1 --iodepth=8 \
		--rw=randwrite --bs=128k --size=16M --verify=crc32c --do_verify=1 --verify_fatal=1 \
		--output-format=json --output=/tmp/fio-mtu2.json > /tmp/fio-mtu2.json.stderr 2>&1 &
	fpid=$!
	if wait_for 60 sh -c "! kill -0 $fpid"; then
		rc=0
		wait "$fpid" || rc=$?
		echo "# host MTU 4200 / target 1500: fio exit $rc after $(secs_since "$t") s, recoveries $(rnvme_stat "$ctrl" error_recoveries), last error: $(rnvme_stat "$ctrl" last_error)"
		if grep -q 'verify: bad' /tmp/fio-mtu2.json /tmp/fio-mtu2.json.stderr 2>/dev/null; then
			not_ok "host MTU 4200, target 1500: no bad data" "$(grep -m3 'verify' /tmp/fio-mtu2.json.stderr)"
		else
			ok "host MTU 4200, target 1500: I/O ended (exit $rc) within 60 s, no bad data"
		fi
	else
		# The larger frames never arrive: commands time out, recovery
		# reconnects (small frames pass) and the requeued I/O times out
		# again. Deleting the controller must end it.
		echo "# host MTU 4200 / target 1500: I/O still pending after 60 s; state $(ctrl_state "$ctrl"), recoveries $(rnvme_stat "$ctrl" error_recoveries), last error: $(rnvme_stat "$ctrl" last_error)"
		t=$(now_ns)
		timeout 60 sh -c "echo 1 > /sys/class/nvme/$ctrl/delete_controller"
		if wait_for 60 sh -c "! kill -0 $fpid"; then
			ok "host MTU 4200, target 1500: pending I/O ends $(secs_since "$t") s after deleting the controller (no hang)"
		else
			not_ok "host MTU 4200, target 1500: pending I/O ends after deleting the controller"
			kill -9 "$fpid"
		fi
		wait "$fpid" 2>/dev/null
	fi
else
	ok "host MTU 4200, target 1500: connect refused with an error (no hang)"
fi
fx_host_disconnect_all
ip link set "$ifa" mtu 1500

rig_end
