#!/bin/bash
# make bench: fio in one VM against rnvme, the in-tree nvme_rdma and nvme_tcp
# on the same nvmet target, in rotating order, BENCH_REPS times; prints the
# ratio table and writes results.md, results.json and ratios.png under
# build/bench/<time>/.  The defaults (8 workloads x 3 transports x 3 reps of
# 5 s + 1 s ramp) keep the whole run, build included, under 20 minutes on a
# 2-CPU host; the total time is printed at the end.
#   BENCH_RUNTIME=5 BENCH_REPS=3 BENCH_WORKLOADS="randread-4k-qd1 ..."
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
export BENCH_RUNTIME=${BENCH_RUNTIME:-5} BENCH_REPS=${BENCH_REPS:-3}
KVER=${KVER:-$(tests/lib/kver.sh)}
echo "== building rnvme.ko for $KVER"
make module O="$RNVME_OUT" KVER="$KVER" | grep -E 'LAYOUT|error' || true
[ -f "$RNVME_OUT/$KVER/rnvme.ko" ] || { echo "bench: module build failed" >&2; exit 1; }
out=$RNVME_OUT/bench/$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
echo "== bench in a VM: ${BENCH_REPS} reps x ${BENCH_RUNTIME} s per fio run${BENCH_WORKLOADS:+, workloads: $BENCH_WORKLOADS}"
t1=$(date +%s)
tests/vm/run-vm.sh --kver "$KVER" --timeout 2400 --out "$out" -v \
	-- "$REPO/tests/guest/bench.sh" | grep --line-buffered -E '^# |run-vm' || true
[ -s "$out/bench.jsonl" ] || { echo "bench: no results (see $out/console.log)" >&2; exit 1; }
# Debian's python3 (its python3-matplotlib draws the chart), not one that
# happens to come first in PATH.
py=/usr/bin/python3
[ -x "$py" ] || py=python3
"$py" tests/bench/report.py "$out/bench.jsonl" "$out"
t2=$(date +%s)
echo
echo "bench: VM $((t2 - t1)) s, total $((t2 - t0)) s; results in $out (results.md, results.json, ratios.png, bench.jsonl, raw/)"
