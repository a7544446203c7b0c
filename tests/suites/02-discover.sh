#!/bin/bash
# shellcheck disable=SC2317,SC2119 # helpers are invoked indirectly (check, wait_for)
# 02-discover: nvme discover over IPv4 and IPv6 lists the test subsystem.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
suite_begin

fx_setup --nqn "$TEST_NQN" --port 1
fx_target_up --nqn "$TEST_NQN" --port 2 --adrfam ipv6 --traddr "$TGT_IP6" || bail "IPv6 target port"

# discover_lists OUTFILE TRADDR: the log names the test subsystem at TRADDR.
discover_lists() {
	grep -q "subnqn: *$TEST_NQN\$" "$1" && grep -q "traddr: *$2\$" "$1"
}

disc=$(mktemp)
rc=0
timed "discover ipv4" timeout 90 nvme discover -t "$TRANSPORT" -a "$TGT_IP4" -s "$TGT_PORT" > "$disc" 2>&1 || rc=$?
if [ "$rc" = 0 ] && discover_lists "$disc" "$TGT_IP4"; then
	ok "discover over IPv4 lists $TEST_NQN"
else
	not_ok "discover over IPv4 lists $TEST_NQN" "exit $rc" "$(tail -n 30 "$disc")"
fi
check "discover log entry says trtype rdma" grep -q "trtype: *rdma" "$disc"
check "discovery controller removed afterwards" wait_for 30 fx_no_fabrics_ctrls

rc=0
timed "discover ipv6" timeout 90 nvme discover -t "$TRANSPORT" -a "$TGT_IP6" -s "$TGT_PORT" > "$disc" 2>&1 || rc=$?
if [ "$rc" = 0 ] && discover_lists "$disc" "$TGT_IP6"; then
	ok "discover over IPv6 lists $TEST_NQN"
else
	not_ok "discover over IPv6 lists $TEST_NQN" "exit $rc" "$(tail -n 30 "$disc")"
fi

rc=0
timed "discover with host_traddr" timeout 90 nvme discover -t "$TRANSPORT" -a "$TGT_IP4" -s "$TGT_PORT" -w "$HOST_IP4" > "$disc" 2>&1 || rc=$?
if [ "$rc" = 0 ] && discover_lists "$disc" "$TGT_IP4"; then
	ok "discover with host_traddr=$HOST_IP4"
else
	not_ok "discover with host_traddr=$HOST_IP4" "exit $rc" "$(tail -n 30 "$disc")"
fi

# Persistent discovery controller through the raw interface.
nqn_disc=nqn.2014-08.org.nvmexpress.discovery
reply=$(nvmf_write "$(nvmf_opts "$TGT_IP4" "$nqn_disc")")
case "$reply" in
instance=*)
	ok "raw discovery connect: $reply"
	inst=${reply#instance=}
	inst=${inst%%,*}
	check "discovery ctrl nvme$inst is live" wait_for 20 grep -qx live "/sys/class/nvme/nvme$inst/state"
	check "discovery ctrl has no namespaces" bash -c "! ls -d /sys/class/nvme/nvme$inst/nvme*n* 2>/dev/null | grep . >/dev/null"
	check "nvme discover through the existing controller" bash -c "timeout 60 nvme discover -d nvme$inst | grep '$TEST_NQN' >/dev/null"
	check "delete the discovery controller" bash -c "echo 1 > /sys/class/nvme/nvme$inst/delete_controller"
	;;
*) not_ok "raw discovery connect" "reply: $reply" ;;
esac

# Nothing listens on 4499: must fail, within a bounded time.
rc=0
timed "discover wrong port" timeout 120 nvme discover -t "$TRANSPORT" -a "$TGT_IP4" -s 4499 > "$disc" 2>&1 || rc=$?
if [ "$rc" != 0 ] && [ "$rc" != 124 ]; then
	ok "discover on a port without listener fails (${T_ELAPSED} s)"
else
	not_ok "discover on a port without listener fails" "exit $rc" "$(tail -n 10 "$disc")"
fi
check "no controller left behind" wait_for 30 fx_no_fabrics_ctrls
rm -f "$disc"
suite_end
