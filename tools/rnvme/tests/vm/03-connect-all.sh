#!/bin/bash
# rnvme-tool 03-connect-all: connect-all from an nvme-cli config.json, from a discovery.conf
# (through the discovery log), and from a discovery controller on the command line;
# disconnect-all; nvme-cli's stock comment-only discovery.conf and one shared with its TCP lines.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
tool_begin

fx_setup --nqn "$TEST_NQN" --port 1
fx_target_up --nqn "$TEST_NQN2" --port 1 || bail "second subsystem"
set_host_identity
cfg=$(mktemp -d)

cat > "$cfg/config.json" <<JSON
[{"hostnqn": "$HOST_NQN", "hostid": "$HOST_ID",
  "subsystems": [
    {"nqn": "$TEST_NQN",  "ports": [{"transport": "$TRANSPORT", "traddr": "$TGT_IP4", "trsvcid": "$TGT_PORT", "host_traddr": "$HOST_IP4"}]},
    {"nqn": "$TEST_NQN2", "ports": [{"transport": "$TRANSPORT", "traddr": "$TGT_IP4", "trsvcid": "$TGT_PORT", "queue_size": 32}]},
    {"nqn": "nqn.2014-08.org.nvmexpress.rnvme:tcp-only", "ports": [{"transport": "tcp", "traddr": "$TGT_IP4", "trsvcid": "4420"}]}]}]
JSON
rn -o json connect-all --config "$cfg/config.json" --discovery-conf "$cfg/none.conf"
expect_rc "connect-all --config exits 0" 0
expect_json "both subsystems connected, tcp port skipped" \
	'[.results[].status] == ["connected", "connected", "skipped"]'
check "$TEST_NQN has a controller" test -n "$(ctrls_for_nqn "$TEST_NQN")"
c2=$(ctrls_for_nqn "$TEST_NQN2" | head -n 1)
check "$TEST_NQN2 has a controller with sqsize 31 (queue_size 32)" grep -qx 31 "/sys/class/nvme/$c2/sqsize"

rn -o json connect-all --config "$cfg/config.json" --discovery-conf "$cfg/none.conf"
expect_rc "running it again exits 0" 0
expect_json "second run reports already_connected" \
	'[.results[].status] == ["already_connected", "already_connected", "skipped"]'

rn -o json disconnect-all
expect_rc "disconnect-all exits 0" 0
expect_json "disconnect-all names two controllers" '.devices | length == 2'
check "no controller left" wait_for 30 fx_no_fabrics_ctrls

printf '# lab target\n--transport=%s --traddr=%s --trsvcid=%s\n' "$TRANSPORT" "$TGT_IP4" "$TGT_PORT" > "$cfg/discovery.conf"
rn -o json connect-all --config "$cfg/none.json" --discovery-conf "$cfg/discovery.conf"
expect_rc "connect-all from discovery.conf exits 0" 0
expect_json "both subsystems found through the discovery log and connected" \
	"[.results[] | select(.status == \"connected\") | .nqn] | sort == ([\"$TEST_NQN\", \"$TEST_NQN2\"] | sort)"
n=$(fabrics_ctrls | wc -l)
if [ "$n" = 2 ]; then ok "two controllers, discovery controller removed"; else not_ok "two controllers, discovery controller removed" "have: $(fabrics_ctrls | tr '\n' ' ')"; fi
rn disconnect-all
wait_for 30 fx_no_fabrics_ctrls

rn connect-all --transport "$TRANSPORT" --traddr "$TGT_IP4" --trsvcid "$TGT_PORT"
expect_rc "connect-all --traddr (discovery controller on the command line) exits 0" 0
if [ "$(grep -c '^connected' "$R_OUT")" = 2 ]; then ok "text output lists two connected subsystems"; else not_ok "text output" "$(show_run)"; fi
rn disconnect-all
check "no controller left" wait_for 30 fx_no_fabrics_ctrls

rn connect-all --config "$cfg/none.json" --discovery-conf "$cfg/none.conf"
expect_rc "connect-all with nothing configured exits 0 (the boot unit on a host without targets)" 0
# nvme-cli's package installs a discovery.conf of comments only
printf '# Used for extracting default controller discovery parameters\n#\n# Example:\n# --transport=<trtype> --traddr=<traddr> --trsvcid=<trsvcid> --host-traddr=<host-traddr> --host-iface=<host-iface>\n' > "$cfg/stock.conf"
rn connect-all --config "$cfg/none.json" --discovery-conf "$cfg/stock.conf"
expect_rc "connect-all with nvme-cli's comment-only discovery.conf exits 0" 0
if grep -q 'nothing configured' "$R_OUT"; then ok "it says nothing is configured"; else not_ok "it says nothing is configured" "$(show_run)"; fi

# A discovery.conf shared with nvme-cli: a TCP line, an RDMA line with nvme-cli's TCP options,
# a line with an option nobody knows.  The RDMA subsystems are connected, the rest skipped with why.
{
	echo "--transport=tcp --traddr=$TGT_IP4 --trsvcid=8009"
	echo "--transport=$TRANSPORT --traddr=$TGT_IP4 --trsvcid=$TGT_PORT --host-iface=veth0 --hdr-digest"
	echo "--transport=$TRANSPORT --traddr=$TGT_IP4 --trsvcid=$TGT_PORT --frobnicate=1"
} > "$cfg/shared.conf"
rn -o json connect-all --config "$cfg/none.json" --discovery-conf "$cfg/shared.conf"
expect_rc "connect-all with a discovery.conf shared with nvme-cli exits 0" 0
expect_json "the TCP line and the unknown option's line are skipped, both RDMA subsystems connected" \
	"([.results[] | select(.status == \"connected\") | .nqn] | sort == ([\"$TEST_NQN\", \"$TEST_NQN2\"] | sort)) and ([.results[] | select(.status == \"skipped\") | .source] | index(\"$cfg/shared.conf:1\") != null) and ([.results[] | select(.status == \"skipped\") | .source] | index(\"$cfg/shared.conf:3\") != null)"
if grep -q 'shared.conf:2: --host-iface does not apply to rdma' "$R_ERR"; then ok "the ignored --host-iface is named once"; else not_ok "the ignored --host-iface is named" "$(show_run)"; fi
n=$(fabrics_ctrls | wc -l)
if [ "$n" = 2 ]; then ok "two controllers: nothing attempted over TCP"; else not_ok "two controllers" "have: $(fabrics_ctrls | tr '\n' ' ')"; fi
rn -o json connect-all --config "$cfg/none.json" --discovery-conf "$cfg/shared.conf"
expect_rc "a second run exits 0" 0
n=$(fabrics_ctrls | wc -l)
if [ "$n" = 2 ]; then ok "a second run creates nothing"; else not_ok "a second run creates nothing" "have: $(fabrics_ctrls | tr '\n' ' ')"; fi
rn -o normal list
expect_rc "nvme-cli's '-o normal' is text output" 0
rn list --json
expect_rc "list --json exits 0" 0
expect_json "--json is -o json on every command" '.version == 1'
rn disconnect-all
check "no controller left" wait_for 30 fx_no_fabrics_ctrls

# nvme-cli's discover options on a discovery.conf line (issue 53): -p keeps the discovery
# controller (keep-alive 30 s) and a second run reads that one instead of connecting another;
# -o, -v and --quiet change nothing; a line with -r is skipped, naming it.
disc_ctrls() {
	local c
	for c in $(fabrics_ctrls); do
		[ "$(cat "/sys/class/nvme/$c/subsysnqn" 2>/dev/null)" = nqn.2014-08.org.nvmexpress.discovery ] && echo "$c"
	done
	return 0
}
{
	echo "--transport=$TRANSPORT --traddr=$TGT_IP4 --trsvcid=$TGT_PORT -p -o json -v --quiet"
	echo "--transport=$TRANSPORT --traddr=$TGT_IP4 --trsvcid=$TGT_PORT -r /tmp/rnvme-log.bin"
} > "$cfg/persistent.conf"
rn -o json connect-all --config "$cfg/none.json" --discovery-conf "$cfg/persistent.conf"
expect_rc "connect-all from a discovery.conf line with -p exits 0" 0
expect_json "both subsystems connected; the -r line skipped, naming -r/--raw" \
	"([.results[] | select(.status == \"connected\") | .nqn] | sort == ([\"$TEST_NQN\", \"$TEST_NQN2\"] | sort)) and ([.results[] | select(.status == \"skipped\") | .detail] | any(test(\"-r/--raw\")))"
dc=$(disc_ctrls)
check "one discovery controller stays ($dc)" test "$(echo "$dc" | grep -c .)" = 1
check "with keep-alive 30 s" grep -qx 30 "/sys/class/nvme/$dc/kato"
rn -o json connect-all --config "$cfg/none.json" --discovery-conf "$cfg/persistent.conf"
expect_rc "a second run exits 0" 0
expect_json "it finds both subsystems connected already" \
	'[.results[] | select(.status == "already_connected")] | length == 2'
check "the same discovery controller, no other" test "$(disc_ctrls)" = "$dc"
rn disconnect-all
check "no controller left (-p)" wait_for 30 fx_no_fabrics_ctrls

# The udev path, fired by a real discovery log change: a persistent discovery controller, the
# shipped rule in a udevd of this guest (its RUN the unit's command: systemd is not PID 1 here),
# and nvmet adding a subsystem to the port, then two more, one after the other.
rules=$REPO/tools/rnvme/units/71-rnvme-autoconnect.rules
CHG_NQN3=nqn.2014-08.org.nvmexpress.rnvme:change3
CHG_NQN4=nqn.2014-08.org.nvmexpress.rnvme:change4
# shellcheck disable=SC2317  # called through wait_for
ctrls_for_nqn_nonempty() { [ -n "$(ctrls_for_nqn "$1")" ]; }
udevd=/lib/systemd/systemd-udevd
if [ -x "$udevd" ] && command -v udevadm >/dev/null; then
	rm -f "$NVMET_CFS/ports/1/subsystems/$TEST_NQN2"
	before=$(fabrics_ctrls)
	rn -o json discover --persistent --transport "$TRANSPORT" --traddr "$TGT_IP4" --trsvcid "$TGT_PORT" --host-traddr "$HOST_IP4"
	expect_rc "a persistent discovery controller" 0
	dc=$(comm -13 <(echo "$before") <(fabrics_ctrls) | head -n 1)
	: > /run/rnvme-udev.log
	printf '#!/bin/sh\necho "rule: connect-all --device $1" >> /run/rnvme-udev.log\nexec %s connect-all --device "$1" >> /run/rnvme-udev.log 2>&1\n' "$RNVME_BIN" > /run/rnvme-connect.sh
	chmod +x /run/rnvme-connect.sh
	mkdir -p /run/udev/rules.d
	sed 's|/bin/systemctl --no-block start rnvme-connect@$kernel.service|/run/rnvme-connect.sh $kernel|' "$rules" \
		> /run/udev/rules.d/71-rnvme-autoconnect.rules
	if grep -q 'rnvme-connect.sh $kernel' /run/udev/rules.d/71-rnvme-autoconnect.rules && [ -n "$dc" ] &&
		"$udevd" --daemon 2>/dev/null; then
		sleep 1
		fx_target_up --nqn "$TEST_NQN2" --port 1 || not_ok "nvmet adds $TEST_NQN2 to the port"
		t=$(now_ns)
		has_nqn2() { [ -n "$(ctrls_for_nqn "$TEST_NQN2")" ]; }
		if wait_for 60 has_nqn2; then
			ok "the discovery log change on $dc reached the rule, which connected $TEST_NQN2 in $(secs_since "$t") s"
		else
			not_ok "the rule connected $TEST_NQN2 after the log change on $dc" "$(cat /run/rnvme-udev.log 2>/dev/null)" \
				"$(dmesg | tail -n 5)"
		fi
		c2=$(ctrls_for_nqn "$TEST_NQN2" | head -n 1)
		if [ -n "$c2" ] && grep -q "host_traddr=$HOST_IP4" "/sys/class/nvme/$c2/address"; then
			ok "it kept the discovery controller's host_traddr ($HOST_IP4)"
		else
			not_ok "the connection kept host_traddr" "$(cat "/sys/class/nvme/$c2/address" 2>/dev/null)"
		fi
		if [ "$(fabrics_ctrls | wc -l)" -le 3 ] && [ -e "/sys/class/nvme/$dc" ]; then
			ok "no second discovery controller; $dc stays"
		else
			not_ok "no second discovery controller" "$(fabrics_ctrls | tr '\n' ' ')"
		fi
		# Changes two and three in a row (issue 53, item 1): nvmet announces a discovery log
		# change only once a read of the log has cleared the last one (Get Log Page with RAE=0),
		# so a tool that reads with RAE=1 alone sees the first change and no other.
		n_change=1
		for extra in "$CHG_NQN3" "$CHG_NQN4"; do
			n_change=$((n_change + 1))
			runs=$(grep -c '^rule: ' /run/rnvme-udev.log 2>/dev/null)
			fx_target_up --nqn "$extra" --port 1 --backing file --size 16 || not_ok "nvmet adds $extra to the port"
			t=$(now_ns)
			if wait_for 60 ctrls_for_nqn_nonempty "$extra"; then
				ok "change $n_change in a row on $dc reached the rule, which connected $extra in $(secs_since "$t") s"
			else
				not_ok "change $n_change in a row on $dc reached the rule and connected $extra" \
					"rule runs before: $runs, now: $(grep -c '^rule: ' /run/rnvme-udev.log 2>/dev/null)" \
					"$(tail -n 20 /run/rnvme-udev.log 2>/dev/null)" "$(dmesg | tail -n 5)"
			fi
			check "the rule ran once more for change $n_change" \
				test "$(grep -c '^rule: ' /run/rnvme-udev.log 2>/dev/null)" -gt "$runs"
		done
		if [ -e "/sys/class/nvme/$dc" ] && [ "$(fabrics_ctrls | wc -l)" -le 5 ]; then
			ok "three changes, one discovery controller ($dc) throughout"
		else
			not_ok "one discovery controller through three changes" "$(fabrics_ctrls | tr '\n' ' ')"
		fi
		udevadm control --exit 2>/dev/null
	else
		not_ok "udevd with the rule in the guest" "dc '$dc'" "$(cat /run/udev/rules.d/71-rnvme-autoconnect.rules)"
	fi
	rm -f /run/udev/rules.d/71-rnvme-autoconnect.rules /run/rnvme-connect.sh
	rn disconnect-all
	check "no controller left (udev path)" wait_for 30 fx_no_fabrics_ctrls
	# port 1 exports the two subsystems again, as the referral round expects
	rm -f "$NVMET_CFS/ports/1/subsystems/$CHG_NQN3" "$NVMET_CFS/ports/1/subsystems/$CHG_NQN4"
else
	tap_skip "no systemd-udevd/udevadm on this root (package udev)" "the udev path connects a subsystem added to a discovery log"
fi

# A referral: port 1's discovery log refers to the discovery service of port 2 (trsvcid 4421),
# which exports a third subsystem; connect-all follows it and says so (status followed, and
# the referred entries' via), and reads each discovery service once.
REF_NQN=nqn.2014-08.org.nvmexpress.rnvme:referred
REF_PORT=4421
r=$NVMET_CFS/ports/1/referrals/rnvme-ref
if fx_target_up --nqn "$REF_NQN" --port 2 --trsvcid "$REF_PORT" && mkdir "$r" &&
	echo rdma > "$r/addr_trtype" && echo ipv4 > "$r/addr_adrfam" && echo "$TGT_IP4" > "$r/addr_traddr" &&
	echo "$REF_PORT" > "$r/addr_trsvcid" && echo 1 > "$r/enable"; then
	rn -o json connect-all --config "$cfg/none.json" --discovery-conf "$cfg/none.conf" \
		--transport "$TRANSPORT" --traddr "$TGT_IP4" --trsvcid "$TGT_PORT"
	expect_rc "connect-all with a referral in the log: exit 0" 0
	expect_json "the referral to $TGT_IP4:$REF_PORT was followed" \
		"[.results[] | select(.status == \"followed\")] | length == 1"
	expect_json "$REF_NQN connected via $TGT_IP4:$REF_PORT, the two of port 1 via $TGT_IP4:$TGT_PORT" \
		"([.results[] | select(.status == \"connected\" and .nqn == \"$REF_NQN\") | .via] == [\"$TGT_IP4:$REF_PORT\"]) and ([.results[] | select(.status == \"connected\" and .via == \"$TGT_IP4:$TGT_PORT\")] | length == 2)"
	check "three I/O controllers, no discovery controller left" \
		test "$(fabrics_ctrls | wc -l)" = 3
	rn -o json disconnect-all
	check "no controller left (referral)" wait_for 30 fx_no_fabrics_ctrls
else
	not_ok "nvmet port 2 at $REF_PORT and a referral to it on port 1"
fi
rmdir "$r" 2>/dev/null
rm -rf "$cfg"

suite_end
