#!/bin/bash
# Guest side of `make bench`: one nvmet target (null_blk) exported over
# Soft-RoCE and TCP; rnvme (registered as transport "rnvme"), the in-tree
# nvme_rdma and nvme_tcp each connect to it with the same queue counts; fio
# runs every workload against each, in rotating order, BENCH_REPS times.
# Writes one JSON line per fio run to $RESULTS/bench.jsonl and fio's own JSON
# to $RESULTS/raw/.  Per run, over a steady-state window inside the fio run
# (BENCH_RUNTIME long): the guest clock (window_ns), idle time from
# /proc/timer_list (busy = window - idle), I/Os completed from the
# namespace's /sys/block stat, packets sent, and for rnvme the work requests
# it posted (sysfs rnvme/wr_posted).
# Under BENCH_CLOCK=icount (tests/bench.sh's default: one vCPU, QEMU -icount
# shift=0) the guest clock counts instructions, so every time figure here is
# an instruction count and repeats exactly.
# Exact counts (BENCH_MARK set: tests/bench.sh's default under icount, with
# QEMU's insn-count plugin loaded): every measured window is also marked
# with tests/bench/mark.c, and the plugin writes how often each kernel
# instruction ran in it; raw/kallsyms.txt maps them to functions.
# Profile pass (BENCH_PROFILE=perf), once per workload of
# BENCH_PROFILE_WORKLOADS and transport, BENCH_PROFILE_RUNTIME (default 4 x
# BENCH_RUNTIME) long: `perf record -e cpu-clock` (under icount an
# instruction sample every BENCH_PERIOD instructions, default 20000) gives
# raw/NAME.T.perf.txt (samples by module and symbol), and kprobe hit counts
# on the transport's completion handlers (*_done) count host CQEs.
#   BENCH_RUNTIME  seconds per fio run (guest seconds; default 5)
#   BENCH_RAMP     fio ramp seconds (default 1; 0 under icount)
#   BENCH_REPS     repetitions (default 3)
#   BENCH_WORKLOADS  subset of workload names (default: all)
#   BENCH_KNOBS    variants measured after the defaults, each on every
#                  device: "scheduler=mq-deadline nomerges=2 ..." (a
#                  /sys/block/DEV/queue attribute) or "profile=latency" (the
#                  tool's `rnvme tune apply --profile`, reverted after) or
#                  "rnvme.telemetry=1" (a parameter of the loaded rnvme,
#                  put back after); the runs are named WORKLOAD@VARIANT
#   BENCH_KNOB_WORKLOADS  workloads run under each variant (default: those
#                  of BENCH_WORKLOADS, else all)
#   BENCH_TRANSPORTS  subset of rnvme rdma tcp (default: all three)
# bash reads a script as it runs: run a private copy, so editing the tree
# during a bench cannot change the running one
if [ "${BENCH_COPY:-}" != 1 ]; then
	cp "$0" /run/rnvme-bench.sh && BENCH_COPY=1 exec bash /run/rnvme-bench.sh "$@"
fi
# shellcheck source=../lib/common.sh
. "$REPO/tests/lib/common.sh"

clock=${BENCH_CLOCK:-wall}
rt=${BENCH_RUNTIME:-5}
reps=${BENCH_REPS:-3}
profile=${BENCH_PROFILE:-0}
[ "$profile" != 1 ] || profile=perf
mark=${BENCH_MARK:-}
[ -z "$mark" ] || [ -x "$mark" ] || bail "BENCH_MARK=$mark is not executable"
exact_n=0
period=${BENCH_PERIOD:-20000}
prt=${BENCH_PROFILE_RUNTIME:-$((rt * 4))}
if [ "$clock" = icount ]; then ramp=${BENCH_RAMP:-0}; else ramp=${BENCH_RAMP:-1}; fi
pworkloads=${BENCH_PROFILE_WORKLOADS:-randread-4k-qd1 randread-4k-qd32 randwrite-4k-qd1 randwrite-4k-qd32}
out=$RESULTS/bench.jsonl
: > "$out"
echo "# clock $clock, $(nproc) vCPU, fio ${rt} s + ${ramp} s ramp, $reps rep(s), profile $profile, exact counts $([ -n "$mark" ] && echo on || echo off)"

# One block device per controller: turn native multipath off before
# nvme-core loads, or the three controllers would share one head device.
modprobe nvme-core multipath=N || bail "cannot load nvme-core"
[ "$(cat /sys/module/nvme_core/parameters/multipath)" = N ] ||
	bail "nvme-core was already loaded with multipath on"

fx_rxe_up || bail "rxe setup failed"
# The fabric's MTU (BENCH_MTU, default 1500).  RoCE deployments run jumbo
# frames (4200 fits RDMA MTU 4096); all three transports share the veth pair.
mtu=${BENCH_MTU:-1500}
if [ "$mtu" != 1500 ]; then
	for nd in veth0 veth1; do
		ip link set "$nd" mtu "$mtu" || bail "cannot set MTU $mtu on $nd"
	done
fi
echo "# fabric MTU $mtu; $RDMA_DEV0 $(ibv_devinfo -d "$RDMA_DEV0" 2>/dev/null | grep -o "active_mtu:.*" | tr -s "\t " " ")"
# BENCH_BACKING=nullb (default) or file: a file on tmpfs served through the
# page cache, so that the target's I/O never enters the block layer and the
# block layer's instructions are the host's alone (the host stack's block
# column; Documentation/bench.rst, "Host stack").
backing=${BENCH_BACKING:-nullb}
case "$backing" in nullb|file) ;; *) bail "BENCH_BACKING must be nullb or file, not '$backing'" ;; esac
echo "# target backing: $backing"
fx_target_up --backing "$backing" --size 256 || bail "rdma target setup failed"
# null_blk allocates its memory on first write (tmpfs likewise): whichever
# transport wrote a block first would pay for it.  Write it all once, locally.
t=$(now_ns)
if [ "$backing" = file ]; then
	dd if=/dev/zero of="$FX_BACKING_DEV" bs=1M count=256 conv=notrunc status=none ||
		bail "cannot prefill $FX_BACKING_DEV"
else
	dd if=/dev/zero of="$FX_BACKING_DEV" bs=1M count=256 oflag=direct status=none ||
		bail "cannot prefill $FX_BACKING_DEV"
fi
echo "# prefilled $FX_BACKING_DEV (256 MiB) in $(secs_since "$t") s"
fx_target_up --port 2 --trtype tcp --trsvcid 4421 || bail "tcp target setup failed"

modprobe nvme-rdma || bail "cannot load nvme-rdma"
modprobe nvme-tcp || bail "cannot load nvme-tcp"
insmod "$RNVME_KO" transport_name=rnvme ${BENCH_RNVME_PARAMS:-} ||
	bail "cannot load rnvme.ko transport_name=rnvme ${BENCH_RNVME_PARAMS:-}"
[ -z "${BENCH_RNVME_PARAMS:-}" ] || echo "# rnvme parameters: $BENCH_RNVME_PARAMS"

# Same queues for everyone: one interrupt-driven I/O queue per vCPU, one poll
# queue, depth 128.
common="nqn=$TEST_NQN,nr_io_queues=$(nproc),nr_poll_queues=1,queue_size=128"
declare -A dev ctl
for t in ${BENCH_TRANSPORTS:-rnvme rdma tcp}; do
	port=$TGT_PORT
	[ $t = tcp ] && port=4421
	reply=$(nvmf_write "transport=$t,traddr=$TGT_IP4,trsvcid=$port,$common,duplicate_connect") ||
		bail "connect over $t failed: $reply"
	inst=$(echo "$reply" | sed -n 's/.*instance=\([0-9]*\).*/\1/p')
	d=$(wait_ns_dev "nvme$inst" 30) || bail "no namespace for nvme$inst ($t)"
	dev[$t]=$d ctl[$t]=nvme$inst
	echo "# $t: nvme$inst -> $d, queues $(ctrl_attr "nvme$inst" queue_count)"
done

# name|window length in BENCH_RUNTIMEs|fio arguments.  A window cuts through
# the I/Os in flight at its two ends; at 128 KiB and depth 8 (about 800 I/Os
# in 2e9 instructions, 8 in flight) that moved instructions per I/O by up to
# 0.7 % between two runs, so those windows are three times as long.
workloads=(
	"randread-4k-qd1|1|--rw=randread --bs=4k --iodepth=1 --ioengine=libaio"
	"randread-4k-qd32|1|--rw=randread --bs=4k --iodepth=32 --ioengine=libaio"
	"randread-4k-qd128|1|--rw=randread --bs=4k --iodepth=128 --ioengine=libaio"
	"randwrite-4k-qd1|1|--rw=randwrite --bs=4k --iodepth=1 --ioengine=libaio"
	"randwrite-4k-qd32|1|--rw=randwrite --bs=4k --iodepth=32 --ioengine=libaio"
	"seqread-128k-qd8|3|--rw=read --bs=128k --iodepth=8 --ioengine=libaio"
	"seqwrite-128k-qd8|3|--rw=write --bs=128k --iodepth=8 --ioengine=libaio"
	"randrw70-4k-qd32|1|--rw=randrw --rwmixread=70 --bs=4k --iodepth=32 --ioengine=libaio"
	"seqwrite-4k-qd32-b16|1|--rw=write --bs=4k --iodepth=32 --ioengine=libaio --iodepth_batch_submit=16 --iodepth_batch_complete_min=1"
	"randread-4k-qd32-b16|1|--rw=randread --bs=4k --iodepth=32 --ioengine=libaio --iodepth_batch_submit=16 --iodepth_batch_complete_min=16"
	"randread-4k-qd1-polled|1|--rw=randread --bs=4k --iodepth=1 --ioengine=io_uring --hipri=1"
)

# (packets: sent on all interfaces but lo, RoCE's UDP and TCP alike, so
# packets per I/O compare the transports' wire work)
read -r -a transports <<< "${BENCH_TRANSPORTS:-rnvme rdma tcp}"
for t in "${transports[@]}"; do
	case $t in rnvme|rdma|tcp) ;; *) bail "BENCH_TRANSPORTS: '$t' is not rnvme, rdma or tcp" ;; esac
done
tracing=/sys/kernel/tracing
[ -d "$tracing/events" ] || mount -t tracefs nodev "$tracing" 2>/dev/null

# kprobes on the transport module's completion handlers (every CQE the host
# polls runs exactly one ib_cqe ->done), counted in kprobe_profile
kprobes_on() { # MODULE
	local f n=0
	echo 0 > "$tracing/tracing_on"
	for f in $(awk -v m="[$1]" '$2 == m && $1 ~ /_done$/ { print $1 }' "$tracing/available_filter_functions"); do
		echo "p:bench/$f $1:$f" >> "$tracing/kprobe_events" && n=$((n + 1))
	done
	[ "$n" = 0 ] || echo 1 > "$tracing/events/bench/enable"
}
# (kprobe_profile names events without their group: ours are the *_done ones)
kprobes_hits() { awk '$1 ~ /_done$/ { s += $2 } END { print s + 0 }' "$tracing/kprobe_profile" 2>/dev/null || echo 0; }
kprobes_off() {
	[ -d "$tracing/events/bench" ] && echo 0 > "$tracing/events/bench/enable"
	grep -o '^p:bench/[^ ]*' "$tracing/kprobe_events" 2>/dev/null | sed 's/^p:/-:/' |
		while read -r k; do echo "$k" >> "$tracing/kprobe_events"; done
	return 0
}
declare -A tmod=([rnvme]=rnvme [rdma]=nvme_rdma [tcp]=nvme_tcp)

# Steady-state snapshots, taken while fio runs: guest clock (ns; under
# icount, instructions), idle (ns, precise: tick_sched's idle and iowait
# sleep time from /proc/timer_list), I/Os of the namespace, work requests
# rnvme posted, packets sent.  The window leaves out fio's start and stop,
# which sleep and touch 9p and made whole-run figures move by up to 4 %.
exec {sleepfd}<> <(:)
nap() { read -r -t "$1" -u "$sleepfd" _ || true; }
ios_of() { local st; read -r -a st < "/sys/block/${1#/dev/}/stat"; echo $((st[0] + st[4])); }
snap() { # DEV CTRL -> "clock idle ios wr pkts posts"
	local now=${EPOCHREALTIME/[.,]/} w=-1 sp=-1 io
	io=$(ios_of "$1")
	[ -r "/sys/class/nvme/$2/rnvme/wr_posted" ] && read -r w < "/sys/class/nvme/$2/rnvme/wr_posted"
	[ -r "/sys/class/nvme/$2/rnvme/send_posts" ] && read -r sp < "/sys/class/nvme/$2/rnvme/send_posts"
	awk -v now="${now}000" -v io="$io" -v w="$w" -v sp="$sp" '
		FILENAME == "/proc/timer_list" && /\.(idle|iowait)_sleeptime/ { i += $3 }
		FILENAME == "/proc/net/dev" && FNR > 2 && $1 != "lo:" { p += $11 }
		END { printf "%s %.0f %s %s %.0f %s\n", now, i, io, w, p, sp }' /proc/timer_list /proc/net/dev
}

# run_fio PASS REP NAME T ARGS [SCALE]: one measured fio run (window SCALE x
# BENCH_RUNTIME); appends a JSON line
run=0
run_fio() {
	local pass=$1 r=$2 name=$3 t=$4 args=$5 raw perfdata cqe0=0 cqe1=0 pre=() fpid rc=0
	local rt=$((rt * ${6:-1}))
	local a b io_start io_end window idle busy ios m0="" m1="" exact="" stat
	raw=raw/$name.$t.$pass$r.json
	if [ "$pass" = profile ]; then
		# more samples: a module doing ~500 instructions per I/O gets
		# ~1500 samples in 4 x 2 s at one per 20000 instructions
		rt=$prt
		perfdata=/tmp/perf.$name.$t.data
		kprobes_on "${tmod[$t]}"
		pre=(perf record -q --no-buildid --no-buildid-cache -e cpu-clock -c "$period" -a -o "$perfdata" --)
		cqe0=$(kprobes_hits)
	fi
	io_start=$(ios_of "${dev[$t]}")
	# fio runs BENCH_RUNTIME + 1 s; the window is BENCH_RUNTIME long and
	# starts 0.3 s after the first I/O completed
	# shellcheck disable=SC2086 # args is a word list
	timeout $((rt * 20 + 120)) "${pre[@]}" fio --name="$name" --filename="${dev[$t]}" $args \
		--direct=1 --time_based --runtime=$((rt + 1)) --ramp_time="$ramp" --size=128m \
		--lat_percentiles=1 --percentile_list=50:99:99.9 --output-format=json \
		--output="$RESULTS/$raw" >/dev/null 2>"$RESULTS/$raw.err" &
	fpid=$!
	while kill -0 "$fpid" 2>/dev/null && [ "$(ios_of "${dev[$t]}")" = "$io_start" ]; do nap 0.01; done
	nap 0.3
	a=$(snap "${dev[$t]}" "${ctl[$t]}")
	stat=/sys/block/${dev[$t]#/dev/}/stat
	# the plugin's window: instructions and I/Os between the two marks
	[ -z "$mark" ] || [ "$pass" != measure ] || m0=$("$mark" begin "$stat") || m0=""
	nap "$rt"
	[ -z "$m0" ] || m1=$("$mark" end "$stat") || m1=""
	b=$(snap "${dev[$t]}" "${ctl[$t]}")
	if [ -n "$m1" ]; then
		exact=", \"exact_window\": $exact_n, \"exact_ios\": $((m1 - m0))"
		exact_n=$((exact_n + 1))
	fi
	wait "$fpid" || rc=$?
	io_end=$(ios_of "${dev[$t]}")
	if [ "$rc" != 0 ]; then
		echo "# fio $name on $t failed ($pass pass, exit $rc): $(tail -n 2 "$RESULTS/$raw.err" | tr '\n' ' ')"
		[ "$pass" != profile ] || kprobes_off
		return 0
	fi
	if [ "$pass" = profile ]; then
		cqe1=$(kprobes_hits)
		kprobes_off
		perf report -i "$perfdata" --stdio -q --sort dso,sym -F sample,dso,sym -g none \
			> "$RESULTS/raw/$name.$t.perf.txt" 2>/dev/null ||
			echo "# perf report failed for $name on $t"
		rm -f "$perfdata"
	fi
	# shellcheck disable=SC2086 # six numbers each
	set -- $a $b
	window=$(($7 - $1)) idle=$(($8 - $2)) ios=$(($9 - $3))
	busy=$((window - idle))
	printf '{"pass": "%s", "transport": "%s", "workload": "%s", "rep": %d, "window_ns": %d, "busy_ns": %d, "ios": %d, "ios_total": %d, "tx_pkts": %d, "wr": %d, "posts": %d, "cqe": %d, "fio": "%s"%s%s}\n' \
		"$pass" "$t" "$name" "$r" "$window" "$busy" "$ios" $((io_end - io_start)) $((${11} - $5)) \
		"$([ "$4" = -1 ] && echo -1 || echo $((${10} - $4)))" \
		"$([ "$6" = -1 ] && echo -1 || echo $((${12} - $6)))" \
		"$([ "$pass" = profile ] && [ "$t" != tcp ] && echo $((cqe1 - cqe0)) || echo -1)" "$raw" \
		"$([ "$pass" = profile ] && echo ", \"perf\": \"raw/$name.$t.perf.txt\", \"period\": $period")" \
		"$exact" >> "$out"
	run=$((run + 1))
	echo "# [$run] $pass $r $name $t: $ios I/Os in the window, $((ios > 0 ? busy / ios : 0)) busy ns/IO, idle $((idle / 1000000)) of $((window / 1000000)) ms"
}

# fio's JSON goes to raw/ as it is: the host's report.py parses it (a Python
# start per run costs seconds under TCG).
mkdir -p "$RESULTS/raw"
# addresses -> functions for report.py (the exact counts and perf alike);
# every module the bench uses is loaded by now
echo 0 > /proc/sys/kernel/kptr_restrict 2>/dev/null
cp /proc/kallsyms "$RESULTS/raw/kallsyms.txt" || bail "cannot copy /proc/kallsyms"
# Warm-up, not measured: the first fio of a boot loads fio and its libraries
# over 9p (guest work, and 9p replies arrive at host-dependent instruction
# counts under icount), and each device's first I/Os set up its queues.
for t in "${transports[@]}"; do
	fio --name=warmup --filename="${dev[$t]}" --rw=randread --bs=4k --iodepth=4 --ioengine=libaio \
		--direct=1 --size=16m --io_size=4m --output=/dev/null >/dev/null 2>&1 ||
		echo "# warm-up fio on $t failed"
done
# Knob variants (BENCH_KNOBS).  queue_knob_set DEV ATTR VALUE remembers the
# old value in knob_undo; knobs_restore puts every one back.
declare -a knob_undo=()
queue_knob_get() { # DEV ATTR -> value (the bracketed one of a choice list)
	local v
	read -r v < "/sys/block/${1#/dev/}/queue/$2" || return 1
	[[ $v == *"["*"]"* ]] && { v=${v#*[}; v=${v%%]*}; }
	echo "$v"
}
queue_knob_set() { # DEV ATTR VALUE
	local f=/sys/block/${1#/dev/}/queue/$2 old
	old=$(queue_knob_get "$1" "$2") || { echo "# no queue attribute $2 on $1"; return 1; }
	echo "$3" > "$f" 2>/dev/null || { echo "# $1: cannot set $2=$3"; return 1; }
	[ "$(queue_knob_get "$1" "$2")" = "$3" ] || { echo "# $1: $2 reads $(queue_knob_get "$1" "$2") after writing $3"; return 1; }
	knob_undo+=("$f|$old")
}
knobs_restore() {
	local u
	for u in "${knob_undo[@]}"; do echo "${u#*|}" > "${u%%|*}" || echo "# cannot restore ${u%%|*}"; done
	knob_undo=()
	if [ -n "${knob_tool_revert:-}" ]; then
		"$knob_tool_revert" tune revert >/dev/null 2>&1 || echo "# rnvme tune revert failed"
		knob_tool_revert=""
	fi
}
knob_apply() { # VARIANT
	local attr=${1%%=*} val=${1#*=} t bin
	case $1 in *=*) ;; *) echo "# BENCH_KNOBS: '$1' is not ATTR=VALUE"; return 1 ;; esac
	if [[ $attr == rnvme.* ]]; then
		# a module parameter of rnvme (e.g. rnvme.telemetry=1); the other
		# transports run their variant unchanged, as a control
		t=/sys/module/rnvme/parameters/${attr#rnvme.}
		[ -w "$t" ] || { echo "# no writable rnvme parameter ${attr#rnvme.}"; return 1; }
		bin=$(cat "$t")
		echo "$val" > "$t" 2>/dev/null || { echo "# rnvme refused $attr=$val"; return 1; }
		knob_undo+=("$t|$bin")
		return 0
	fi
	if [ "$attr" = profile ]; then
		bin=${RNVME_BIN:-${RNVME_OUT:-$REPO/build}/tools/rnvme}
		[ -x "$bin" ] || { echo "# profile=$val needs the rnvme tool ($bin; make tool)"; return 1; }
		knob_tool_revert=$bin
		"$bin" tune apply --profile "$val" --best-effort > "$RESULTS/raw/tune-$val.txt" 2>&1 ||
			{ echo "# rnvme tune apply --profile $val failed: $(tail -n 3 "$RESULTS/raw/tune-$val.txt" | tr '\n' ' ')"; return 1; }
		for t in "${transports[@]}"; do
			echo "# $val on $t: scheduler=$(queue_knob_get "${dev[$t]}" scheduler) nomerges=$(queue_knob_get "${dev[$t]}" nomerges) rq_affinity=$(queue_knob_get "${dev[$t]}" rq_affinity)"
		done
		return 0
	fi
	for t in "${transports[@]}"; do
		queue_knob_set "${dev[$t]}" "$attr" "$val" || return 1
	done
}
# run_workloads SUFFIX WORKLOAD-NAMES: every selected workload on every
# transport, in rotating order
run_workloads() {
	local suffix=$1 names=$2 r w entry name args scale k
	for ((r = 0; r < reps; r++)); do
		w=0
		for entry in "${workloads[@]}"; do
			name=${entry%%|*} args=${entry#*|}
			scale=${args%%|*} args=${args#*|}
			if [ -n "$names" ] && [[ " $names " != *" $name "* ]]; then
				continue
			fi
			for ((k = 0; k < ${#transports[@]}; k++)); do
				run_fio measure "$r" "$name$suffix" \
					"${transports[$(((k + r + w) % ${#transports[@]}))]}" "$args" "$scale"
			done
			w=$((w + 1))
		done
	done
}
for t in "${transports[@]}"; do
	echo "# $t defaults: scheduler=$(queue_knob_get "${dev[$t]}" scheduler) nomerges=$(queue_knob_get "${dev[$t]}" nomerges) rq_affinity=$(queue_knob_get "${dev[$t]}" rq_affinity) nr_hw_queues=$(ls -d "/sys/block/${dev[$t]#/dev/}/mq/"* | wc -l)"
done
run_workloads "" "${BENCH_WORKLOADS:-}"
for v in ${BENCH_KNOBS:-}; do
	if knob_apply "$v"; then
		echo "# variant $v"
		run_workloads "@$v" "${BENCH_KNOB_WORKLOADS:-${BENCH_WORKLOADS:-}}"
	else
		echo "# variant $v not measured"
	fi
	knobs_restore
done
if [ "$profile" = perf ]; then
	# perf names module functions [kernel.kallsyms] here (it finds no .ko
	# for an insmod'ed module): report.py maps them back with this
	awk '$4 ~ /^\[/ { print $3, $4 }' /proc/kallsyms > "$RESULTS/raw/module-symbols.txt"
	echo -1 > /proc/sys/kernel/perf_event_paranoid 2>/dev/null
	for entry in "${workloads[@]}"; do
		name=${entry%%|*} args=${entry#*|}
		args=${args#*|}
		[[ " $pworkloads " == *" $name "* ]] || continue
		for t in "${transports[@]}"; do
			run_fio profile 0 "$name" "$t" "$args"
		done
	done
fi

nvme disconnect-all >/dev/null 2>&1
fx_host_disconnect_all
rmmod rnvme nvme_rdma nvme_tcp 2>/dev/null
fx_target_down
fx_rxe_down
echo "# bench: $run fio runs"
