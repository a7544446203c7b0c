#!/bin/bash
# shellcheck disable=SC2317 # helpers are invoked indirectly (check, wait_for)
# 15-hostile: a target that breaks the protocol must never crash or hang the
# host.  The peer is rnvme-hostile-target (tests/hostile/target.cc, `make
# hostile`), a user-space NVMe/RDMA target that serves a RAM namespace and,
# per scenario, misbehaves in one precise way (--fault) a given number of
# times and then behaves, so the host can recover.  Per scenario the suite
# checks what the host must do: refuse the association with a clear error and
# leave nothing behind, or log the target's fault, recover, and carry on with
# verified I/O.  The target's own log proves that the fault really fired.
# dmesg must show no warning/oops (and on the debug kernel the sanitizer gate
# adds KASAN, lockdep and kmemleak).
#   TEST_HOSTILE="cqe-dup reject"   run only these scenarios
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
suite_begin
SUITE_MARK=$FX_DMESG_MARK

HT=${RNVME_OUT:-$REPO/build}/hostile/rnvme-hostile-target
[ -x "$HT" ] || bail "$HT not built (make hostile)"
HPORT=4430
HNQN=nqn.2014-08.org.nvmexpress.rnvme:hostile
work=/run/rnvme-hostile
rm -rf "$work"
mkdir -p "$work"
mod=$(host_module)

fx_rxe_up || bail "cannot set up $RNVME_RDMA over veth"
fx_host_driver_load || bail "cannot load the host driver ($HOST_DRIVER)"
modprobe rdma_ucm || bail "modprobe rdma_ucm (user-space RDMA CM) failed"
# A Connect the target never answers waits for the admin timeout: 60 s by
# default, 8 s here (read when a controller's admin queue is created).
at=/sys/module/nvme_core/parameters/admin_timeout
admin_timeout0=$(cat "$at")
echo 8 > "$at"

TGT_PID=
TGT_LOG=
SCEN=
SCEN_T0=
# target_start NAME ARGS...: the hostile target on $TGT_IP4:$HPORT, log in
# $work/NAME.log; waits until it listens.
target_start() {
	local name=$1
	shift
	SCEN=$name SCEN_T0=$(now_ns)
	TGT_LOG=$work/$name.log
	"$HT" --addr "$TGT_IP4" --port "$HPORT" --nqn "$HNQN" "$@" > "$TGT_LOG" 2>&1 &
	TGT_PID=$!
	wait_for 20 grep -q '^listening' "$TGT_LOG" || { diag "$(cat "$TGT_LOG")"; return 1; }
}
# target_stop: SIGTERM, and it must exit by itself within 20 s.
target_stop() {
	[ -n "$TGT_PID" ] || return 0
	kill -TERM "$TGT_PID" 2>/dev/null
	if ! wait_for 20 bash -c "! kill -0 $TGT_PID 2>/dev/null"; then
		echo "# the hostile target did not exit on SIGTERM; killing it"
		kill -KILL "$TGT_PID" 2>/dev/null
	fi
	wait "$TGT_PID" 2>/dev/null
	TGT_PID=
	# Soft-RoCE's own failure (a retransmission re-runs a fast
	# registration, see fx_rxe_up): name it, with the retry counters
	if fx_dmesg_since_mark | grep 'rxe_reg_fast_mr.*not free' >/dev/null; then
		echo "# $SCEN: Soft-RoCE re-ran a fast registration; $RDMA_DEV0: $(rdma statistic show link "$RDMA_DEV0/1" 2>&1 |
			grep -oE '(out_of_seq_request|rcvd_seq_err|completer_retry_err) [0-9]+' | tr '\n' ' ')"
	fi
	# each scenario marks the kernel log: check its own stretch here
	fx_dmesg_check "$SCEN: no kernel warnings/oopses"
	echo "# $SCEN: $(secs_since "$SCEN_T0") s"
}
fired() { grep -c '^fault .* fired' "$TGT_LOG" 2>/dev/null || true; }

# hconnect [OPTS]: connect to the hostile subsystem; prints the kernel's reply
# or the error; returns non-zero on failure.
HOPTS="transport=$TRANSPORT,traddr=$TGT_IP4,trsvcid=$HPORT,nqn=$HNQN,hostnqn=$HOST_NQN,hostid=$HOST_ID"
CTRL=
# Called as out=$(hconnect ...) (a subshell): set_ctrl "$out" then names the
# controller in CTRL.
hconnect() {
	local out
	out=$(nvmf_write "$HOPTS${1:+,$1}" 120)
	echo "$out"
	[[ $out =~ instance=([0-9]+) ]]
}
set_ctrl() {
	CTRL=
	[[ $1 =~ instance=([0-9]+) ]] && CTRL=nvme${BASH_REMATCH[1]}
}
refcnt_is_base() { [ "$(cat "/sys/module/$mod/refcnt")" = "$BASE_REF" ]; }
BASE_REF=$(cat "/sys/module/$mod/refcnt")

# nothing_left NAME: no controller and the module refcount back at its base.
nothing_left() {
	if wait_for 30 fx_no_fabrics_ctrls && wait_for 10 refcnt_is_base; then
		ok "$1: no controller left, $mod refcount at its base ($BASE_REF)"
	else
		not_ok "$1: nothing left behind" "controllers: $(echo /sys/class/nvme/*)" \
			"$mod refcnt $(cat "/sys/module/$mod/refcnt") (base $BASE_REF)"
		fx_host_disconnect_all
	fi
}

# fio_verify DEV SECS-BOUND NAME [MiB]: verified random writes (2 MiB by
# default), then read back.
fio_verify() {
	local out rc=0 mib=${4:-2}
	# the debug kernel's pass divides fio volumes (TEST_IO_DIV), down to 1 MiB
	mib=$((mib / ${TEST_IO_DIV:-1}))
	[ "$mib" -ge 1 ] || mib=1
	out=$(timeout "$2" fio --name=h --filename="$1" --ioengine=libaio --direct=1 --iodepth=8 \
		--rw=randwrite --bs=4k --size="${mib}M" --verify=crc32c --verify_fatal=1 \
		--verify_state_save=0 --output-format=terse 2>&1) || rc=$?
	if [ "$rc" = 0 ]; then
		ok "$3: fio wrote and verified $mib MiB"
	else
		not_ok "$3: fio wrote and verified $mib MiB" "fio exit $rc" "$(printf '%s\n' "$out" | tail -n 8)"
	fi
}

# dmesg_has NAME REGEX: the host logged what the target did wrong.
dmesg_logged() { fx_dmesg_since_mark | grep -E "$1" >/dev/null; }
dmesg_has() {
	local since
	wait_for 10 dmesg_logged "$2"
	since=$(fx_dmesg_since_mark)
	if grep -qE "$2" <<< "$since"; then
		ok "$1: the host logged it: $(grep -E "$2" <<< "$since" | tail -n 1 | sed 's/^\[[^]]*\] //' | cut -c1-150)"
	else
		not_ok "$1: the host logged the target's fault (/$2/)" "$(tail -n 15 <<< "$since")"
	fi
}

# fault_fired NAME: the target's log proves the fault happened.
fault_fired() {
	local n
	n=$(fired)
	if [ "${n:-0}" -gt 0 ]; then
		ok "$1: the fault fired ${n}x ($(grep -m1 '^fault' "$TGT_LOG" | cut -c1-120))"
	else
		not_ok "$1: the fault fired" "$(tail -n 20 "$TGT_LOG")"
	fi
}

want() { [ -z "${TEST_HOSTILE:-}" ] || [[ " $TEST_HOSTILE " == *" $1 "* ]]; }

# scenario_refused NAME FAULT-ARGS... -- HOST-LOG-REGEX: the association is
# refused within a bound, the host says why, nothing is left.
scenario_refused() {
	local name=$1 re args=() t out rc=0 bound=${REFUSE_BOUND:-30}
	shift
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	re=$2
	want "$name" || return 0
	fx_dmesg_mark "15-hostile:$name"
	target_start "$name" "${args[@]}" || { not_ok "$name: target start"; return; }
	t=$(now_ns)
	out=$(hconnect) || rc=$?
	local s
	s=$(secs_since "$t")
	set_ctrl "$out"
	if [ "$rc" != 0 ] && [ "${s%.*}" -lt "$bound" ]; then
		ok "$name: connect refused in $s s (bound $bound s): ${out##*: }"
	else
		not_ok "$name: connect refused within $bound s" "rc $rc after $s s: $out"
		fx_host_disconnect_all
	fi
	fault_fired "$name"
	dmesg_has "$name" "$re"
	nothing_left "$name"
	target_stop
}

# connected_scenario NAME FAULT-ARGS...: the target with its fault, a
# controller with reconnects 1 s apart, its namespace in DEV; on a failure a
# test point says which step failed and everything is torn down (returns 1).
DEV=
connected_scenario() {
	local name=$1 out
	shift
	fx_dmesg_mark "15-hostile:$name"
	target_start "$name" "$@" || { not_ok "$name: target start"; return 1; }
	if ! out=$(hconnect "reconnect_delay=1,ctrl_loss_tmo=30${CONNECT_EXTRA:+,$CONNECT_EXTRA}"); then
		not_ok "$name: connect" "$out" "$(tail -n 10 "$TGT_LOG")"
		target_stop
		return 1
	fi
	set_ctrl "$out"
	if ! DEV=$(wait_ns_dev "$CTRL" 30); then
		not_ok "$name: namespace of $CTRL" "$(tail -n 10 "$TGT_LOG")"
		fx_host_disconnect_all
		target_stop
		return 1
	fi
}

# scenario_recovers NAME FAULT-ARGS... -- HOST-LOG-REGEX: connect, then I/O
# that triggers the fault; the host logs it, the controller is live again
# within a bound, and verified I/O passes afterwards.
scenario_recovers() {
	local name=$1 re args=() dev t
	shift
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	re=$2
	want "$name" || return 0
	connected_scenario "$name" "${args[@]}" || return 0
	dev=$DEV
	[ -z "${BEFORE_TRIGGER:-}" ] || $BEFORE_TRIGGER
	# reads trigger the read faults, 8 KiB writes (past the 4 KiB of
	# in-capsule data: a keyed SGL) the write faults; the rest fire on
	# their own
	if [ "${TRIGGER:-read}" = write ]; then
		timeout 60 dd if=/dev/zero of="$dev" bs=8k count=16 oflag=direct 2>/dev/null
	elif [ "${TRIGGER:-read}" = poll ]; then
		# two polling jobs on the one poll queue: both reap its CQ
		timeout 60 fio --name=p --filename="$dev" --direct=1 --ioengine=io_uring --hipri=1 \
			--rw=randread --bs=4k --iodepth=4 --numjobs=2 --size=4M --runtime=4 \
			--time_based --output-format=terse >/dev/null 2>&1
	else
		timeout 60 dd if="$dev" of=/dev/null bs=4k count=64 iflag=direct 2>/dev/null
	fi
	fault_fired "$name"
	dmesg_has "$name" "$re"
	if [ -n "${TGT_EXPECT:-}" ]; then
		if wait_for 10 grep -qE "$TGT_EXPECT" "$TGT_LOG"; then
			ok "$name: the target saw its RDMA operation fail: $(grep -m1 -E "$TGT_EXPECT" "$TGT_LOG")"
		else
			not_ok "$name: the target saw its RDMA operation fail (/$TGT_EXPECT/)" "$(tail -n 10 "$TGT_LOG")"
		fi
	fi
	# what the target must never have managed
	if [ -n "${TGT_FORBID:-}" ]; then
		if grep -qE "$TGT_FORBID" "$TGT_LOG"; then
			not_ok "$name: the target was refused (/$TGT_FORBID/ must not appear)" "$(grep -m2 -E "$TGT_FORBID" "$TGT_LOG")"
		else
			ok "$name: the target's hostile access did not succeed"
		fi
	fi
	t=$(now_ns)
	if wait_for 40 ctrl_live "$CTRL"; then
		ok "$name: $CTRL live $(secs_since "$t") s later (state $(ctrl_attr "$CTRL" state))"
	else
		not_ok "$name: $CTRL live again within 40 s" "state $(ctrl_attr "$CTRL" state)" "$(tail -n 10 "$TGT_LOG")"
	fi
	[ -z "${RECOVERS_EXTRA:-}" ] || $RECOVERS_EXTRA "$name"
	fio_verify "$dev" 120 "$name"
	fx_host_disconnect_all
	nothing_left "$name"
	target_stop
}

is_rnvme() { [ "$HOST_DRIVER" != inbox ]; }

# scenario_works NAME FAULT-ARGS... -- [HOST-LOG-REGEX]: the fault needs no
# recovery: connect, the fault fires, the controller stays live and verified
# I/O passes; with a regex (rnvme only: the in-tree driver logs less), the
# host said what it saw.
scenario_works() {
	local name=$1 re args=() dev
	shift
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	re=${2:-}
	want "$name" || return 0
	connected_scenario "$name" "${args[@]}" || return 0
	dev=$DEV
	fio_verify "$dev" 120 "$name"
	fault_fired "$name"
	if [ -n "$re" ] && is_rnvme; then
		dmesg_has "$name" "$re"
	fi
	local rec
	rec=$(cat "/sys/class/nvme/$CTRL/rnvme/error_recoveries" 2>/dev/null || echo n/a)
	if ctrl_live "$CTRL" && { [ "$rec" = n/a ] || [ "$rec" = 0 ]; }; then
		ok "$name: $CTRL stayed live (error recoveries: $rec, queue_count $(ctrl_attr "$CTRL" queue_count))"
	else
		not_ok "$name: $CTRL stayed live without recovery" "state $(ctrl_attr "$CTRL" state), error_recoveries $rec"
	fi
	[ -z "${WORKS_EXTRA:-}" ] || $WORKS_EXTRA "$name"
	fx_host_disconnect_all
	nothing_left "$name"
	target_stop
}

# ---------------------------------------------------------------- baseline
if want none; then
	fx_dmesg_mark "15-hostile:none"
	target_start none || bail "the hostile target does not start: $(cat "$TGT_LOG")"
	out=$(hconnect) || bail "connect to the well-behaved hostile target failed: $out; target: $(tail -n 20 "$TGT_LOG")"
	set_ctrl "$out"
	dev=$(wait_ns_dev "$CTRL" 30) || bail "no namespace on $CTRL"
	ok "none: connected $CTRL ($dev, queue_count $(ctrl_attr "$CTRL" queue_count)) to the well-behaved target"
	fio_verify "$dev" 120 none 8
	fx_host_disconnect_all
	nothing_left none
	target_stop
fi

# ---------------------------------------------------------------- association refused
scenario_refused reject --fault reject --fault-count -1 -- \
	'rejected|reject'
# The host knows at once: its commands on the queue fail then, not after
# the admin timeout (8 s here, 60 s by default).
REFUSE_BOUND=5 scenario_refused accept-disconnect --fault accept-disconnect -- \
	'disconnected while connecting'
scenario_refused fabrics-connect-error --fault fabrics-connect-error -- \
	'Connect|connect'
scenario_refused fabrics-connect-silent --fault fabrics-connect-silent -- \
	'timeout|Connect|connect'
scenario_refused io-connect-bad --fault io-connect-bad -- \
	'Connect|connect'
scenario_refused grant-zero-io-connect --fault grant-zero-io-connect --fault-count -1 -- \
	'rejected|reject'
# A CM connect request never answered: the host's wait ends with the RDMA
# CM's own timeout (about 60 s), as in the in-tree driver; opt-in for time.
if [ "${TEST_HOSTILE_SLOW:-0}" = 1 ]; then
	REFUSE_BOUND=90 scenario_refused connect-silent --fault connect-silent -- \
		'failed \(-110\)|UNREACHABLE|unreachable|timed out'
else
	tap_skip "takes 62 s (the RDMA CM's connect timeout); TEST_HOSTILE_SLOW=1 runs it" \
		"connect-silent: a CM connect request never answered"
fi

# ---------------------------------------------------------------- faults the host recovers from
scenario_recovers cqe-unknown-cid --fault cqe-unknown-cid -- 'unknown command id|invalid id|tag'
# A repeated completion finds its request still in flight and answered
# ("duplicate"), or already ended or its tag reused ("stale"); the in-tree
# driver's nvme_find_rq() says "genctr mismatch" for a reused tag.
scenario_recovers cqe-dup --fault cqe-dup -- 'duplicate response|stale response|genctr mismatch'
# nvme-core bumps a request's generation counter when it completes, so a
# stale completion names a generation the tag no longer has: rnvme tests it
# itself (without nvme_find_rq()'s unlimited log line) and says "stale
# response"; a counter that wrapped (16 uses later) is caught by the state
# and answered-once tests.
scenario_recovers cqe-stale --fault cqe-stale -- 'stale response|genctr mismatch'
scenario_recovers cqe-short --fault cqe-short -- 'response of 8 bytes|short|8 bytes'
# The host's MR bounds the target's RDMA WRITE (remote access error at the
# target); a completion before the data: the host invalidates the MR when it
# ends the command, so the late data cannot land in memory that moved on.
# Soft-RoCE of 7.x also raises the host QP's access error as an async event
# (IB_EVENT_QP_ACCESS_ERR; 6.1's and 6.12's rxe raise none): it says why the
# QP's next work request flushed, and the host logs it.
qp_access_event() {
	[ "$(uname -r | cut -d. -f1)" -ge 7 ] || return 0
	dmesg_has "$1" 'queue [0-9]+: QP event: QP access error'
}
RECOVERS_EXTRA=qp_access_event TGT_EXPECT='work completion error' \
	scenario_recovers write-oob --fault write-oob -- 'RECV failed|starting error recovery'
scenario_recovers inv-wrong-rkey --fault inv-wrong-rkey -- 'RECV failed: remote invalid request|which this command does not own'
TGT_EXPECT='work completion error' scenario_recovers cqe-before-data --fault cqe-before-data -- 'RECV failed|starting error recovery'
# A command's MR grants the target only what its direction needs: it may
# RDMA WRITE a read's buffer and RDMA READ a write's, nothing else.  With
# both rights it could read a read buffer's stale contents before filling it,
# or overwrite the source of a write (silent corruption of the caller's data).
TGT_EXPECT='work completion error' TGT_FORBID='hostile RDMA .* succeeded' \
	scenario_recovers read-peek --fault read-peek -- 'RECV failed|starting error recovery'
TGT_EXPECT='work completion error' TGT_FORBID='hostile RDMA .* succeeded' TRIGGER=write \
	scenario_recovers write-poke --fault write-poke -- 'RECV failed|starting error recovery'

# Debug kernels (CONFIG_FAULT_INJECTION_DEBUG_FS) hold a race window open
# (drivers/rnvme/fault.c) so that the target's message lands in it every
# time; elsewhere these scenarios run without the hold.
FI=/sys/kernel/debug/rnvme
fi_has() { is_rnvme && [ -d "$FI/$1" ]; }
# fi_arm POINT MS: hold POINT once for MS ms; fi_disarm POINT
fi_arm() {
	echo 1 > "$FI/$1/times" && echo 100 > "$FI/$1/probability" &&
		echo "$2" > "$FI/$1/delay_ms" && echo 0 > "$FI/$1/verbose"
}
fi_disarm() { echo 0 > "$FI/$1/probability"; }
# fi_held NAME POINT: the window was held (else the scenario proved nothing)
fi_held() {
	local line
	line=$(fx_dmesg_since_mark | grep -m1 "fault injection: holding $2")
	if [ -n "$line" ]; then
		ok "$1: the race window was held open: ${line#*] }"
	else
		not_ok "$1: the race window ($2) was held open" "$(fx_dmesg_since_mark | tail -n 10)"
	fi
}
# Duplicates of one completion on a poll queue, reaped by two pollers: the
# copy that comes second never completes the command again (an atomic mark,
# and the request must still be the use the command id names).  The copies
# come 100 ms apart, so that each poller reaps its own; held (armed once
# connected, so the first poll-queue response is the first copy): the first
# poller waits 300 ms at the check while the other reaps the next copy.
if want cqe-dup-poll; then
	hold=
	fi_has rsp_check && hold="fi_arm rsp_check 300"
	BEFORE_TRIGGER=$hold CONNECT_EXTRA=nr_poll_queues=1 TRIGGER=poll scenario_recovers cqe-dup-poll \
		--fault cqe-dup --fault-qid $(($(nproc) + 1)) --dup-gap-ms 100 -- \
		'duplicate response|genctr mismatch|stale response'
	fi_has rsp_check && { fi_held cqe-dup-poll rsp_check; fi_disarm rsp_check; }
fi
# A stream of completions for no command at a poll queue: the first starts
# error recovery; the poller handles at most a CQ's worth per call, and the
# host's message about them is rate-limited, not one line per completion.
log_bounded() { # NAME
	local n
	# every line about them, the driver's and nvme-core's (nvme_find_rq()
	# logs each unknown tag unlimited: the driver must not call it)
	n=$(fx_dmesg_since_mark | grep -cE 'response for unknown command id|could not locate request|genctr mismatch')
	if [ "$n" -le 25 ]; then
		ok "$1: $n log line(s) for 150 junk completions (rate-limited)"
	else
		not_ok "$1: the junk completions' log lines are rate-limited" "$n lines for 150 junk completions"
	fi
}
if is_rnvme; then
	RECOVERS_EXTRA=log_bounded CONNECT_EXTRA=nr_poll_queues=1 TRIGGER=poll scenario_recovers junk-stream \
		--fault junk-stream --fault-qid $(($(nproc) + 1)) -- 'response for unknown command id'
fi
# The admin Connect answered after the host timed it out.  The timeout
# drains the queue before it completes the Connect, so the late answer
# finds no connection; held: the timed-out Connect waits 4 s between its
# completion and its end, and the answer comes 10 s after the Connect (the
# suite's admin timeout is 8 s).
if want connect-late; then
	if fi_has timeout_complete; then
		fi_arm timeout_complete 4000
		REFUSE_BOUND=40 scenario_refused connect-late --fault connect-late --late-ms 10000 -- \
			'command 0x[0-9a-f]+ \(opcode 0x7f.*timed out'
		fi_held connect-late timeout_complete
		fi_disarm timeout_complete
	else
		tap_skip "needs the race window held (rnvme on a kernel with CONFIG_FAULT_INJECTION_DEBUG_FS); fabrics-connect-silent covers the timeout" \
			"connect-late: a Connect answered after its timeout"
	fi
fi

# Not the target's fault: the host's CQ handler held up (a CPU busy with
# other softirqs, another user of the shared CQ) while the target answers at
# once.  The ACK watchdog (1.5 s) must not call that path silent: the CQ has
# completions its handler has not run for.  Held: up to three SEND
# completions' handlers wait 2.5 s each under verified I/O, each on another
# CPU than the watchdog's timer (io.c), so that the watchdog looks during
# the hold: its "not silent" message shows it did.
if want cq-stall; then
	if fi_has cq_stall && connected_scenario cq-stall; then
		# every 40th SEND completion, one CPU at a time (fault.c)
		echo 40 > "$FI/cq_stall/interval"
		fi_arm cq_stall 2500 && echo 3 > "$FI/cq_stall/times"
		fio_verify "$DEV" 120 cq-stall
		fi_disarm cq_stall
		echo 1 > "$FI/cq_stall/interval"
		fi_held cq-stall cq_stall
		holds=$(fx_dmesg_since_mark | grep -c 'holding cq_stall')
		looked=$(fx_dmesg_since_mark | grep -c 'completions waiting for their handler: not silent')
		silent=$(fx_dmesg_since_mark | grep -c 'path silent, recovering')
		rec=$(cat "/sys/class/nvme/$CTRL/rnvme/error_recoveries")
		if [ "$looked" -gt 0 ]; then
			ok "cq-stall: the watchdog looked during a hold ($looked time(s) in $holds hold(s))"
		else
			not_ok "cq-stall: the watchdog looked during a hold" "$holds hold(s), no 'not silent' message"
		fi
		if [ "$silent" = 0 ] && [ "$rec" = 0 ]; then
			ok "cq-stall: no healthy path called silent (error recoveries: $rec)"
		else
			not_ok "cq-stall: no healthy path called silent" "'path silent' $silent time(s), error recoveries $rec" \
				"$(fx_dmesg_since_mark | grep -E -m6 'path silent|RDMA CM|failed|error recovery')" \
				"target: $(tail -n 12 "$TGT_LOG")"
		fi
		fx_host_disconnect_all
		nothing_left cq-stall
		target_stop
	elif ! fi_has cq_stall; then
		tap_skip "needs the CQ handler held (rnvme on a kernel with CONFIG_FAULT_INJECTION_DEBUG_FS)" \
			"cq-stall: a held-up CQ handler is not a silent path"
	fi
fi

# Not the target's fault either: the provider takes only part of a batched
# post (Documentation/rnvme.rst, "Batched posting"), as Soft-RoCE does when
# its send queue is full, which no provider does on demand.  Held: three
# batches of fio's (libaio, 16 per io_submit) are posted half, the rest
# refused.  Every request ends exactly once with the right status: the
# batch's last fails back to blk-mq, the earlier ones end with a host path
# error and are retried; fio's verify finds every byte, and telemetry
# counts each posted command ended once.
fio_verify_batched() { # DEV SECS-BOUND NAME
	local out rc=0 mib=$((4 / ${TEST_IO_DIV:-1}))
	[ "$mib" -ge 1 ] || mib=1
	out=$(timeout "$2" fio --name=h --filename="$1" --ioengine=libaio --direct=1 --iodepth=32 \
		--iodepth_batch_submit=16 --iodepth_batch_complete_min=1 --rw=randwrite --bs=4k \
		--size="${mib}M" --verify=crc32c --verify_fatal=1 --verify_state_save=0 \
		--output-format=terse 2>&1) || rc=$?
	if [ "$rc" = 0 ]; then
		ok "$3: fio wrote and verified $mib MiB in batches of 16"
	else
		not_ok "$3: fio wrote and verified $mib MiB in batches of 16" "fio exit $rc" "$(printf '%s\n' "$out" | tail -n 8)"
	fi
}
if want batch-post; then
	if fi_has post_chain && connected_scenario batch-post; then
		fi_arm post_chain 0 && echo 3 > "$FI/post_chain/times"
		p0=$(cat "/sys/class/nvme/$CTRL/rnvme/send_posts") s0=$(cat "/sys/class/nvme/$CTRL/rnvme/sends")
		fio_verify_batched "$DEV" 180 batch-post
		fi_disarm post_chain
		p1=$(cat "/sys/class/nvme/$CTRL/rnvme/send_posts") s1=$(cat "/sys/class/nvme/$CTRL/rnvme/sends")
		cut=$(fx_dmesg_since_mark | grep -c 'fault injection: post_chain')
		ended=$(fx_dmesg_since_mark | grep -c 'batched request(s) not posted: ended with a host path error')
		echo "# batch-post: $((s1 - s0)) SENDs in $((p1 - p0)) posts; $cut batch(es) cut, $ended time(s) accepted requests ended"
		if [ "$cut" -gt 0 ] && [ "$ended" -gt 0 ]; then
			ok "batch-post: batches were cut ($cut) and their accepted requests ended ($ended): $(fx_dmesg_since_mark | grep -m1 'fault injection: post_chain' | sed 's/^.*] //')"
		else
			not_ok "batch-post: batches were cut and their accepted requests ended" "$cut cut, $ended ended" "$(fx_dmesg_since_mark | tail -n 10)"
		fi
		tap_result "batch-post: fewer posts than SENDs ($((p1 - p0)) for $((s1 - s0)))" \
			"$([ $((p1 - p0)) -lt $((s1 - s0)) ] && echo 0 || echo 1)"
		T="$(dirname "$0")/../lib/telemetry.py"
		eval "$(python3 "$T" "$CTRL" vars 2>/dev/null)"
		tap_result "batch-post: every posted write ended once: ${io_submitted_write:-?} submitted = ${io_completed_write:-?} answered + ${io_host_aborted:-?} ended by the host" \
			"$([ -n "${io_submitted_write:-}" ] && [ "$io_submitted_write" = $((io_completed_write + io_host_aborted)) ] && echo 0 || echo 1)"
		fx_host_disconnect_all
		nothing_left batch-post
		target_stop
	elif ! fi_has post_chain; then
		tap_skip "needs a batched post cut (rnvme on a kernel with CONFIG_FAULT_INJECTION_DEBUG_FS)" \
			"batch-post: a batch the provider takes only part of"
	fi
fi

# A batch left open (issue 54, item 1): an I/O queue's request queued as if
# more followed, and then neither a last request nor commit_rqs, which
# blk-mq does when a plug is flushed into a queue quiesced part way (point
# chain_open holds a request back the same way).  (a) On a live path the
# ACK watchdog's next check posts it: the read ends, no recovery (before:
# the watchdog called the path silent after 1.5 s, then the oops below).
# (b) With the watchdog off, the path's link goes down under it: error
# recovery must end the open batch with the association (its request
# never reached the wire: retried at once), and the batch must not be
# posted after it (before: the dispatch that error recovery lets through
# posted it on a QP that was gone, KASAN null-ptr-deref in rnvme_chain_post).
chain_open_read() { # start a 4 KiB read that the point holds in an open batch
	fi_arm chain_open 0
	timeout 60 dd if="$DEV" of=/dev/null bs=4k count=1 skip=7 iflag=direct 2>/dev/null &
	dd_pid=$!
}
if want chain-open; then
	if fi_has chain_open && connected_scenario chain-open; then
		r=/sys/class/nvme/$CTRL/rnvme
		wd=/sys/module/rnvme/parameters/ack_watchdog_ms
		wd0=$(cat "$wd")
		rec0=$(cat "$r/error_recoveries")
		t=$(now_ns)
		chain_open_read
		dd_rc=0
		wait_for 10 eval '! kill -0 "$dd_pid" 2>/dev/null' || dd_rc=timeout
		[ "$dd_rc" != 0 ] || wait "$dd_pid" || dd_rc=$?
		fi_disarm chain_open
		rec1=$(cat "$r/error_recoveries")
		tap_result "chain-open (a): the ACK watchdog ($wd0 ms) posted the open batch: the read ended in $(secs_since "$t") s (exit $dd_rc), error recoveries $rec0 -> $rec1, $((1 - $(cat "$FI/chain_open/times"))) injection(s)" \
			"$([ "$dd_rc" = 0 ] && [ "$rec1" = "$rec0" ] && echo 0 || echo 1)" \
			"$(fx_dmesg_since_mark | grep -E 'nvme|rnvme' | tail -n 8)"

		echo 0 > "$wd"
		chain_open_read
		sleep 2
		if kill -0 "$dd_pid" 2>/dev/null; then
			ok "chain-open (b): with the watchdog off, a read waits in a batch left open (2 s)"
		else
			not_ok "chain-open (b): with the watchdog off, a read waits in a batch left open" "dd ended within 2 s"
		fi
		fi_disarm chain_open
		t=$(now_ns)
		ip link set veth0 down
		wait_for 10 eval '! ctrl_live "$CTRL"' || echo "# $CTRL still live 10 s after its link went down"
		read -r mac1 < /sys/class/net/veth1/address
		printf '%s\n' "link set veth0 up" \
			"route replace $TGT_IP4 dev veth0 src $HOST_IP4 table 100" \
			"neigh replace $TGT_IP4 lladdr $mac1 dev veth0 nud permanent" | ip -4 -batch -
		dd_rc=0
		wait "$dd_pid" || dd_rc=$?
		tap_result "chain-open (b): the read ended after the link flap (exit $dd_rc, $(secs_since "$t") s after the link went down)" "$dd_rc"
		wait_for 40 ctrl_live "$CTRL" || not_ok "chain-open (b): $CTRL live again after the link flap" "$(cat "/sys/class/nvme/$CTRL/state")"
		ended=$(fx_dmesg_since_mark | grep -c 'batched request(s) not posted: ended with a host path error')
		tap_result "chain-open (b): error recovery ended the open batch ($ended time(s))" "$([ "$ended" -ge 1 ] && echo 0 || echo 1)" \
			"$(fx_dmesg_since_mark | grep -E 'nvme|rnvme' | tail -n 8)"
		echo "$wd0" > "$wd"
		fio_verify "$DEV" 120 chain-open 4
		bad=$(fx_dmesg_since_mark | grep -E 'response for unknown command|(duplicate|stale) response|genctr mismatch|posting SEND failed|Call Trace' | head -n 5)
		tap_result "chain-open: no association posted a request of another (no stray response, no failed post)" \
			"$([ -z "$bad" ] && echo 0 || echo 1)" "$bad"
		fx_host_disconnect_all
		nothing_left chain-open
		target_stop
	elif ! fi_has chain_open; then
		tap_skip "needs a batch held open (rnvme on a kernel with CONFIG_FAULT_INJECTION_DEBUG_FS)" \
			"chain-open: a batch left open when its queue stops"
	fi
fi

# ---------------------------------------------------------------- faults that need no recovery
# A completion before the host's Fabrics Connect, on the admin queue and on
# I/O queue 1: the host posts its receive buffers only when it starts the
# queue (its tag set exists then), so the message waits in the target's RNR
# retries and is refused as a response to no command; the association goes
# on.  On I/O queue 1 it arrives while the other I/O queues are still being
# connected, before the I/O tag set exists; on the admin queue its id,
# beyond the tag set, is an asynchronous event's, and none can be
# outstanding yet.
admin_refused() { # NAME
	is_rnvme || return 0
	dmesg_has "$1" 'queue 0: asynchronous event completion .* before the queue is live'
}
WORKS_EXTRA=admin_refused scenario_works rsp-before-connect --fault rsp-before-connect --fault-count 2 -- \
	'queue 1: response for unknown command id'
scenario_works accept-short-pd --fault accept-short-pd -- "target's accept: no NVMe/RDMA accept data|controller receive queue size 0"
scenario_works accept-no-pd --fault accept-no-pd -- "target's accept: (no NVMe/RDMA accept data|controller receive queue size 0)"
scenario_works accept-bad-pd --fault accept-bad-pd -- "target's accept: unknown accept record format"
scenario_works cqe-bad-status --fault cqe-bad-status --fault-count 1 -- ''
scenario_works sqhd-garbage --fault sqhd-garbage -- ''
queues_capped() { # NAME: the huge grant did not inflate the queue count
	local qc
	qc=$(ctrl_attr "$CTRL" queue_count)
	if [ "${qc:-0}" -ge 2 ] && [ "$qc" -le $(($(nproc) * 3 + 1)) ]; then
		ok "$1: queue_count $qc (the host asked for at most $(($(nproc) * 3)) I/O queues)"
	else
		not_ok "$1: queue_count within what the host asked for" "queue_count $qc"
	fi
}
WORKS_EXTRA=queues_capped scenario_works grant-huge --fault grant-huge -- ''
aen_responsive() { # NAME: the admin queue still answers after the storm
	check "$1: the admin queue answers (nvme id-ctrl) after $(fired) AENs" timeout 30 nvme id-ctrl "/dev/$CTRL"
}
WORKS_EXTRA=aen_responsive scenario_works aen-storm --fault aen-storm --fault-count 200 -- ''

# ---------------------------------------------------------------- namespaces with metadata
# Neither rnvme nor nvme_rdma on a device without signature MRs (rxe) offers
# metadata to the block layer.  PI-only metadata still works: nvme-core sets
# PRACT on every read and write (the target refuses any command without it),
# and the controller inserts and strips the PI.  Other metadata: capacity 0.
if want meta-pi1; then
	fx_dmesg_mark "15-hostile:meta-pi1"
	target_start meta-pi1 --ms 8 --pi 1 || not_ok "meta-pi1: target start"
	if out=$(hconnect) && set_ctrl "$out" && dev=$(wait_ns_dev "$CTRL" 30); then
		size=$(blockdev --getsize64 "$dev")
		if [ "${size:-0}" -gt 0 ]; then ok "meta-pi1: 8 bytes of T10-PI type 1 per block: $dev has $size bytes"; else not_ok "meta-pi1: a PI-only namespace is usable" "size ${size:-?}"; fi
		fio_verify "$dev" 120 meta-pi1
		if grep -q refused "$TGT_LOG"; then not_ok "meta-pi1: every command carried PRACT" "$(grep -m3 refused "$TGT_LOG")"; else ok "meta-pi1: every command carried PRACT (the target refused none)"; fi
	else
		not_ok "meta-pi1: connect" "$out"
	fi
	fx_host_disconnect_all
	nothing_left meta-pi1
	target_stop
fi
if want meta-ms16; then
	fx_dmesg_mark "15-hostile:meta-ms16"
	target_start meta-ms16 --ms 16 || not_ok "meta-ms16: target start"
	if out=$(hconnect) && set_ctrl "$out" && wait_for 30 ctrl_ns_dev "$CTRL"; then
		ns=$(basename "$(ctrl_ns_dev "$CTRL")")
		wait_for 10 test -e "/sys/block/$ns/size"
		size=$(cat "/sys/block/$ns/size" 2>/dev/null)
		if [ "${size:-x}" = 0 ]; then ok "meta-ms16: 16 bytes of other metadata per block: $ns has capacity 0 (nvme-core's rule)"; else not_ok "meta-ms16: capacity 0" "size ${size:-?} sectors"; fi
	else
		not_ok "meta-ms16: connect" "$out"
	fi
	fx_host_disconnect_all
	nothing_left meta-ms16
	target_stop
fi

suite_end_hostile() {
	target_stop
	echo "$admin_timeout0" > "$at"
	# suite_end's check covers the whole suite again, from its first mark
	FX_DMESG_MARK=$SUITE_MARK
}
suite_end_hostile
suite_end
