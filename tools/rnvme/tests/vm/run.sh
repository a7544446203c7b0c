#!/bin/bash
# Host side: boot the test VM once (through the harness's tests/vm/run-vm.sh, which serialises
# VM runs with a lock) and run the rnvme tool's guest suites against rnvme.ko and the Soft-RoCE
# target. Needs rnvme.ko (make module) and the tool (make tool).
#   tools/rnvme/tests/vm/run.sh [run-vm.sh options]     e.g. --kver 6.1.0-56-amd64 -v
#   RNVME_TOOL_SUITES="01 04"                           run only these suites
# TAP per suite: build/vm/rnvme-tool/rnvme-tool/NN-name.tap. The last line printed is
# "N passed, N failed, N skipped"; the exit status is non-zero on any failure.
#   tools/rnvme/tests/vm/run.sh --results DIR
# boots nothing: it reports the suites that ran after the harness's suites in the boot of
#   tests/run-all.sh --out DIR --then tools/rnvme/tests/vm/run-guest.sh
# (make check, after 10-dkms), from DIR/then.log and DIR/then.rc; TAP in DIR/rnvme-tool/.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../../../.." && pwd)
if [ "${1:-}" = --results ]; then
	dir=${2:?--results needs the run-all --out directory}
	rc=$(cat "$dir/then.rc" 2>/dev/null || echo none)
	total=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$dir/then.log" 2>/dev/null | tail -n 1)
	echo "rnvme-tool VM suites: ran in the boot of $dir after its suites (TAP in $dir/rnvme-tool/, log $dir/then.log; exit $rc)"
	if [ -z "$total" ]; then
		echo "rnvme-tool VM suites: no result (see $dir/then.log and $dir/console.log)"
		echo "0 passed, 1 failed, 0 skipped"
		exit 1
	fi
	echo "$total"
	[ "$rc" = 0 ]
	exit
fi
out=${RNVME_OUT:-$repo/build}/vm/rnvme-tool
mkdir -p "$out"
rm -rf "$out/rnvme-tool"
export RNVME_TOOL_SUITES=${RNVME_TOOL_SUITES:-}
rc=0
"$repo/tests/vm/run-vm.sh" --out "$out" "$@" -- "$repo/tools/rnvme/tests/vm/run-guest.sh" || rc=$?
# The serial console ends lines with CR LF.
total=$(tr -d '\r' < "$out/console.log" 2>/dev/null | grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' | tail -n 1)
if [ -z "$total" ]; then
	echo "rnvme-tool VM suites: no result (run-vm.sh exit $rc; see $out/console.log)"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
echo "$total"
[ "$rc" = 0 ]
