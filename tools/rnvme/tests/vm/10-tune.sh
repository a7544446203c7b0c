#!/bin/bash
# rnvme-tool 10-tune: `rnvme tune` on a real kernel. show lists the controller's namespace knobs
# and its Soft-RoCE device; --dry-run apply changes no byte of any file a profile may touch; apply
# sets exactly what show promised; a second apply changes nothing (state file included); a
# namespace connected after apply gets the knobs through the shipped udev rule (systemd-udevd in
# the guest); revert restores every file byte for byte and a second revert is a no-op; bad input
# changes nothing.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
tool_begin

fx_setup --nqn "$TEST_NQN" --backing brd --size 64 --port 1
set_host_identity
STATE=/var/lib/rnvme/tune.json
CONF=/etc/rnvme/tune.conf
rm -f "$STATE" "$CONF"
rn -o json connect --transport "$TRANSPORT" --traddr "$TGT_IP4" --trsvcid "$TGT_PORT" --nqn "$TEST_NQN"
expect_rc "connect exits 0" 0
ctrl=$(jq -r .device "$R_OUT" 2>/dev/null)
wait_ns_dev "$ctrl" 30 >/dev/null || bail "no namespace for $ctrl"

rn -o json tune show --all --profile latency
expect_rc "tune show exits 0" 0
cp "$R_OUT" /tmp/tune-show.json
expect_json "show lists $ctrl's namespace queue knobs" \
	"[.knobs[] | select(.knob == \"scheduler\" and (.path | startswith(\"/sys/\")))] | length >= 1"
expect_json "show says the Soft-RoCE device has no completion-vector IRQs" \
	'[.knobs[], .notes[]] | tostring | test("software device")'
# every file a profile may touch, as show names them, plus the tool's own two
mapfile -t FILES < <(jq -r '.knobs[] | .path // empty | select(startswith("/"))' /tmp/tune-show.json | sort -u)
FILES+=("$STATE" "$CONF")
echo "# ${#FILES[@]} files watched: ${FILES[*]}"
snap() { # OUT: path and sha256 (or "absent") of every watched file
	local f
	for f in "${FILES[@]}"; do
		if [ -e "$f" ]; then echo "$f $(sha256sum < "$f" | cut -c1-16)"; else echo "$f absent"; fi
	done > "$1"
}
snap /tmp/tune.0

rn --dry-run -o json tune apply --profile latency
expect_rc "dry-run apply exits 0" 0
snap /tmp/tune.1
check "dry-run changed no file (and wrote no state)" cmp -s /tmp/tune.0 /tmp/tune.1

rn -o json tune apply --profile latency
expect_rc "apply --profile latency exits 0" 0
cp "$R_OUT" /tmp/tune-apply.json
nset=$(jq '[.knobs[] | select(.status == "set")] | length' /tmp/tune-apply.json)
bad=$(jq -r '.knobs[] | select(.status == "set" and .path != null and (.path | startswith("/sys/"))) | "\(.path)\t\(.target)"' /tmp/tune-apply.json |
	while IFS=$'\t' read -r p t; do
		v=$(cat "$p" 2>/dev/null)
		case "$v" in "$t" | *"[$t]"*) ;; *) echo "$p=$v (want $t)" ;; esac
	done)
tap_result "apply set $nset knobs and every sysfs one now reads its target${bad:+: $bad}" \
	"$([ "$nset" -gt 0 ] && [ -z "$bad" ] && echo 0 || echo 1)"
expect_json "what apply set is what show promised for the latency profile" \
	"[.knobs[] | select(.status == \"set\") | {scope, knob, target}] - [$(jq -c '[.knobs[] | select(.target != null and .current != .target) | {scope, knob, target}]' /tmp/tune-show.json)[]] | length == 0" /tmp/tune-apply.json
check "the state file holds the originals" test -s "$STATE"
check "tune.conf holds the connect defaults" grep -q '^queue_size=128' "$CONF"
snap /tmp/tune.2
m0=$(stat -c %y "$STATE" 2>/dev/null)
sleep 1.1
rn -o json tune apply --profile latency
expect_rc "a second apply exits 0" 0
expect_json "a second apply sets nothing" '[.knobs[] | select(.status == "set")] | length == 0'
snap /tmp/tune.3
m1=$(stat -c %y "$STATE" 2>/dev/null)
check "a second apply changed no file" cmp -s /tmp/tune.2 /tmp/tune.3
check "a second apply did not rewrite the state file" test "$m0" = "$m1"

# new namespaces get the profile through the shipped rule
rules=$REPO/tools/rnvme/units/72-rnvme-tune.rules
udevd=/lib/systemd/systemd-udevd
if [ -x "$udevd" ] && command -v udevadm >/dev/null; then
	mkdir -p /run/udev/rules.d
	sed "s|/usr/sbin/rnvme|$RNVME_BIN|" "$rules" > /run/udev/rules.d/72-rnvme-tune.rules
	"$udevd" --daemon 2>/dev/null || not_ok "systemd-udevd started"
	sleep 1
	rn disconnect "$ctrl"
	wait_for 30 fx_no_fabrics_ctrls
	rn -o json connect --transport "$TRANSPORT" --traddr "$TGT_IP4" --trsvcid "$TGT_PORT" --nqn "$TEST_NQN"
	ctrl=$(jq -r .device "$R_OUT" 2>/dev/null)
	wait_ns_dev "$ctrl" 30 >/dev/null
	udevadm settle -t 30 2>/dev/null
	ns=$(path_ns "$ctrl")
	if [ -n "$ns" ] && wait_for 20 grep -q '\[none\]' "/sys/block/$ns/queue/scheduler" &&
		[ "$(cat "/sys/block/$ns/queue/nomerges")" = "$(jq -r '.knobs[] | select(.knob == "nomerges") | .target' /tmp/tune-apply.json | head -n 1)" ]; then
		ok "the namespace connected after apply ($ns) got the profile through the udev rule ($(cat "/sys/block/$ns/queue/scheduler"), nomerges $(cat "/sys/block/$ns/queue/nomerges"))"
	else
		not_ok "the new namespace got the profile through the udev rule" \
			"$ns: $(cat "/sys/block/$ns/queue/scheduler" 2>/dev/null) nomerges $(cat "/sys/block/$ns/queue/nomerges" 2>/dev/null)"
	fi
	m2=$(stat -c %y "$STATE" 2>/dev/null)
	check "the rule did not change the state file" test "$m1" = "$m2"
	udevadm control --exit 2>/dev/null
	rm -f /run/udev/rules.d/72-rnvme-tune.rules
else
	tap_skip "no systemd-udevd/udevadm on this root (package udev)" "a namespace connected after apply gets the profile"
fi

# bad input changes nothing
snap /tmp/tune.4
rn tune apply --profile fast
expect_rc "an unknown profile exits 2" 2
rn tune apply --profile latency nvme99
expect_rc "an unknown controller exits 5" 5
check "an error message on stderr" test -s "$R_ERR"
snap /tmp/tune.5
check "bad input changed no file" cmp -s /tmp/tune.4 /tmp/tune.5

rn -o json tune revert
expect_rc "revert exits 0" 0
snap /tmp/tune.6
# the controller connected since has the same namespace paths: revert writes the originals there too
if diff /tmp/tune.0 /tmp/tune.6 > /tmp/tune.diff; then
	ok "revert restored every file byte for byte (and removed the state file and tune.conf)"
else
	not_ok "revert restored every file" "$(cat /tmp/tune.diff)"
fi
rn tune revert
expect_rc "a second revert exits 0" 0
check "it says there is nothing to revert" grep -qi "nothing to revert" "$R_OUT" "$R_ERR"

rn disconnect-all
check "no controller left" wait_for 30 fx_no_fabrics_ctrls
fx_cleanup_all
suite_end
