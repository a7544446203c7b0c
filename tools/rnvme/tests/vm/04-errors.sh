#!/bin/bash
# rnvme-tool 04-errors: each class of connect failure gets its own reason, cause and fix, and
# its documented exit code (and, with rnvme.ko, the module's record of the attempt; more of
# those in 07-causes): wrong NQN, wrong port, no RDMA device for the source address,
# unreachable target, bad option value, a host NQN in use with another host ID, transport not
# loaded; and what must not fail: Debian's default hostnqn/hostid pair, an NQN like 'testnqn'.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
tool_begin

fx_setup --nqn "$TEST_NQN" --port 1
set_host_identity
base=(connect --transport "$TRANSPORT" --traddr "$TGT_IP4")

expect_failure "wrong NQN" 4 wrong_nqn "${base[@]}" --trsvcid "$TGT_PORT" --nqn nqn.2014-08.org.nvmexpress.rnvme:nope
expect_record fabrics-connect subsystem-not-found
check "no controller left behind (wrong NQN)" wait_for 30 fx_no_fabrics_ctrls

t=$(now_ns)
expect_failure "wrong port (nothing listens on 4499)" 4 wrong_port "${base[@]}" --trsvcid 4499 --nqn "$TEST_NQN"
expect_record cm no-listener
diag "wrong port answered in $(secs_since "$t") s"

# A local address on a netdev without an RDMA device.
ip link add rnvdummy0 type dummy && ip addr add 198.51.100.1/24 dev rnvdummy0 && ip link set rnvdummy0 up
expect_failure "no RDMA device for the source address" 6 no_rdma_device \
	"${base[@]}" --trsvcid "$TGT_PORT" --nqn "$TEST_NQN" --host-traddr 198.51.100.1
ip link del rnvdummy0 2>/dev/null

# On the fabric's subnet, but nobody answers (no neighbour entry resolves).
expect_failure "unreachable target address" 4 unreachable \
	connect --transport "$TRANSPORT" --traddr 192.0.2.99 --trsvcid "$TGT_PORT" --nqn "$TEST_NQN"
expect_record address no-neighbour
check "no controller left behind" wait_for 30 fx_no_fabrics_ctrls

expect_failure "bad option value (queue size 8)" 2 bad_option "${base[@]}" --nqn "$TEST_NQN" --queue-size 8
expect_failure "bad option value (tos 300)" 2 bad_option "${base[@]}" --nqn "$TEST_NQN" --tos 300
rn connect --transport "$TRANSPORT" --traddr "$TGT_IP4" --nqn "$TEST_NQN" --queue-size lots
expect_rc "non-numeric --queue-size is a usage error (exit 2)" 2

# Debian's nvme-cli package writes a hostid unrelated to the hostnqn's UUID: no rule of the
# kernel forbids that, so it connects (the tool refused it with exit 3 before).
other=11111111-2222-4333-8444-555555555555
set_host_identity "$other"
rn connect --transport "$TRANSPORT" --traddr "$TGT_IP4" --trsvcid "$TGT_PORT" --nqn "$TEST_NQN"
expect_rc "an unrelated hostid (Debian's default pair) connects" 0
c=$(fabrics_ctrls | head -n 1)
check "the controller carries that hostid" test "$(cat "/sys/class/nvme/$c/hostid" 2>/dev/null)" = "$other"
rn hostnqn check
expect_rc "hostnqn check exits 0 on an unrelated hostid" 0
# The kernel's real rule: one host NQN with one host ID across its controllers.  A second
# connect with the same hostnqn and another hostid is refused by the tool, naming the
# controller, before the kernel would say EINVAL.
fx_target_up --nqn "$TEST_NQN2" --port 1 || diag "second subsystem failed"
expect_failure "the hostnqn in use with another hostid" 3 host_identity \
	"${base[@]}" --trsvcid "$TGT_PORT" --nqn "$TEST_NQN2" --hostid "$HOST_ID"
if jq -r .error.message "$R_ERR" | grep "$c already uses host NQN" >/dev/null; then
	ok "the message names $c"
else
	not_ok "the message names $c" "$(show_run)"
fi
check "nothing was written to the kernel" test "$(fabrics_ctrls | wc -l)" = 1
rn disconnect-all
wait_for 30 fx_no_fabrics_ctrls
set_host_identity

# An NQN off the NVMe form (nvmet test targets use such names): the kernel takes it, so does
# the tool, with a warning.
fx_target_up --nqn testnqn --port 1 || diag "testnqn subsystem failed"
rn connect --transport "$TRANSPORT" --traddr "$TGT_IP4" --trsvcid "$TGT_PORT" --nqn testnqn
expect_rc "connect --nqn testnqn works" 0
if grep -q "warning: --nqn: 'testnqn' is not in the NVMe form" "$R_ERR"; then
	ok "with a warning about the form"
else
	not_ok "with a warning about the form" "$(show_run)"
fi
check "a controller for testnqn" test -n "$(ctrls_for_nqn testnqn)"

rn disconnect-all
wait_for 30 fx_no_fabrics_ctrls

# A blank /etc/nvme/hostnqn (issue 53: what 'nvme gen-hostnqn > /etc/nvme/hostnqn' leaves when it
# fails): as nvme-cli 2.4, the host NQN libnvme generates stands in, with a warning, when it is
# one that stays the same (the DMI product UUID's); otherwise the blank file is refused (exit 3).
: > /etc/nvme/hostnqn
rn -o json hostnqn show
expect_rc "hostnqn show with a blank hostnqn file exits 0" 0
gen=$(jq -r '.hostnqn // ""' "$R_OUT" 2>/dev/null)
if jq -e '.hostnqn_source | test("generated")' "$R_OUT" >/dev/null 2>&1; then
	rn -o json connect --transport "$TRANSPORT" --traddr "$TGT_IP4" --trsvcid "$TGT_PORT" --nqn "$TEST_NQN"
	expect_rc "a blank hostnqn file: connect exits 0 with the generated $gen" 0
	c=$(jq -r '.device // ""' "$R_OUT" 2>/dev/null)
	check "the controller's hostnqn is the generated one" \
		test "$(cat "/sys/class/nvme/$c/hostnqn" 2>/dev/null)" = "$gen"
	if grep -q "warning: /etc/nvme/hostnqn: empty; using $gen" "$R_ERR" && grep -q "rnvme hostnqn generate" "$R_ERR"; then
		ok "a warning says what was used and how to write the file"
	else
		not_ok "a warning says what was used and how to write the file" "$(show_run)"
	fi
	rn disconnect-all
	wait_for 30 fx_no_fabrics_ctrls
else
	diag "libnvme has no stable host NQN here: $(jq -c .problems "$R_OUT" 2>/dev/null)"
	expect_failure "a blank hostnqn file without a stable generated host NQN" 3 host_identity \
		"${base[@]}" --trsvcid "$TGT_PORT" --nqn "$TEST_NQN"
fi
# `rnvme hostnqn generate > /etc/nvme/hostnqn`: the shell empties the file first; rnvme writes it
# (its stdout goes to the file it replaces), unless libnvme's UUID is a placeholder (an all-zero
# DMI product UUID, as a QEMU guest without -uuid may have), which it refuses, saying so.
R_RC=0
timeout 120 "$RNVME_BIN" hostnqn generate > /etc/nvme/hostnqn 2> "$R_ERR" || R_RC=$?
: > "$R_OUT"
if [ "$R_RC" = 0 ]; then
	if grep -qx 'nqn.2014-08.org.nvmexpress:uuid:[0-9a-f-]\{36\}' /etc/nvme/hostnqn; then
		ok "generate redirected into the hostnqn file: it holds one host NQN, $(cat /etc/nvme/hostnqn)"
	else
		not_ok "generate redirected into the hostnqn file: it holds one host NQN" "$(cat /etc/nvme/hostnqn)"
	fi
	check "the hostid file is kept" test "$(cat /etc/nvme/hostid)" = "$HOST_ID"
elif [ "$R_RC" = 3 ] && grep -q placeholder "$R_ERR"; then
	ok "generate redirected into the hostnqn file refuses libnvme's placeholder UUID, saying so"
else
	not_ok "generate redirected into the hostnqn file" "$(show_run)"
fi
set_host_identity

# The transport module unloaded (its in-tree twin is blocked by the fixture's modprobe.d).
fx_host_driver_unload || diag "unload failed"
modprobe nvme-fabrics
expect_failure "transport module not loaded" 6 module_missing "${base[@]}" --trsvcid "$TGT_PORT" --nqn "$TEST_NQN"

suite_end
