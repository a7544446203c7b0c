#!/bin/bash
# 05-poll: nr_poll_queues: polled I/O with io_uring hipri works, io_poll=1,
# completions really go through the poll queues.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
suite_begin

fx_setup --nqn "$TEST_NQN" --backing brd --size 64

# Without poll queues io_poll is 0.
nvme_connect >/dev/null 2>&1 || bail "connect without poll queues"
ctrl=$(ctrls_for_nqn "$TEST_NQN")
dev=$(wait_ns_dev "$ctrl" 30) || bail "no namespace"
check "io_poll is 0 without poll queues ($dev)" test "$(cat "/sys/block/$(basename "$dev")/queue/io_poll")" = 0
timeout 60 nvme disconnect -n "$TEST_NQN" >/dev/null 2>&1
wait_for 30 fx_no_fabrics_ctrls

mark="rnvme-test-poll-$(now_ns)"
echo "$mark" > /dev/kmsg
out=$(timed "connect -P 2" nvme_connect -i 2 -P 2 2>&1)
rc=$?
echo "$out" | grep '^# '
tap_result "connect with nr_io_queues=2 nr_poll_queues=2" "$rc" "$out"
ctrl=$(ctrls_for_nqn "$TEST_NQN")
dev=$(wait_ns_dev "$ctrl" 30) || bail "no namespace with poll queues"
qc=$(ctrl_attr "$ctrl" queue_count)
check "queue_count = 5 (admin + 2 default + 2 poll), is $qc" test "$qc" = 5
maps=$(dmesg | awk -v m="$mark" 'f { print } index($0, m) { f = 1 }' | grep -o 'mapped [0-9/]* default/read/poll queues' | tail -n 1)
diag "kernel: ${maps:-no 'mapped ... queues' message}"
check "io_poll is 1 on $dev" test "$(cat "/sys/block/$(basename "$dev")/queue/io_poll")" = 1

# Per-hctx dispatch counters of the poll hctxs (debugfs of the path device).
poll_dispatched() {
	local d sum=0 h
	for d in /sys/kernel/debug/block/nvme*c*n* "/sys/kernel/debug/block/$(basename "$dev")"; do
		[ -d "$d" ] || continue
		for h in "$d"/hctx*; do
			grep -qx poll "$h/type" 2>/dev/null || continue
			sum=$((sum + $(awk '{ s += $2 } END { print s + 0 }' "$h/dispatched" 2>/dev/null || echo 0)))
		done
	done
	echo "$sum"
}
before=$(poll_dispatched)

log=$(mktemp)
t=$(now_ns)
rc=0
timeout 300 fio --name=poll --filename="$dev" --direct=1 --ioengine=io_uring --hipri=1 \
	--iodepth=16 --rw=randwrite --bs=4k --size=16m --verify=crc32c --do_verify=1 --verify_fatal=1 \
	--randrepeat=0 > "$log" 2>&1 || rc=$?
echo "# fio io_uring hipri: $(secs_since "$t") s"
if [ "$rc" = 0 ]; then
	ok "fio io_uring hipri=1 randwrite + verify"
	grep -E '^ *(WRITE|READ):' "$log" | diag
else
	not_ok "fio io_uring hipri=1 randwrite + verify" "exit $rc" "$(tail -n 30 "$log")"
fi
after=$(poll_dispatched)
diag "poll hctx dispatched: before $before, after $after"
check "requests were dispatched on poll queues" test "$after" -gt "$before"

rc=0
timeout 300 fio --name=poll-read --filename="$dev" --direct=1 --ioengine=io_uring --hipri=1 \
	--iodepth=1 --rw=randread --bs=4k --size=8m > "$log" 2>&1 || rc=$?
tap_result "fio io_uring hipri=1 QD1 randread" "$rc" "$(tail -n 20 "$log")"
rc=0
timeout 300 fio --name=pvsync2 --filename="$dev" --direct=1 --ioengine=pvsync2 --hipri=1 \
	--rw=randread --bs=4k --size=4m > "$log" 2>&1 || rc=$?
tap_result "fio pvsync2 hipri=1 randread" "$rc" "$(tail -n 20 "$log")"
rm -f "$log"

check "disconnect" timeout 60 nvme disconnect -n "$TEST_NQN"
suite_end
