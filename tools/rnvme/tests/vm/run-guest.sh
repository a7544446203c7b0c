#!/bin/bash
# Guest side: run the rnvme tool's suites (NN-*.sh beside this file) one after the other inside
# the test VM, with the harness's teardown between them. TAP per suite goes to
# $RESULTS/rnvme-tool/NN-name.tap; the last line is "N passed, N failed, N skipped".
#   RNVME_TOOL_SUITES="01 04"   run only these
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../../../tests/lib/common.sh
. "$here/../../../../tests/lib/common.sh"

out=${RESULTS:-/results}/rnvme-tool
mkdir -p "$out"
pass=0 fail=0 skip=0
# On the debug kernel: KASAN, lockdep and kmemleak over all the tool's suites (a no-op elsewhere).
fx_sanitizer_baseline
fx_dmesg_mark "rnvme-tool-suites"
gate_mark=$FX_DMESG_MARK
for suite in "$here"/[0-9][0-9]-*.sh; do
	name=$(basename "$suite" .sh)
	if [ -n "${RNVME_TOOL_SUITES:-}" ]; then
		case " $RNVME_TOOL_SUITES " in *" ${name%%-*} "*) ;; *) continue ;; esac
	fi
	echo "# ===== rnvme-tool $name"
	rc=0
	timeout -k 30 900 "$suite" > "$out/$name.tap" 2>&1 || rc=$?
	cat "$out/$name.tap"
	p=$(grep -cE '^ok [0-9]+' "$out/$name.tap")
	s=$(grep -cE '^ok [0-9]+.*# SKIP' "$out/$name.tap")
	# a suite that skipped as a whole ("1..0 # SKIP why") counts as one skip
	if grep -qE '^1\.\.0 # SKIP' "$out/$name.tap"; then s=$((s + 1)) p=$((p + 1)); fi
	f=$(grep -cE '^not ok [0-9]+' "$out/$name.tap")
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "not ok - $name exited $rc without a failing test point"
		f=1
	fi
	pass=$((pass + p - s)) fail=$((fail + f)) skip=$((skip + s))
	fx_cleanup_all > "$out/$name.teardown.log" 2>&1
done
gate=$(fx_sanitizer_gate "rnvme-tool suites" "$gate_mark")
case $? in
0) echo "$gate" | tee "$out/sanitizer-gate.tap"; pass=$((pass + 1)) ;;
1) echo "$gate" | tee "$out/sanitizer-gate.tap"; fail=$((fail + 1)) ;;
esac
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
