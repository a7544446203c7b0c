#!/bin/bash
# shellcheck disable=SC2317,SC2119,SC2154 # helpers are invoked indirectly (check, wait_for); poll_*, hist_poll_* come from eval "$(telemetry.py vars)"
# 05-poll: nr_poll_queues: polled I/O with io_uring hipri works, io_poll=1,
# completions really go through the poll queues; rnvme's telemetry counts
# polled commands exactly while two pollers on two CPUs reap them (a poll
# queue's counters are added to by every poller at once: telemetry.h).
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
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

# Count nvme_setup_cmd trace events per queue id: polled I/O must use the poll
# queues, which come after the default/read queues (qid > queue_count-1-2).
TR=/sys/kernel/tracing
[ -d "$TR/events" ] || mount -t tracefs tracefs "$TR" 2>/dev/null || TR=/sys/kernel/debug/tracing
trace_start() {
	echo 0 > "$TR/tracing_on"
	echo 4096 > "$TR/buffer_size_kb"
	: > "$TR/trace"
	echo "ctrl_id==${ctrl#nvme}" > "$TR/events/nvme/nvme_setup_cmd/filter" 2>/dev/null || true
	echo 1 > "$TR/events/nvme/nvme_setup_cmd/enable"
	echo 1 > "$TR/tracing_on"
}
# trace_stop: prints "<count> <qid>" lines.
trace_stop() {
	echo 0 > "$TR/tracing_on"
	echo 0 > "$TR/events/nvme/nvme_setup_cmd/enable"
	grep -o 'qid=[0-9]*' "$TR/trace" | sort | uniq -c | sed 's/qid=//'
}
have_trace=0
[ -d "$TR/events/nvme/nvme_setup_cmd" ] && have_trace=1
[ "$have_trace" = 1 ] && trace_start

log=$(mktemp)
[ "${TEST_IO_DIV:-1}" = 1 ] || echo "# fio volumes divided by $TEST_IO_DIV (TEST_IO_DIV)"
t=$(now_ns)
rc=0
timeout 300 fio --name=poll --filename="$dev" --direct=1 --ioengine=io_uring --hipri=1 \
	--iodepth=16 --rw=randwrite --bs=4k --size="$(fx_mib 16)" --verify=crc32c --do_verify=1 --verify_fatal=1 \
	--randrepeat=0 > "$log" 2>&1 || rc=$?
echo "# fio io_uring hipri: $(secs_since "$t") s"
if [ "$rc" = 0 ]; then
	ok "fio io_uring hipri=1 randwrite + verify"
	grep -E '^ *(WRITE|READ):' "$log" | diag
else
	not_ok "fio io_uring hipri=1 randwrite + verify" "exit $rc" "$(tail -n 30 "$log")"
fi
if [ "$have_trace" = 1 ]; then
	per_qid=$(trace_stop)
	diag "nvme_setup_cmd per qid (count qid): ${per_qid//$'\n'/, }"
	first_poll=$((qc - 2))
	polled=$(echo "$per_qid" | awk -v f="$first_poll" '$2 >= f { s += $1 } END { print s + 0 }')
	check "commands were issued on the poll queues (qid >= $first_poll): $polled" test "$polled" -gt 0
else
	tap_skip "no nvme_setup_cmd tracepoint" "commands issued on poll queues"
fi

rc=0
timeout 300 fio --name=poll-read --filename="$dev" --direct=1 --ioengine=io_uring --hipri=1 \
	--iodepth=1 --rw=randread --bs=4k --size="$(fx_mib 8)" > "$log" 2>&1 || rc=$?
tap_result "fio io_uring hipri=1 QD1 randread" "$rc" "$(tail -n 20 "$log")"
rc=0
timeout 300 fio --name=pvsync2 --filename="$dev" --direct=1 --ioengine=pvsync2 --hipri=1 \
	--rw=randread --bs=4k --size="$(fx_mib 4)" > "$log" 2>&1 || rc=$?
tap_result "fio pvsync2 hipri=1 randread" "$rc" "$(tail -n 20 "$log")"

# Telemetry of a poll queue: connected again with one poll queue, which
# both vCPUs map to, two fio jobs (one per vCPU) poll its CQ at once; each
# command is counted once, submitted and answered, none lost.
if [ "$HOST_DRIVER" = inbox ]; then
	tap_skip "the in-tree driver has no telemetry" "poll queue telemetry"
else
	T="$(dirname "$0")/../lib/telemetry.py"
	timeout 60 nvme disconnect -n "$TEST_NQN" >/dev/null 2>&1
	wait_for 30 fx_no_fabrics_ctrls
	nvme_connect -i 2 -P 1 >/dev/null 2>&1 || bail "connect with nr_poll_queues=1"
	ctrl=$(ctrls_for_nqn "$TEST_NQN")
	dev=$(wait_ns_dev "$ctrl" 30) || bail "no namespace with one poll queue"
	check "one poll queue: queue_count = 4 ($(ctrl_attr "$ctrl" queue_count))" test "$(ctrl_attr "$ctrl" queue_count)" = 4
	echo 2 > "/sys/block/$(basename "$dev")/queue/nomerges"
	echo 1 > "/sys/class/nvme/$ctrl/rnvme/telemetry_reset"
	# number_ios never extends a job past its --size (8 MiB: 2048 reads)
	N=$((1500 / ${TEST_IO_DIV:-1}))
	[ "$N" -ge 100 ] || N=100
	t=$(now_ns)
	rc=0
	timeout 300 fio --name=tpoll --filename="$dev" --direct=1 --ioengine=io_uring --hipri=1 \
		--numjobs=2 --cpus_allowed=0,1 --cpus_allowed_policy=split --iodepth=8 --rw=randread --bs=4k --size=8m --norandommap \
		--randrepeat=0 --number_ios=$N --group_reporting --output-format=json > "$log" 2>&1 || rc=$?
	fr=$(jq '.jobs[0].read.total_ios' "$log" 2>/dev/null)
	echo "# fio 2 x $N polled reads: $(secs_since "$t") s, exit $rc, fio counted ${fr:-?}"
	check "fio did 2 x $N polled reads (fio: ${fr:-?})" test "$rc" = 0 -a "${fr:-0}" = $((2 * N))
	eval "$(python3 "$T" "$ctrl" vars)"
	echo "# poll queues: submitted $poll_submitted_read, completed $poll_completed_read, histogram $hist_poll_read, $poll_bytes_read bytes, $poll_wc_success successful work completions"
	for n in submitted_read completed_read bytes_read status_success; do
		v=poll_$n want=$((2 * N))
		[ "$n" = bytes_read ] && want=$((2 * N * 4096))
		tap_result "poll queues' $n = $want (${!v})" "$([ "${!v}" = "$want" ] && echo 0 || echo 1)"
	done
	tap_result "poll queues' read histogram holds $((2 * N)) ($hist_poll_read)" "$([ "$hist_poll_read" = $((2 * N)) ] && echo 0 || echo 1)"
	tap_result "a work completion per response at least ($poll_wc_success)" "$([ "$poll_wc_success" -ge $((2 * N)) ] && echo 0 || echo 1)"
fi
rm -f "$log"

check "disconnect" timeout 60 nvme disconnect -n "$TEST_NQN"
suite_end
