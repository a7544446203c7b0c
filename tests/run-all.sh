#!/bin/bash
# Run the guest test suites (tests/suites/NN-*.sh) in ONE VM boot.
#
# usage: tests/run-all.sh [--kver KVER | --kernel-dir DIR] [--timeout SECS] [--out DIR] [--rig]
#                         [--then GUEST_CMD] [-v]
#   --kernel-dir DIR    boot the debug kernel built by tests/debug-kernel/build.sh
#                       (DIR = its cache directory; rnvme built with make debug-kernel);
#                       with --rig both guests boot it
#   --rig               run the two-VM rig suites (tests/rig/suites, target and
#                       host in separate guests joined by a wire; tests/rig/run-rig.sh)
#   --then GUEST_CMD    after the suites, run GUEST_CMD (a script in the checkout)
#                       in the same boot; its output lands in OUT/then.log, its exit
#                       status in OUT/then.rc; neither counts here (make check: the
#                       tool suites after 10-dkms, tools/rnvme/tests/vm/run.sh --results)
#   SUITES="03 04"      select suites by number (or full name)
#   HOST_DRIVER=inbox   test the in-tree nvme_rdma instead of ./rnvme.ko
#   TRANSPORT=name      transport name the host registers (default rdma)
#   RNVME_PARAMS="..."  module parameters for rnvme.ko
# The last line printed is "N passed, N failed[, N skipped]"; exit status is
# non-zero when anything failed.
# shellcheck source=../tools/kbuild/strict.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tools/kbuild/strict.sh"
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT_ROOT=${RNVME_OUT:-$REPO/build}

kver='' timeout_s=3600 out='' verbose=() rig=0 kdir=() then_cmd=''
while [ $# -gt 0 ]; do
	case "$1" in
	--kver) kver=${2:?}; shift 2 ;;
	--kernel-dir) kdir=(--kernel-dir "${2:?}"); kver=$(cat "$2/kernel.release") || exit 2; shift 2 ;;
	--timeout) timeout_s=${2:?}; shift 2 ;;
	--out) out=${2:?}; shift 2 ;;
	--rig) rig=1; shift ;;
	--then) then_cmd=$(realpath -e "${2:?}") || exit 2; shift 2 ;;
	-v|--verbose) verbose=(-v); shift ;;
	-h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "run-all: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[ -n "$kver" ] || kver=$("$REPO/tests/lib/kver.sh")
if [ "$rig" = 1 ] && [ -n "$then_cmd" ]; then
	echo "run-all: --then is for the one-VM suites, not --rig" >&2
	exit 2
fi
if [ -z "$out" ]; then
	if [ "$rig" = 1 ]; then out=$OUT_ROOT/vm/rig; else out=$OUT_ROOT/vm/run-all; fi
fi
export HOST_DRIVER=${HOST_DRIVER:-rnvme}
if [ "$HOST_DRIVER" != inbox ] && [ ! -r "$OUT_ROOT/$kver/rnvme.ko" ] && [ -z "${RNVME_KO:-}" ]; then
	echo "run-all: $OUT_ROOT/$kver/rnvme.ko not found: build it first (make), or use HOST_DRIVER=inbox" >&2
	echo "0 passed, 1 failed"
	exit 1
fi

mkdir -p "$out"
out=$(realpath "$out")
rm -rf "$out/suites" "$out/summary.txt" "$out/then.log" "$out/then.rc"
vmrc=0
if [ "$rig" = 1 ]; then
	"$REPO/tests/rig/run-rig.sh" --kver "$kver" "${kdir[@]}" --timeout "$timeout_s" --out "$out" "${verbose[@]}" ||
		vmrc=$?
else
	guest=("$REPO/tests/guest/run-suites.sh")
	[ -z "$then_cmd" ] || guest=("$REPO/tests/guest/run-suites-then.sh" "$then_cmd")
	"$REPO/tests/vm/run-vm.sh" --kver "$kver" "${kdir[@]}" --timeout "$timeout_s" --out "$out" "${verbose[@]}" \
		-- "${guest[@]}" || vmrc=$?
fi

echo
echo "== TAP per suite ($out/suites/NN-name.tap; dmesg per suite in NN-name.dmesg)"
pass=0 fail=0 skip=0
if [ -s "$out/summary.txt" ]; then
	while read -r name p f s rc secs; do
		[ "$name" = TOTAL ] && continue
		printf '%-16s %3d passed %3d failed %3d skipped  rc=%-3s %8s s\n' "$name" "$p" "$f" "$s" "$rc" "$secs"
		if [ "$f" != 0 ]; then
			grep -E -A 12 '^not ok' "$out/suites/$name.tap" | sed 's/^/    /' | head -n 60
		fi
		pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	done < "$out/summary.txt"
fi
incomplete=0
count() { grep -cE "$1" "$2" || true; }
# A suite with TAP output but no summary line was running when the guest died.
for tap in "$out"/suites/*.tap; do
	[ -e "$tap" ] || continue
	name=$(basename "$tap" .tap)
	grep -q "^$name " "$out/summary.txt" 2>/dev/null && continue
	echo "$name: INCOMPLETE (guest crashed, hung or timed out during this suite); its TAP so far:"
	tail -n 15 "$tap" | sed 's/^/    /'
	echo "    console tail ($out/console.log):"
	tail -n 25 "$out/console.log" | sed 's/^/    /'
	p=$(count '^ok [0-9]+' "$tap") s=$(count '^ok [0-9]+.*# SKIP' "$tap") f=$(count '^not ok [0-9]+' "$tap")
	pass=$((pass + p - s)) skip=$((skip + s)) fail=$((fail + 1 + f))
	incomplete=$((incomplete + 1))
done
if [ -s "$out/summary.txt" ] && ! grep -q '^TOTAL' "$out/summary.txt" && [ "$incomplete" = 0 ]; then
	echo "run-all: the guest runner did not finish"
	fail=$((fail + 1))
fi
if [ ! -s "$out/summary.txt" ] && ! ls "$out"/suites/*.tap >/dev/null 2>&1; then
	echo "run-all: no results (VM status $vmrc); see $out/console.log"
	fail=$((fail + 1))
fi
if [ "$vmrc" != 0 ] && [ "$fail" = 0 ]; then
	echo "run-all: VM/guest runner exited with $vmrc"
	fail=$((fail + 1))
fi
if [ "$skip" != 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" = 0 ]
