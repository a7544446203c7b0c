#!/bin/bash
# Rig, opt-in (make soak, or SUITES=soak tests/run-all.sh --rig with
# RNVME_SUITE_TIMEOUT; make check does not run it): a long soak of native
# multipath over both wires. fio writes and verifies through the multipath
# disk, one job after the other, for TEST_SOAK_S seconds (default 1800), while
# faults land one at a time, 20-40 s apart (start to start), the kind in a
# shuffled rotation and the path at random (TEST_SOAK_SEED repeats a schedule;
# the seed is printed):
#   port-flap       the target unlinks the subsystem from path A's or B's port
#                   (nvmet drops that path's controller) for 3-8 s
#   link-flap       QEMU takes the target's NIC of path A or B down (set_link
#                   nica|nicb off) for 3-8 s: silence on that wire
#   ana-change      the target makes path A's or B's ANA group inaccessible for
#                   3-8 s (and at least until the host has seen it), then
#                   optimized again
#   target-ka-loss  QEMU pauses the HOST VM for 2*kato+2 = 12 s: the target's
#                   keep-alive expires (nvmet's traffic-based timer can take up
#                   to 2*kato to fire) and it fails both controllers
#   host-ka-loss    QEMU stops the TARGET VM for 2*kato..2*kato+2 = 10-12 s: the
#                   host must notice the silence (keep-alive: period kato/2 plus
#                   a kato timeout; or rnvme's RDMA ACK watchdog, faster)
# A fault is removed after its hold time. Then the host must have noticed it
# where it has to (port-flap: that path's controller; target-ka-loss and
# host-ka-loss: both; within 30 s of the removal), both controllers must be
# live again (and for ana-change the path optimized) within 90 s of the
# removal. A miss is a failure of that fault's kind, not an endless wait; a
# controller not back, or a fault that could not be removed, also ends the
# injection (later faults would land on a broken rig). The next fault comes
# no sooner than 5 s after both are live again.
#
# Not injectable in this rig, so not here (not faked):
#  - a queue-grant change on a live association: nvmet applies attr_qid_max
#    and the queue size only at a connect, and NVMe has no way to change the
#    queue count of a live association (suites 01 and 13 change the grant
#    across a reconnect);
#  - a controller-fatal status (CSTS.CFS) read by the host: a plain nvmet
#    target sets CFS only in nvmet_ctrl_fatal_error, which tears the queues
#    down at once, so the host never reads it over that association;
#    target-ka-loss (and port-flap) are that teardown.
#
# Connect options: reconnect_delay=1; keep_alive_tmo=5 (the fault holds above
# follow from it); ctrl_loss_tmo=120, well above the longest fault (12 s held
# + 90 s to come back). iopolicy round-robin: both paths carry I/O, so a fault
# on either one hits I/O in flight.
#
# Measured: per fault, back-live (seconds from removing the fault until both
# controllers are live) and the longest stall: the longest time the two path
# disks completed no I/O while a fio job was running, between this fault's
# start and the next one's (a sampler reads their completed-I/O counters
# every 0.2 s: resolution about 0.2 s; gaps between fio jobs do not count;
# time the host VM spent paused does not count either, its clock stands
# still). Results: "# soak:" lines (one per fault kind) and "# soak summary:";
# raw data (samples, faults, fio jobs, JSON of failing jobs) in
# $RESULTS/soak (on the build machine OUT/soak).
#   TEST_SOAK_S        seconds of fault injection (default 1800)
#   TEST_SOAK_SEED     seed of the fault schedule (default: from the clock)
#   TEST_SOAK_FAULTS   fault kinds to use (default all five above)
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
# shellcheck source-path=SCRIPTDIR source=../../lib/rig.sh
. "$(dirname "$0")/../lib/rig.sh"

SOAK_S=${TEST_SOAK_S:-1800}
SEED=${TEST_SOAK_SEED:-}
ALL_KINDS="port-flap link-flap ana-change target-ka-loss host-ka-loss"
KINDS=${TEST_SOAK_FAULTS:-$ALL_KINDS}
KATO=5
LOSS_TMO=120
GAP_MIN=20 GAP_MAX=40          # seconds from one fault's start to the next one's
HOLD_MIN=3 HOLD_MAX=8          # port-flap, link-flap, ana-change
PAUSE_S=$((2 * KATO + 2))      # target-ka-loss
STOP_MIN=$((2 * KATO)) STOP_MAX=$((2 * KATO + 2)) # host-ka-loss
SETTLE_S=5                     # both live at least this long before the next fault
NOTICE_S=30                    # the host notices a fault it must notice (after removal)
BACK_S=90                      # both controllers live again (after removal)
ANA_SEEN_S=20                  # the host sees the ANA change
FIO_LAST_S=300                 # the last fio job ends after the injection stops
FIO_SIZE=$(fx_mib 64)
W=/run/rnvme-soak
OUT=${RESULTS:-/results}/soak

suite_begin
[[ $SOAK_S =~ ^[1-9][0-9]*$ ]] || bail "TEST_SOAK_S='$SOAK_S': want a number of seconds"
[ -n "$SEED" ] || SEED=$((${EPOCHREALTIME/[.,]/} % 1000000))
[[ $SEED =~ ^[0-9]+$ ]] || bail "TEST_SOAK_SEED='$SEED': want a number"
read -r -a KIND_LIST <<< "$KINDS"
[ "${#KIND_LIST[@]}" -gt 0 ] || bail "TEST_SOAK_FAULTS is empty"
for k in "${KIND_LIST[@]}"; do
	[[ " $ALL_KINDS " == *" $k "* ]] || bail "TEST_SOAK_FAULTS: unknown fault kind '$k' (known: $ALL_KINDS)"
done
# The runner kills a suite after RNVME_SUITE_TIMEOUT (default 900 s): the soak,
# its setup, the last fault's recovery and the last fio job must fit.
limit=${RNVME_SUITE_TIMEOUT:-900}
[ $((SOAK_S + 500)) -le "$limit" ] ||
	bail "TEST_SOAK_S=$SOAK_S needs RNVME_SUITE_TIMEOUT >= $((SOAK_S + 500)) (it is $limit); run it with make soak"
echo "# soak: seed $SEED (repeat this fault schedule with TEST_SOAK_SEED=$SEED), $SOAK_S s, faults: ${KIND_LIST[*]}"
RANDOM=$SEED

rig_setup
[ "$(cat /sys/module/nvme_core/parameters/multipath 2>/dev/null)" = Y ] ||
	tap_skip_all "nvme_core native multipath is off"

rig_connect_both "reconnect_delay=1,ctrl_loss_tmo=$LOSS_TMO,keep_alive_tmo=$KATO" || bail "connect both paths"
head=$(basename "$HEAD_DEV")
PNS_A=$(path_ns "$CTRL_A") || bail "no path device on $CTRL_A"
PNS_B=$(path_ns "$CTRL_B") || bail "no path device on $CTRL_B"
ok "two paths: $CTRL_A (A, $PNS_A) and $CTRL_B (B, $PNS_B) behind $HEAD_DEV; kato $(ctrl_attr "$CTRL_A" kato)/$(ctrl_attr "$CTRL_B" kato); ANA $(path_ana "$CTRL_A")/$(path_ana "$CTRL_B")"
for f in /sys/class/nvme-subsystem/nvme-subsys*/iopolicy; do
	[ -e "$(dirname "$f")/$CTRL_A" ] && echo round-robin > "$f" && echo "# $(dirname "$f"): iopolicy $(cat "$f")"
done
declare -A CTRL=([A]=$CTRL_A [B]=$CTRL_B) PORT=([A]=1 [B]=2) NIC=([A]=nica [B]=nicb)

rm -rf "$W"
mkdir -p "$W"
: > "$W/events"
: > "$W/jobs"
SAMPLER_PID='' LOOP_PID=''
# shellcheck disable=SC2317 # invoked by trap
soak_cleanup() {
	[ -z "$LOOP_PID" ] || kill "$LOOP_PID" 2>/dev/null
	[ -z "$LOOP_PID" ] || [ ! -s "$W/fio.pid" ] || kill "$(cat "$W/fio.pid")" 2>/dev/null
	[ -z "$SAMPLER_PID" ] || kill "$SAMPLER_PID" 2>/dev/null
	return 0
}
trap soak_cleanup EXIT

# ------------------------------------------------------------------ helpers
# Fork-free: every exec is slow under TCG.
now_us() { NOW=${EPOCHREALTIME/[.,]/}; }
# fmt_us VAR MICROSECONDS: VAR = seconds with 2 decimals
fmt_us() { printf -v "$1" '%d.%02d' $(($2 / 1000000)) $(($2 % 1000000 / 10000)); }
# st CTRL: REPLY = its state ("gone" when it has none)
st() { read -r REPLY 2>/dev/null < "/sys/class/nvme/$1/state" || REPLY=gone; }
# recov P: REPLY = error recoveries of path P's controller (rnvme; empty otherwise)
recov() { read -r REPLY 2>/dev/null < "/sys/class/nvme/${CTRL[$1]}/rnvme/error_recoveries" || REPLY=''; }
# rnd LO HI: RND = uniform integer in [LO, HI] from the seeded RANDOM. Only
# in this shell (never inside $(...)), so the schedule follows the seed.
rnd() { RND=$(($1 + ((RANDOM << 15) | RANDOM) % ($2 - $1 + 1))); }
# next_kind: KIND = the next fault kind, in a freshly shuffled round of the
# kinds whenever the last round is used up
ROUND=()
next_kind() {
	local i t
	if [ "${#ROUND[@]}" -eq 0 ]; then
		ROUND=("${KIND_LIST[@]}")
		for ((i = ${#ROUND[@]} - 1; i > 0; i--)); do
			rnd 0 "$i"
			t=${ROUND[i]} ROUND[i]=${ROUND[RND]} ROUND[RND]=$t
		done
	fi
	KIND=${ROUND[0]}
	ROUND=("${ROUND[@]:1}")
}

# The sampler: "timestamp_ns ios" every 0.2 s, ios = reads + writes completed
# on both path disks (the multipath head itself keeps no I/O statistics on
# 6.1). Builtins only; the 0.2 s wait is a read timeout on a FIFO nobody
# writes, not a sleep process.
sampler() { # OUTFILE PATH-DISK-A PATH-DISK-B
	local fa=/sys/block/$2/stat fb=/sys/block/$3/stat r1 w1 r2 w2 tick o
	exec {o}>> "$1"
	mkfifo "$W/tick" && exec {tick}<> "$W/tick" || tick=''
	while [ ! -e "$W/stop-sampler" ]; do
		r1=0 w1=0 r2=0 w2=0
		read -r r1 _ _ _ w1 _ 2>/dev/null < "$fa"
		read -r r2 _ _ _ w2 _ 2>/dev/null < "$fb"
		printf '%s000 %d\n' "${EPOCHREALTIME/[.,]/}" $((r1 + w1 + r2 + w2)) >&"$o"
		if [ -n "$tick" ]; then read -r -t 0.2 -u "$tick" _; else sleep 0.2; fi
	done
	return 0
}

# fio_job_summary JSON: "ERROR WRITTEN-KiB VERIFIED-KiB MAX-COMPLETION-S", or parse-error
fio_job_summary() {
	python3 - "$1" <<'EOF' 2>/dev/null || echo parse-error
import json, sys
text = open(sys.argv[1]).read()
start = 0 if text.startswith("{") else text.find("\n{") + 1
job = json.JSONDecoder().raw_decode(text[start:])[0]["jobs"][0]
mx = max((job[d].get("clat_ns") or {}).get("max", 0) for d in ("read", "write")) / 1e9
print(job["error"], job["write"]["io_kbytes"], job["read"]["io_kbytes"], f"{mx:.2f}")
EOF
}
# The I/O: back-to-back write+verify jobs on the multipath disk until
# $W/stop-fio appears. "NS S" / "NS E" in $W/events mark each job's start and
# end; $W/jobs gets "N START-NS END-NS FIO-RC SUMMARY" per job.
fio_loop() {
	local k=0 rc t0 t1
	while [ ! -e "$W/stop-fio" ]; do
		k=$((k + 1))
		t0=${EPOCHREALTIME/[.,]/}000
		echo "$t0 S" >> "$W/events"
		fio_verify_start "$HEAD_DEV" "$FIO_SIZE" "$W/fio-$k.json"
		echo "$FIO_PID" > "$W/fio.pid"
		rc=0
		wait "$FIO_PID" || rc=$?
		t1=${EPOCHREALTIME/[.,]/}000
		echo "$t1 E" >> "$W/events"
		echo "$k $t0 $t1 $rc $(fio_job_summary "$W/fio-$k.json")" >> "$W/jobs"
		# a disk that fails every job at once must not spin
		[ "$rc" = 0 ] || sleep 5
	done
}

# Per-fault observation. LEFT[P]: microseconds from the fault's start until
# path P's controller was first seen out of 'live' (empty: not seen).
declare -A LEFT ER0
observe() {
	local p
	now_us
	for p in A B; do
		st "${CTRL[$p]}"
		[ "$REPLY" = live ] || [ -n "${LEFT[$p]}" ] || LEFT[$p]=$((NOW - F_T0))
	done
}
# the host noticed the fault on path P: seen out of live, or an error recovery
noticed() {
	[ -n "${LEFT[$1]}" ] && return 0
	recov "$1"
	[ -n "$REPLY" ] && [ -n "${ER0[$1]}" ] && [ "$REPLY" -gt "${ER0[$1]}" ]
}
# every path this fault must disrupt was disrupted
all_noticed() {
	local p
	observe
	for p in $EXPECT; do noticed "$p" || return 1; done
}
# both controllers live (and, after an ANA change, that path optimized)
both_live() {
	st "$CTRL_A"
	[ "$REPLY" = live ] || return 1
	st "$CTRL_B"
	[ "$REPLY" = live ] || return 1
}
back_ok() {
	both_live || return 1
	[ "$F_KIND" != ana-change ] || path_ana_is "${CTRL[$F_PATH]}" optimized
}
states() { echo "A $(ctrl_state "$CTRL_A") (ANA $(path_ana "$CTRL_A")), B $(ctrl_state "$CTRL_B") (ANA $(path_ana "$CTRL_B"))"; }
# fail REASON: a failure of the current fault
fail() { F_WHY="${F_WHY:+$F_WHY; }$1"; F_NFAIL=$((F_NFAIL + 1)); }

# Fault records, by number: kind, path, start (us), hold (s), removal (us),
# back-live (us after removal, or -), failures, reasons, left-live note.
declare -a R_KIND R_PATH R_T0 R_HOLD R_REM R_BACK R_NFAIL R_WHY R_NOTE
ABORT=''

# fault_run N KIND PATH HOLD-S: inject, hold, remove, wait for the host to
# notice what it must and for both controllers to be live again.
fault_run() {
	local n=$1 p=$3 port=${PORT[$3]} nic=${NIC[$3]} c=${CTRL[$3]} rc=0 end q s1 s2
	F_KIND=$2 F_PATH=$3 F_HOLD=$4 F_WHY='' F_NFAIL=0 EXPECT=''
	LEFT=([A]='' [B]='')
	recov A; ER0[A]=$REPLY
	recov B; ER0[B]=$REPLY
	now_us; F_T0=$NOW
	case $F_KIND in
	port-flap) EXPECT=$p; rig_t rt_port_off "$port" ;;
	link-flap) rig_q target set_link "$nic" off ;;
	ana-change) rig_t rt_ana "$port" inaccessible ;;
	target-ka-loss) EXPECT="A B" F_HOLD=$PAUSE_S; rig_q host pause "$PAUSE_S" ;; # returns after the pause
	host-ka-loss) EXPECT="A B"; rig_q target stop ;;
	esac > "$W/rig.out" 2>&1 || rc=$?
	[ "$rc" = 0 ] || fail "injection failed (status $rc: $(tail -n 2 "$W/rig.out" | tr '\n' ' '))"
	if [ "$F_KIND" = ana-change ] && [ "$rc" = 0 ]; then
		if wait_for "$ANA_SEEN_S" path_ana_is "$c" inaccessible; then
			R_NOTE[n]="ANA inaccessible seen after $WAIT_ELAPSED s; "
		else
			fail "host did not see path $p's ANA state inaccessible within $ANA_SEEN_S s (ana_state '$(path_ana "$c")')"
		fi
	fi
	if [ "$F_KIND" != target-ka-loss ]; then
		end=$((F_T0 + F_HOLD * 1000000))
		observe
		while [ "$NOW" -lt "$end" ]; do
			sleep 0.2
			observe
		done
	fi
	rc=0
	case $F_KIND in
	port-flap) rig_t "[ -e \$NVMET_CFS/ports/$port/subsystems/\$TEST_NQN ] || rt_port_on $port" ;;
	link-flap) rig_q target set_link "$nic" on ;;
	ana-change) rig_t rt_ana "$port" optimized ;;
	host-ka-loss) rig_q target cont ;;
	esac > "$W/rig.out" 2>&1 || rc=$?
	now_us; F_REM=$NOW
	if [ "$rc" != 0 ]; then
		fail "removing the fault failed (status $rc: $(tail -n 2 "$W/rig.out" | tr '\n' ' '))"
		ABORT="fault $n ($F_KIND) could not be removed"
	fi

	# The host notices what it must (within NOTICE_S), then both live (within BACK_S).
	F_BACK=- q=0
	while :; do
		now_us
		if [ "$q" = 0 ]; then
			if all_noticed; then
				q=1
			elif [ "$NOW" -ge $((F_REM + NOTICE_S * 1000000)) ]; then
				q=2
				for s1 in $EXPECT; do
					noticed "$s1" || fail "the host did not notice it on path $s1 within $NOTICE_S s of the removal (${CTRL[$s1]} never seen out of live, error_recoveries ${ER0[$s1]:-?} -> ${REPLY:-?})"
				done
			fi
		fi
		if [ "$q" != 0 ] && back_ok; then
			now_us
			F_BACK=$((NOW - F_REM))
			break
		fi
		now_us
		if [ "$NOW" -ge $((F_REM + BACK_S * 1000000)) ]; then
			fail "not back within $BACK_S s of the removal: $(states)"
			ABORT=${ABORT:-"after fault $n ($F_KIND) the controllers did not come back"}
			break
		fi
		observe
		sleep 0.2
	done

	s1=- s2=-
	[ -z "${LEFT[A]}" ] || fmt_us s1 "${LEFT[A]}"
	[ -z "${LEFT[B]}" ] || fmt_us s2 "${LEFT[B]}"
	[ "$EXPECT" != "A B" ] || p=both
	R_KIND[n]=$F_KIND R_PATH[n]=$p R_T0[n]=$F_T0 R_HOLD[n]=$F_HOLD R_REM[n]=$F_REM
	R_BACK[n]=$F_BACK R_NFAIL[n]=$F_NFAIL R_WHY[n]=$F_WHY
	R_NOTE[n]="${R_NOTE[n]:-}left live: A ${s1}, B ${s2} s after injection"
	fmt_us s1 $((F_T0 - T0))
	s2="not back live within $BACK_S s of the removal"
	[ "$F_BACK" = - ] || { fmt_us s2 "$F_BACK"; s2="back live $s2 s after the removal"; }
	echo "# soak fault $n at $s1 s: $F_KIND path $p for $F_HOLD s; ${R_NOTE[n]}; $s2${F_WHY:+; FAILED: $F_WHY}"
}

# --------------------------------------------------------------------- soak
fio_loop &
LOOP_PID=$!
sampler "$W/samples" "$PNS_A" "$PNS_B" &
SAMPLER_PID=$!
now_us; T0=$NOW
T_END=$((T0 + SOAK_S * 1000000))
rnd $((GAP_MIN * 10)) $((GAP_MAX * 10))
NEXT=$((T0 + RND * 100000))
n=0 drops=0
while :; do
	# Between faults: wait for the next start; note a controller that leaves
	# live without a fault in place (a late effect of the last one, or not).
	out_a='' out_b=''
	now_us
	while [ "$NOW" -lt "$NEXT" ] && [ "$NOW" -lt "$T_END" ]; do
		st "$CTRL_A"
		if [ "$REPLY" != live ] && [ -z "$out_a" ]; then
			out_a=1 drops=$((drops + 1))
			fmt_us s $((NOW - T0))
			echo "# soak: between faults, at $s s: $CTRL_A (A) is $REPLY (last fault: ${R_KIND[n]:-none})"
		fi
		st "$CTRL_B"
		if [ "$REPLY" != live ] && [ -z "$out_b" ]; then
			out_b=1 drops=$((drops + 1))
			fmt_us s $((NOW - T0))
			echo "# soak: between faults, at $s s: $CTRL_B (B) is $REPLY (last fault: ${R_KIND[n]:-none})"
		fi
		sleep 0.5
		now_us
	done
	[ "$NOW" -lt "$T_END" ] || break
	kill -0 "$LOOP_PID" 2>/dev/null || { ABORT="the fio loop died"; break; }
	# Never inject on a rig that is not whole: both live first (bounded).
	if ! both_live; then
		if wait_for "$BACK_S" both_live; then
			echo "# soak: both controllers live again $WAIT_ELAPSED s later; fault $((n + 1)) goes ahead"
		else
			ABORT="controllers not live before fault $((n + 1)): $(states)"
			if [ "$n" -gt 0 ]; then
				R_NFAIL[n]=$((R_NFAIL[n] + 1))
				R_WHY[n]="${R_WHY[n]:+${R_WHY[n]}; }not live again within $BACK_S s before the next fault: $(states)"
			fi
			break
		fi
	fi
	# The draws, always all of them, so the schedule depends on the seed only.
	next_kind
	rnd 0 1; path=A; [ "$RND" = 0 ] || path=B
	rnd "$HOLD_MIN" "$HOLD_MAX"; hold=$RND
	rnd "$STOP_MIN" "$STOP_MAX"; stop=$RND
	rnd $((GAP_MIN * 10)) $((GAP_MAX * 10)); gap=$RND
	[ "$KIND" = host-ka-loss ] && hold=$stop
	n=$((n + 1))
	fault_run "$n" "$KIND" "$path" "$hold"
	[ -z "$ABORT" ] || break
	now_us
	NEXT=$((R_T0[n] + gap * 100000))
	[ "$NEXT" -ge $((NOW + SETTLE_S * 1000000)) ] || NEXT=$((NOW + SETTLE_S * 1000000))
done
now_us; T_INJ=$NOW
fmt_us s $((T_INJ - T0))
echo "# soak: fault injection over after $s s: $n faults${ABORT:+; STOPPED EARLY: $ABORT}"

# wire_diag A|B: whose side of a wire is deaf.  The NIC counters of both ends
# before and after the host pings the target over it (ARP included): which
# end stops sending or receiving; then a fresh NVMe-oF connect from this host
# under another host NQN: if that fails too, the target's side answers no one;
# then the target resets its NIC of that wire (link down and up, as a real
# NIC's driver does after a watchdog timeout) and the path gets 60 s to return
# by itself.
nic_counts() { # DEV -> "rx_packets tx_packets"
	echo "$(cat "/sys/class/net/$1/statistics/rx_packets") $(cat "/sys/class/net/$1/statistics/tx_packets")"
}
wire_diag() {
	local w=$1 mac=$RIG_MAC_A tip=$TGT_IP4 hip=$HOST_IP4 dev hid out h0 h1 t0 t1 c
	[ "$w" = B ] && mac=$RIG_MAC_B tip=$TGT_IP4_B hip=$HOST_IP4_B
	c=$CTRL_A
	[ "$w" = B ] && c=$CTRL_B
	dev=$(rig_ifname "$mac")
	h0=$(nic_counts "$dev")
	t0=$(rig_t "d=\$(rig_ifname $mac); echo \$(cat /sys/class/net/\$d/statistics/rx_packets) \$(cat /sys/class/net/\$d/statistics/tx_packets)")
	echo "# wire $w: host $dev $hip -> target $tip: ping $(ping -c 3 -W 1 -I "$dev" "$tip" 2>&1 | grep -o '[0-9]* received' || echo failed)"
	h1=$(nic_counts "$dev")
	t1=$(rig_t "d=\$(rig_ifname $mac); echo \$(cat /sys/class/net/\$d/statistics/rx_packets) \$(cat /sys/class/net/\$d/statistics/tx_packets)")
	echo "# wire $w: during the ping: host sent $((${h1#* } - ${h0#* })) received $((${h1%% *} - ${h0%% *})); target received $((${t1%% *} - ${t0%% *})) sent $((${t1#* } - ${t0#* })) (packets)"
	echo "# wire $w: host neighbour: $(ip neigh show "$tip" dev "$dev" 2>&1)"
	rig_t "rdma link show" 2>&1 | sed "s/^/# wire $w target: /"
	hid=5ca1e000-0000-4000-8000-00000000d1a9
	out=$(nvmf_write "transport=$TRANSPORT,traddr=$tip,trsvcid=$TGT_PORT,nqn=$TEST_NQN,host_traddr=$hip,hostnqn=nqn.2014-08.org.nvmexpress:uuid:$hid,hostid=$hid,nr_io_queues=1" 90 2>&1)
	echo "# wire $w: a fresh connect under another host NQN: ${out:-no reply}"
	[[ $out =~ instance=([0-9]+) ]] && echo 1 > "/sys/class/nvme/nvme${BASH_REMATCH[1]}/delete_controller"
	rig_t "rt_link $w down; sleep 1; rt_link $w up" > /dev/null 2>&1
	if wait_for 60 ctrl_is "$c" live; then
		echo "# wire $w: after the target reset its NIC (link down/up), $c was live again $WAIT_ELAPSED s later, by itself"
		return 0
	fi
	echo "# wire $w: after the target reset its NIC (link down/up), $c still $(ctrl_state "$c") after 60 s; ping $(ping -c 2 -W 1 -I "$dev" "$tip" 2>&1 | grep -o '[0-9]* received' || echo failed)"
	# then QEMU's link of that wire's NIC on both ends, off and on
	local nic=nica
	[ "$w" = B ] && nic=nicb
	rig_q target set_link "$nic" off > /dev/null; rig_q host set_link "$nic" off > /dev/null
	sleep 2
	rig_q target set_link "$nic" on > /dev/null; rig_q host set_link "$nic" on > /dev/null
	h0=$(nic_counts "$dev")
	echo "# wire $w: after QEMU set_link off/on on both ends: ping $(ping -c 3 -W 1 -I "$dev" "$tip" 2>&1 | grep -o '[0-9]* received' || echo failed)"
	h1=$(nic_counts "$dev")
	echo "# wire $w: host sent $((${h1#* } - ${h0#* })) received $((${h1%% *} - ${h0%% *})) during that ping"
}
if [ -n "$ABORT" ]; then
	st "$CTRL_A"; [ "$REPLY" = live ] || wire_diag A
	st "$CTRL_B"; [ "$REPLY" = live ] || wire_diag B
fi

# The last fio job ends by itself (bounded), then the sampler stops.
touch "$W/stop-fio"
# shellcheck disable=SC2317 # called through wait_for
loop_done() { ! kill -0 "$LOOP_PID" 2>/dev/null; }
if wait_for "$FIO_LAST_S" loop_done; then
	echo "# soak: the last fio job ended $WAIT_ELAPSED s after the injection stopped"
else
	not_ok "the last fio job ended within $FIO_LAST_S s of the injection stopping" "$(states)" \
		"$(tail -n 5 "$W"/fio-*.json.stderr 2>/dev/null | tail -n 10)"
	[ ! -s "$W/fio.pid" ] || kill "$(cat "$W/fio.pid")" 2>/dev/null
	wait_for 30 loop_done || kill "$LOOP_PID" 2>/dev/null
fi
wait "$LOOP_PID" 2>/dev/null
LOOP_PID=''
touch "$W/stop-sampler"
# shellcheck disable=SC2317 # called through wait_for
sampler_done() { ! kill -0 "$SAMPLER_PID" 2>/dev/null; }
wait_for 10 sampler_done || kill "$SAMPLER_PID" 2>/dev/null
wait "$SAMPLER_PID" 2>/dev/null
SAMPLER_PID=''
now_us; T_STOP=$NOW
echo "${T_STOP}000 X" >> "$W/events"

# ------------------------------------------------------------------ results
# Faults: "N KIND PATH START-NS REMOVAL-NS BACK-NS|- HOLD-S NFAIL"
: > "$W/faults"
: > "$W/fails"
for ((i = 1; i <= n; i++)); do
	b=${R_BACK[i]}
	[ "$b" = - ] || b=${b}000
	echo "$i ${R_KIND[i]} ${R_PATH[i]} ${R_T0[i]}000 ${R_REM[i]}000 $b ${R_HOLD[i]} ${R_NFAIL[i]}" >> "$W/faults"
	[ -z "${R_WHY[i]}" ] || echo "$i ${R_KIND[i]} ${R_WHY[i]}" >> "$W/fails"
done

# The sampler itself (a starved sampler would make stalls look longer).
awk -v t0="${T0}000" 'NR == 1 { f = $1 } NR > 1 && ($1 - p) / 1e9 > g { g = ($1 - p) / 1e9 }
	{ p = $1; n++ }
	END { if (n > 1) printf "# soak: sampler: %d samples over %.1f s, mean period %.3f s, longest between two samples %.2f s\n", n, (p - f) / 1e9, (p - f) / 1e9 / (n - 1), g
		else print "# soak: sampler: no samples" }' "$W/samples"
# Stalls. Events: a sample whose counter moved ("P"), fio job start/end
# ("S"/"E"), the end of sampling ("X"); gaps = intervals between
# consecutive events inside a fio job, in seconds since T0.
{
	awk 'NR > 1 && $2 != p { print $1, "P" } { p = $2 }' "$W/samples"
	cat "$W/events"
} | sort -s -n -k1,1 > "$W/events.sorted"
awk -v t0="${T0}000" '{ t = ($1 - t0) / 1e9 }
	NR > 1 && injob && t > prev { print prev, t }
	$2 == "S" { injob = 1 }
	$2 == "E" || $2 == "X" { injob = 0 }
	{ prev = t }' "$W/events.sorted" > "$W/gaps"
# Windows: fault N from its start to the next fault's start (the last one to
# the end of sampling); window 0 is the baseline before the first fault.
awk -v t0="${T0}000" -v stop="${T_STOP}000" '
	{ s[NR] = $4 }
	END {
		printf "0 0 %.3f\n", ((NR ? s[1] : stop) - t0) / 1e9
		for (i = 1; i <= NR; i++)
			printf "%d %.3f %.3f\n", i, (s[i] - t0) / 1e9, ((i < NR ? s[i + 1] : stop) - t0) / 1e9
	}' "$W/faults" > "$W/windows"
awk 'FNR == NR { a[++n] = $1; b[n] = $2; next }
	{
		ws = $2; we = $3; m = 0
		for (i = 1; i <= n; i++) {
			if (b[i] <= ws || a[i] >= we) continue
			x = a[i] > ws ? a[i] : ws; y = b[i] < we ? b[i] : we
			if (y - x > m) m = y - x
		}
		printf "%d %.2f\n", $1, m
	}' "$W/gaps" "$W/windows" > "$W/stalls"
read -r _ base_stall < <(awk '$1 == 0' "$W/stalls")
read -r _ _ base_end < <(awk '$1 == 0' "$W/windows")
echo "# soak: baseline before the first fault (${base_end:-?} s): longest-stall=${base_stall:-?}s"

echo "# soak table: fault at-s kind path hold-s stall-s back-s result"
awk 'FNR == NR { st[$1] = $2; next }
	{ printf "# soak table: %d %.1f %s %s %s %s %s %s\n", $1, ($4 - t0) / 1e9, $2, $3, $7, st[$1],
		($6 == "-" ? "never" : sprintf("%.2f", $6 / 1e9)), ($8 == 0 ? "ok" : "FAILED") }' \
	t0="${T0}000" "$W/stalls" "$W/faults"

# fio jobs: good = exit 0, fio error 0, something written, all of it read back
# and verified. verify-errors in the summary = jobs that are not good (fio
# stops a job at its first verify error: verify_fatal=1).
read -r JOBS BAD < <(awk '{ n++; if (!($4 == 0 && $5 == "0" && $6 > 0 && $7 >= $6)) b++ } END { print n + 0, b + 0 }' "$W/jobs")
awk '{ d = ($3 - $2) / 1e9; if (NR == 1 || d < lo) lo = d; if (d > hi) hi = d; if ($8 + 0 > mc) mc = $8 }
	END { if (NR) printf "# soak: fio jobs: %d, %.1f-%.1f s each, longest completion %.2f s\n", NR, lo, hi, mc }' "$W/jobs"
bad_jobs=$(awk '!($4 == 0 && $5 == "0" && $6 > 0 && $7 >= $6) {
	printf "job %d (%.0f s into the soak): fio exit %s, %s\n", $1, ($2 - t0) / 1e9, $4,
		($5 == "parse-error" ? "no JSON result" : sprintf("error %s, written %s KiB, verified %s KiB", $5, $6, $7)) }' \
	t0="${T0}000" "$W/jobs" | head -n 20)
tap_result "fio: $JOBS write+verify jobs of $FIO_SIZE on $head through the soak, $BAD with errors (every job: exit 0, no error, every written block read back and verified)" \
	"$([ "$JOBS" -gt 0 ] && [ "$BAD" = 0 ] && echo 0 || echo 1)" "$bad_jobs"

tap_result "both controllers live at the end: $(states)" "$(both_live && echo 0 || echo 1)"

FAILED_FAULTS=0
for k in $ALL_KINDS; do
	[[ " ${KIND_LIST[*]} " == *" $k "* ]] || continue
	read -r cnt stall back fails < <(awk -v k="$k" 'FNR == NR { st[$1] = $2; next }
		$2 == k { c++; if (st[$1] + 0 > s) s = st[$1]; f += $8
			if ($6 != "-") { nb++; if ($6 / 1e9 > b) b = $6 / 1e9 } }
		END { printf "%d %s %s %d\n", c, (c ? sprintf("%.1f", s) : "-"), (nb ? sprintf("%.1f", b) : "-"), f }' \
		"$W/stalls" "$W/faults")
	echo "# soak: $k count=$cnt longest-stall=${stall}$([ "$stall" = - ] || echo s) back-live-max=${back}$([ "$back" = - ] || echo s) failures=$fails"
	FAILED_FAULTS=$((FAILED_FAULTS + $(awk -v k="$k" '$2 == k && $8 > 0' "$W/faults" | wc -l)))
	if [ "$cnt" = 0 ]; then
		tap_skip "no $k fault in this soak ($n faults in all)" "every $k fault came back live"
	else
		tap_result "every $k fault came back live: $cnt faults, both controllers live within $BACK_S s of each removal (longest $([ "$back" = - ] && echo "-: none came back" || echo "$back s")), the host noticing what it had to" \
			"$([ "$fails" = 0 ] && echo 0 || echo 1)" \
			"$(awk -v k="$k" '$2 == k { i = $1; $1 = $2 = ""; sub(/^ +/, ""); print "fault " i ": " $0 }' "$W/fails" | head -n 20)"
	fi
done
[ "$drops" = 0 ] || echo "# soak: $drops time(s) a controller was seen out of live between faults (lines above)"

# The runner checks each guest's kernel log from its mark on: the mark must
# still be in the ring buffer, or that check sees nothing.
if dmesg | grep -F 'rnvme-test-mark:soak:' >/dev/null; then
	ok "host kernel log since the soak's start is all in the ring buffer (the runner's dmesg check covers it)"
else
	not_ok "host kernel log since the soak's start is all in the ring buffer" \
		"its start is overwritten: the runner's dmesg check of this suite sees nothing (boot with a bigger log_buf_len)"
fi
rc=0
# shellcheck disable=SC2016 # expanded by the target agent (its mark)
rig_t 'dmesg | grep -F "$FX_DMESG_MARK" >/dev/null' > /dev/null 2>&1 || rc=$?
tap_result "target kernel log since the soak's start is all in the ring buffer (rig_end's target dmesg check covers it)" "$rc" \
	"its start is overwritten (or the agent did not answer: status $rc)"

fmt_us s $((T_INJ - T0))
fmt_us s2 $((T_STOP - T0))
echo "# soak summary: duration=${SOAK_S}s injected=${s}s io=${s2}s seed=$SEED faults=$n failed-faults=$FAILED_FAULTS fio-jobs=$JOBS verify-errors=$BAD${ABORT:+ stopped-early}"

# Raw data for a closer look: on the build machine, OUT/soak.
rm -rf "$OUT"
if mkdir -p "$OUT" 2>/dev/null; then
	cp "$W/samples" "$W/events.sorted" "$W/jobs" "$W/faults" "$W/fails" "$W/stalls" "$W/windows" "$OUT/" 2>/dev/null
	awk '!($4 == 0 && $5 == "0" && $6 > 0 && $7 >= $6) { print $1 }' "$W/jobs" | head -n 20 | while read -r k; do
		cp "$W/fio-$k.json" "$W/fio-$k.json.stderr" "$OUT/" 2>/dev/null
	done
	echo "# soak: raw data in $OUT (samples: timestamp_ns ios; faults: n kind path start_ns removal_ns back_ns hold_s failures)"
fi

rig_end
