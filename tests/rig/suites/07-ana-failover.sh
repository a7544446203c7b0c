#!/bin/bash
# Rig: native multipath (ANA) over two wires, one subsystem, fio writing and
# verifying through the multipath disk the whole time:
#  1. the target makes path A's ANA group inaccessible: I/O moves to path B;
#     path A optimized again;
#  2. path B's wire is cut at the target NIC (QEMU set_link off) for 8 s: once
#     the loss is detected I/O carries on over path A; path B comes back live
#     when the wire returns.
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
ok "two paths: $CTRL_A (A) and $CTRL_B (B) behind $HEAD_DEV; ANA $(path_ana "$CTRL_A")/$(path_ana "$CTRL_B")"
head=$(basename "$HEAD_DEV")
# Round-robin: both paths carry I/O, so losing one really fails I/O over.
for f in /sys/class/nvme-subsystem/nvme-subsys*/iopolicy; do
	[ -e "$(dirname "$f")/$CTRL_A" ] && echo round-robin > "$f" && echo "# $(dirname "$f"): iopolicy $(cat "$f")"
done
io_stat() { awk '{ print $1 + $5 }' "/sys/block/$(path_ns "$1")/stat"; } # reads + writes

fio_verify_start "$HEAD_DEV" 96M /tmp/fio-ana.json
sleep 2

# 1. ANA inaccessible on path A
t=$(now_ns)
rig_t rt_ana 1 inaccessible >/dev/null || not_ok "target set port 1 ANA inaccessible"
if wait_for 20 path_ana_is "$CTRL_A" inaccessible; then
	ok "host sees path A inaccessible $WAIT_ELAPSED s after the ANA change"
else
	not_ok "host sees path A inaccessible within 20 s" "ana_state '$(path_ana "$CTRL_A")'"
fi
a0=$(io_stat "$CTRL_A") b0=$(io_stat "$CTRL_B")
sleep 3
a1=$(io_stat "$CTRL_A") b1=$(io_stat "$CTRL_B")
echo "# I/Os in 3 s with path A inaccessible: path A $((a1 - a0)), path B $((b1 - b0))"
if [ $((a1 - a0)) = 0 ] && [ $((b1 - b0)) -gt 0 ]; then
	ok "I/O flows over path B only while path A is inaccessible"
else
	not_ok "I/O flows over path B only while path A is inaccessible" "A +$((a1 - a0)) B +$((b1 - b0)) (fio alive: $(kill -0 $FIO_PID 2>/dev/null && echo yes || echo no))"
fi
rig_t rt_ana 1 optimized >/dev/null || not_ok "target set port 1 ANA optimized"
wait_for 20 path_ana_is "$CTRL_A" optimized || not_ok "path A optimized again" "ana_state '$(path_ana "$CTRL_A")'"
echo "# ANA round trip: $(secs_since "$t") s"

# 2. wire of path B cut
t=$(now_ns)
rig_q target set_link nicb off >/dev/null || not_ok "target NIC B link off"
# Until path B's loss is detected, round-robin keeps sending half the I/O
# into the silent wire, so the queue depth fills up there: the stall lasts
# until detection (keep-alive or transport retries), then path A carries all.
if wait_for 30 ctrl_not "$CTRL_B" live; then
	ok "path B's loss detected $WAIT_ELAPSED s after its wire was cut (state $(ctrl_state "$CTRL_B"))"
else
	not_ok "path B's loss detected within 30 s" "state $(ctrl_state "$CTRL_B")"
fi
a0=$(io_stat "$CTRL_A")
sleep 3
a1=$(io_stat "$CTRL_A")
echo "# path A served $((a1 - a0)) I/Os in the 3 s after path B's loss was detected"
if [ $((a1 - a0)) -gt 0 ]; then
	ok "I/O carries on over path A once path B is known lost"
else
	not_ok "I/O carries on over path A once path B is known lost" "fio alive: $(kill -0 $FIO_PID 2>/dev/null && echo yes || echo no)"
fi
while [ "$(secs_since "$t" | cut -d. -f1)" -lt 8 ]; do sleep 0.2; done
rig_q target set_link nicb on >/dev/null || not_ok "target NIC B link on"
t_on=$(now_ns)
if wait_for 45 ctrl_is "$CTRL_B" live; then
	ok "path B live again $(secs_since "$t_on") s after its wire returned"
else
	not_ok "path B live again within 45 s of its wire returning" "state $(ctrl_state "$CTRL_B")"
fi

fio_verify_finish /tmp/fio-ana.json "fio write+verify on $head through ANA change and path loss: no error, every block verified" 300

rig_end
