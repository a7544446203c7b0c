#!/bin/bash
# Rig: the target disappears from the wire (QEMU set_link off) for longer than
# fast_io_fail_tmo and ctrl_loss_tmo.
#  - writes issued before the fault and acknowledged must read back intact;
#  - queued I/O fails fast_io_fail_tmo after the controller starts
#    reconnecting (nvme-core's failfast timer starts there; the time the host
#    needs to notice the silence - keep-alive - is printed separately), or,
#    for writes that were in flight, when rnvme's failover hold ends if that
#    is later (a write the lost controller may still execute is not ended,
#    with an error either, before then: the application would move on);
#  - the controller keeps reconnecting until ctrl_loss_tmo, then is deleted.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
# shellcheck source-path=SCRIPTDIR source=../../lib/rig.sh
. "$(dirname "$0")/../lib/rig.sh"

FIO_TMO=3
# above the failover hold (nvmet: 3 x the 5 s keep-alive, traffic-based),
# so the write fails while the controller still reconnects
LOSS_TMO=25
suite_begin
rig_setup

ctrl=$(rig_connect A "reconnect_delay=1,fast_io_fail_tmo=$FIO_TMO,ctrl_loss_tmo=$LOSS_TMO") ||
	bail "connect path A"
dev=$(wait_ns_dev "$ctrl" 30) || bail "no namespace on $ctrl"
ok "connected $ctrl ($dev): fast_io_fail_tmo=$FIO_TMO ctrl_loss_tmo=$LOSS_TMO"

# Acknowledged writes: fio writes 16 MiB and exits, so every block is on the target.
check "16 MiB written and acknowledged before the fault" \
	fio --name=ack --filename="$dev" --ioengine=libaio --direct=1 --iodepth=16 --rw=write \
	--bs=64k --size=16M --verify=crc32c --do_verify=0 --verify_state_save=0 \
	--output=/tmp/fio-ack.txt

# A writer whose I/O is in flight on the dead wire: the wire goes down
# first and the write starts at once, before the host can notice.  (Started
# before the fault, as this suite did, an 8 MiB write could end before a
# slow monitor command took the link down: then it "succeeded" and the
# controller was still live after it, the two failures of CI's last run
# (before this session), whose host built the debug kernel beside the rig.)
dd if=/dev/urandom of=/tmp/blob bs=1M count=8 status=none
hold_s=$(awk -v h="$(cat "/sys/class/nvme/$ctrl/rnvme/failover_hold_ms" 2>/dev/null || echo 0)" 'BEGIN { printf "%.3f", h / 1000 }')
fail_after=$(awk -v f="$FIO_TMO" -v h="$hold_s" 'BEGIN { print (h > f ? h : f) }')
echo "# the write must fail $fail_after s after reconnecting begins: fast_io_fail_tmo $FIO_TMO s, failover hold $hold_s s"
t_off=$(now_ns)
state_watch "$ctrl" "$t_off" /tmp/states &
watcher=$!
rig_q target set_link nica off >/dev/null || not_ok "target NIC link off"
echo "# the target's link went down $(secs_since "$t_off") s after the monitor command was sent"
(
	t=$(now_ns)
	if dd if=/tmp/blob of="$dev" bs=1M seek=64 oflag=direct status=none 2>/tmp/dd-err; then
		echo "ok $(secs_since "$t")" > /tmp/dd-result
	else
		echo "failed $(secs_since "$t")" > /tmp/dd-result
	fi
) &
writer=$!

if wait_for 40 test -s /tmp/dd-result; then
	read -r res _ < /tmp/dd-result
	since=$(secs_since "$t_off")
	t_left=$(awk '$2 != "live" { print $1; exit }' /tmp/states)
	t_conn=$(state_time /tmp/states connecting)
	echo "# from the fault: error detected (left live) at ${t_left:-?} s, reconnecting at ${t_conn:-?} s, write failed at $since s ($(head -n 1 /tmp/dd-err 2>/dev/null))"
	if [ "$res" = failed ] && [ -n "$t_conn" ] &&
		awk -v s="$since" -v c="$t_conn" -v f="$fail_after" 'BEGIN { d = s - c; exit !(d >= f - 0.3 && d <= f + 1.5) }'; then
		ok "queued write failed $(awk -v s="$since" -v c="$t_conn" 'BEGIN { printf "%.2f", s - c }') s after reconnecting began (fast_io_fail_tmo=$FIO_TMO, failover hold $hold_s s)"
	else
		not_ok "queued write failed max(fast_io_fail_tmo, failover hold) after reconnecting began" "result $res after $since s; states: $(tr '\n' ' ' < /tmp/states)"
	fi
else
	not_ok "queued write failed within 40 s of the fault" "state $(ctrl_state "$ctrl")"
fi
wait "$writer" 2>/dev/null

state_mid=$(ctrl_state "$ctrl")
att_mid=$(rnvme_stat "$ctrl" reconnect_attempts)
if [ "$state_mid" = connecting ] || [ "$state_mid" = resetting ]; then
	ok "controller still trying to reconnect after fast_io_fail_tmo (state $state_mid, attempts $att_mid)"
else
	not_ok "controller still trying to reconnect after fast_io_fail_tmo" "state '$state_mid'"
fi
if wait_for $((LOSS_TMO + 40)) ctrl_gone "$ctrl"; then
	gone=$(secs_since "$t_off")
	# The loss is detected when the controller first leaves live: error
	# recovery may pass through resetting faster than the 0.1 s sampling.
	t_loss=$(awk '$2 != "live" { print $1; exit }' /tmp/states)
	# ctrl_loss_tmo counts from the loss (error recovery); the attempt
	# running when it expires may take up to its 5 s minimum CM wait.
	if [ -n "$t_loss" ] && awk -v s="$gone" -v r="$t_loss" -v l="$LOSS_TMO" \
		'BEGIN { d = s - r; exit !(d >= l - 1 && d <= l + 7) }'; then
		ok "controller deleted $(awk -v s="$gone" -v r="$t_loss" 'BEGIN { printf "%.2f", s - r }') s after the loss was detected ($gone s after the fault; ctrl_loss_tmo=$LOSS_TMO)"
	else
		not_ok "controller deleted near ctrl_loss_tmo after the loss" "after $gone s; states: $(tr '\n' ' ' < /tmp/states)"
	fi
else
	not_ok "controller deleted after ctrl_loss_tmo" "state $(ctrl_state "$ctrl") after $(secs_since "$t_off") s"
fi

kill "$watcher" 2>/dev/null
wait "$watcher" 2>/dev/null
echo "# state changes (s from the fault): $(tr '\n' ' ' < /tmp/states)"
rig_q target set_link nica on >/dev/null || not_ok "target NIC link on"
wait_for 20 rig_rxe_active rxea
ctrl2=$(rig_connect A "reconnect_delay=1") || bail "reconnect path A after the outage"
dev2=$(wait_ns_dev "$ctrl2" 30) || bail "no namespace on $ctrl2"
check "every acknowledged write reads back intact after the outage" \
	fio --name=ack --filename="$dev2" --ioengine=libaio --direct=1 --iodepth=16 --rw=write \
	--bs=64k --size=16M --verify=crc32c --verify_only=1 --verify_fatal=1 \
	--output=/tmp/fio-ack-verify.txt

rig_end
