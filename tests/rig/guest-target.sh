#!/bin/bash
# Target guest of the two-VM rig (tests/rig/run-rig.sh): exports TEST_NQN on
# two nvmet-rdma ports (path A 192.0.2.2, path B 198.51.100.2; ANA group 1 on
# each), then serves commands from the host guest's suites (rig/cmd/N.cmd, one
# shell command line each, run by this shell) until rig/shutdown appears.
# Exit status: non-zero when the target's kernel log has warnings.
# shellcheck disable=SC2317 # the rt_* commands run through eval
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/rig.sh
. "$(dirname "$0")/../lib/rig.sh"

hostname rnvme-rig-target
fail() { echo "rig-target: $*"; echo "$*" > "$RIG/target-failed"; exit 1; }

rig_mount || { echo "rig-target: cannot mount the rig share"; exit 1; }
fx_dmesg_mark rig-target-boot
BOOT_MARK=$FX_DMESG_MARK
rig_fabric_up target || fail "cannot set up the target side of the wires"
fx_target_up --backing brd --size 256 --port 1 --traddr "$TGT_IP4" || fail "nvmet port 1"
fx_target_up --port 2 --traddr "$TGT_IP4_B" || fail "nvmet port 2"
SUB=$NVMET_CFS/subsystems/$TEST_NQN

# ----------------------------------------------------------- agent commands
rt_mark() { fx_dmesg_mark "$1"; echo "$FX_DMESG_MARK"; }
rt_dmesg_check() {
	local bad
	bad=$(fx_dmesg_since_mark | grep -E "$FX_DMESG_BAD" || true)
	[ -z "$bad" ] && return 0
	fx_dmesg_since_mark | grep -E -A 20 "$FX_DMESG_BAD" | head -n 80
	return 1
}
rt_dmesg_grep() { fx_dmesg_since_mark | grep -E "$1"; }
# Port N: remove/restore the subsystem link (nvmet disables a port with no subsystem).
rt_port_off() { rm -f "$NVMET_CFS/ports/$1/subsystems/$TEST_NQN"; }
rt_port_on() { ln -s "$SUB" "$NVMET_CFS/ports/$1/subsystems/$TEST_NQN"; }
rt_ana() { echo "$2" > "$NVMET_CFS/ports/$1/ana_groups/1/ana_state"; }
# rt_nic A|B: the target's NIC of that path
rt_nic() {
	if [ "$1" = B ]; then rig_ifname "$RIG_MAC_B"; else rig_ifname "$RIG_MAC_A"; fi
}
rt_link() { # A|B up|down
	local dev
	dev=$(rt_nic "$1") && ip link set "$dev" "$2"
}
rt_mtu() { # A|B MTU
	local dev
	dev=$(rt_nic "$1") && ip link set "$dev" mtu "$2"
}
rt_loss() { # A|B on|off: the NIC silently drops everything it sends (netem loss 100 %)
	local dev
	dev=$(rt_nic "$1") || return 1
	if [ "$2" = on ]; then
		modprobe sch_netem && tc qdisc replace dev "$dev" root netem loss 100%
	else
		tc qdisc del dev "$dev" root 2>/dev/null || true
	fi
}
rt_loss_held() { # A|B: as rt_loss on, once the slow backend (rt_slow) holds a new command
	# Applied from here, not from the host, so that the loss begins after the
	# target took the command (its SEND acknowledged) and before its answer:
	# the host's suite cannot time that to the millisecond through the share.
	# The command must be a new one: one held since before the wait began
	# may be about to leave.  So: wait until the backend finishes a command
	# (its completed I/Os in sysfs: the answer goes out now), then until it
	# holds the next one (dm-delay's status counts the bios it holds; its
	# inflight in sysfs does not), then start the loss.  That command then
	# stays held until BACKEND_MS after the first wait ended: prints how far
	# into that time the loss was in place ("ms into the command").  tc
	# runs before the wait, reading its command from a FIFO: started after
	# it, tc took 375-560 ms on this 1-vCPU guest.
	local dev d dm='' held=0 done0 done1 t0 t1 t2 te=0 st
	local fifo=/tmp/rt-loss-held nap=/tmp/rt-loss-nap pid fd sfd rc=0
	dev=$(rt_nic "$1") || return 1
	for d in /sys/block/dm-*; do
		[ "$(cat "$d/dm/name" 2>/dev/null)" = rnvmeslow ] && dm=$d
	done
	[ -n "$dm" ] || { echo "no slow backend (rt_slow first)"; return 1; }
	modprobe sch_netem || return 1
	rm -f "$fifo" "$nap" && mkfifo "$fifo" "$nap" || return 1
	exec {sfd}<> "$nap"	# read -t on it: a sleep without a process
	tc -batch "$fifo" &
	pid=$!
	exec {fd}> "$fifo"
	read -r -a st < "$dm/stat"
	done0=$((st[0] + st[4]))
	t0=$(now_ns)
	while [ $(($(now_ns) - t0)) -lt 20000000000 ]; do
		read -r -a st < "$dm/stat"
		done1=$((st[0] + st[4]))
		[ "$done1" != "$done0" ] && { te=$(now_ns); break; }
		read -r -t 0.01 -u "$sfd"
	done
	while [ "$te" != 0 ] && [ $(($(now_ns) - te)) -lt 5000000000 ]; do
		held=$(rt_slow_held) || break
		[ "$held" -gt 0 ] && break
		read -r -t 0.01 -u "$sfd"
	done
	t1=$(now_ns)
	[ "${held:-0}" -gt 0 ] && echo "qdisc replace dev $dev root netem loss 100%" >&"$fd"
	exec {fd}>&- {sfd}>&-
	wait "$pid" || rc=$?
	t2=$(now_ns)
	rm -f "$fifo" "$nap"
	[ "$te" != 0 ] || { echo "the backend finished no command in 20 s"; return 1; }
	[ "${held:-0}" -gt 0 ] || { echo "the backend took no new command within 5 s"; return 1; }
	[ "$rc" = 0 ] || { echo "tc: netem on $dev failed ($rc)"; return 1; }
	echo "the backend finished a command after $(((te - t0) / 1000000)) ms and held the next $(((t1 - te) / 1000000)) ms later; loss in place $(((t2 - te) / 1000000)) ms into the command"
}
rt_slow_held() { # the commands dm-delay holds now (its status: reads writes flushes)
	local st
	st=$(dmsetup status rnvmeslow) || return 1
	awk '{ print $4 + $5 + $6 }' <<< "$st"
}
rt_slow() { # MS|off: every command of the namespace takes MS more in its backend (dm-delay), or not
	local ns=$SUB/namespaces/1 dev size
	if [ "$1" = off ]; then
		[ -e /dev/mapper/rnvmeslow ] || return 0
		echo 0 > "$ns/enable" && cat "$RIG_SLOW_ORIG" > "$ns/device_path" &&
			echo 1 > "$ns/enable" && dmsetup remove --noudevsync rnvmeslow
		return
	fi
	dev=$(cat "$ns/device_path") && size=$(blockdev --getsz "$dev") || return 1
	echo "$dev" > "$RIG_SLOW_ORIG"
	modprobe dm_delay &&
		echo "0 $size delay $dev 0 $1" | dmsetup create --noudevsync rnvmeslow &&
		dmsetup mknodes rnvmeslow &&
		echo 0 > "$ns/enable" && echo /dev/mapper/rnvmeslow > "$ns/device_path" &&
		echo 1 > "$ns/enable"
}
RIG_SLOW_ORIG=/tmp/rig-slow-orig
rt_reset() { # back to the exported state after a suite
	local p
	rt_loss A off
	rt_loss B off
	rt_slow off
	echo 128 > "$SUB/attr_qid_max"
	for p in 1 2; do
		[ -e "$NVMET_CFS/ports/$p/subsystems/$TEST_NQN" ] || rt_port_on "$p"
		echo optimized > "$NVMET_CFS/ports/$p/ana_groups/1/ana_state"
	done
	rt_mtu A 1500 && rt_mtu B 1500 && rt_link A up && rt_link B up
}

echo "rig-target: ready ($(rdma link show | tr '\n' ' '))"
date +%s > "$RIG/target-ready"

while [ ! -e "$RIG/shutdown" ]; do
	for f in "$RIG"/cmd/*.cmd; do
		[ -e "$f" ] || continue
		base=${f%.cmd}
		cmd=$(cat "$f")
		rm -f "$f"
		rc=0
		eval "$cmd" > "$base.out" 2>&1 || rc=$?
		echo "rig-target: '$cmd' -> $rc"
		echo "$rc" > "$base.rc.tmp"
		mv "$base.rc.tmp" "$base.rc"
	done
	sleep 0.1
done

echo "rig-target: shutdown requested"
FX_DMESG_MARK=$BOOT_MARK
bad=$(fx_dmesg_since_mark | grep -E "$FX_DMESG_BAD" || true)
fx_target_down
fx_rxe_down
if [ -n "$bad" ]; then
	echo "rig-target: kernel warnings during the run:"
	printf '%s\n' "$bad"
	exit 1
fi
exit 0
