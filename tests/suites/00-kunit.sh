#!/bin/bash
# 00-kunit: the KUnit suites of rnvme's pure logic (rnvme_kunit.ko, built next
# to rnvme.ko when the target kernel has CONFIG_KUNIT).  Loading the module
# runs them; every KUnit case becomes one TAP point here, and every expected
# rnvme_* suite must have run.  Kernels without KUnit (Debian's) skip.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"

# Keep in step with drivers/rnvme/tests/*_kunit.c.
EXPECTED_SUITES="rnvme_queue_map rnvme_sqsize rnvme_cm rnvme_sgl rnvme_inline rnvme_fr rnvme_reconnect rnvme_params rnvme_tele rnvme_hold"
: "${RNVME_KUNIT_KO:=$(dirname "$RNVME_KO")/rnvme_kunit.ko}"
KUNIT_DEBUGFS=/sys/kernel/debug/kunit

if [ "$HOST_DRIVER" = inbox ]; then
	tap_skip "the KUnit suites test rnvme.ko, not the in-tree driver (HOST_DRIVER=inbox)" "rnvme KUnit suites"
	tap_finish
fi
# Built in, KUnit shows its parameters under /sys/module/kunit; as a module
# it may not be loaded yet.
if [ ! -d /sys/module/kunit ] && ! modprobe -q kunit 2>/dev/null; then
	tap_skip "kernel $(uname -r) has no KUnit (CONFIG_KUNIT); boot the debug kernel" "rnvme KUnit suites"
	tap_finish
fi

suite_begin
if [ ! -r "$RNVME_KUNIT_KO" ]; then
	not_ok "rnvme_kunit.ko next to rnvme.ko" "$RNVME_KUNIT_KO not found; the kernel has KUnit, so 'make module' should have built it"
	suite_end
fi
fx_host_driver_load || bail "cannot load rnvme.ko ($RNVME_KO)"
# (after 6.12 a test module's suites run at load only with kunit.autorun)
if [ "$(cat /sys/module/kunit/parameters/autorun 2>/dev/null || echo Y)" != Y ]; then
	not_ok "KUnit runs a test module's suites when it loads" \
		"kunit.autorun is off: build the kernel with CONFIG_KUNIT_AUTORUN_ENABLED=y or boot it with kunit.autorun=1"
	suite_end
fi

fx_dmesg_mark kunit-load
t=$(now_ns)
if ! out=$(timeout 300 insmod "$RNVME_KUNIT_KO" 2>&1); then
	not_ok "insmod rnvme_kunit.ko" "$out" "$(fx_dmesg_since_mark | tail -n 20)"
	suite_end
fi
ok "insmod rnvme_kunit.ko runs the suites ($(secs_since "$t") s)"

# The KTAP of the rnvme suites: debugfs keeps each suite's results while the
# module is loaded (CONFIG_KUNIT_DEBUGFS); otherwise the kernel log has them.
ktap=$(mktemp)
if compgen -G "$KUNIT_DEBUGFS/rnvme_*/results" >/dev/null; then
	source_desc="debugfs $KUNIT_DEBUGFS/<suite>/results"
	cat "$KUNIT_DEBUGFS"/rnvme_*/results > "$ktap"
else
	source_desc="kernel log (no $KUNIT_DEBUGFS)"
	fx_dmesg_since_mark | sed -E 's/^\[[ 0-9.]*\] ?//' > "$ktap"
fi
diag "KTAP from the $source_desc"

# One TAP point per KUnit case (the 4-space level of KTAP); the lines a
# case logged before its result are its diagnostics.
declare -A plan=() ncase=() npass=() nfail=() nskip=() sresult=()
suites_seen=()
suite='' notes=()
while IFS= read -r line; do
	if [[ $line =~ ^\ {4}#\ Subtest:\ (.+)$ ]]; then
		suite=${BASH_REMATCH[1]} notes=()
		case " ${suites_seen[*]} " in *" $suite "*) ;; *) suites_seen+=("$suite") ;; esac
		ncase[$suite]=0 npass[$suite]=0 nfail[$suite]=0 nskip[$suite]=0
		continue
	fi
	[ -n "$suite" ] || continue
	if [[ $line =~ ^\ {4}1\.\.([0-9]+)$ ]]; then
		plan[$suite]=${BASH_REMATCH[1]}
	elif [[ $line =~ ^\ {4}(not\ ok|ok)\ [0-9]+\ ([^ #]+)(\ #\ SKIP\ ?(.*))?$ ]]; then
		res=${BASH_REMATCH[1]} name=${BASH_REMATCH[2]}
		ncase[$suite]=$((ncase[$suite] + 1))
		if [ "$res" = "not ok" ]; then
			nfail[$suite]=$((nfail[$suite] + 1))
			not_ok "$suite: $name" "$(printf '%s\n' "${notes[@]}")"
		elif [ -n "${BASH_REMATCH[3]}" ]; then
			nskip[$suite]=$((nskip[$suite] + 1))
			tap_skip "${BASH_REMATCH[4]:-skipped by KUnit}" "$suite: $name"
		else
			npass[$suite]=$((npass[$suite] + 1))
			ok "$suite: $name"
		fi
		notes=()
	elif [[ $line =~ ^(not\ ok|ok)\ [0-9]+\ ([^ #]+) ]] && [ "${BASH_REMATCH[2]}" = "$suite" ]; then
		sresult[$suite]=${BASH_REMATCH[1]}
		suite=''
	elif [[ $line =~ ^\ {4}KTAP\ version ]]; then
		:
	else
		notes+=("${line#    }")
	fi
done < "$ktap"

total=0
for s in "${suites_seen[@]}"; do
	case "$s" in rnvme_*) ;; *) continue ;; esac
	diag "$s: ${ncase[$s]} cases (${npass[$s]} passed, ${nfail[$s]} failed, ${nskip[$s]} skipped)"
	total=$((total + ncase[$s]))
	# every planned case reported, and no failure outside the cases
	# (a suite_init error fails the suite without running any case)
	if [ "${plan[$s]:-?}" != "${ncase[$s]}" ]; then
		not_ok "$s: all cases reported" "plan 1..${plan[$s]:-?}, ${ncase[$s]} results"
	elif [ "${sresult[$s]:-}" = "not ok" ] && [ "${nfail[$s]}" = 0 ]; then
		not_ok "$s: suite result" \
			"$(echo "KUnit reports the suite failed without a failing case"; grep -A3 "# Subtest: $s" "$ktap" | head -n 10)"
	fi
done

missing=()
for s in $EXPECTED_SUITES; do
	case " ${suites_seen[*]} " in *" $s "*) ;; *) missing+=("$s") ;; esac
done
n_expected=$(wc -w <<< "$EXPECTED_SUITES")
if [ ${#missing[@]} = 0 ]; then
	ok "all $n_expected expected rnvme suites ran ($total cases)"
else
	not_ok "all $n_expected expected rnvme suites ran" \
		"$(printf 'missing: %s\nseen: %s\n' "${missing[*]}" "${suites_seen[*]:-none}"; head -n 20 "$ktap")"
fi
for s in "${suites_seen[@]}"; do
	case " $EXPECTED_SUITES " in
	*" $s "*) ;;
	*) case "$s" in rnvme_*) diag "suite $s ran but is not in EXPECTED_SUITES" ;; esac ;;
	esac
done
rm -f "$ktap"

check "rmmod rnvme_kunit" timeout 60 rmmod rnvme_kunit
suite_end
