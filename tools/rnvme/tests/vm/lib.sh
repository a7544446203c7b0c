# shellcheck shell=bash
# Helpers for the rnvme tool's guest suites (tools/rnvme/tests/vm/NN-*.sh). They run inside the
# test VM as root and build on the harness's fixture library, tests/lib/common.sh (TAP helpers,
# fx_rxe_up, fx_target_up, fx_host_driver_load, cleanup), which they only read.
#
#   RNVME_BIN   the tool under test (default: $REPO/build/tools/rnvme)

_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../../../../tests/lib/common.sh
. "$_here/../../../../tests/lib/common.sh"

: "${RNVME_BIN:=${RNVME_OUT:-$REPO/build}/tools/rnvme}"
R_OUT=$(mktemp)
R_ERR=$(mktemp)
R_RC=0
trap 'rm -f "$R_OUT" "$R_ERR"' EXIT

# tool_begin: suite_begin, plus a skip when the tool was not built.
tool_begin() {
	[ -x "$RNVME_BIN" ] || tap_skip_all "rnvme tool not built ($RNVME_BIN; run 'make tool')"
	command -v jq >/dev/null || tap_skip_all "jq not installed (needed to read -o json)"
	suite_begin
	echo "# tool: $RNVME_BIN"
}

# rn ARGS...: run the tool (bounded); stdout in $R_OUT, stderr in $R_ERR, exit status in $R_RC.
rn() {
	R_RC=0
	timeout 120 "$RNVME_BIN" "$@" > "$R_OUT" 2> "$R_ERR" || R_RC=$?
}

# show_run: the last run's output as TAP diagnostics.
show_run() {
	echo "exit $R_RC"
	sed -n '1,25p' "$R_OUT"
	sed -n '1,25p' "$R_ERR"
}

# expect_rc DESC RC: a test point on the last run's exit status.
expect_rc() {
	if [ "$R_RC" = "$2" ]; then ok "$1"; else not_ok "$1" "expected exit $2" "$(show_run)"; fi
}

# expect_json DESC FILTER [FILE]: a test point; jq -e FILTER on the last stdout (or FILE) holds.
expect_json() {
	local f=${3:-$R_OUT}
	if jq -e "$2" "$f" >/dev/null 2>&1; then
		ok "$1"
	else
		not_ok "$1" "jq -e '$2' failed on:" "$(show_run)"
	fi
}

# expect_failure DESC RC REASON ARGS...: rnvme -o json ARGS... fails with exit RC, its JSON error
# names REASON, and it printed a cause and a fix.
expect_failure() {
	local desc=$1 rc=$2 reason=$3 got
	shift 3
	rn -o json "$@"
	got=$(jq -r '.error.reason // "none"' "$R_ERR" 2>/dev/null || echo unparsable)
	if [ "$R_RC" = "$rc" ] && [ "$got" = "$reason" ] &&
		jq -e '.error.cause != null and .error.fix != null' "$R_ERR" >/dev/null 2>&1; then
		ok "$desc (exit $rc, reason $reason)"
		diag "cause: $(jq -r .error.cause "$R_ERR")" "fix: $(jq -r .error.fix "$R_ERR")"
	else
		not_ok "$desc" "expected exit $rc reason $reason, got exit $R_RC reason $got" "$(show_run)"
	fi
}

# expect_record STAGE CAUSE: a test point; the last run's JSON error carries rnvme.ko's record of
# the attempt with that stage and cause (read by key). Only rnvme.ko writes records.
expect_record() {
	local got
	if [ "$HOST_DRIVER" != rnvme ]; then
		tap_skip "records are rnvme.ko's (HOST_DRIVER=$HOST_DRIVER)" "module record stage=$1 cause=$2"
		return
	fi
	got=$(jq -r '"\(.error.record.stage // "none")/\(.error.record.cause // "none")"' "$R_ERR" 2>/dev/null)
	if [ "$got" = "$1/$2" ]; then
		ok "module record: stage=$1 cause=$2 (pid $(jq -r .error.record.pid "$R_ERR"))"
	else
		not_ok "module record: stage=$1 cause=$2" "got $got" "$(dmesg | grep 'rnvme: attempt' | tail -n 3)"
	fi
}

# expect_refused DESC REASON STAGE CAUSES ARGS...: a test point; rnvme -o json ARGS... fails, its
# JSON error names REASON (any when empty), carries rnvme.ko's record of the attempt with STAGE
# and one of CAUSES (a|b), and a cause and a fix for the admin. The kernel log lines matching
# $REFUSED_DMESG (default 'rnvme: attempt') go with a failure. Shared by 07-causes and 09-auth.
expect_refused() {
	local desc=$1 reason=$2 stage=$3 cause=$4 t got
	shift 4
	t=$(now_ns)
	rn -o json "$@"
	got=$(jq -r '"\(.error.reason // "none") \(.error.record.stage // "none")/\(.error.record.cause // "none")"' "$R_ERR" 2>/dev/null)
	if [ "$R_RC" != 0 ] && [[ "$got" =~ ^(${reason:-[^ ]+})\ $stage/($cause)$ ]] &&
		jq -e '.error.cause != null and .error.fix != null' "$R_ERR" >/dev/null 2>&1; then
		ok "$desc: exit $R_RC, reason ${got%% *}, record ${got#* }, in $(secs_since "$t") s"
		diag "cause: $(jq -r .error.cause "$R_ERR")" "fix: $(jq -r .error.fix "$R_ERR")"
	else
		not_ok "$desc: ${reason:+reason $reason, }record stage=$stage cause=$cause" "got: $got, exit $R_RC" \
			"$(show_run)" "$(dmesg | grep -E "${REFUSED_DMESG:-rnvme: attempt}" | tail -n 6)"
	fi
}

# set_host_identity [HOSTID]: a consistent /etc/nvme pair (the guest's /etc is a tmpfs overlay),
# or a deliberately different HOSTID.
set_host_identity() {
	mkdir -p /etc/nvme
	echo "$HOST_NQN" > /etc/nvme/hostnqn
	echo "${1:-$HOST_ID}" > /etc/nvme/hostid
}

# fabrics_ctrls: names of the fabrics controllers present.
fabrics_ctrls() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ -e "$c/transport" ] && basename "$c"
	done
	return 0
}
