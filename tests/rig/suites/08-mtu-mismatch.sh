#!/bin/bash
# Rig: the two ends of a wire disagree on the MTU. The target's NIC gets MTU
# 4200 (Soft-RoCE: 4096-byte RDMA MTU) while the host keeps 1500 (1024). The
# connection must settle on the smaller path MTU: 128 KiB writes (multi-packet
# RDMA READs and WRITEs) complete and verify. Then the other way round (host
# 4200, target 1500), reported as measured: either I/O verifies or it fails
# with an error within a bounded time - never a hang, never bad data.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
# shellcheck source-path=SCRIPTDIR source=../../lib/rig.sh
. "$(dirname "$0")/../lib/rig.sh"

suite_begin
rig_setup
ifa=$(rig_ifname "$RIG_MAC_A")
rxe_mtu() { rdma link show "$1/1" -d 2>/dev/null | grep -o 'active_mtu [0-9]*\|mtu [0-9]*' | head -n 1; }

fio_mtu() { # DEV OUT: 32 MiB of 128 KiB writes, then verify
	timeout 300 fio --name=mtu --filename="$1" --ioengine=libaio --direct=1 --iodepth=8 \
		--rw=randwrite --bs=128k --size=32M --verify=crc32c --do_verify=1 --verify_fatal=1 \
		--output-format=json --output="$2" > "$2.stderr" 2>&1
}

# 1. target larger
rig_t rt_mtu A 4200 >/dev/null || not_ok "target MTU 4200 on path A"
sleep 1
echo "# host $ifa MTU $(cat "/sys/class/net/$ifa/mtu") ($(rxe_mtu rxea)); target: $(rig_t 'rdma link show rxea/1 -d | head -n 2 | tr "\n" " "')"
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
echo "# host $ifa MTU 4200 ($(rxe_mtu rxea)); target MTU 1500"
if ctrl=$(rig_connect A "reconnect_delay=1,ctrl_loss_tmo=20,fast_io_fail_tmo=10"); then
	dev=$(wait_ns_dev "$ctrl" 30)
	t=$(now_ns)
	rc=0
	fio_mtu "$dev" /tmp/fio-mtu2.json || rc=$?
	secs=$(secs_since "$t")
	res=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"][0]; print(j["error"])' /tmp/fio-mtu2.json 2>/dev/null)
	echo "# host MTU 4200 / target 1500: fio exit $rc, error ${res:-?}, $secs s, recoveries $(rnvme_stat "$ctrl" error_recoveries), last error: $(rnvme_stat "$ctrl" last_error)"
	if [ "$rc" = 0 ] && [ "$res" = 0 ]; then
		ok "host MTU 4200, target 1500: 128 KiB writes complete and verify"
	elif [ "$rc" != 124 ] && ! grep -q 'verify: bad' "/tmp/fio-mtu2.json.stderr" "/tmp/fio-mtu2.json" 2>/dev/null; then
		ok "host MTU 4200, target 1500: I/O failed with an error in $secs s (no hang, no bad data)"
	else
		not_ok "host MTU 4200, target 1500: verified I/O or a bounded error" "fio exit $rc" "$(tail -n 10 /tmp/fio-mtu2.json.stderr)"
	fi
else
	ok "host MTU 4200, target 1500: connect refused with an error (no hang)"
fi
fx_host_disconnect_all
ip link set "$ifa" mtu 1500

rig_end
