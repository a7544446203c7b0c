#!/bin/bash
# Rig: the target stops answering (QEMU stops the whole target VM), so only the
# keep-alive (or, with I/O in flight, the transport's retries) can notice.
#  1. idle controller, keep_alive_tmo=3: time until the host leaves 'live';
#     after the target resumes the controller is live again.
#  2. the same stall with fio writing and verifying through it.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
# shellcheck source-path=SCRIPTDIR source=../../lib/rig.sh
. "$(dirname "$0")/../lib/rig.sh"

KATO=3
suite_begin
rig_setup

ctrl=$(rig_connect A "keep_alive_tmo=$KATO,reconnect_delay=1,ctrl_loss_tmo=60") || bail "connect path A"
dev=$(wait_ns_dev "$ctrl" 30) || bail "no namespace on $ctrl"
ok "connected $ctrl ($dev) with keep_alive_tmo=$KATO"
kato=$(ctrl_attr "$ctrl" kato)
[ -n "$kato" ] && echo "# controller kato attribute: $kato"

# 1. idle controller
t_stop=$(now_ns)
rig_q target stop >/dev/null || not_ok "target VM stopped"
if wait_for 30 ctrl_not "$ctrl" live; then
	det=$WAIT_ELAPSED
	if awk -v s="$det" -v k="$KATO" 'BEGIN { exit !(s <= 3 * k + 3) }'; then
		ok "idle controller noticed the silent target after $det s (keep_alive_tmo=$KATO, limit $((3 * KATO + 3)) s)"
	else
		not_ok "idle controller noticed the silent target within 3*kato+3 s" "after $det s"
	fi
else
	not_ok "idle controller noticed the silent target within 30 s" "state $(ctrl_state "$ctrl")"
fi
echo "# last error: $(rnvme_stat "$ctrl" last_error)"
while [ "$(secs_since "$t_stop" | cut -d. -f1)" -lt 8 ]; do sleep 0.2; done
rig_q target cont >/dev/null || not_ok "target VM resumed"
if wait_for 45 ctrl_is "$ctrl" live; then
	ok "controller live $WAIT_ELAPSED s after the target resumed (stall $(secs_since "$t_stop") s)"
else
	not_ok "controller live within 45 s after the target resumed" "state $(ctrl_state "$ctrl")"
fi

# 2. the same with I/O through it
fio_verify_start "$dev" 64M /tmp/fio-ka.json
sleep 2
t_stop=$(now_ns)
rig_q target stop >/dev/null || not_ok "target VM stopped (under I/O)"
wait_for 20 ctrl_not "$ctrl" live && echo "# under I/O: controller left live after $WAIT_ELAPSED s"
while [ "$(secs_since "$t_stop" | cut -d. -f1)" -lt 6 ]; do sleep 0.2; done
rig_q target cont >/dev/null || not_ok "target VM resumed (under I/O)"
if wait_for 45 ctrl_is "$ctrl" live; then
	ok "under I/O: controller live $WAIT_ELAPSED s after the target resumed"
else
	not_ok "under I/O: controller live within 45 s after the target resumed" "state $(ctrl_state "$ctrl")"
fi
fio_verify_finish /tmp/fio-ka.json "fio write+verify through a 6 s target stall: no error, every block verified"

rig_end
