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
io_stat() { path_ios "$1"; } # reads + writes

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
# into the silent wire, so the queue depth fills up there; the stall lasts
# until detection (keep-alive) and error recovery have failed those commands
# over. Measure when path A carries I/O again.
a0=$(io_stat "$CTRL_A")
if wait_for 30 ctrl_not "$CTRL_B" live; then
	echo "# path B's loss detected $WAIT_ELAPSED s after its wire was cut (state $(ctrl_state "$CTRL_B"))"
fi
# shellcheck disable=SC2317 # called through wait_for
a_moves() { [ "$(io_stat "$CTRL_A")" -gt "$a_ref" ]; }
a_ref=$(io_stat "$CTRL_A")
if wait_for 30 a_moves; then
	ok "I/O flows over path A again $(secs_since "$t") s after path B's wire was cut (path A: $a0 -> $(io_stat "$CTRL_A") I/Os)"
else
	not_ok "I/O flows over path A again within 30 s of the loss being detected" \
		"path B $(ctrl_state "$CTRL_B"); fio alive: $(kill -0 $FIO_PID 2>/dev/null && echo yes || echo no)"
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
