#!/bin/bash
# rnvme-tool 04-errors: each class of connect failure gets its own reason, cause and fix, and
# its documented exit code: wrong NQN, wrong port, no RDMA device for the source address,
# unreachable target, bad option value, hostid/hostnqn mismatch, transport not loaded.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
tool_begin

fx_setup --nqn "$TEST_NQN" --port 1
set_host_identity
base=(connect --transport "$TRANSPORT" --traddr "$TGT_IP4")

expect_failure "wrong NQN" 4 wrong_nqn "${base[@]}" --trsvcid "$TGT_PORT" --nqn nqn.2014-08.org.nvmexpress.rnvme:nope
check "no controller left behind (wrong NQN)" wait_for 30 fx_no_fabrics_ctrls

t=$(now_ns)
expect_failure "wrong port (nothing listens on 4499)" 4 wrong_port "${base[@]}" --trsvcid 4499 --nqn "$TEST_NQN"
diag "wrong port answered in $(secs_since "$t") s"

# A local address on a netdev without an RDMA device.
ip link add rnvdummy0 type dummy && ip addr add 198.51.100.1/24 dev rnvdummy0 && ip link set rnvdummy0 up
expect_failure "no RDMA device for the source address" 6 no_rdma_device \
	"${base[@]}" --trsvcid "$TGT_PORT" --nqn "$TEST_NQN" --host-traddr 198.51.100.1
ip link del rnvdummy0 2>/dev/null

# On the fabric's subnet, but nobody answers (no neighbour entry resolves).
expect_failure "unreachable target address" 4 unreachable \
	connect --transport "$TRANSPORT" --traddr 192.0.2.99 --trsvcid "$TGT_PORT" --nqn "$TEST_NQN"
check "no controller left behind" wait_for 30 fx_no_fabrics_ctrls

expect_failure "bad option value (queue size 8)" 2 bad_option "${base[@]}" --nqn "$TEST_NQN" --queue-size 8
expect_failure "bad option value (tos 300)" 2 bad_option "${base[@]}" --nqn "$TEST_NQN" --tos 300
rn connect --transport "$TRANSPORT" --traddr "$TGT_IP4" --nqn "$TEST_NQN" --queue-size lots
expect_rc "non-numeric --queue-size is a usage error (exit 2)" 2

set_host_identity 11111111-2222-4333-8444-555555555555
expect_failure "hostid disagrees with the hostnqn UUID" 3 host_identity "${base[@]}" --nqn "$TEST_NQN"
if jq -r .error.message "$R_ERR" | grep -q /etc/nvme/hostid; then ok "the message names /etc/nvme/hostid"; else not_ok "the message names /etc/nvme/hostid" "$(show_run)"; fi
if [ -z "$(fabrics_ctrls)" ]; then ok "nothing was written to the kernel"; else not_ok "nothing was written" "$(fabrics_ctrls)"; fi
rn hostnqn check
expect_rc "hostnqn check exits 3 on the mismatch" 3
rn hostnqn generate --force
expect_rc "hostnqn generate --force repairs it" 0
check "hostid now equals the hostnqn UUID" grep -qx "$HOST_ID" /etc/nvme/hostid
rn hostnqn check
expect_rc "hostnqn check exits 0 afterwards" 0

rn connect --transport "$TRANSPORT" --traddr "$TGT_IP4" --trsvcid "$TGT_PORT" --nqn "$TEST_NQN"
expect_rc "connect works again after the repair" 0
rn disconnect-all
wait_for 30 fx_no_fabrics_ctrls

# The transport module unloaded (its in-tree twin is blocked by the fixture's modprobe.d).
fx_host_driver_unload || diag "unload failed"
modprobe nvme-fabrics
expect_failure "transport module not loaded" 6 module_missing "${base[@]}" --trsvcid "$TGT_PORT" --nqn "$TEST_NQN"

suite_end
