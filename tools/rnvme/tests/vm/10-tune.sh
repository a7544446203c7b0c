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
	rn disconnect -d "$ctrl"
	expect_rc "disconnect -d $ctrl exits 0" 0
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
# (queue/io_poll is read-only: it shows whether the controller has poll
# queues, and the one connected since took tune.conf's nr_poll_queues)
if diff <(grep -v '/queue/io_poll ' /tmp/tune.0) <(grep -v '/queue/io_poll ' /tmp/tune.6) > /tmp/tune.diff; then
	ok "revert restored every file byte for byte (and removed the state file and tune.conf)"
else
	not_ok "revert restored every file" "$(cat /tmp/tune.diff)"
fi
rn tune revert
expect_rc "a second revert exits 0" 0
check "it says there is nothing to revert" grep -qi "nothing to revert" "$R_OUT" "$R_ERR"

# apply --reconnect: two paths of one namespace under native multipath are
# re-created one at a time with the profile's queues while fio writes and
# verifies through the multipath disk; their own options survive; a second run
# changes nothing; an only path is refused and nothing changes
fx_target_up --nqn "$TEST_NQN" --port 2 --trsvcid 4421 || bail "second nvmet port"
rn -o json connect --transport "$TRANSPORT" --traddr "$TGT_IP4" --trsvcid 4421 --nqn "$TEST_NQN" \
	--nr-io-queues 1 --queue-size 32 --keep-alive-tmo 7 --ctrl-loss-tmo -1
expect_rc "second path connects (4421, 1 I/O queue of 32, kato 7, ctrl_loss_tmo -1)" 0
ctrl2=$(jq -r .device "$R_OUT" 2>/dev/null)
wait_ns_dev "$ctrl2" 30 >/dev/null
head=$(ctrl_ns_dev "$ctrl")
check "both paths serve one multipath disk ($head: $ctrl and $ctrl2)" test "$(ctrl_ns_dev "$ctrl2")" = "$head"
qc0="$(cat /sys/class/nvme/"$ctrl"/queue_count) $(cat /sys/class/nvme/"$ctrl2"/queue_count)"
snap /tmp/tune.7
rn --dry-run -o json tune apply --profile throughput --reconnect
expect_rc "dry-run --reconnect exits 0" 0
cp "$R_OUT" /tmp/tune-rc-plan.json
expect_json "the plan re-creates both, one after the other" \
	'[.reconnects[] | select(.status == "would reconnect") | .order] | sort == [1, 2]'
expect_json "the plan keeps the second path's own options" \
	"[.reconnects[] | select(.ctrl == \"$ctrl2\") | .options | test(\"keep_alive_tmo=7\") and test(\"trsvcid=4421\")] == [true]"
snap /tmp/tune.8
check "dry-run --reconnect changed no file and no controller" \
	sh -c "cmp -s /tmp/tune.7 /tmp/tune.8 && [ -e /sys/class/nvme/$ctrl ] && [ -e /sys/class/nvme/$ctrl2 ]"
# (three loops of 32 MiB, written then verified: about 10 s here, the
# re-creates take 2)
fio --name=reconnect --filename="$head" --ioengine=libaio --direct=1 --iodepth=16 --rw=randwrite \
	--bs=4k --size=32m --loops=3 --verify=crc32c --do_verify=1 --verify_fatal=1 \
	--output-format=json --output=/tmp/fio-rc.json > /tmp/fio-rc.err 2>&1 &
fpid=$!
sleep 2
t=$(now_ns)
rn -o json tune apply --profile throughput --reconnect
expect_rc "apply --reconnect exits 0 ($(secs_since "$t") s, fio running)" 0
cp "$R_OUT" /tmp/tune-rc.json
expect_json "both controllers were re-created" '[.reconnects[] | select(.status == "reconnected" and .new_ctrl != null)] | length == 2'
n2=$(jq -r ".reconnects[] | select(.ctrl == \"$ctrl2\") | .new_ctrl" /tmp/tune-rc.json)
n1=$(jq -r ".reconnects[] | select(.ctrl == \"$ctrl\") | .new_ctrl" /tmp/tune-rc.json)
want=$(jq -r ".reconnects[0].target | 1 + .nr_io_queues + .nr_poll_queues" /tmp/tune-rc.json)
qc1="$(cat /sys/class/nvme/"$n1"/queue_count 2>/dev/null) $(cat /sys/class/nvme/"$n2"/queue_count 2>/dev/null)"
check "the new controllers have the profile's queues (queue_count $qc0 -> $qc1, want $want each; sqsize $(cat /sys/class/nvme/"$n2"/sqsize 2>/dev/null))" \
	test "$qc1 $(cat /sys/class/nvme/"$n2"/sqsize 2>/dev/null)" = "$want $want 127"
check "the second path kept kato 7 and ctrl_loss_tmo off ($n2: kato $(cat /sys/class/nvme/"$n2"/kato 2>/dev/null), ctrl_loss_tmo $(cat /sys/class/nvme/"$n2"/ctrl_loss_tmo 2>/dev/null))" \
	test "$(cat /sys/class/nvme/"$n2"/kato 2>/dev/null) $(cat /sys/class/nvme/"$n2"/ctrl_loss_tmo 2>/dev/null)" = "7 off"
check "the multipath disk is the same ($head)" test "$(ctrl_ns_dev "$n1")" = "$head"
frunning=$(kill -0 "$fpid" 2>/dev/null && echo yes || echo no)
wait "$fpid"
frc=$?
ferr=$(jq '[.jobs[].error] | add' /tmp/fio-rc.json 2>/dev/null || echo unparsable)
tap_result "fio wrote and verified through both re-creates (still running after them: $frunning; exit $frc, error $ferr, $(jq '.jobs[0].write.io_kbytes' /tmp/fio-rc.json 2>/dev/null) KiB written)" \
	"$([ "$frunning" = yes ] && [ "$frc" = 0 ] && [ "$ferr" = 0 ] && echo 0 || echo 1)" "$(tail -n 5 /tmp/fio-rc.err)"
rn -o json tune apply --profile throughput --reconnect
expect_rc "a second apply --reconnect exits 0" 0
expect_json "a second apply --reconnect leaves both alone" '[.reconnects[] | select(.status == "ok")] | length == 2'
rn disconnect -d "$n2"
expect_rc "disconnect -d $n2 exits 0" 0
wait_for 30 test ! -e "/sys/class/nvme/$n2"
snap /tmp/tune.9
rn -o json tune apply --profile balanced --reconnect
expect_rc "apply --reconnect on an only path exits 1" 1
check "it names the only live path" grep -q "only live path" "$R_OUT" "$R_ERR"
snap /tmp/tune.10
check "and changed no file and no controller" sh -c "cmp -s /tmp/tune.9 /tmp/tune.10 && [ -e /sys/class/nvme/$n1 ]"
rn tune revert

rn disconnect-all
check "no controller left" wait_for 30 fx_no_fabrics_ctrls
fx_cleanup_all
suite_end
