#!/bin/bash
# Guest-side suite runner (runs inside the VM, started by tests/run-all.sh via
# tests/vm/run-vm.sh). Runs tests/suites/NN-*.sh one after the other, each with a
# fresh fixture; tears everything down between suites, checks dmesg for the
# teardown, and writes TAP + a summary into $RESULTS.
#   SUITES="03 04"        run only these (prefix numbers or full names)
#   SUITES="... siw:03"   PROVIDER:SUITE runs the suite over that RDMA provider
#                         (RNVME_RDMA) in the same boot, as NN-name@siw
#   RNVME_SUITE_TIMEOUT   per-suite limit in seconds (default 900)
# On a debug kernel (tests/debug-kernel) every suite ends with a sanitizer gate
# point (fx_sanitizer_gate: KASAN, lockdep, hung task, soft lockup) and the
# boot with one kmemleak point (zz-kmemleak); TEST_KMEMLEAK_EACH=1 scans for
# leaks in every suite's gate instead (about 14 s each under KASAN + TCG).
#   RNVME_SUITE_DIR       suite directory below tests/ (default suites; the
#                         two-VM rig's host guest runs rig/suites)
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"

RESULTS=${RESULTS:-/results}
limit=${RNVME_SUITE_TIMEOUT:-900}
outdir=$RESULTS/suites
rm -rf "$outdir"
mkdir -p "$outdir"
summary=$RESULTS/summary.txt
: > "$summary"

# runs: "PROVIDER NAME" per suite run, in order (the provider of an entry
# without PROVIDER: is RNVME_RDMA, default rxe)
runs() {
	local f name s prov
	for f in "$snap"/suites/*.sh; do
		name=$(basename "$f" .sh)
		if [ -z "${SUITES:-}" ]; then
			# opt-in suites (no NN- prefix, e.g. rig/suites/soak.sh) run
			# only when SUITES names them
			[[ $name == [0-9][0-9]-* ]] && echo "$RNVME_RDMA $name"
			continue
		fi
		for s in $SUITES; do
			prov=$RNVME_RDMA
			case "$s" in *:*) prov=${s%%:*} s=${s#*:} ;; esac
			case "$name" in "$s"|"$s"-*|"$s".sh) echo "$prov $name" ;; esac
		done
	done | awk -v d="$RNVME_RDMA" '{ print ($1 == d ? 0 : 1), $0 }' | sort -s -n -k1,1 | cut -d' ' -f2-
}

# Run private copies: bash reads scripts lazily, and the host tree may be
# edited while the VM runs.
snap=/run/rnvme-tests
rm -rf "$snap"
mkdir -p "$snap"
cp -a "$REPO/tests/lib" "$snap/"
cp -a "$REPO/tests/${RNVME_SUITE_DIR:-suites}" "$snap/suites"

fx_sanitizer_baseline
# Switching a trace event on or off (kprobe counts in 04 and 14's workqueue
# event, nvme_setup_cmd in 05 and 07) also starts or stops the trace's
# command-name recording, which patches the scheduler's sched_switch and
# sched_wakeup tracepoint sites with int3.  Twice a vCPU of the TCG guest
# ran such a site's breakpoint after the patch had finished (README, "Not
# done yet": __schedule in 07, ttwu_do_activate in 04, both on the RT
# guest).  No suite reads command names: the recording stays off, so events
# patch only their own sites.
fx_trace_no_cmd_record
tot_pass=0 tot_fail=0 tot_skip=0
default_rdma=$RNVME_RDMA
base_io_div=${TEST_IO_DIV:-1}
while read -r prov name; do
	suite=$snap/suites/$name.sh
	fx_rdma_select "$prov"
	# TEST_IO_DIV_SIW (etc.) overrides TEST_IO_DIV for that provider's suites
	div_var=TEST_IO_DIV_${prov^^}
	export TEST_IO_DIV=${!div_var:-${base_io_div:-1}}
	[ "$prov" = "$default_rdma" ] || name=$name@$prov
	tap=$outdir/$name.tap
	echo "# ===== $name (HOST_DRIVER=$HOST_DRIVER TRANSPORT=$TRANSPORT)"
	fx_dmesg_mark "$name"
	suite_mark=$FX_DMESG_MARK
	t=$(now_ns)
	{
		rc=0
		timeout -k 30 "$limit" "$suite" < /dev/null 2>&1 || rc=$?
		echo "$rc" > "$outdir/$name.rc"
	} | tee "$tap"
	rc=$(cat "$outdir/$name.rc")
	secs=$(secs_since "$t")
	dmesg | awk -v m="$FX_DMESG_MARK" 'f { print } index($0, m) { f = 1 }' > "$outdir/$name.dmesg"

	pass=$(grep -cE '^ok [0-9]+' "$tap" | tr -d ' ')
	skip=$(grep -cE '^ok [0-9]+.*# SKIP' "$tap" | tr -d ' ')
	fail=$(grep -cE '^not ok [0-9]+' "$tap" | tr -d ' ')
	pass=$((pass - skip))
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		echo "not ok - $name timed out after ${limit}s" | tee -a "$tap"
		fail=$((fail + 1))
	elif [ "$rc" != 0 ] && [ "$fail" = 0 ]; then
		echo "not ok - $name exited with status $rc without a failing test point" | tee -a "$tap"
		fail=$((fail + 1))
	fi

	# Teardown between suites (the suite should already have done it).
	fx_dmesg_mark "$name-teardown"
	fx_cleanup_all > "$outdir/$name.teardown.log" 2>&1
	bad=$(fx_dmesg_since_mark | grep -E "$FX_DMESG_BAD" || true)
	if [ -n "$bad" ] || [ -d "/sys/module/$(host_module)" ] || [ -d /sys/kernel/config/nvmet/ports/1 ]; then
		{
			echo "not ok - $name: teardown clean"
			printf '%s\n' "$bad" | diag
			[ ! -d "/sys/module/$(host_module)" ] || echo "# host module still loaded"
		} | tee -a "$tap"
		fail=$((fail + 1))
	fi
	# Debug kernel: KASAN/lockdep/hung task/soft lockup reports and kmemleak
	# leaks since the start of the suite, teardown included.
	grc=0
	fx_sanitizer_gate "$name" "$suite_mark" "${TEST_KMEMLEAK_EACH:-0}" > "$outdir/$name.sanitizers" 2>&1 || grc=$?
	if [ "$grc" != 2 ]; then
		tee -a "$tap" < "$outdir/$name.sanitizers"
		if [ "$grc" = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
	fi

	echo "# ===== $name: $pass passed, $fail failed, $skip skipped, rc=$rc, $secs s"
	echo "$name $pass $fail $skip $rc $secs" >> "$summary"
	tot_pass=$((tot_pass + pass)) tot_fail=$((tot_fail + fail)) tot_skip=$((tot_skip + skip))
done < <(runs)

# Debug kernel, one kmemleak scan for the whole boot (every suite's own gate
# checked the kernel log already): a pseudo-suite of one point.
if [ "${TEST_KMEMLEAK_EACH:-0}" != 1 ] && fx_debug_kernel; then
	name=zz-kmemleak
	tap=$outdir/$name.tap
	t=$(now_ns)
	leaks=$(fx_kmemleak_scan)
	secs=$(secs_since "$t")
	if [ -z "$leaks" ]; then
		echo "ok 1 - kmemleak: no unreferenced objects after all suites of this boot ($secs s)"
	else
		echo "not ok 1 - kmemleak: $(printf '%s\n' "$leaks" | grep -c '^unreferenced object') unreferenced object(s) after the suites of this boot"
		{
			echo "uptime now: $(cut -d' ' -f1 /proc/uptime) s; suite start times (uptime; an object's jiffies value dates its allocation):"
			dmesg | grep -E 'rnvme-test-mark:[0-9]{2}-[^:]*:' | grep -v -- '-teardown:' |
				sed -E 's/^\[ *([0-9.]+)\].*rnvme-test-mark:([^:]*):.*/  \1 s \2/'
			printf '%s\n' "$leaks" | head -n 200
		} | diag
	fi | tee "$tap"
	pass=0 fail=1
	! grep -q '^ok 1' "$tap" || pass=1 fail=0
	echo "$name $pass $fail 0 0 $secs" >> "$summary"
	tot_pass=$((tot_pass + pass)) tot_fail=$((tot_fail + fail))
fi

echo "TOTAL $tot_pass $tot_fail $tot_skip" >> "$summary"
echo "# guest total: $tot_pass passed, $tot_fail failed, $tot_skip skipped"
[ "$tot_fail" = 0 ]
