#!/bin/bash
# make bench: fio in one VM against rnvme, the in-tree nvme_rdma and nvme_tcp
# on the same nvmet target, alternating, BENCH_REPS times; prints the ratio
# table and writes results.md, results.json and ratios.png under build/bench/.
#   BENCH_RUNTIME=8 BENCH_REPS=3 BENCH_WORKLOADS="randread-4k-qd1 ..."
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
KVER=${KVER:-$(tests/lib/kver.sh)}
make module KVER="$KVER" | grep -E 'LAYOUT|error' || true
[ -f "build/$KVER/rnvme.ko" ] || { echo "bench: module build failed" >&2; exit 1; }
out=$REPO/build/bench/$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
t0=$(date +%s)
tests/vm/run-vm.sh --kver "$KVER" --timeout 2400 --out "$out" -v \
	-- "$REPO/tests/guest/bench.sh" | grep -E '^# |run-vm' || true
[ -s "$out/bench.jsonl" ] || { echo "bench: no results (see $out/console.log)" >&2; exit 1; }
python3 tests/bench/report.py "$out/bench.jsonl" "$out"
echo
echo "bench: $(($(date +%s) - t0)) s; results in $out (results.md, results.json, ratios.png, bench.jsonl)"
