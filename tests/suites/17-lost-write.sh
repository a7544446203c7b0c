#!/bin/bash
# shellcheck disable=SC2317 # helpers are invoked indirectly (check, wait_for)
# 17-lost-write (issue 52): a write the host retries on another path while
# the controller behind the lost path still holds it, executes it later and
# so overwrites the next write to the same block.
#
# One subsystem on two Soft-RoCE paths in one guest, served by the hostile
# user-space target (tests/hostile/target.cc, `make hostile`) over one RAM
# namespace: path A (veth0/veth1, 192.0.2.2) is the slow one, its
# controllers keep every write they receive and apply it DRAIN ms after it
# arrived, even after the host lost the path (a controller still draining);
# path B (veth2/veth3, 198.51.100.2) answers at once.  The target reports a
# Command Quiesce Time (CQT, NVMe 2.1) of CQT ms and keeps to it.
#
# Which path the first write takes: there is no ANA here; the suite connects
# path A first and sets the subsystem's iopolicy to numa, under which the
# multipath head sends I/O down the first optimized path of its list (both
# are optimized without ANA, at the same NUMA distance), path A.  A read
# through the head shows it in the paths' I/O counters, and the target's
# log names the path of the write it holds.
#
# The scenario: write block X = A (4 KiB, O_DIRECT) through the multipath
# head; the target's log shows path A's controller holding it; path A's
# link goes down (ip link set veth0 down) while it is held; the host fails
# over; when the write of A returns, write X = B through the head; wait
# until the held write has been applied; read X with O_DIRECT.  X must hold
# B, the last write that completed.  A host that retries the write on path
# B at once (today's rnvme, the in-tree nvme_rdma) finds X = A: "lost write".
# Under HOST_DRIVER=inbox the outcome and the times are printed as measured
# (skipped) points, not judged.
#
# A second round (the CCR round) runs the scenario again against the target
# started with --ccr: its controllers report a CIU, CIRN and CCRL (TP8028)
# and accept a Cross-Controller Reset (admin opcode 0x38) of another
# controller of the subsystem, also of one the host has lost: the reset
# discards the writes that controller still holds.  A host that implements
# CCR resets path A's controller through path B's when it loses path A, and
# may retry the held write at once: the target's log shows the reset ("fault
# ccr fired") and the held write A discarded ("fault ccr-discard fired"),
# never applied; write A returns well below the time-based hold (2 x KATO +
# CQT) and X = B at the end.  A host without CCR (no reset in the target's
# log nor "Cross-Controller Reset" in the kernel log) fails the CCR points
# (rnvme; measured for the in-tree driver) and must still find X = B, by
# its hold.
#   TEST_DRAIN_MS   how long path A's controller holds a write (default 20000:
#                   longer than the in-tree driver's keep-alive failover)
#   TEST_CQT_MS     the CQT the target reports (default: TEST_DRAIN_MS)
#   TEST_CCR        1: the CCR round, 0: none (default 1 for rnvme, 0 under
#                   HOST_DRIVER=inbox: nvme_rdma sends no CCR, and after
#                   round 1's link flap its path A never connects again on
#                   Soft-RoCE, seen on 6.1: not live 40 s after the link came
#                   back, then every new connect on A rejected)
#   TEST_CCR_DRAIN_MS  the CCR round's drain and CQT (default 6000)
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
suite_begin

HT=${RNVME_OUT:-$REPO/build}/hostile/rnvme-hostile-target
[ -x "$HT" ] || bail "$HT not built (make hostile)"
HPORT=4430
HNQN=nqn.2014-08.org.nvmexpress.rnvme:lost-write
XBLK=256			# block X: 4 KiB block 256 (1 MiB into the namespace)
XLBA=$((XBLK * 8))		# its first 512-byte LBA, as the target logs it
WORK=/run/rnvme-lost-write
rm -rf "$WORK"
is_rnvme() { [ "$HOST_DRIVER" != inbox ]; }

modprobe nvme-core
[ "$(cat /sys/module/nvme_core/parameters/multipath 2>/dev/null)" = Y ] ||
	tap_skip_all "nvme_core native multipath is off"
fx_rxe_up || bail "cannot set up $RNVME_RDMA over veth"
fx_pathb_up || bail "cannot set up path B (veth2/veth3, ${RNVME_RDMA}2/${RNVME_RDMA}3)"
fx_host_driver_load || bail "cannot load the host driver ($HOST_DRIVER)"
modprobe rdma_ucm || bail "modprobe rdma_ucm (user-space RDMA CM) failed"

TGT_PID=
target_stop() {
	[ -n "$TGT_PID" ] || return 0
	kill -TERM "$TGT_PID" 2>/dev/null
	if ! wait_for 20 bash -c "! kill -0 $TGT_PID 2>/dev/null"; then
		echo "# the hostile target did not exit on SIGTERM; killing it"
		kill -KILL "$TGT_PID" 2>/dev/null
	fi
	wait "$TGT_PID" 2>/dev/null
	TGT_PID=
}
# a bail must not leave the target listening for the next suite
trap target_stop EXIT

# connect_path TRADDR SRC: prints nvmeN
connect_path() {
	local out
	out=$(nvmf_write "transport=$TRANSPORT,traddr=$1,trsvcid=$HPORT,nqn=$HNQN,hostnqn=$HOST_NQN,hostid=$HOST_ID,host_traddr=$2") ||
		{ echo "# connect $1: $out" >&2; return 1; }
	[[ $out =~ instance=([0-9]+) ]] || { echo "# connect $1: $out" >&2; return 1; }
	echo "nvme${BASH_REMATCH[1]}"
}
# What the target reports (nvme-cli's raw Identify Controller): CMIC at byte
# 76, CQT at bytes 387:386 (NVMe 2.1, milliseconds); CIU at 135, CIRN at
# 143:136 and CCRL at 1807 (TP8028, with --ccr).
id_bytes() { # CTRL OFFSET COUNT: unsigned little-endian value
	nvme id-ctrl "/dev/$1" -b 2>/dev/null | od -An -tu"$3" -j "$2" -N "$3" | tr -d ' '
}
# write_x NAME: block X = the file NAME through the head, O_DIRECT; when dd
# returns, "RC NS" (its status and the clock) goes to $work/NAME.done
write_x() {
	rm -f "$work/$1.done"
	dd if="$work/$1" of="$head_dev" bs=4096 seek="$XBLK" count=1 oflag=direct conv=notrunc 2> "$work/$1.err"
	echo "$? $(now_ns)" > "$work/$1.done"
}
# ln PATTERN: the line number of the target log's first line matching
# PATTERN (empty: none), so that the suite can tell the order of events at
# the target
ln_of() { grep -n -m1 -E "$1" "$TGT_LOG" | cut -d: -f1; }
# verdict DESC RC [DIAG]: judged for rnvme, measured (a skip) for the in-tree driver
verdict() {
	if is_rnvme; then
		tap_result "$@"
	else
		tap_skip "in-tree $(host_module): measured only" "$1"
		[ -z "${3:-}" ] || diag "$3"
	fi
}
HOLD_RE="^fault drain-hold fired .*path 1 .* write slba $XLBA nlb 8 \(first byte 0x41\)"
APPLY_RE="^fault drain-apply fired .*path 1 .* write slba $XLBA nlb 8 \(first byte 0x41\)"
RETRY_RE="^path 2 .* write slba $XLBA nlb 8 \(first byte 0x41\)"
B_RE="^path [12] .* write slba $XLBA nlb 8 \(first byte 0x42\)|^fault drain-hold fired .* slba $XLBA nlb 8 \(first byte 0x42\)"
DISCARD_RE="^fault ccr-discard fired .*path 1 .* write slba $XLBA nlb 8 \(first byte 0x41\)"

# lost_write_round ROUND: the scenario against a target started afresh;
# ROUND "" (the drain, as always) or "ccr" (the target with --ccr, the
# CCR round: its points are prefixed "CCR round:").
lost_write_round() {
	local round=$1 P='' drain cqt
	local -a targs=()
	if [ "$round" = ccr ]; then
		P="CCR round: " drain=${TEST_CCR_DRAIN_MS:-6000} cqt=${TEST_CCR_DRAIN_MS:-6000}
		targs=(--ccr)
		echo "# ---- the CCR round: the target with --ccr (Cross-Controller Reset), drain $drain ms"
	else
		drain=${TEST_DRAIN_MS:-20000}
		cqt=${TEST_CQT_MS:-$drain}
	fi
	work=$WORK/${round:-drain}
	mkdir -p "$work"
	TGT_LOG=$work/target.log
	"$HT" --addr "$TGT_IP4" --port "$HPORT" --addr2 "$TGT_IP4_B" --nqn "$HNQN" \
		--slow-path 1 --drain-ms "$drain" --cqt-ms "$cqt" --log-writes "${targs[@]}" > "$TGT_LOG" 2>&1 &
	TGT_PID=$!
	wait_for 20 grep -q '^listening' "$TGT_LOG" || bail "the hostile target does not start: $(cat "$TGT_LOG")"
	diag "target: $(grep -E '^(path 2|CQT|CCR|listening)' "$TGT_LOG")"

	# path A first: it heads the multipath head's list of paths (the CCR
	# round tries twice more: after round 1's link flap, the in-tree
	# driver's Soft-RoCE connection manager has been seen to lose a first
	# connect on path A)
	local try
	for try in 1 2 3; do
		ctrl_a=$(connect_path "$TGT_IP4" "$HOST_IP4") && break
		if [ "$round" != ccr ] || [ "$try" = 3 ]; then
			bail "connect path A; target: $(tail -n 5 "$TGT_LOG")"
		fi
		echo "# connect path A failed (attempt $try); again in 5 s"
		sleep 5
	done
	head_dev=$(wait_ns_dev "$ctrl_a" 30) || bail "no namespace on path A"
	ctrl_b=$(connect_path "$TGT_IP4_B" "$HOST_IP4_B") || bail "connect path B; target: $(tail -n 5 "$TGT_LOG")"
	dev_b=$(wait_ns_dev "$ctrl_b" 30) || bail "no namespace on path B"
	local cntlid_a cntlid_b
	cntlid_a=$(ctrl_attr "$ctrl_a" cntlid) cntlid_b=$(ctrl_attr "$ctrl_b" cntlid)
	if [ "$head_dev" = "$dev_b" ] && [ -n "$(path_ns "$ctrl_a")" ] && [ -n "$(path_ns "$ctrl_b")" ]; then
		ok "${P}one subsystem, two controllers ($ctrl_a on A, cntlid $cntlid_a; $ctrl_b on B, cntlid $cntlid_b) behind one multipath head $head_dev"
	else
		not_ok "${P}the two paths lead to one multipath head" "A: $ctrl_a -> $head_dev, B: $ctrl_b -> $dev_b" \
			"$(fx_dmesg_since_mark | grep -E 'nvme|rnvme' | tail -n 8)"
		bail "no multipath head to run the scenario on"
	fi
	local subsys='' f
	for f in /sys/class/nvme-subsystem/nvme-subsys*; do
		[ -e "$f/$ctrl_a" ] && subsys=$f
	done
	echo numa > "$subsys/iopolicy" || bail "cannot set $subsys/iopolicy"

	local cmic_a cqt_a cqt_b ciu_a ciu_b cirn_a cirn_b ccrl_a ccrl_b
	cmic_a=$(id_bytes "$ctrl_a" 76 1) cqt_a=$(id_bytes "$ctrl_a" 386 2) cqt_b=$(id_bytes "$ctrl_b" 386 2)
	tap_result "${P}Identify Controller: CMIC $cmic_a (multi-controller), CQT $cqt_a/$cqt_b ms on A/B (the target's $cqt)" \
		"$([ "$cmic_a" = 2 ] && [ "$cqt_a" = "$cqt" ] && [ "$cqt_b" = "$cqt" ] && echo 0 || echo 1)"
	ciu_a=$(id_bytes "$ctrl_a" 135 1) ciu_b=$(id_bytes "$ctrl_b" 135 1)
	cirn_a=$(id_bytes "$ctrl_a" 136 8) cirn_b=$(id_bytes "$ctrl_b" 136 8)
	ccrl_a=$(id_bytes "$ctrl_a" 1807 1) ccrl_b=$(id_bytes "$ctrl_b" 1807 1)
	if [ "$round" = ccr ]; then
		# each controller its own CIU (1..255) and CIRN, as the target's log has them
		local logged_a logged_b
		logged_a=$(grep -m1 "^ccr: controller $cntlid_a reports" "$TGT_LOG")
		logged_b=$(grep -m1 "^ccr: controller $cntlid_b reports" "$TGT_LOG")
		tap_result "${P}Identify Controller (TP8028): CIU $ciu_a/$ciu_b, CIRN $cirn_a/$cirn_b, CCRL $ccrl_a/$ccrl_b on A/B" \
			"$([ "${ciu_a:-0}" -gt 0 ] && [ "${ciu_b:-0}" -gt 0 ] && [ "$ccrl_a" = 4 ] && [ "$ccrl_b" = 4 ] &&
				[ "$cirn_a" != "$cirn_b" ] && [[ $logged_a == *"CIU $ciu_a CIRN"* ]] &&
				[[ $logged_b == *"CIU $ciu_b CIRN"* ]] && echo 0 || echo 1)" \
			"the target's log: ${logged_a:-(none for $cntlid_a)}; ${logged_b:-(none for $cntlid_b)}"
	else
		echo "# without --ccr: CIU $ciu_a/$ciu_b, CIRN $cirn_a/$cirn_b, CCRL $ccrl_a/$ccrl_b on A/B (none reported)"
	fi
	# what rnvme doctor reads: the driver's view of CQT and of CCR per path
	if is_rnvme; then
		local want_ccr=0 v_cqt v_ccr
		[ "$round" != ccr ] || want_ccr=1
		v_cqt="$(ctrl_attr "$ctrl_a" rnvme/cqt_ms)/$(ctrl_attr "$ctrl_b" rnvme/cqt_ms)"
		v_ccr="$(ctrl_attr "$ctrl_a" rnvme/ccr_offered)/$(ctrl_attr "$ctrl_b" rnvme/ccr_offered)"
		tap_result "${P}sysfs rnvme/cqt_ms $v_cqt, rnvme/ccr_offered $v_ccr on A/B" \
			"$([ "$v_cqt" = "$cqt/$cqt" ] && [ "$v_ccr" = "$want_ccr/$want_ccr" ] && echo 0 || echo 1)" \
			"expected cqt_ms $cqt/$cqt and ccr_offered $want_ccr/$want_ccr"
	fi
	local kato
	kato=$(ctrl_attr "$ctrl_a" kato)
	diag "keep-alive timeout ${kato:-?} s (sysfs kato), iopolicy $(cat "$subsys/iopolicy"), drain $drain ms, CQT $cqt ms"

	# The head sends I/O down path A: a direct read through it counts on A.
	local a0 b0 a1 b1
	a0=$(path_ios "$ctrl_a") b0=$(path_ios "$ctrl_b")
	dd if="$head_dev" of=/dev/null bs=4096 skip="$XBLK" count=4 iflag=direct 2>/dev/null
	a1=$(path_ios "$ctrl_a") b1=$(path_ios "$ctrl_b")
	tap_result "${P}the head sends I/O down path A (iopolicy numa, A connected first): A +$((a1 - a0)), B +$((b1 - b0)) I/Os for 4 reads" \
		"$([ $((a1 - a0)) -ge 4 ] && [ $((b1 - b0)) = 0 ] && echo 0 || echo 1)"

	# The two contents of block X, and what X holds before (zeros).
	head -c 4096 /dev/zero | tr '\0' 'A' > "$work/A"
	head -c 4096 /dev/zero | tr '\0' 'B' > "$work/B"

	fx_dmesg_mark "17-lost-write:scenario${round:+-$round}"
	local t_a wr_pid held_ok t_cut
	t_a=$(now_ns)
	write_x A &
	wr_pid=$!
	if wait_for 15 grep -qE "$HOLD_RE" "$TGT_LOG"; then
		ok "${P}path A's controller received write A of block X and holds it: $(grep -m1 -E "$HOLD_RE" "$TGT_LOG" | cut -c1-160)"
	else
		not_ok "${P}path A's controller received write A of block X and holds it" "$(tail -n 15 "$TGT_LOG")"
	fi
	# at most DRAIN: a held write must not be complete yet
	held_ok=1
	[ ! -e "$work/A.done" ] || held_ok=0
	tap_result "${P}write A has not completed while path A holds it ($(secs_since "$t_a") s after it was issued)" "$((1 - held_ok))" \
		"$(cat "$work/A.done" 2>/dev/null)"

	t_cut=$(now_ns)
	ip link set veth0 down
	echo "# path A's link down (ip link set veth0 down) $(secs_since "$t_a") s after write A was issued"
	# Write A returns when the host has failed over (or when the drain ends and
	# a host that waited gets its answer on another path).
	local rc_a t_a_end stall_a failover applied_at_return
	if wait_for $((drain / 1000 + 120)) test -e "$work/A.done"; then
		read -r rc_a t_a_end < "$work/A.done"
		stall_a=$(awk -v a="$t_a" -v e="$t_a_end" 'BEGIN { printf "%.2f", (e - a) / 1e9 }')
		failover=$(awk -v a="$t_cut" -v e="$t_a_end" 'BEGIN { printf "%.2f", (e - a) / 1e9 }')
		applied_at_return=$(ln_of "$APPLY_RE")
		echo "# write A: returned with status $rc_a; stall $stall_a s from issue; $failover s after path A's link went down; the drain ends $((drain / 1000)) s after issue; held copy applied by then: $([ -n "$applied_at_return" ] && echo yes || echo no)"
		tap_result "${P}write A completed (dd status $rc_a) after the failover" "$rc_a" "$(cat "$work/A.err")"
	else
		stall_a="never" failover="never"
		not_ok "${P}write A completed after the failover" "not within $((drain / 1000 + 120)) s; $ctrl_a $(ctrl_attr "$ctrl_a" state), $ctrl_b $(ctrl_attr "$ctrl_b" state)"
	fi
	wait "$wr_pid" 2>/dev/null

	# Write B through the head (path B now: A is down)
	local t_b rc_b
	t_b=$(now_ns)
	write_x B
	read -r rc_b _ < "$work/B.done"
	echo "# write B: status $rc_b in $(secs_since "$t_b") s"
	tap_result "${P}write B completed (dd status $rc_b)" "$rc_b" "$(cat "$work/B.err")"

	if [ "$round" != ccr ]; then
		# Wait past the drain: until the target has applied the held write A (it
		# does so DRAIN ms after its arrival, whatever the host did meanwhile).
		if wait_for $((drain / 1000 + 30)) grep -qE "$APPLY_RE" "$TGT_LOG"; then
			ok "path A's controller applied the held write A: $(grep -m1 -E "$APPLY_RE" "$TGT_LOG" | cut -c1-170)"
		else
			not_ok "path A's controller applied the held write A within its drain" "$(tail -n 15 "$TGT_LOG")"
		fi
	else
		# Wait past the drain (its end 2 s behind): a reset controller never
		# applies the write; one that was not reset has applied it by then.
		local left
		left=$(awk -v a="$t_a" -v n="$(now_ns)" -v d="$drain" 'BEGIN { l = (a + (d + 2000) * 1e6 - n) / 1e9; printf "%.2f", (l > 0 ? l : 0) }')
		sleep "$left"
	fi
	sleep 1

	# The order of events at the target, from its log.
	local l_hold l_retry l_b l_apply l_ccr l_disc order x
	local CCR_RE="^fault ccr fired \([0-9]+\): controller [0-9]+ reset controller ${cntlid_a:-none}:"
	l_hold=$(ln_of "$HOLD_RE") l_retry=$(ln_of "$RETRY_RE") l_b=$(ln_of "$B_RE") l_apply=$(ln_of "$APPLY_RE")
	l_ccr=$(ln_of "$CCR_RE") l_disc=$(ln_of "$DISCARD_RE")
	order=$(for x in "hold-A:$l_hold" "ccr-reset-A:$l_ccr" "discard-held-A:$l_disc" "retry-A-on-B:$l_retry" \
			"write-B:$l_b" "apply-held-A:$l_apply"; do
		[ -n "${x#*:}" ] && echo "${x#*:} ${x%%:*}"
	done | sort -n | awk '{ printf "%s%s", (NR > 1 ? " -> " : ""), $2 }')
	echo "# order at the target: $order"

	if [ "$round" = ccr ]; then
		# Did the host send a Cross-Controller Reset?  The target's log says
		# so, and the host's kernel log.
		local host_ccr refused hold_s half
		host_ccr=$(fx_dmesg_since_mark | grep -m3 'Cross-Controller Reset')
		refused=$(grep -m3 '^ccr refused' "$TGT_LOG")
		[ -z "$host_ccr" ] || echo "# host: $host_ccr"
		[ -z "$refused" ] || echo "# target: $refused"
		if [ -z "$l_ccr" ] && [ -z "$host_ccr" ] && [ -z "$refused" ]; then
			echo "# the host sent no Cross-Controller Reset (none in the target's log, none in the kernel log): this driver does not implement CCR; its hold is all that protects X"
		fi
		verdict "CCR round: the host reset path A's controller $cntlid_a through path B's $cntlid_b (Cross-Controller Reset): $(grep -m1 -E "$CCR_RE" "$TGT_LOG" | cut -c1-150)" \
			"$([ -n "$l_ccr" ] && echo 0 || echo 1)" \
			"target: ${refused:-no CCR in its log}; host: ${host_ccr:-no Cross-Controller Reset in the kernel log}"
		verdict "CCR round: the held write A was discarded by the reset, never applied: $(grep -m1 -E "$DISCARD_RE" "$TGT_LOG" | cut -c1-150)" \
			"$([ -n "$l_disc" ] && [ -z "$l_apply" ] && echo 0 || echo 1)" \
			"$(grep -E '^fault (drain-apply|ccr)' "$TGT_LOG" | cut -c1-170 | head -n 5)"
		# the time-based hold the CCR ends early: 2 x KATO + CQT (the target has no TBKAS)
		hold_s=$(awk -v k="${kato:-5}" -v c="$cqt" 'BEGIN { printf "%.1f", 2 * k + c / 1000 }')
		half=$(awk -v h="$hold_s" 'BEGIN { printf "%.1f", h / 2 }')
		verdict "CCR round: write A returned after the reset, retried on path B: stall $stall_a s, below half the hold ($half of $hold_s s = 2 x KATO + CQT)" \
			"$([ -n "$l_ccr" ] && [ -n "$l_retry" ] && [ "$l_ccr" -lt "$l_retry" ] &&
				awk -v s="$stall_a" -v h="$half" 'BEGIN { exit !(s + 0 == s && s < h) }' && echo 0 || echo 1)" \
			"order at the target: $order"
	fi

	# Read X.
	local first times
	dd if="$head_dev" of="$work/X" bs=4096 skip="$XBLK" count=1 iflag=direct 2>/dev/null
	first=$(od -An -c -N1 "$work/X" | tr -d ' ')
	times="write A stall $stall_a s, failover $failover s after the link cut, drain $((drain / 1000)) s"
	if cmp -s "$work/X" "$work/B"; then
		verdict "${P}block X holds B, the last write that completed ($times)" 0
	elif cmp -s "$work/X" "$work/A"; then
		verdict "${P}lost write: block X holds A after B completed ($times)" 1 \
			"order at the target: $order"$'\n'"the host sent write A again on path B while path A's controller still held it, which applied it after B"
	else
		verdict "${P}block X holds B, the last write that completed ($times)" 1 \
			"block X holds neither A nor B (first byte '$first')"
	fi

	# Path A back: its link up, the route and neighbour the kernel dropped with
	# it restored (as 14-multipath does), then everything torn down.
	local mac1 t_up r
	mac1=$(cat /sys/class/net/veth1/address)
	printf '%s\n' "link set veth0 up" \
		"route replace $TGT_IP4 dev veth0 src $HOST_IP4 table 100" \
		"neigh replace $TGT_IP4 lladdr $mac1 dev veth0 nud permanent" | ip -4 -batch -
	t_up=$(now_ns)
	if wait_for 40 ctrl_live "$ctrl_a"; then
		echo "# $ctrl_a (path A) live again $(secs_since "$t_up") s after its link came back"
	else
		echo "# $ctrl_a (path A) not live 40 s after its link came back: $(ctrl_attr "$ctrl_a" state)"
	fi
	if is_rnvme; then
		r=/sys/class/nvme/$ctrl_a/rnvme
		echo "# $ctrl_a: error_recoveries $(cat "$r/error_recoveries" 2>/dev/null), reconnects $(cat "$r/reconnects" 2>/dev/null), last_error: $(cat "$r/last_error" 2>/dev/null)"
	fi
	fx_dmesg_check "${P}scenario: no kernel warnings/oopses"
	fx_host_disconnect_all
	target_stop
	diag "target log (drain${round:+, CCR} and block X):"$'\n'"$(grep -E '^fault|^ccr|slba '"$XLBA"' |^stopping' "$TGT_LOG" | cut -c1-170 | head -n 20)"
}

# patha_renew: path A made afresh, its RDMA devices and veth pair deleted and
# created again.  After round 1's outage, 6.12's Soft-RoCE connected path A
# no more when only its link, routes and neighbours were restored (rdma_cm
# -110 on every connect, whichever round ran first); 6.1's did.  A new
# device is what an admin gets after swapping a NIC or reloading its driver.
patha_renew() {
	local d
	for d in "$RDMA_DEV0" "$RDMA_DEV1"; do
		rdma link show "$d/1" >/dev/null 2>&1 || continue
		timeout 60 rdma link delete "$d" || { echo "# rdma link delete $d failed"; return 1; }
	done
	ip link del veth0 2>/dev/null
	fx_rxe_up
}

lost_write_round ""
if [ "${TEST_CCR:-$(is_rnvme && echo 1 || echo 0)}" != 0 ]; then
	patha_renew || bail "cannot make path A ($RNVME_RDMA over veth0/veth1) again for the CCR round"
	lost_write_round ccr
fi
fx_pathb_down
suite_end
