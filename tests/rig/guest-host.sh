#!/bin/bash
# Host guest of the two-VM rig (tests/rig/run-rig.sh): runs the rig suites
# (tests/rig/suites/NN-*.sh) with the usual guest runner once the target guest
# has exported its subsystem.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/rig.sh
. "$(dirname "$0")/../lib/rig.sh"

hostname rnvme-rig-host
rig_mount || { echo "rig-host: cannot mount the rig share"; exit 1; }
t=$(now_ns)
if ! rig_wait_target; then
	[ -e "$RIG/target-failed" ] && echo "rig-host: target guest failed: $(cat "$RIG/target-failed")"
	exit 1
fi
echo "# rig-host: target guest ready after $(secs_since "$t") s"
RNVME_SUITE_DIR=rig/suites exec "$REPO/tests/guest/run-suites.sh"
