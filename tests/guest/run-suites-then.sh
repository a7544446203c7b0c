#!/bin/bash
# Guest side of tests/run-all.sh --then GUEST_CMD: the suites
# (tests/guest/run-suites.sh), then GUEST_CMD [ARGS...] in the same boot
# (make check runs the rnvme tool's guest suites after 10-dkms this way and
# saves a VM boot).  The suites' results stay run-suites.sh's
# (RESULTS/summary.txt and suites/; its exit status is this script's);
# GUEST_CMD's output goes to the console and RESULTS/then.log, its exit status
# to RESULTS/then.rc, for the caller to count on their own
# (tools/rnvme/tests/vm/run.sh --results DIR).
set -uo pipefail
RESULTS=${RESULTS:-/results}
[ $# -ge 1 ] || { echo "usage: $0 GUEST_CMD [ARGS...]" >&2; exit 2; }
rm -f "$RESULTS/then.log" "$RESULTS/then.rc"
rc=0
"$(dirname "$0")/run-suites.sh" || rc=$?
echo "# ===== then: $*"
{
	trc=0
	"$@" < /dev/null 2>&1 || trc=$?
	echo "$trc" > "$RESULTS/then.rc"
} | tee "$RESULTS/then.log"
exit "$rc"
