#!/bin/bash
# rnvme-tool 07-causes: connecting never surprises (issue 19).
#  - each refused connect ends with rnvme.ko's own record of that attempt, and the tool's cause
#    and fix rest on it: asserted by the record's keys (stage, cause), never by prose;
#  - two concurrent failing connects each get their own record (matched by the writer's pid);
#  - two concurrent creates of one association make one controller (rnvme.ko's claim), and
#    two rnvme connect-alls run beside nvme-cli's connect-all make each controller once;
#  - the boot units pass systemd-analyze verify, and their ExecStart lines connect.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
tool_begin
[ "$HOST_DRIVER" = rnvme ] || tap_skip_all "the attempt records are rnvme.ko's (HOST_DRIVER=$HOST_DRIVER)"

fx_setup --nqn "$TEST_NQN" --port 1
fx_target_up --nqn "$TEST_NQN2" --port 1 || bail "second subsystem"
set_host_identity
units=$REPO/tools/rnvme/units
ALLOW_NQN=nqn.2014-08.org.nvmexpress.rnvme:allowlist
base=(connect --transport "$TRANSPORT" --traddr "$TGT_IP4" --trsvcid "$TGT_PORT")

# expect_cause DESC STAGE CAUSE ARGS...: rnvme -o json ARGS... fails, and its error carries the
# module's record with that stage and cause, plus a cause and a fix for the admin (lib.sh).
expect_cause() {
	local desc=$1 stage=$2 cause=$3
	shift 3
	expect_refused "$desc" "" "$stage" "$cause" "$@"
}

# ---- causes, one per failure
# wrong port, wrong NQN and an unreachable address: 04-errors (expect_record).
# A subsystem with an allow-list that does not name this host.
fx_target_up --nqn "$ALLOW_NQN" --port 1 || bail "third subsystem"
echo 0 > "$NVMET_CFS/subsystems/$ALLOW_NQN/attr_allow_any_host"
expect_cause "host NQN not on the allow-list" fabrics-connect host-not-allowed "${base[@]}" --nqn "$ALLOW_NQN"
# The route to 198.51.100.2 leaves through a veth with no RDMA device; the peer end, in its own
# network namespace, answers ARP (a veth pair: the debug kernel has no dummy netdevs).
if ip netns add rnvns && ip link add rnvx0 type veth peer name rnvx1 netns rnvns &&
	ip addr add 198.51.100.1/24 dev rnvx0 && ip -n rnvns addr add 198.51.100.2/24 dev rnvx1 &&
	ip -n rnvns link set rnvx1 up && ip link set rnvx0 up; then
	expect_cause "no RDMA device on the route" address no-rdma-device \
		connect --transport "$TRANSPORT" --traddr 198.51.100.2 --trsvcid "$TGT_PORT" --nqn "$TEST_NQN"
else
	not_ok "a veth pair without an RDMA device for the no-RDMA-device case"
fi
ip link del rnvx0 2>/dev/null
ip netns del rnvns 2>/dev/null
check "no controller left behind by the refusals" wait_for 30 fx_no_fabrics_ctrls

# A target that refuses the I/O queues' size in its CM reject (rnvme-hostile-target).
HT=${RNVME_OUT:-$REPO/build}/hostile/rnvme-hostile-target
HNQN=nqn.2014-08.org.nvmexpress.rnvme:hostile
if [ -x "$HT" ] && modprobe rdma_ucm; then
	hlog=$(mktemp)
	"$HT" --addr "$TGT_IP4" --port 4430 --nqn "$HNQN" --fault reject-qsize --fault-count -1 > "$hlog" 2>&1 &
	hpid=$!
	if wait_for 20 grep -q '^listening' "$hlog"; then
		expect_cause "target rejects the queue size" cm target-reject \
			connect --transport "$TRANSPORT" --traddr "$TGT_IP4" --trsvcid 4430 --nqn "$HNQN"
		check "the record names the reject status (invalid-hsqsize) and queue 1" \
			jq -e '.error.record.rej == "invalid-hsqsize" and .error.record.qid == "1"' "$R_ERR"
		check "the fix is to lower --queue-size" jq -e '.error.fix | test("--queue-size")' "$R_ERR"
		check "the target's fault fired" grep -q '^fault reject-qsize fired' "$hlog"
	else
		not_ok "hostile target started" "$(cat "$hlog")"
	fi
	kill -TERM "$hpid" 2>/dev/null
	wait "$hpid" 2>/dev/null
	rm -f "$hlog"
else
	tap_skip "rnvme-hostile-target not built (make hostile) or no rdma_ucm" "target rejects the queue size"
fi
check "no controller left behind" wait_for 30 fx_no_fabrics_ctrls

# ---- two concurrent failing connects: each its own cause
d=$(mktemp -d)
t=$(now_ns)
"$RNVME_BIN" -o json "${base[@]}" --nqn nqn.2014-08.org.nvmexpress.rnvme:nope 2> "$d/a" & pa=$!
"$RNVME_BIN" -o json "${base[@]/$TGT_PORT/4499}" --nqn "$TEST_NQN" 2> "$d/b" & pb=$!
wait "$pa"; wait "$pb"
ca=$(jq -r .error.record.cause "$d/a" 2>/dev/null) cb=$(jq -r .error.record.cause "$d/b" 2>/dev/null)
pida=$(jq -r .error.record.pid "$d/a" 2>/dev/null) pidb=$(jq -r .error.record.pid "$d/b" 2>/dev/null)
if [ "$ca" = subsystem-not-found ] && [ "$cb" = no-listener ] && [ "$pida" = "$pa" ] && [ "$pidb" = "$pb" ]; then
	ok "concurrent failing connects: each its own record (pid $pa: $ca, pid $pb: $cb) in $(secs_since "$t") s"
else
	not_ok "concurrent failing connects: each its own record" "a (pid $pa): $ca from $pida" \
		"b (pid $pb): $cb from $pidb" "$(cat "$d/a" "$d/b")"
fi

# ---- idempotence
rn "${base[@]}" --nqn "$TEST_NQN"
expect_rc "connect" 0
rn -o json "${base[@]}" --nqn "$TEST_NQN"
expect_rc "the same connect again exits 0" 0
expect_json "and names the existing controller" '.already_connected == true'
check "one controller for $TEST_NQN" test "$(ctrls_for_nqn "$TEST_NQN" | wc -l)" = 1
rn disconnect-all
wait_for 30 fx_no_fabrics_ctrls

# Two creates of one association written at once to /dev/nvme-fabrics (past any tool's sysfs
# check): rnvme.ko lets exactly one through; the other is refused with its own record.
opts="$(nvmf_opts),hostnqn=$HOST_NQN,hostid=$HOST_ID"
nvmf_write "$opts" 90 > "$d/w1" & w1=$!
nvmf_write "$opts" 90 > "$d/w2" & w2=$!
wait "$w1"; wait "$w2"
n=$(ctrls_for_nqn "$TEST_NQN" | wc -l)
won=$(grep -c '^instance=' "$d/w1" "$d/w2" | awk -F: '{ s += $2 } END { print s }')
if [ "$n" = 1 ] && [ "$won" = 1 ]; then
	ok "concurrent writes of one association: one controller, one refusal"
else
	not_ok "concurrent writes of one association: one controller" "$n controllers, $won writes succeeded" \
		"$(cat "$d/w1" "$d/w2")"
fi
check "the refused write's record says already-connected" \
	bash -c "dmesg | grep 'rnvme: attempt' | tail -n 2 | grep 'stage=options cause=already-connected' >/dev/null"
rn disconnect-all
wait_for 30 fx_no_fabrics_ctrls

# Two rnvme connect-alls and nvme-cli's connect-all at once, from one discovery.conf.
mkdir -p /etc/nvme
printf -- '--transport=%s --traddr=%s --trsvcid=%s\n' "$TRANSPORT" "$TGT_IP4" "$TGT_PORT" > /etc/nvme/discovery.conf
t=$(now_ns)
"$RNVME_BIN" connect-all > "$d/ca1" 2>&1 & c1=$!
"$RNVME_BIN" connect-all > "$d/ca2" 2>&1 & c2=$!
timeout 120 nvme connect-all > "$d/ca3" 2>&1 & c3=$!
rc1=0 rc2=0
wait "$c1" || rc1=$?
wait "$c2" || rc2=$?
wait "$c3"
n1=$(ctrls_for_nqn "$TEST_NQN" | wc -l) n2=$(ctrls_for_nqn "$TEST_NQN2" | wc -l)
if [ "$rc1" = 0 ] && [ "$rc2" = 0 ] && [ "$n1" = 1 ] && [ "$n2" = 1 ]; then
	ok "2 x rnvme connect-all + nvme connect-all at once: one controller per subsystem, rnvme exits 0 ($(secs_since "$t") s)"
else
	not_ok "2 x rnvme connect-all + nvme connect-all: one controller per subsystem" \
		"rnvme exits $rc1 $rc2; controllers $n1 + $n2" "$(cat "$d/ca1" "$d/ca2" "$d/ca3")"
fi
rn -o json connect-all
expect_json "connect-all again: nothing new" \
	'[.results[].status | select(. != "skipped")] | length == 2 and all(. == "already_connected")'
rn disconnect-all
wait_for 30 fx_no_fabrics_ctrls

# ---- boot units
# systemd is not PID 1 in the test VM: the units are verified, and their ExecStart lines run.
[ -x /usr/sbin/rnvme ] || install -m 0755 "$RNVME_BIN" /usr/sbin/rnvme
mkdir -p "$d/units"
cp "$units/rnvme-autoconnect.service" "$d/units/"
cp "$units/rnvme-connect@.service" "$d/units/rnvme-connect@nvme0.service"
if out=$(systemd-analyze verify --man=no "$d/units/"*.service 2>&1) && [ -z "$out" ]; then
	ok "systemd-analyze verify: both units clean"
else
	not_ok "systemd-analyze verify: both units clean" "$out"
fi
exec_of() { sed -n 's/^ExecStart=//p' "$1"; }
# shellcheck disable=SC2046 # the unit's command line, word-split as systemd does (no quotes in it)
timeout 120 $(exec_of "$units/rnvme-autoconnect.service") > "$d/boot" 2>&1
rc=$?
check "rnvme-autoconnect.service's ExecStart exits 0 (exit $rc)" test "$rc" = 0
check "and connected both subsystems from /etc/nvme/discovery.conf" \
	test "$(ctrls_for_nqn "$TEST_NQN" | wc -l)$(ctrls_for_nqn "$TEST_NQN2" | wc -l)" = 11
rn disconnect-all
wait_for 30 fx_no_fabrics_ctrls
rm -f /etc/nvme/discovery.conf
# the udev rule starts it for the persistent discovery controller whose log changed
before=$(fabrics_ctrls)
rn discover --persistent --transport "$TRANSPORT" --traddr "$TGT_IP4" --trsvcid "$TGT_PORT"
dc=$(comm -13 <(echo "$before") <(fabrics_ctrls) | head -n 1)
cmd=$(exec_of "$units/rnvme-connect@.service")
# shellcheck disable=SC2086 # as systemd would run it for instance $dc
timeout 120 ${cmd//%I/$dc} > "$d/event" 2>&1
rc=$?
check "rnvme-connect@$dc.service's ExecStart exits 0 (exit $rc)" test "$rc" = 0
check "and connected what the discovery log lists" \
	test "$(ctrls_for_nqn "$TEST_NQN" | wc -l)$(ctrls_for_nqn "$TEST_NQN2" | wc -l)" = 11
rn disconnect-all
wait_for 30 fx_no_fabrics_ctrls
rm -rf "$d"

suite_end
