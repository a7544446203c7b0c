#!/bin/bash
# rnvme-tool 05-hostile-discovery: `rnvme discover` against a discovery controller that lies in
# its log page (tests/hostile: rnvme-hostile-target). A numrec beyond what the page holds, a
# page shorter than its numrec, and strings with neither NUL nor padding each end in a clear
# error or a bounded answer, never a crash or a hang; a log that changes between the chunks of
# one read is read again, never accepted mixed; the discovery controller is removed
# every time. nvme-cli's answer to the same pages is printed for comparison.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
tool_begin

HT=${RNVME_OUT:-$REPO/build}/hostile/rnvme-hostile-target
[ -x "$HT" ] || tap_skip_all "hostile target not built ($HT; run 'make hostile')"
HPORT=4430
HNQN=nqn.2014-08.org.nvmexpress.rnvme:hostile
fx_rxe_up || bail "cannot set up $RNVME_RDMA over veth"
fx_host_driver_load || bail "cannot load the host driver"
modprobe rdma_ucm || bail "modprobe rdma_ucm failed"
set_host_identity
log=$(mktemp)
tpid=

start_target() { # FAULT: the target, faulting on every discovery log read
	"$HT" --addr "$TGT_IP4" --port "$HPORT" --nqn "$HNQN" --fault "$1" --fault-count -1 > "$log" 2>&1 &
	tpid=$!
	wait_for 20 grep -q '^listening' "$log" || bail "the hostile target did not start: $(cat "$log")"
}
stop_target() {
	kill -TERM "$tpid" 2>/dev/null
	wait_for 20 bash -c "! kill -0 $tpid 2>/dev/null" || kill -KILL "$tpid" 2>/dev/null
	wait "$tpid" 2>/dev/null
}
disc() { rn -o json discover --transport "$TRANSPORT" --traddr "$TGT_IP4" --trsvcid "$HPORT"; }
# crashed: the last run ended on a signal (segfault, abort) or the timeout
crashed() { [ "$R_RC" -ge 124 ]; }
# nvme_cli_says: nvme-cli's answer to the same page, for comparison only (a
# crash of nvme-cli leaves its discovery controller behind: removed here).
nvme_cli_says() {
	local out rc=0 left
	out=$(timeout 60 nvme discover -t "$TRANSPORT" -a "$TGT_IP4" -s "$HPORT" 2>&1) || rc=$?
	diag "nvme-cli discover: exit $rc; $(printf '%s\n' "$out" | grep -m2 -E 'subnqn|error|Failed|fail' | cut -c1-80 | tr '\n' ' ')"
	if ! wait_for 5 fx_no_fabrics_ctrls; then
		left=$(fabrics_ctrls | tr '\n' ' ')
		diag "nvme-cli left $left behind; removing it"
		fx_host_disconnect_all
	fi
}

start_target none
disc
expect_rc "well-behaved discovery controller: discover exits 0" 0
expect_json "it lists $HNQN at $TGT_IP4:$HPORT" \
	".entries[] | select(.subnqn == \"$HNQN\" and .traddr == \"$TGT_IP4\" and .trsvcid == \"$HPORT\")"
check "the discovery controller was removed" wait_for 30 fx_no_fabrics_ctrls
stop_target

# lying_page FAULT WHAT JQ-ON-STDERR|-: discover against a page with FAULT;
# with a jq filter the tool must fail with a clear error that matches it,
# with "-" it must succeed with every field bounded; the target lied, and
# the discovery controller is gone afterwards.
lying_page() {
	local fault=$1 what=$2 want=$3
	start_target "$fault"
	disc
	if [ "$want" = - ]; then
		if ! crashed && [ "$R_RC" = 0 ] &&
			jq -e '.entries[0] | (.subnqn | length) == 256 and (.traddr | length) == 256 and (.trsvcid | length) == 32' "$R_OUT" >/dev/null 2>&1; then
			ok "$what: each string stays within its field (256/256/32 characters)"
		else
			not_ok "$what: bounded fields, no crash" "$(show_run)"
		fi
	elif ! crashed && [ "$R_RC" != 0 ] && jq -e ".error.message | test(\"$want\")" "$R_ERR" >/dev/null 2>&1; then
		ok "$what: discover fails with exit $R_RC: $(jq -r .error.message "$R_ERR")"
	else
		not_ok "$what: a clear error (/$want/), no crash" "$(show_run)"
	fi
	check "the target lied ($fault fired)" grep -q "fault $fault fired" "$log"
	check "the discovery controller was removed ($what)" wait_for 30 fx_no_fabrics_ctrls
	nvme_cli_says
	stop_target
}

lying_page disc-numrec-huge "numrec 2^40" "claims"
lying_page disc-bad-len "numrec 3 in a page holding 1 record" "record [0-9]+ of 3 has no"
lying_page disc-unterminated "strings without NUL or padding" -

# A log that changes between the 4 KiB chunks of one read (once): the entries must all come from
# one version of the log (the header is read again after the whole log), never a mix.
"$HT" --addr "$TGT_IP4" --port "$HPORT" --nqn "$HNQN" --fault disc-changes --fault-count 1 > "$log" 2>&1 &
tpid=$!
wait_for 20 grep -q '^listening' "$log" || bail "the hostile target did not start: $(cat "$log")"
disc
expect_rc "a log that changed mid-read: discover exits 0" 0
check "the log changed between the chunks (disc-changes fired)" grep -q "fault disc-changes fired" "$log"
versions=$(jq -r '[.entries[].subnqn | capture(":v(?<v>[0-9]+)$") | .v] | unique | join(",")' "$R_OUT" 2>/dev/null)
if [ "$(jq '.entries | length' "$R_OUT" 2>/dev/null)" = 5 ] && [ -n "$versions" ] && [ "${versions#*,}" = "$versions" ]; then
	ok "all 5 entries come from one version of the log (v$versions)"
else
	not_ok "all entries from one version of the log" "versions: ${versions:-none}" "$(show_run)"
fi
check "the discovery controller was removed (changing log)" wait_for 30 fx_no_fabrics_ctrls
stop_target

rm -f "$log"
suite_end
