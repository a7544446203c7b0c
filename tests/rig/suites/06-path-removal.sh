#!/bin/bash
# Rig: native multipath over two wires; the host's Soft-RoCE device of path A
# is deleted while fio writes and verifies through the multipath disk. The
# controller on that device is torn down without a hang, I/O carries on over
# path B, and after the device returns path A can be connected again.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
# shellcheck source-path=SCRIPTDIR source=../../lib/rig.sh
. "$(dirname "$0")/../lib/rig.sh"

suite_begin
rig_setup
[ "$(cat /sys/module/nvme_core/parameters/multipath 2>/dev/null)" = Y ] ||
	tap_skip_all "nvme_core native multipath is off"

rig_connect_both "reconnect_delay=1,ctrl_loss_tmo=60" || bail "connect both paths"
ok "two paths: $CTRL_A (A) and $CTRL_B (B) behind $HEAD_DEV"

fio_verify_start "$HEAD_DEV" 64M /tmp/fio-rm.json
sleep 2
t=$(now_ns)
if timeout 60 rdma link delete rxea; then
	ok "rdma link delete rxea returned after $(secs_since "$t") s"
else
	not_ok "rdma link delete rxea returned within 60 s"
fi
if wait_for 30 ctrl_gone "$CTRL_A"; then
	ok "controller $CTRL_A on the removed device gone $(secs_since "$t") s after the delete"
else
	not_ok "controller on the removed device gone within 30 s" "state $(ctrl_state "$CTRL_A")"
fi
check "path B still live" ctrl_is "$CTRL_B" live
fio_verify_finish /tmp/fio-rm.json "fio write+verify on the multipath disk through the removal: no error, every block verified"

rig_path_up A host || not_ok "rxea added back"
if ctrl=$(rig_connect A "reconnect_delay=1,ctrl_loss_tmo=60") && wait_for 30 ctrl_is "$ctrl" live; then
	ok "path A connected again after the device returned ($ctrl)"
else
	not_ok "path A connected again after the device returned"
fi

rig_end
