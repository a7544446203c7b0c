#!/bin/bash
# Guest side of `make demo`: a Soft-RoCE fabric on a veth pair, an nvmet
# target on a RAM disk, rnvme.ko as the host transport; discover, connect,
# show the new namespace, run a short fio with verification, disconnect.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"

step() { echo; echo "### $*"; }
tool=${RNVME_OUT:-$REPO/build}/tools/rnvme
[ -x "$tool" ] || tool=

step "Soft-RoCE: rxe0 on veth0 ($HOST_IP4, host) and rxe1 on veth1 ($TGT_IP4, target)"
fx_rxe_up || bail "rxe setup failed"
rdma link show

step "nvmet target: $TEST_NQN on a 128 MiB RAM disk, RDMA port $TGT_IP4:$TGT_PORT"
fx_target_up --size 128 || bail "target setup failed"

step "load rnvme.ko (the in-tree nvme-rdma is blocked from loading)"
fx_host_driver_load || bail "cannot load rnvme.ko"
dmesg | grep 'rnvme:' | tail -n 2

# The guest's /etc is an overlay of the build machine's: give this demo host
# a consistent identity (hostid = the UUID inside hostnqn) without touching it.
if [ -r /etc/nvme/hostnqn ]; then
	uuid=$(sed -n 's/.*:uuid:\([0-9a-fA-F-]\{36\}\).*/\1/p' /etc/nvme/hostnqn)
	[ -n "$uuid" ] && echo "$uuid" > /etc/nvme/hostid
fi

step "discover"
if [ -n "$tool" ]; then
	timeout 60 "$tool" discover --transport rdma --traddr "$TGT_IP4" --trsvcid "$TGT_PORT" ||
		bail "discovery failed"
else
	timeout 60 nvme discover -t rdma -a "$TGT_IP4" -s "$TGT_PORT" || bail "discovery failed"
fi

step "connect"
if [ -n "$tool" ]; then
	timeout 90 "$tool" connect --transport rdma --traddr "$TGT_IP4" --trsvcid "$TGT_PORT" \
		--nqn "$TEST_NQN" || bail "connect failed"
else
	nvme_connect || bail "connect failed"
fi
ctrl=$(ctrls_for_nqn "$TEST_NQN" | head -n 1)
[ -n "$ctrl" ] || bail "no controller for $TEST_NQN"
dev=$(wait_ns_dev "$ctrl" 30) || bail "namespace of $ctrl did not appear"
echo "controller $ctrl: transport=$(ctrl_attr "$ctrl" transport) state=$(ctrl_attr "$ctrl" state)" \
	"queues=$(ctrl_attr "$ctrl" queue_count) address=$(ctrl_attr "$ctrl" address)"
echo "namespace: $dev ($(blockdev --getsize64 "$dev") bytes)"
if [ -n "$tool" ]; then "$tool" list; else nvme list; fi

step "fio: 16 MiB random write + crc32c verify, then 4 KiB random read QD32 for 5 s"
timeout 300 fio --name=demo-verify --filename="$dev" --rw=randwrite --bs=4k --size=16m \
	--ioengine=libaio --iodepth=32 --direct=1 --verify=crc32c --do_verify=1 \
	--group_reporting --output-format=terse --terse-version=3 > /tmp/demo-verify.txt ||
	bail "fio verify failed"
echo "verify: 16 MiB written and read back with crc32c, no mismatch"
timeout 120 fio --name=demo-randread --filename="$dev" --rw=randread --bs=4k --iodepth=32 \
	--ioengine=libaio --direct=1 --time_based --runtime=5 --group_reporting |
	grep -E 'IOPS|lat \(usec\)|clat percentiles' | head -n 4

step "disconnect and unload"
nvme disconnect -n "$TEST_NQN"
fx_host_driver_unload && echo "rnvme unloaded"
fx_target_down
fx_rxe_down
echo
echo "rnvme kernel log of this demo:"
dmesg | grep -E 'rnvme: |nvme nvme|nvmet: ' | sed 's/^/  /'
echo
echo "demo finished: rnvme served discovery, connect, verified I/O and a clean disconnect"
