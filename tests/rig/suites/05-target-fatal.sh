#!/bin/bash
# Rig: the target's controller goes into a fatal state. QEMU pauses the HOST VM
# for longer than the keep-alive timeout, so nvmet's keep-alive timer expires
# and it fails the controller (nvmet_ctrl_fatal_error) and drops its queues.
# When the host resumes it must notice, reconnect and finish fio's write+verify
# without an error.
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
err0=$(rnvme_stat "$ctrl" error_recoveries)

fio_verify_start "$dev" 64M /tmp/fio-fatal.json
sleep 2
# The reply arrives only after the pause: the guest's clock stands still meanwhile.
rig_q host pause 10 >/dev/null || not_ok "host VM paused for 10 s"
t_resume=$(now_ns)
if wait_for 30 rig_t rt_dmesg_grep "'keep-alive timer .* expired|fatal'"; then
	ok "target failed the controller on keep-alive expiry: $(rig_t rt_dmesg_grep "'keep-alive timer .* expired'" | head -n 1)"
else
	not_ok "target failed the controller on keep-alive expiry" "$(rig_t 'fx_dmesg_since_mark | tail -n 20')"
fi
if wait_for 45 sh -c "[ \"\$(cat /sys/class/nvme/$ctrl/rnvme/error_recoveries)\" -gt '$err0' ] &&
		[ \"\$(cat /sys/class/nvme/$ctrl/state)\" = live ]"; then
	ok "host recovered (error_recoveries $err0 -> $(rnvme_stat "$ctrl" error_recoveries)) and is live $WAIT_ELAPSED s after resuming"
else
	not_ok "host recovered and is live within 45 s after resuming" \
		"state $(ctrl_state "$ctrl"), error_recoveries $(rnvme_stat "$ctrl" error_recoveries), last error $(rnvme_stat "$ctrl" last_error)"
fi
echo "# last error: $(rnvme_stat "$ctrl" last_error)"
fio_verify_finish /tmp/fio-fatal.json "fio write+verify through the target's fatal error: no error, every block verified"
echo "# $(secs_since "$t_resume") s from resume to fio done"

rig_end
