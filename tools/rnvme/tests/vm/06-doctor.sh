#!/bin/bash
# rnvme-tool 06-doctor: `rnvme doctor` passes a healthy Soft-RoCE host (exit 0), then names each
# fault, broken one at a time, by its check id with a fix: netdev MTU below the RDMA MTU, no rxe
# link on the route's netdev, nvme_rdma loaded beside rnvme, /etc/nvme/hostid removed or
# malformed, an unreachable target address, a tos that maps to no PFC priority (veth: DCB absent).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
tool_begin

fx_rxe_up || bail "cannot set up rxe over veth"
fx_host_driver_load || bail "cannot load rnvme"
set_host_identity
OUT_DIR=${RESULTS:-/results}/rnvme-tool

# doctor ARGS...: rnvme doctor --json ARGS, timed.
doctor() {
	local t
	t=$(now_ns)
	rn doctor --json "$@"
	echo "# rnvme doctor $*: exit $R_RC, $(secs_since "$t") s"
}

# expect_fault DESC RC ID SEVERITY: the last doctor run exited RC and reported check ID with
# SEVERITY and a fix.
expect_fault() {
	local desc=$1 rc=$2 id=$3 sev=$4
	if [ "$R_RC" = "$rc" ] &&
		jq -e --arg id "$id" --arg sev "$sev" \
			'[.checks[] | select(.id == $id and .severity == $sev and (.fix | type == "string"))] | length > 0' \
			"$R_OUT" >/dev/null 2>&1; then
		ok "$desc: exit $rc, $id $sev"
		diag "$(jq -r --arg id "$id" '.checks[] | select(.id == $id and .severity != "ok") | "seen: \(.seen)\nfix: \(.fix)"' "$R_OUT")"
	else
		not_ok "$desc" "expected exit $rc and $id $sev with a fix" "$(show_run)" \
			"$(jq -r '.checks[] | select(.severity != "ok") | "\(.severity) \(.id) \(.subject): \(.seen)"' "$R_OUT" 2>/dev/null)"
	fi
}

# ---------------------------------------------------------------- healthy
doctor --traddr "$TGT_IP4"
if [ "$R_RC" = 0 ] && jq -e '.status == "ok" and .exit_status == 0' "$R_OUT" >/dev/null; then
	ok "healthy Soft-RoCE host: doctor --traddr $TGT_IP4 exits 0"
else
	not_ok "healthy Soft-RoCE host: doctor --traddr $TGT_IP4 exits 0" "$(show_run)" \
		"$(jq -r '.checks[] | select(.severity != "ok") | "\(.severity) \(.id) \(.subject): \(.seen)"' "$R_OUT" 2>/dev/null)"
fi
expect_json "the route to $TGT_IP4 leaves through veth0 and rxe0 carries it" \
	'([.checks[] | select(.id == "target.route" and (.seen | test("dev veth0 src 192.0.2.1 \\(table 100\\)")))] | length == 1) and
	 ([.checks[] | select(.id == "target.rdma_netdev" and (.seen | test("rxe0/1")))] | length == 1)'
expect_json "the source GID is RoCE v2, IPv4-mapped, on rxe0" \
	'[.checks[] | select(.id == "target.source_gid" and (.seen | test("RoCE v2, IPv4-mapped")))] | length == 1'
expect_json "Soft-RoCE is reported, DCB absent on veth0 is not a fault" \
	'([.checks[] | select(.id == "rdma.soft_roce" and (.seen | test("rxe0")))] | length == 1) and
	 ([.checks[] | select(.id == "lossless.dcb" and .severity == "ok" and (.seen | test("DCB absent")))] | length == 1)'
expect_json "rnvme serves rdma; every check group ran" \
	'([.checks[] | select(.id == "module.transport" and (.seen | test("rnvme serves")))] | length == 1) and
	 ([.checks[].id | split(".")[0]] | unique) == ["host", "lossless", "module", "queues", "rdma", "target"]'
doctor --traddr "$TGT_IP6"
if [ "$R_RC" = 0 ] && jq -e '[.checks[] | select(.id == "target.source_gid" and (.seen | test("RoCE v2, IPv6")))] | length == 1' "$R_OUT" >/dev/null; then
	ok "IPv6 target $TGT_IP6: exit 0, the source GID is RoCE v2, IPv6"
else
	not_ok "IPv6 target $TGT_IP6: exit 0, the source GID is RoCE v2, IPv6" "$(show_run)"
fi
# A recorded snapshot of this host (a unit-test fixture: testdata/doctor/softroce-vm.json).
rn doctor --traddr "$TGT_IP4" --dump-snapshot
if [ "$R_RC" = 0 ] && jq -e '.devices | length == 2' "$R_OUT" >/dev/null; then
	cp "$R_OUT" "$OUT_DIR/06-doctor.snapshot.json" 2>/dev/null
	ok "--dump-snapshot records the host (2 RDMA devices)"
else
	not_ok "--dump-snapshot records the host" "$(show_run)"
fi
rn doctor --traddr "$TGT_IP4"
if [ "$R_RC" = 0 ] && grep -qE '^ok +target\.source_gid' "$R_OUT" && grep -qE '^[0-9]+ ok, 0 warnings, 0 failures$' "$R_OUT"; then
	ok "text output: one line per check and the summary"
else
	not_ok "text output: one line per check and the summary" "$(show_run)"
fi

# ---------------------------------------------------------------- faults, one at a time
ip link set dev veth0 mtu 1000
doctor --traddr "$TGT_IP4"
expect_fault "veth0 MTU 1000, below the RDMA MTU of 1024" 1 rdma.mtu warn
ip link set dev veth0 mtu 1500

rdma link delete rxe0
doctor --traddr "$TGT_IP4"
expect_fault "no rxe link on the route's netdev veth0" 2 target.rdma_netdev fail
expect_json "... and no source GID for $HOST_IP4" \
	'[.checks[] | select(.id == "target.source_gid" and .severity == "fail")] | length == 1'
rdma link add rxe0 type rxe netdev veth0
wait_for 30 fx_rxe_ports_active || bail "rxe0 did not come back"

if modprobe --ignore-install nvme-rdma; then
	doctor
	expect_fault "in-tree nvme_rdma loaded beside rnvme" 2 module.conflict fail
	rmmod nvme_rdma
else
	not_ok "load nvme_rdma beside rnvme" "modprobe --ignore-install nvme-rdma failed"
fi

rm -f /etc/nvme/hostid
doctor
expect_fault "/etc/nvme/hostid removed" 1 host.hostid warn
echo "not-a-uuid" > /etc/nvme/hostid
doctor
expect_fault "/etc/nvme/hostid malformed" 2 host.hostid fail
set_host_identity

doctor --traddr 198.51.100.7
expect_fault "unreachable target 198.51.100.7 (no route)" 2 target.route fail

# An on-link address whose neighbour resolution failed (set as the kernel leaves it after
# unanswered ARP probes; both veths carry 192.0.2.0/24).
if ip neigh replace 192.0.2.77 dev veth0 nud failed && ip neigh replace 192.0.2.77 dev veth1 nud failed; then
	doctor --traddr 192.0.2.77
	expect_fault "unreachable target 192.0.2.77 (neighbour FAILED)" 2 target.reachable fail
	ip neigh del 192.0.2.77 dev veth0 2>/dev/null
	ip neigh del 192.0.2.77 dev veth1 2>/dev/null
else
	tap_skip "ip neigh ... nud failed refused" "unreachable target (neighbour FAILED)"
fi

# A target on this host (the loopback make demo uses): connect and I/O work, so a warning with
# why, never a failure.
doctor --traddr 127.0.0.1
if [ "$R_RC" != 2 ] && jq -e '[.checks[] | select(.id == "target.route" and .severity == "warn" and (.seen | test("routed through lo")))] | length == 1' "$R_OUT" >/dev/null 2>&1; then
	ok "a local target (127.0.0.1): target.route warns, doctor exits $R_RC (not 2)"
else
	not_ok "a local target warns, not fails" "$(show_run)" \
		"$(jq -r '.checks[] | select(.severity != "ok") | "\(.severity) \(.id) \(.subject): \(.seen)"' "$R_OUT" 2>/dev/null)"
fi

doctor --traddr "$TGT_IP4" --tos 96
expect_fault "tos 96 on veth0 (DCB absent: no PFC priority)" 1 lossless.tos warn

# Back to healthy after every repair.
doctor --traddr "$TGT_IP4"
expect_rc "healthy again after the repairs: exit 0" 0

rn doctor --traddr not-an-address
if [ "$R_RC" = 2 ] && grep -q 'not an IPv4 or IPv6 address' "$R_ERR" && [ ! -s "$R_OUT" ]; then
	ok "a bad --traddr is a usage error on stderr (exit 2)"
else
	not_ok "a bad --traddr is a usage error on stderr (exit 2)" "$(show_run)"
fi

suite_end
