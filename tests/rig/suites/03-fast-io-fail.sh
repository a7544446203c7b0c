#!/bin/bash
# Rig: the target disappears from the wire (QEMU set_link off) for longer than
# fast_io_fail_tmo and ctrl_loss_tmo.
#  - writes issued before the fault and acknowledged must read back intact;
#  - queued I/O fails at fast_io_fail_tmo (measured from the fault);
#  - the controller keeps reconnecting until ctrl_loss_tmo, then is deleted.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
# shellcheck source-path=SCRIPTDIR source=../../lib/rig.sh
. "$(dirname "$0")/../lib/rig.sh"

FIO_TMO=3
LOSS_TMO=10
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

# A writer whose I/O is in flight when the wire goes down.
dd if=/dev/urandom of=/tmp/blob bs=1M count=8 status=none
(
	t=$(now_ns)
	if dd if=/tmp/blob of="$dev" bs=1M seek=64 oflag=direct status=none 2>/tmp/dd-err; then
		echo "ok $(secs_since "$t")" > /tmp/dd-result
	else
		echo "failed $(secs_since "$t")" > /tmp/dd-result
	fi
) &
writer=$!
t_off=$(now_ns)
rig_q target set_link nica off >/dev/null || not_ok "target NIC link off"

if wait_for 40 test -s /tmp/dd-result; then
	read -r res secs < /tmp/dd-result
	since=$(secs_since "$t_off")
	echo "# in-flight write: $res after $since s from the fault ($(cat /tmp/dd-err 2>/dev/null | head -n 1))"
	if [ "$res" = failed ] && awk -v s="$since" -v f="$FIO_TMO" 'BEGIN { exit !(s >= f - 0.5 && s <= f + 12) }'; then
		ok "queued write failed $since s after the fault (fast_io_fail_tmo=$FIO_TMO; detection + $FIO_TMO s expected)"
	else
		not_ok "queued write failed near fast_io_fail_tmo" "result $res after $since s"
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
if wait_for $((LOSS_TMO + 30)) ctrl_gone "$ctrl"; then
	gone=$(secs_since "$t_off")
	if awk -v s="$gone" -v l="$LOSS_TMO" 'BEGIN { exit !(s >= l - 1 && s <= l + 20) }'; then
		ok "controller deleted $gone s after the fault (ctrl_loss_tmo=$LOSS_TMO)"
	else
		not_ok "controller deleted near ctrl_loss_tmo" "after $gone s"
	fi
else
	not_ok "controller deleted after ctrl_loss_tmo" "state $(ctrl_state "$ctrl") after $(secs_since "$t_off") s"
fi

rig_q target set_link nica on >/dev/null || not_ok "target NIC link on"
wait_for 20 rig_rxe_active rxea
ctrl2=$(rig_connect A "reconnect_delay=1") || bail "reconnect path A after the outage"
dev2=$(wait_ns_dev "$ctrl2" 30) || bail "no namespace on $ctrl2"
check "every acknowledged write reads back intact after the outage" \
	fio --name=ack --filename="$dev2" --ioengine=libaio --direct=1 --iodepth=16 --rw=write \
	--bs=64k --size=16M --verify=crc32c --verify_only=1 --verify_fatal=1 \
	--output=/tmp/fio-ack-verify.txt

rig_end
