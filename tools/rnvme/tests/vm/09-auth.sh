#!/bin/bash
# rnvme-tool 09-auth: in-band authentication (DH-HMAC-CHAP) against nvmet (issue 32).
# On a kernel whose nvme-core authenticates (Debian's 6.12, the debug kernel), with nvmet
# requiring a key for this host:
#  - the right host key connects (the kernel logs the authentication) and the namespace takes
#    verified I/O; a missing key and a wrong one are refused with rnvme.ko's record
#    (stage=authentication, cause no-host-key / host-key-rejected) and no controller left;
#  - bidirectional: the right controller key connects, a wrong one is ctrl-key-rejected, and a
#    controller key against a target that does not authenticate is refused (ctrl-not-authenticated)
#    instead of connecting to an unauthenticated controller;
#  - config.json's dhchap_key / dhchap_ctrl_key are honoured by connect-all;
#  - nvme-cli's own 'nvme connect -t rdma --dhchap-secret' works with rnvme serving "rdma".
# On a kernel without it (Debian's 6.1): a secret is refused by the tool (reason authentication)
# and by rnvme.ko (record stage=options cause=auth-not-in-kernel), and nothing is connected.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
tool_begin
[ "$HOST_DRIVER" = rnvme ] || tap_skip_all "the attempt records are rnvme.ko's (HOST_DRIVER=$HOST_DRIVER)"
command -v nvme >/dev/null || tap_skip_all "nvme-cli not installed (it generates the keys)"

fx_setup --nqn "$TEST_NQN" --port 1
set_host_identity
AUTH_NQN=nqn.2014-08.org.nvmexpress.rnvme:auth
base=(--transport "$TRANSPORT" --traddr "$TGT_IP4" --trsvcid "$TGT_PORT")
hkey=$(nvme gen-dhchap-key --nqn "$HOST_NQN") && ckey=$(nvme gen-dhchap-key --nqn "$AUTH_NQN") &&
	other=$(nvme gen-dhchap-key --nqn "$HOST_NQN") || bail "nvme gen-dhchap-key failed"
echo "# keys from nvme gen-dhchap-key (hmac none, 32 bytes)"

# expect_auth_refused DESC STAGE CAUSES ARGS...: rnvme -o json ARGS... fails with reason
# authentication, rnvme.ko's record of the attempt has STAGE and one of CAUSES (a|b), and no
# controller is left.
expect_auth_refused() {
	local desc=$1 stage=$2 cause=$3
	shift 3
	REFUSED_DMESG='rnvme: attempt|authentic|dhchap|DH-HMAC' \
		expect_refused "$desc" authentication "$stage" "$cause" "$@"
	check "$desc: no controller left" wait_for 30 fx_no_fabrics_ctrls
	no_secret_printed "$desc"
}

# no_secret_printed DESC: a test point; none of the keys is in the last run's output.
no_secret_printed() {
	if grep -qF -e "$hkey" -e "$ckey" -e "$other" "$R_OUT" "$R_ERR"; then
		not_ok "$1: no key in the output" "$(show_run)"
	else
		ok "$1: no key in the output"
	fi
}

# connected_and_io DESC: the last run connected; the kernel logged qid 0's authentication; 4 MiB
# written and read back; disconnected.
connected_and_io() {
	local desc=$1 ctrl dev
	expect_rc "$desc: exit 0" 0
	ctrl=$(jq -r .device "$R_OUT" 2>/dev/null)
	if [ -z "$ctrl" ] || [ ! -d "/sys/class/nvme/$ctrl" ]; then
		not_ok "$desc: a controller" "$(show_run)"
		return
	fi
	check "$desc: the kernel authenticated $ctrl's admin queue" \
		sh -c "dmesg | grep '$ctrl: qid 0: authenticated' > /dev/null"
	if dev=$(wait_ns_dev "$ctrl" 30) && io_verify "$dev"; then
		ok "$desc: 4 MiB written and read back on $dev"
	else
		not_ok "$desc: verified I/O on ${dev:-no namespace}"
	fi
	rn disconnect --device "$ctrl"
	check "$desc: disconnected" wait_for 30 fx_no_fabrics_ctrls
}

# io_verify DEV: 4 MiB of random data at offset 1 MiB, read back with O_DIRECT and compared.
io_verify() {
	local src got rc=0
	src=$(mktemp) got=$(mktemp)
	head -c 4194304 /dev/urandom > "$src"
	dd if="$src" of="$1" bs=1M seek=1 oflag=direct conv=fsync status=none &&
		dd if="$1" of="$got" bs=1M skip=1 count=4 iflag=direct status=none &&
		cmp -s "$src" "$got" || rc=1
	rm -f "$src" "$got"
	return $rc
}

if ! grep -qw nvme_auth_negotiate /proc/kallsyms; then
	# ---- a kernel without host authentication
	echo "# $(uname -r): nvme-core has no in-band authentication (no nvme_auth_negotiate)"
	rn -o json connect "${base[@]}" --nqn "$TEST_NQN" --dhchap-secret "$hkey"
	if [ "$R_RC" = 6 ] && jq -e '.error.reason == "authentication"' "$R_ERR" >/dev/null 2>&1; then
		ok "the tool refuses a secret on this kernel (exit 6, reason authentication)"
		diag "$(jq -r .error.message "$R_ERR")" "fix: $(jq -r .error.fix "$R_ERR")"
	else
		not_ok "the tool refuses a secret on this kernel" "$(show_run)"
	fi
	check "no controller after the tool's refusal" fx_no_fabrics_ctrls
	fx_dmesg_mark "nvme connect with a secret on $(uname -r)"
	rc=0
	out=$(timeout 60 nvme connect -t "$TRANSPORT" -a "$TGT_IP4" -s "$TGT_PORT" -n "$TEST_NQN" \
		--dhchap-secret="$hkey" 2>&1) || rc=$?
	if [ "$rc" != 0 ] && fx_dmesg_since_mark | grep 'rnvme: attempt .*stage=options cause=auth-not-in-kernel' > /dev/null; then
		ok "rnvme.ko refuses nvme-cli's secret too (nvme connect exit $rc; record cause=auth-not-in-kernel)"
	else
		not_ok "rnvme.ko refuses nvme-cli's secret" "nvme connect exit $rc: $out" "$(fx_dmesg_since_mark | tail -n 5)"
	fi
	check "no controller after rnvme.ko's refusal" wait_for 30 fx_no_fabrics_ctrls
	suite_end
	exit
fi
echo "# $(uname -r): nvme-core authenticates"
[ -d "$NVMET_CFS/hosts" ] && [ -e "$NVMET_CFS/subsystems/$TEST_NQN/attr_allow_any_host" ] ||
	bail "nvmet configfs not up"

# ---- the target: a subsystem that admits this host only, with its key
fx_target_up --nqn "$AUTH_NQN" --port 1 || bail "authenticating subsystem"
h=$NVMET_CFS/hosts/$HOST_NQN
if mkdir -p "$h" && echo "$hkey" > "$h/dhchap_key" && echo "hmac(sha256)" > "$h/dhchap_hash" &&
	echo 0 > "$NVMET_CFS/subsystems/$AUTH_NQN/attr_allow_any_host" &&
	ln -s "$h" "$NVMET_CFS/subsystems/$AUTH_NQN/allowed_hosts/$HOST_NQN"; then
	ok "nvmet requires DH-HMAC-CHAP from $HOST_NQN for $AUTH_NQN"
else
	bail "nvmet host key (is nvmet built with CONFIG_NVME_TARGET_AUTH?)"
fi

rn -o json connect "${base[@]}" --nqn "$AUTH_NQN" --dhchap-secret "$hkey"
no_secret_printed "right host key"
connected_and_io "right host key"
expect_auth_refused "no key" authentication no-host-key connect "${base[@]}" --nqn "$AUTH_NQN"
# nvmet answers the wrong response with Failure1 and closes the connection: either may reach the
# host first (closed-after-reply is the second, seen on the debug kernel)
expect_auth_refused "wrong host key" authentication "host-key-rejected|closed-after-reply" \
	connect "${base[@]}" --nqn "$AUTH_NQN" -S "$other"

# ---- bidirectional: the target authenticates itself with the controller key
echo "$ckey" > "$h/dhchap_ctrl_key" || bail "nvmet controller key"
rn -o json connect "${base[@]}" --nqn "$AUTH_NQN" -S "$hkey" --dhchap-ctrl-secret "$ckey"
connected_and_io "bidirectional, right keys"
expect_auth_refused "bidirectional, wrong controller key" authentication ctrl-key-rejected \
	connect "${base[@]}" --nqn "$AUTH_NQN" -S "$hkey" -C "$other"
# $TEST_NQN admits any host: nvmet asks no authentication there
expect_auth_refused "controller key against a target that does not authenticate" authentication \
	ctrl-not-authenticated connect "${base[@]}" --nqn "$TEST_NQN" -S "$hkey" -C "$ckey"

# ---- config.json's keys (nvme-cli's names), read by connect-all
mkdir -p /etc/nvme
cat > /etc/nvme/config.json <<EOF
[{"hostnqn": "$HOST_NQN", "hostid": "$HOST_ID", "dhchap_key": "$hkey",
  "subsystems": [{"nqn": "$AUTH_NQN", "ports": [{"transport": "$TRANSPORT", "traddr": "$TGT_IP4",
    "trsvcid": "$TGT_PORT", "dhchap_ctrl_key": "$ckey"}]}]}]
EOF
rn -o json connect-all
expect_rc "connect-all with config.json's keys: exit 0" 0
expect_json "connect-all connected $AUTH_NQN" "[.results[] | select(.status == \"connected\")] | length == 1"
no_secret_printed "connect-all"
c=$(jq -r '.results[] | select(.status == "connected") | .device' "$R_OUT" 2>/dev/null)
check "config.json: $c authenticated bidirectionally" \
	sh -c "dmesg | grep '${c:-none}: qid 0: authenticated' > /dev/null && [ \"\$(cat /sys/class/nvme/${c:-none}/dhchap_ctrl_secret 2>/dev/null)\" = '$ckey' ]"
rn disconnect-all
check "config.json: disconnected" wait_for 30 fx_no_fabrics_ctrls
rm -f /etc/nvme/config.json

# ---- nvme-cli's connect, with rnvme.ko serving the transport
rc=0
out=$(timeout 60 nvme connect -t "$TRANSPORT" -a "$TGT_IP4" -s "$TGT_PORT" -n "$AUTH_NQN" \
	--hostnqn="$HOST_NQN" --dhchap-secret="$hkey" --dhchap-ctrl-secret="$ckey" 2>&1) || rc=$?
c=$(fabrics_ctrls | head -n 1)
if [ "$rc" = 0 ] && [ -n "$c" ] && [ -d "/sys/class/nvme/$c/rnvme" ] &&
	dmesg | grep "$c: qid 0: authenticated" > /dev/null; then
	ok "nvme connect --dhchap-secret --dhchap-ctrl-secret: $c, by rnvme.ko, authenticated"
else
	not_ok "nvme connect with keys through rnvme.ko" "exit $rc: $out" "controllers: $(fabrics_ctrls)"
fi
nvme disconnect -n "$AUTH_NQN" > /dev/null 2>&1
check "nvme disconnect" wait_for 30 fx_no_fabrics_ctrls
rm -f "$NVMET_CFS/subsystems/$AUTH_NQN/allowed_hosts/$HOST_NQN"
suite_end
