#!/bin/bash
# shellcheck disable=SC2317 # helpers are invoked indirectly (wait_for)
# Rig: (c) a path that falls silent while its commands wait at the target.
# The target's backend takes BACKEND_MS (1000) per command (dm-delay over the
# namespace's device) and path B is ANA non-optimized, so QD1 I/O runs on
# path A alone and waits in the backend.  The loss (as in 09: netem 100 % on
# the target's path A NIC, the links stay up) begins once the backend holds a
# command (rt_loss_held, in the target guest): after the target's NIC
# acknowledged the command's SEND and before its answer.  Nothing signaled is
# outstanding, so the ACK watchdog hears the silence only through its probe
# (a zero-length RDMA WRITE on the I/O queue).  Asked from the host instead,
# the loss began at a random point of fio's cycle, and now and then while a
# new command's SEND waited for its acknowledgment: then that SEND, not the
# probe, found the silence (CI, 6dd03bd).  Without the probe keep-alive's
# next command on the admin queue found it, up to kato/2 (2.5 s by default)
# later.  The paths connect with keep_alive_tmo=60: keep-alive's first
# command comes 30 s after each (re)connect, after the round, so it cannot
# find the silence first (with
# the default it did once in two rounds).  Per round: the silence is found on
# an I/O queue by the probe; fio's longest I/O within 3 s + twice the
# backend's time (the command had waited up to one before the loss began,
# and waits one again on B after the failover; the probe finds the silence
# within 1.9 s of its start: up to two checks to the next probe, three
# after it); fio verifies with no error; path A back.  Under HOST_DRIVER=inbox the suite is skipped.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
# shellcheck source-path=SCRIPTDIR source=../../lib/rig.sh
. "$(dirname "$0")/../lib/rig.sh"

suite_begin
rig_setup
[ "$(cat /sys/module/nvme_core/parameters/multipath 2>/dev/null)" = Y ] ||
	tap_skip_all "nvme_core native multipath is off"
[ "$HOST_DRIVER" != inbox ] || tap_skip_all "rnvme's ACK watchdog probe (the in-tree driver has none)"
BACKEND_MS=${TEST_BACKEND_MS:-1000}
ROUNDS=${TEST_ROUNDS:-2}
STALL_MAX=$(awk -v b="$BACKEND_MS" 'BEGIN { printf "%.1f", 3 + 2 * b / 1000 }')
wd=$(cat /sys/module/rnvme/parameters/ack_watchdog_ms)
[ "$wd" != 0 ] || tap_skip_all "ack_watchdog_ms is 0 (off)"
# This suite is about finding the silence (the watchdog's probe, with
# keep-alive at 60 s so that keep-alive cannot find it first), and the I/O
# stall it bounds is the failover's.  With keep-alive at 60 s the failover
# hold of a write is 2 min (tests/suites/17-lost-write.sh and 14-multipath
# test the hold): it is off here, and back on at the end.
hold0=$(cat /sys/module/rnvme/parameters/failover_hold)
echo N > /sys/module/rnvme/parameters/failover_hold

rig_t rt_slow "$BACKEND_MS" >/dev/null || bail "target: dm-delay of $BACKEND_MS ms under the namespace"
rig_t rt_ana 2 non-optimized >/dev/null || bail "target: port 2 (path B) ANA non-optimized"
rig_connect_both "keep_alive_tmo=60" || bail "connect both paths"
wait_for 20 path_ana_is "$CTRL_B" non-optimized ||
	bail "path B not non-optimized on the host (ana_state '$(path_ana "$CTRL_B")')"
ok "two paths: $CTRL_A (A, optimized) and $CTRL_B (B, non-optimized), keep_alive_tmo 60; the backend takes $BACKEND_MS ms per command"

for r in $(seq "$ROUNDS"); do
	out=/tmp/fio-answers-$r.json
	FIO_STALL_LATLOG=1 fio_stall_start "$HEAD_DEV" 1 60 "$out"
	sleep 3
	echo "rnvme-test: 11 R$r: path A's loss asked for" > /dev/kmsg
	t=$(now_ns)
	# not $(rig_t ...): rig_t numbers its requests in this shell
	rig_t rt_loss_held A > "/tmp/held-$r.txt"
	rc=$?
	held=$(cat "/tmp/held-$r.txt")
	if [ "$rc" = 0 ]; then
		echo "# R$r: target: $held"
		if [[ $held =~ "in place "([0-9]+)" ms into the command" ]] &&
			[ "${BASH_REMATCH[1]}" -lt "$BACKEND_MS" ]; then
			ok "R$r: the loss began while the backend held a command (${BASH_REMATCH[1]} ms into its $BACKEND_MS)"
		else
			not_ok "R$r: the loss began while the backend held a command (within its $BACKEND_MS ms)" "target: $held"
		fi
	else
		not_ok "R$r: target drops path A's packets once its backend holds a command" "$held"
	fi
	if wait_for 10 ctrl_not "$CTRL_A" live; then
		echo "# R$r: path A left live $WAIT_ELAPSED s after the loss was in place"
	else
		echo "# R$r: path A still $(ctrl_state "$CTRL_A") 10 s after the loss was in place"
	fi
	line=$(dmesg | sed -n "/rnvme-test: 11 R$r: path A's loss asked/,\$p" | grep -m1 "path silent")
	case "$line" in
	*"queue 0:"*|"") not_ok "R$r: the silence is found on an I/O queue by the watchdog's probe" \
		"found by: ${line:-nothing (no path-silent line)}" ;;
	*"watchdog's probe"*) ok "R$r: the silence is found on an I/O queue by the watchdog's probe" ;;
	*) not_ok "R$r: the silence is found on an I/O queue by the watchdog's probe" "found by: $line" ;;
	esac
	rig_t rt_loss A off >/dev/null || not_ok "R$r: target stops dropping"
	wait_for 30 ctrl_live "$CTRL_A" || echo "# R$r: path A not live 30 s after the loss ended"
	fio_stall_stop
	rc=$FIO_RC
	read -r ferr stall nw nr _ <<< "$(fio_stall_result "$out")"
	read -r lat l0 l1 slow <<< "$(fio_stall_longest "$out" "$t")"
	echo "# R$r: longest I/O ${lat:-?} s, from ${l0:-?} to ${l1:-?} s after the loss was asked for; ${slow:-?} I/Os over 1 s"
	if [ "$rc" = 0 ] && [ "${ferr:-x}" = 0 ]; then
		tap_within "R$r: longest I/O stall (fio wrote $nw and verified $nr blocks, 0 errors)" "$stall" "$STALL_MAX"
	else
		not_ok "R$r: fio wrote and verified through the silence" "fio exit $rc" "$(tail -n 15 "$out.stderr")"
	fi
	dmesg | sed -n "/rnvme-test: 11 R$r: path A's loss asked/,\$p" |
		grep -E "path silent|error recovery|keep-?alive" | head -n 4 | sed "s/^/# R$r: /"
done
if ctrl_is "$CTRL_B" live; then ok "path B stayed live"; else not_ok "path B stayed live" "state $(ctrl_state "$CTRL_B")"; fi
echo "$hold0" > /sys/module/rnvme/parameters/failover_hold
rig_end
