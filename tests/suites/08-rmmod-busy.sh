#!/bin/bash
# shellcheck disable=SC2317,SC2119 # helpers are invoked indirectly (check, wait_for)
# 08-rmmod-busy: rmmod of the host module while controllers exist (idle, and
# with I/O running): refused or a full teardown, never a hang.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
suite_begin

fx_setup --nqn "$TEST_NQN" --backing brd --size 64
mod=$(host_module)

# rmmod_busy LABEL: run rmmod (bounded) and judge the outcome.
rmmod_busy() {
	local label=$1 t rc=0 ctrl
	ctrl=$(ctrls_for_nqn "$TEST_NQN")
	t=$(now_ns)
	timeout 120 rmmod "$mod" 2> /tmp/rmmod.err || rc=$?
	echo "# rmmod $label: $(secs_since "$t") s (exit $rc)"
	if [ "$rc" = 124 ]; then
		not_ok "$label: rmmod does not hang" "rmmod still running after 120 s"
		return
	fi
	ok "$label: rmmod returned (exit $rc)"
	if [ "$rc" = 0 ]; then
		check "$label: module gone" test ! -d "/sys/module/$mod"
		if wait_for 60 fx_no_fabrics_ctrls; then
			ok "$label: controllers torn down"
		else
			not_ok "$label: controllers torn down" "left: $(ls /sys/class/nvme)"
		fi
	else
		diag "rmmod refused: $(cat /tmp/rmmod.err)"
		check "$label: module still loaded" test -d "/sys/module/$mod"
		check "$label: controller $ctrl still live" grep -qx live "/sys/class/nvme/$ctrl/state"
		dev=$(ctrl_ns_dev "$ctrl") && check "$label: I/O still works" \
			dd if="$dev" of=/dev/null bs=64k count=16 iflag=direct status=none
		check "$label: disconnect" timeout 60 nvme disconnect -n "$TEST_NQN"
		check "$label: rmmod after disconnect" timeout 60 rmmod "$mod"
	fi
}

# Idle controller.
nvme_connect >/dev/null 2>&1 || bail "connect"
ctrl=$(ctrls_for_nqn "$TEST_NQN")
wait_ns_dev "$ctrl" 30 >/dev/null || bail "no namespace"
rmmod_busy "idle controller"

# Controller with I/O in flight and the block device held open.
fx_host_driver_load || bail "reload host driver"
nvme_connect >/dev/null 2>&1 || bail "connect (2)"
ctrl=$(ctrls_for_nqn "$TEST_NQN")
dev=$(wait_ns_dev "$ctrl" 30) || bail "no namespace (2)"
log=$(mktemp)
timeout 300 fio --name=busy --filename="$dev" --direct=1 --ioengine=libaio --iodepth=16 \
	--rw=randrw --bs=16k --size=32m --time_based --runtime=200 > "$log" 2>&1 &
fio_pid=$!
sleep 4
rmmod_busy "controller under I/O"
if wait_for 150 bash -c "! kill -0 $fio_pid 2>/dev/null"; then
	frc=0
	wait "$fio_pid" || frc=$?
	ok "fio finished (exit $frc)"
else
	not_ok "fio finished" "still running"
	kill -9 "$fio_pid" 2>/dev/null
fi
rm -f "$log"

# Controller with the char device held open (/dev/nvmeN keeps a module reference).
fx_host_driver_load || bail "reload host driver (3)"
nvme_connect >/dev/null 2>&1 || bail "connect (3)"
ctrl=$(ctrls_for_nqn "$TEST_NQN")
wait_ns_dev "$ctrl" 30 >/dev/null
exec 7<"/dev/$ctrl"
t=$(now_ns)
rc=0
timeout 120 rmmod "$mod" 2>/dev/null || rc=$?
echo "# rmmod with /dev/$ctrl open: $(secs_since "$t") s (exit $rc)"
tap_result "rmmod with /dev/$ctrl open does not hang (exit $rc)" "$([ "$rc" != 124 ] && echo 0 || echo 1)"
exec 7<&-
check "disconnect-all" timeout 120 nvme disconnect-all
check "no controllers left" wait_for 60 fx_no_fabrics_ctrls

suite_end
