#!/bin/bash
# rnvme-tool 01-rdma: `rnvme rdma` lists the Soft-RoCE devices with their RoCE v2 GIDs (netlink +
# sysfs), and `rnvme rdma link add/del` creates and removes an rxe link like iproute2's rdma.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
tool_begin

fx_rxe_up || bail "cannot set up rxe over veth"

rn -o json rdma
expect_rc "rdma -o json exits 0" 0
for pair in "rxe0 veth0 $HOST_IP4" "rxe1 veth1 $TGT_IP4"; do
	set -- $pair
	expect_json "$1 is listed, port 1 ACTIVE on $2" \
		".devices[] | select(.name == \"$1\") | .ports[0] | select(.state == \"ACTIVE\" and .netdev == \"$2\")"
	# The IPv4-mapped GID of the address, typed RoCE v2, as sysfs gid_attrs report it.
	gid=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${3//./ })
	expect_json "$1 has a RoCE v2 GID for $3 ($gid)" \
		".devices[] | select(.name == \"$1\") | .ports[0].gids[] | select(.gid == \"$gid\" and .type == \"RoCE v2\")"
	expect_json "$1: that GID's address is $3 on $2" \
		".devices[] | select(.name == \"$1\") | .ports[0].gids[] | select(.gid == \"$gid\" and .address == \"$3\" and .ndev == \"$2\")"
done
expect_json "link layer Ethernet, netdev MTU a number" \
	'.devices[0].ports[0] | (.link_layer == "Ethernet") and (.netdev_mtu | type == "number")'
# The active MTU comes from verbs only, and only if the tool was built with libibverbs-dev.
if ldd "$RNVME_BIN" 2>/dev/null | grep libibverbs >/dev/null; then
	expect_json "active_mtu (from verbs) is 1024 for the 1500-byte veth" \
		'.devices[0].ports[0] | .active_mtu == 1024 and .expected_active_mtu == 1024'
else
	tap_skip "tool built without libibverbs-dev" "active_mtu (from verbs)"
fi

rn rdma
expect_rc "rdma (text) exits 0" 0
if grep -q '^rxe0/1: state ACTIVE' "$R_OUT" && grep -q 'RoCE v2' "$R_OUT"; then
	ok "text output shows rxe0/1 ACTIVE and RoCE v2 GIDs"
else
	not_ok "text output shows rxe0/1 ACTIVE and RoCE v2 GIDs" "$(show_run)"
fi
# GIDs as show_gids lists them: the address, the type, the netdev; no hex.
# (Soft-RoCE implements RoCE v2 only: the RDMA core gives it no v1 GIDs.)
if grep -Eq "^ +gid [0-9]+ +${HOST_IP4//./\\.} +RoCE v2 +veth0\$" "$R_OUT" &&
	! grep -Eq "RoCE v1" "$R_OUT" &&
	! grep -Eq '([0-9a-f]{4}:){7}[0-9a-f]{4}' "$R_OUT"; then
	ok "text output shows $HOST_IP4 as a RoCE v2 GID of veth0 (rxe has no v1), no hex GIDs"
else
	not_ok "text output shows $HOST_IP4 as a RoCE v2 GID of veth0 (rxe has no v1), no hex GIDs" "$(show_run)"
fi

# Our own link on a spare veth pair, through RDMA_NLDEV_CMD_NEWLINK / DELLINK.
ip link add rnvt0 type veth peer name rnvt1 && ip link set rnvt0 up && ip link set rnvt1 up
rn rdma link add rxet type rxe netdev rnvt0
expect_rc "rdma link add rxet type rxe netdev rnvt0" 0
check "rdma link show sees rxet on rnvt0" bash -c "rdma link show rxet/1 | grep 'netdev rnvt0' >/dev/null"
rn -o json rdma
expect_json "rnvme rdma lists rxet" '.devices[] | select(.name == "rxet")'
rn rdma link add rxet type rxe netdev rnvt0
if [ "$R_RC" != 0 ] && [ -s "$R_ERR" ]; then ok "adding it twice fails with a message"; else not_ok "adding it twice fails" "$(show_run)"; fi
rn rdma link del rxet
expect_rc "rdma link del rxet" 0
check "rxet is gone" bash -c "! rdma link show rxet/1 2>/dev/null | grep rxet >/dev/null"
rn rdma link del rxet
expect_rc "deleting a missing link exits 5 (not found)" 5
rn rdma link add rxet type rxe
expect_rc "incomplete link add is a usage error (exit 2)" 2
ip link del rnvt0 2>/dev/null

suite_end
