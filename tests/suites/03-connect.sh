#!/bin/bash
# shellcheck disable=SC2317,SC2119 # helpers are invoked indirectly (check, wait_for)
# 03-connect: connect, nvme list, sysfs attributes, disconnect by NQN / device,
# host_traddr, IPv6, two subsystems at once, disconnect-all.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
suite_begin

fx_setup --nqn "$TEST_NQN" --port 1
fx_target_up --nqn "$TEST_NQN2" --port 1 || bail "second subsystem"
fx_target_up --nqn "$TEST_NQN" --port 2 --adrfam ipv6 --traddr "$TGT_IP6" || bail "IPv6 port"

# expect_ctrl NQN: exactly one controller for NQN; prints its name.
one_ctrl() {
	local c
	c=$(ctrls_for_nqn "$1")
	[ -n "$c" ] && [ "$(echo "$c" | wc -l)" = 1 ] && echo "$c"
}

# --------------------------------------------------------------- basic connect
out=$(timed "connect" nvme_connect 2>&1)
rc=$?
echo "$out" | grep '^# '
tap_result "nvme connect to $TEST_NQN" "$rc" "$out"
ctrl=$(one_ctrl "$TEST_NQN")
if [ -n "$ctrl" ]; then
	ok "one controller for $TEST_NQN: $ctrl"
	check "$ctrl state is live" wait_for 30 grep -qx live "/sys/class/nvme/$ctrl/state"
	check "$ctrl transport = $TRANSPORT" test "$(ctrl_attr "$ctrl" transport)" = "$TRANSPORT"
	addr=$(ctrl_attr "$ctrl" address)
	case "$addr" in
	"traddr=$TGT_IP4,trsvcid=$TGT_PORT"*) ok "$ctrl address: $addr" ;;
	*) not_ok "$ctrl address" "address: '$addr'" ;;
	esac
	check "$ctrl subsysnqn = $TEST_NQN" test "$(ctrl_attr "$ctrl" subsysnqn)" = "$TEST_NQN"
	check "$ctrl cntlid is set" test -n "$(ctrl_attr "$ctrl" cntlid)"
	dev=$(wait_ns_dev "$ctrl" 30)
	if [ -n "$dev" ]; then
		ok "namespace block device $dev appeared (${WAIT_ELAPSED} s)"
		check "nvme list shows $dev" bash -c "nvme list | grep '^$dev ' >/dev/null"
		check "nvme list -o json names $dev" bash -c "nvme list -o json | grep '\"DevicePath\" *: *\"$dev\"' >/dev/null"
		check "$dev size matches the backing device" test "$(blockdev --getsize64 "$dev")" = "$(blockdev --getsize64 /dev/ram0)"
		check "read 1 MiB from $dev" dd if="$dev" of=/dev/null bs=64k count=16 iflag=direct status=none
		check "nvme id-ctrl over the fabric" bash -c "nvme id-ctrl /dev/$ctrl | grep '^subnqn *: *$TEST_NQN' >/dev/null"
	else
		not_ok "namespace block device appeared" "$(ls -l "/sys/class/nvme/$ctrl/")"
	fi
	out=$(timed "disconnect by NQN" timeout 60 nvme disconnect -n "$TEST_NQN" 2>&1)
	rc=$?
	echo "$out" | grep '^# '
	tap_result "nvme disconnect -n $TEST_NQN" "$rc" "$out"
	check "controller gone after disconnect" wait_for 30 test ! -e "/sys/class/nvme/$ctrl"
else
	not_ok "one controller for $TEST_NQN" "controllers: $(ls /sys/class/nvme 2>/dev/null)"
fi

# --------------------------------------------------------------- host_traddr
out=$(timed "connect with host_traddr" nvme_connect -w "$HOST_IP4" 2>&1)
tap_result "connect with host_traddr=$HOST_IP4" $? "$out"
ctrl=$(one_ctrl "$TEST_NQN")
if [ -n "$ctrl" ]; then
	addr=$(ctrl_attr "$ctrl" address)
	case "$addr" in
	*"host_traddr=$HOST_IP4"*) ok "address shows host_traddr ($addr)" ;;
	*) not_ok "address shows host_traddr" "address: '$addr'" ;;
	esac
	if rdma res show cm_id 2>/dev/null | grep "src-addr $HOST_IP4:" >/dev/null; then
		ok "host queues use $RDMA_DEV0 ($HOST_IP4)"
	else
		not_ok "host queues use $RDMA_DEV0 ($HOST_IP4)" "$(rdma res show cm_id 2>&1)"
	fi
	check "disconnect by device (nvme disconnect -d $ctrl)" timeout 60 nvme disconnect -d "$ctrl"
	check "controller gone" wait_for 30 test ! -e "/sys/class/nvme/$ctrl"
else
	not_ok "controller with host_traddr present"
fi

# --------------------------------------------------------------- IPv6
out=$(timed "connect ipv6" timeout 90 nvme connect -t "$TRANSPORT" -a "$TGT_IP6" -s "$TGT_PORT" -n "$TEST_NQN" 2>&1)
tap_result "connect over IPv6 ($TGT_IP6)" $? "$out"
ctrl=$(one_ctrl "$TEST_NQN")
if [ -n "$ctrl" ]; then
	check "IPv6 ctrl $ctrl live" wait_for 30 grep -qx live "/sys/class/nvme/$ctrl/state"
	addr=$(ctrl_attr "$ctrl" address)
	case "$addr" in
	"traddr=$TGT_IP6,trsvcid=$TGT_PORT"*) ok "IPv6 address: $addr" ;;
	*) not_ok "IPv6 address" "address: '$addr'" ;;
	esac
	dev=$(wait_ns_dev "$ctrl" 30) && check "read over IPv6" dd if="$dev" of=/dev/null bs=64k count=16 iflag=direct status=none
	check "disconnect IPv6 ctrl" timeout 60 nvme disconnect -n "$TEST_NQN"
else
	not_ok "IPv6 controller present"
fi
check "no controllers left" wait_for 30 fx_no_fabrics_ctrls

# --------------------------------------------------------------- two subsystems
t=$(now_ns)
nvme_connect >/dev/null 2>&1
rc1=$?
timeout 90 nvme connect -t "$TRANSPORT" -a "$TGT_IP4" -s "$TGT_PORT" -n "$TEST_NQN2" >/dev/null 2>&1
rc2=$?
echo "# connect two subsystems: $(secs_since "$t") s"
tap_result "connect two subsystems" $((rc1 | rc2)) "rc1=$rc1 rc2=$rc2"
c1=$(one_ctrl "$TEST_NQN")
c2=$(one_ctrl "$TEST_NQN2")
if [ -n "$c1" ] && [ -n "$c2" ] && [ "$c1" != "$c2" ]; then
	ok "two controllers: $c1 ($TEST_NQN), $c2 ($TEST_NQN2)"
	d1=$(wait_ns_dev "$c1" 30)
	d2=$(wait_ns_dev "$c2" 30)
	if [ -n "$d1" ] && [ -n "$d2" ] && [ "$d1" != "$d2" ]; then
		ok "two namespaces: $d1 $d2"
		# Distinct data on the two namespaces proves they are different subsystems.
		printf 'rnvme-one%0503d' 0 | dd of="$d1" bs=512 count=1 oflag=direct status=none conv=notrunc
		printf 'rnvme-two%0503d' 0 | dd of="$d2" bs=512 count=1 oflag=direct status=none conv=notrunc
		check "data on $d1 reached /dev/ram0" bash -c "dd if=/dev/ram0 bs=512 count=1 status=none | grep rnvme-one >/dev/null"
		check "data on $d2 reached /dev/ram1" bash -c "dd if=/dev/ram1 bs=512 count=1 status=none | grep rnvme-two >/dev/null"
	else
		not_ok "two namespaces" "d1='$d1' d2='$d2'"
	fi
	check "both controllers live" bash -c "grep -qx live /sys/class/nvme/$c1/state && grep -qx live /sys/class/nvme/$c2/state"
else
	not_ok "two controllers" "c1='$c1' c2='$c2'"
fi
out=$(timed "disconnect-all" timeout 120 nvme disconnect-all 2>&1)
tap_result "nvme disconnect-all" $? "$out"
check "no fabrics controllers after disconnect-all" wait_for 30 fx_no_fabrics_ctrls

# --------------------------------------------------------------- repeated connect/disconnect
t=$(now_ns)
fails=0
for _ in 1 2 3 4 5; do
	nvme_connect >/dev/null 2>&1 || fails=$((fails + 1))
	timeout 60 nvme disconnect -n "$TEST_NQN" >/dev/null 2>&1 || fails=$((fails + 1))
done
echo "# 5x connect/disconnect: $(secs_since "$t") s"
tap_result "5 connect/disconnect cycles" "$fails" "$fails failures"
check "no controllers left after cycles" wait_for 30 fx_no_fabrics_ctrls

suite_end
