#!/bin/bash
# rnvme-tool 02-discover-connect: discover, connect, list -o json, disconnect (by NQN and by
# device) and --dry-run against the Soft-RoCE nvmet target through the host driver.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
tool_begin

fx_setup --nqn "$TEST_NQN" --port 1
set_host_identity

rn -o json discover --transport "$TRANSPORT" --traddr "$TGT_IP4" --trsvcid "$TGT_PORT"
expect_rc "discover exits 0" 0
expect_json "discovery log lists $TEST_NQN at $TGT_IP4:$TGT_PORT over rdma" \
	".entries[] | select(.subnqn == \"$TEST_NQN\" and .traddr == \"$TGT_IP4\" and .trsvcid == \"$TGT_PORT\" and .trtype == \"rdma\" and .adrfam == \"ipv4\")"
expect_json "RDMA transport fields decoded (qptype connected, cms rdma-cm)" \
	'.entries[0].rdma | (.qptype == "connected") and (.cms == "rdma-cm")'
check "the discovery controller was removed" wait_for 30 fx_no_fabrics_ctrls

fx_target_up --nqn "$TEST_NQN" --port 2 --adrfam ipv6 --traddr "$TGT_IP6" || bail "IPv6 target port"
rn -o json discover --transport "$TRANSPORT" --traddr "$TGT_IP6" --trsvcid "$TGT_PORT" --host-traddr "$HOST_IP6"
expect_rc "discover over IPv6 exits 0" 0
expect_json "IPv6 discovery log lists $TEST_NQN at $TGT_IP6 (adrfam ipv6)" \
	".entries[] | select(.subnqn == \"$TEST_NQN\" and .traddr == \"$TGT_IP6\" and .adrfam == \"ipv6\")"
check "the IPv6 discovery controller was removed" wait_for 30 fx_no_fabrics_ctrls

rn --dry-run connect --transport "$TRANSPORT" --traddr "$TGT_IP4" --trsvcid "$TGT_PORT" --nqn "$TEST_NQN" --queue-size 64
expect_rc "connect --dry-run exits 0" 0
want="transport=$TRANSPORT,traddr=$TGT_IP4,trsvcid=$TGT_PORT,nqn=$TEST_NQN,hostnqn=$HOST_NQN,hostid=$HOST_ID,queue_size=64"
if [ "$(cat "$R_OUT")" = "$want" ]; then ok "--dry-run prints the exact option string"; else not_ok "--dry-run prints the exact option string" "want: $want" "$(show_run)"; fi
if [ -z "$(fabrics_ctrls)" ]; then ok "--dry-run created no controller"; else not_ok "--dry-run created no controller" "$(fabrics_ctrls)"; fi

rn -o json connect --transport "$TRANSPORT" --traddr "$TGT_IP4" --trsvcid "$TGT_PORT" --nqn "$TEST_NQN"
expect_rc "connect exits 0" 0
ctrl=$(jq -r .device "$R_OUT" 2>/dev/null)
if [ -n "$ctrl" ] && [ -d "/sys/class/nvme/$ctrl" ]; then ok "connect reports $ctrl, which exists"; else not_ok "connect reports an existing controller" "$(show_run)"; fi
dev=$(wait_ns_dev "$ctrl" 30) || not_ok "namespace of $ctrl appears"

rn -o json list
expect_rc "list -o json exits 0" 0
expect_json "list -o json carries schema version 1" '.version == 1'
expect_json "list: $TEST_NQN has $ctrl over $TRANSPORT, live, at $TGT_IP4:$TGT_PORT" \
	".subsystems[] | select(.nqn == \"$TEST_NQN\") | .controllers[] | select(.name == \"$ctrl\" and .transport == \"$TRANSPORT\" and .state == \"live\" and .traddr == \"$TGT_IP4\" and .trsvcid == \"$TGT_PORT\")"
expect_json "list: queue_count and ctrl_loss_tmo are numbers, hostnqn is ours" \
	".subsystems[].controllers[] | select(.name == \"$ctrl\") | (.queue_count | type == \"number\") and (.queue_count >= 2) and (.ctrl_loss_tmo == 600) and (.hostnqn == \"$HOST_NQN\")"
if [ -d "/sys/class/nvme/$ctrl/rnvme" ]; then
	expect_json "list: rnvme.ko state of $ctrl shows rdma_device rxe0 and numeric counters" \
		".subsystems[].controllers[] | select(.name == \"$ctrl\") | .rnvme | (.rdma_device == \"rxe0\") and (.error_recoveries | type == \"number\")"
else
	tap_skip "host driver has no rnvme/ sysfs group" "list shows rnvme.ko controller state"
fi
size=$(blockdev --getsize64 "$dev" 2>/dev/null || echo 0)
expect_json "list: namespace $dev with size $size bytes" \
	"[.subsystems[] | select(.nqn == \"$TEST_NQN\") | (.namespaces[], .controllers[].paths[])] | map(select(.size_bytes == $size and .size_bytes > 0)) | length > 0"
rn list
if grep -q "$TEST_NQN" "$R_OUT" && grep -q "$ctrl" "$R_OUT"; then ok "list (text) shows the subsystem and $ctrl"; else not_ok "list (text)" "$(show_run)"; fi

# Connecting what exists is a success that names the controller (nvme-cli does the same).
rn connect --transport "$TRANSPORT" --traddr "$TGT_IP4" --trsvcid "$TGT_PORT" --nqn "$TEST_NQN"
expect_rc "second connect of the same association exits 0" 0
if [ "$(cat "$R_OUT")" = "already connected $ctrl (cntlid $(cat "/sys/class/nvme/$ctrl/cntlid" 2>/dev/null))" ]; then
	ok "second connect prints the existing $ctrl"
else
	not_ok "second connect prints the existing $ctrl" "$(show_run)"
fi
rn -o json connect --transport "$TRANSPORT" --traddr "$TGT_IP4" --trsvcid "$TGT_PORT" --nqn "$TEST_NQN"
expect_json "second connect -o json: already_connected, device $ctrl" \
	".already_connected == true and .device == \"$ctrl\""
check "still one controller" test "$(fabrics_ctrls | wc -l)" = 1

rn disconnect --nqn "$TEST_NQN"
expect_rc "disconnect --nqn exits 0" 0
check "no controller left after disconnect --nqn" wait_for 30 fx_no_fabrics_ctrls
rn disconnect --nqn "$TEST_NQN"
expect_rc "disconnect of a gone NQN exits 0, as nvme-cli 2.4" 0
check "it prints nvme-cli's 'disconnected 0 controller(s)'" \
	grep -qx "NQN:$TEST_NQN disconnected 0 controller(s)" "$R_OUT"

rn -o json connect -t "$TRANSPORT" -a "$TGT_IP4" -s "$TGT_PORT" -n "$TEST_NQN" -w "$HOST_IP4" --ctrl-loss-tmo 30 --reconnect-delay 2
ctrl=$(jq -r .device "$R_OUT" 2>/dev/null)
expect_rc "connect with short options, host-traddr and timeouts" 0
check "ctrl_loss_tmo 30 in force" grep -qx 30 "/sys/class/nvme/$ctrl/ctrl_loss_tmo"
check "reconnect_delay 2 in force" grep -qx 2 "/sys/class/nvme/$ctrl/reconnect_delay"
rn disconnect --device "/dev/$ctrl"
expect_rc "disconnect --device /dev/$ctrl exits 0" 0
check "no controller left after disconnect --device" wait_for 30 fx_no_fabrics_ctrls

suite_end
