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
rt_link() { # A|B up|down
	local mac=$RIG_MAC_A
	[ "$1" = B ] && mac=$RIG_MAC_B
	ip link set "$(rig_ifname "$mac")" "$2"
}
rt_mtu() { # A|B MTU
	local mac=$RIG_MAC_A
	[ "$1" = B ] && mac=$RIG_MAC_B
	ip link set "$(rig_ifname "$mac")" mtu "$2"
}
rt_loss() { # A|B on|off: the NIC silently drops everything it sends (netem loss 100 %)
	local mac=$RIG_MAC_A dev
	[ "$1" = B ] && mac=$RIG_MAC_B
	dev=$(rig_ifname "$mac") || return 1
	if [ "$2" = on ]; then
		modprobe sch_netem && tc qdisc replace dev "$dev" root netem loss 100%
	else
		tc qdisc del dev "$dev" root 2>/dev/null || true
	fi
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
