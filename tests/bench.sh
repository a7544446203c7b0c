#!/bin/bash
# make bench: fio in one VM against rnvme, the in-tree nvme_rdma and nvme_tcp
# on the same nvmet target; writes results.md, results.json, ratios.png,
# bench.jsonl and raw/ under build/bench/<time>/ (build/bench/latest points at
# the newest) and prints the table.  Documentation/bench.rst explains it.
#   BENCH_CLOCK=icount (default): one vCPU under QEMU -icount shift=0: the
#       guest clock counts instructions, figures are instructions per I/O and
#       repeat exactly; 1 repetition of 2 s (2e9 instructions) per run.
#       QEMU loads tests/bench/insn-count.c, a plugin that counts how often
#       each guest kernel instruction runs in every measured window: the
#       transport module's own instructions per I/O, where the rest go and
#       completions per I/O, exactly (BENCH_PROFILE=exact)
#   BENCH_CLOCK=wall: two vCPUs, wall-clock IOPS (±10-25 % between runs
#       here); 3 repetitions of 5 s + 1 s ramp, no profile pass
#   BENCH_RUNTIME BENCH_REPS BENCH_WORKLOADS="randread-4k-qd1 ..."
#   BENCH_PROFILE=exact|perf|0: exact counts (icount only), or the older
#       sampled profile pass (perf record + kprobes; BENCH_PROFILE_WORKLOADS,
#       BENCH_PERIOD=20000, BENCH_PROFILE_RUNTIME=8), or neither
#   BENCH_KNOBS="scheduler=mq-deadline nomerges=2 profile=latency" knob
#       variants after the defaults (tests/guest/bench.sh); BENCH_KNOB_WORKLOADS,
#       BENCH_TRANSPORTS="rnvme rdma"
#   BENCH_RNVME_PARAMS="test_extra_work=200"  rnvme module parameters
#   BENCH_BACKING=nullb|file  the target's namespace: null_blk (default) or a
#       tmpfs file through the page cache (no target I/O in the block layer)
#   RNVME_SKIP_SETUP=1  do not run tests/setup-host.sh (apt-get)
# shellcheck source=../tools/kbuild/strict.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tools/kbuild/strict.sh"
t0=$(date +%s)
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
export RNVME_OUT=${RNVME_OUT:-$REPO/build}
if [ "$(id -u)" = 0 ] && [ "${RNVME_SKIP_SETUP:-0}" != 1 ]; then
	echo "== installing what the bench needs (tests/setup-host.sh)"
	tests/setup-host.sh | grep --line-buffered -E '^(==|setup-host|KVER)'
fi
export BENCH_CLOCK=${BENCH_CLOCK:-icount}
vmargs=()
case "$BENCH_CLOCK" in
icount)
	export BENCH_RUNTIME=${BENCH_RUNTIME:-2} BENCH_REPS=${BENCH_REPS:-1} BENCH_PROFILE=${BENCH_PROFILE:-exact}
	vmargs=(--icount) ;;
wall)
	export BENCH_RUNTIME=${BENCH_RUNTIME:-5} BENCH_REPS=${BENCH_REPS:-3} BENCH_PROFILE=${BENCH_PROFILE:-0} ;;
*) echo "bench: BENCH_CLOCK must be icount or wall, not '$BENCH_CLOCK'" >&2; exit 2 ;;
esac
case "$BENCH_PROFILE" in
exact) [ "$BENCH_CLOCK" = icount ] ||
	{ echo "bench: BENCH_PROFILE=exact needs BENCH_CLOCK=icount (one vCPU)" >&2; exit 2; } ;;
perf|1|0) ;;
*) echo "bench: BENCH_PROFILE must be exact, perf or 0, not '$BENCH_PROFILE'" >&2; exit 2 ;;
esac
KVER=${KVER:-$(tests/lib/kver.sh)}
# test_extra_work (the self-check) exists only in a build with the bench
# hooks; every other run measures the product's code
hooks=
[[ " ${BENCH_RNVME_PARAMS:-} " == *" test_extra_work="* ]] && hooks=y
echo "== building rnvme.ko for $KVER${hooks:+ (with the bench hooks: test_extra_work)}"
make module O="$RNVME_OUT" KVER="$KVER" RNVME_BENCH_HOOKS="$hooks" | grep -E 'LAYOUT|error' || true
[ -f "$RNVME_OUT/$KVER/rnvme.ko" ] || { echo "bench: module build failed (run: make module)" >&2; exit 1; }
if [[ " ${BENCH_KNOBS:-} " == *" profile="* ]]; then
	echo "== building the rnvme tool (BENCH_KNOBS has a profile)"
	make tool O="$RNVME_OUT" > "$RNVME_OUT/bench-tool-build.log" 2>&1 ||
		{ echo "bench: make tool failed (see $RNVME_OUT/bench-tool-build.log)" >&2; exit 1; }
fi
commit=$(git -C "$REPO" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
[ -z "$(git -C "$REPO" status --porcelain -- drivers include tests 2>/dev/null)" ] || commit=$commit-dirty
out=$RNVME_OUT/bench/$(date +%Y%m%d-%H%M%S)
mkdir -p "$out/raw"
if [ "$BENCH_PROFILE" = exact ]; then
	# the counting plugin and the guest's window marker, built for this host
	bt=$RNVME_OUT/bench-tools
	mkdir -p "$bt"
	command -v cc >/dev/null || { echo "bench: no C compiler (apt-get install build-essential)" >&2; exit 1; }
	cc -O2 -Wall -Wextra -Werror -shared -fPIC -o "$bt/insn-count.so" tests/bench/insn-count.c
	cc -O2 -Wall -Wextra -Werror -o "$bt/mark" tests/bench/mark.c
	case "$bt$out" in *,*)
		echo "bench: QEMU's -plugin option cannot take a path with a comma: $bt, $out" >&2; exit 1 ;;
	esac
	vmargs+=(--qemu-arg -plugin --qemu-arg "$bt/insn-count.so,out=$out/raw/exact.txt")
	export BENCH_MARK=$bt/mark
fi
ln -sfn "$(basename "$out")" "$RNVME_OUT/bench/latest"
echo "== bench in a VM ($BENCH_CLOCK clock): ${BENCH_REPS} rep(s) x ${BENCH_RUNTIME} s per fio run${BENCH_WORKLOADS:+, workloads: $BENCH_WORKLOADS}, profile pass ${BENCH_PROFILE}"
t1=$(date +%s)
tests/vm/run-vm.sh --kver "$KVER" "${vmargs[@]}" --timeout 2400 --out "$out" -v \
	-- "$REPO/tests/guest/bench.sh" | grep --line-buffered -E '^# |run-vm' || true
[ -s "$out/bench.jsonl" ] || { echo "bench: no results (see $out/console.log)" >&2; exit 1; }
# Debian's python3 (its python3-matplotlib draws the chart), not one that
# happens to come first in PATH.
py=/usr/bin/python3
[ -x "$py" ] || py=python3
"$py" tests/bench/report.py "$out/bench.jsonl" "$out" --clock "$BENCH_CLOCK" --commit "$commit"
t2=$(date +%s)
echo
echo "bench: VM $((t2 - t1)) s, total $((t2 - t0)) s; results in $out (results.md, results.json, ratios.png, bench.jsonl, raw/); $RNVME_OUT/bench/latest -> $(basename "$out")"
