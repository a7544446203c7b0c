#!/bin/bash
# shellcheck disable=SC2317 # helpers are invoked indirectly (wait_for)
# Rig: (b) a path that silently drops packets.  Two paths to one subsystem,
# native multipath round-robin, default connect options; fio writes and
# verifies at QD1 and QD16 while the target's NIC on path A drops every
# packet it sends (netem loss 100 %: the links stay up, the host gets no
# event, only silence), then stops dropping.  The host must find the dead
# path through its RC retry budget (rnvme's ack_timeout/retry_count) and fail
# the I/O over: the longest I/O stall (fio's largest completion latency) is
# printed and must stay within 3 s with a hardware-sized RC budget
# (ack_timeout 15 or less); with ack_timeout -1 on Soft-RoCE the budget is the
# RDMA CM's (19: 8 tries of 2.1 s) and the bound is that budget + 3 s, the
# proof that the budget and nothing longer (a 30 s command timeout) finds the
# path.  rnvme's ACK watchdog (ack_watchdog_ms, default 1500) finds the
# silence without waiting for that budget: with it on the bound is 3 s.
# TEST_ACK_TIMEOUT=N / TEST_ACK_WATCHDOG_MS=N set the parameters for the
# run.  Path A
# must be live again within
# reconnect_delay (10 s) + 2 s of the loss ending, plus one RDMA CM request
# retransmission (about 4.3 s) when an attempt was waiting in the silence.
# Under HOST_DRIVER=inbox the figures are printed, not judged.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
# shellcheck source-path=SCRIPTDIR source=../../lib/rig.sh
. "$(dirname "$0")/../lib/rig.sh"

suite_begin
rig_setup
[ "$(cat /sys/module/nvme_core/parameters/multipath 2>/dev/null)" = Y ] ||
	tap_skip_all "nvme_core native multipath is off"
STALL_MAX=${TEST_STALL_MAX:-3}
LOSS=${TEST_LOSS_SECS:-24}
RETURN_MAX=$((10 + 2 + 5))
is_rnvme() { [ "$HOST_DRIVER" != inbox ]; }
is_rnvme || MEASURE_ONLY=1
if is_rnvme && [ -n "${TEST_ACK_TIMEOUT:-}" ]; then
	echo "$TEST_ACK_TIMEOUT" > /sys/module/rnvme/parameters/ack_timeout || bail "ack_timeout=$TEST_ACK_TIMEOUT refused"
fi
if is_rnvme && [ -n "${TEST_ACK_WATCHDOG_MS:-}" ]; then
	echo "$TEST_ACK_WATCHDOG_MS" > /sys/module/rnvme/parameters/ack_watchdog_ms ||
		bail "ack_watchdog_ms=$TEST_ACK_WATCHDOG_MS refused"
fi
if is_rnvme; then
	# the exponent in force on rxe: the parameter, or the CM's RoCE default 19
	ack=$(cat /sys/module/rnvme/parameters/ack_timeout)
	{ [ "$ack" = -1 ] || [ "$ack" = 0 ]; } && ack=19
	retries=$(cat /sys/module/rnvme/parameters/retry_count)
	wd=$(cat /sys/module/rnvme/parameters/ack_watchdog_ms)
	budget=$(awk -v a="$ack" -v r="$retries" 'BEGIN { printf "%.1f", (r + 1) * 4.096e-6 * 2 ^ a }')
	# the ACK watchdog (default 1500 ms) finds the silence whatever the RC
	# budget; without it (TEST_ACK_WATCHDOG_MS=0) a long budget is the bound
	[ "$ack" -le 15 ] || [ "$wd" != 0 ] || STALL_MAX=$(awk -v b="$budget" 'BEGIN { printf "%.1f", b + 3 }')
	echo "# RC budget on rxe: ack_timeout $ack, retry_count $retries: $budget s; ack_watchdog_ms $wd; stall bound $STALL_MAX s"
fi
rig_connect_both "" || bail "connect both paths"
for f in /sys/class/nvme-subsystem/nvme-subsys*/iopolicy; do
	[ -e "$(dirname "$f")/$CTRL_A" ] && echo round-robin > "$f"
done
ok "two paths: $CTRL_A (A) and $CTRL_B (B) behind $HEAD_DEV, round-robin, default options"

for qd in 1 16; do
	out=/tmp/fio-silent-$qd.json
	FIO_STALL_LATLOG=1 fio_stall_start "$HEAD_DEV" "$qd" $((3 + LOSS + RETURN_MAX + 4)) "$out"
	sleep 3
	echo "rnvme-test: 09 QD$qd: path A's loss asked for" > /dev/kmsg
	t=$(now_ns)
	rig_t rt_loss A on >/dev/null || not_ok "QD$qd: target drops path A's packets"
	echo "rnvme-test: 09 QD$qd: path A's loss in place" > /dev/kmsg
	if wait_for "$LOSS" ctrl_not "$CTRL_A" live; then
		echo "# QD$qd: path A's silence found $WAIT_ELAPSED s after it began (state $(ctrl_state "$CTRL_A"))"
		found=1
		# TEST_SILENT_SYSRQ=1: where error recovery waits (blocked tasks
		# 2 s after the path left live, in the kernel log)
		if [ "${TEST_SILENT_SYSRQ:-0}" = 1 ]; then
			sleep 2
			echo w > /proc/sysrq-trigger
		fi
	else
		found=0
	fi
	while [ "$(secs_since "$t" | cut -d. -f1)" -lt "$LOSS" ]; do sleep 0.2; done
	[ "$found" = 1 ]
	tap_measured "QD$qd: path A left live during ${LOSS} s of silence" $? "state $(ctrl_state "$CTRL_A")"
	rig_t rt_loss A off >/dev/null || not_ok "QD$qd: target stops dropping"
	path_back_within "$CTRL_A" "QD$qd: path A (after the loss ended)" "$RETURN_MAX"
	# the checks are done: stop fio (its runtime only bounds the slowest return)
	fio_stall_stop
	rc=$FIO_RC
	read -r ferr _ nw nr rstall wstall <<< "$(fio_stall_result "$out")"
	if [ "$rc" = 0 ] && [ "${ferr:-x}" = 0 ]; then
		ok "QD$qd: fio wrote $nw and verified $nr blocks through the silence, 0 errors"
		# reads fail over at once; a write the silent controller may still
		# execute waits out rnvme's failover hold (2 x KATO + CQT) first
		tap_within "QD$qd: longest read stall" "$rstall" "$STALL_MAX"
		tap_within "QD$qd: longest write stall (bound $STALL_MAX s + the failover hold)" "$wstall" \
			"$(failover_hold_stall_max "$CTRL_A" "$STALL_MAX")"
		# where the stall went: the longest I/O against the loss (asked
		# for at 0), its detection and the recovery in the kernel log
		read -r lat l0 l1 slow <<< "$(fio_stall_longest "$out" "$t")"
		echo "# QD$qd: longest I/O ${lat:-?} s, from ${l0:-?} to ${l1:-?} s after the loss was asked for; ${slow:-?} I/Os over 1 s"
		dmesg | sed -n "/rnvme-test: 09 QD$qd: path A's loss asked/,\$p" |
			grep -E "rnvme-test: 09 QD$qd|path silent|error recovery|reconnecting in" |
			head -n 5 | sed "s/^/# QD$qd: /"
	else
		not_ok "QD$qd: fio wrote and verified through the silence" "fio exit $rc" "$(tail -n 15 "$out.stderr")"
	fi
	is_rnvme && echo "# $CTRL_A: error_recoveries $(rnvme_stat "$CTRL_A" error_recoveries), reconnects $(rnvme_stat "$CTRL_A" reconnects), last_outage_ms $(rnvme_stat "$CTRL_A" last_outage_ms), last_error: $(rnvme_stat "$CTRL_A" last_error)"
done
if ctrl_is "$CTRL_B" live; then ok "path B stayed live"; else not_ok "path B stayed live" "state $(ctrl_state "$CTRL_B")"; fi

[ -z "${TEST_ACK_TIMEOUT:-}" ] || ! is_rnvme || echo -1 > /sys/module/rnvme/parameters/ack_timeout
[ -z "${TEST_ACK_WATCHDOG_MS:-}" ] || ! is_rnvme || echo 1500 > /sys/module/rnvme/parameters/ack_watchdog_ms
rig_end
