#!/bin/bash
# shellcheck disable=SC2317,SC2119 # helpers are invoked indirectly (check, wait_for)
# 06-options: option strings written to /dev/nvme-fabrics. Good ones connect and
# show up in sysfs; bad ones fail with an error (and no oops); a duplicate
# connect without duplicate_connect fails with EALREADY.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
suite_begin

fx_setup --nqn "$TEST_NQN" --backing brd --size 64
BASE=$(nvmf_opts)

# good OPTS CHECKS...: connect with BASE,OPTS; each CHECK is "attr=value" compared
# with /sys/class/nvme/<ctrl>/attr (the value may be a glob pattern).
good() {
	local opts=$1 reply inst ctrl chk attr want have t bad=
	shift
	t=$(now_ns)
	reply=$(nvmf_write "$BASE,$opts")
	case "$reply" in
	instance=*) ;;
	*) not_ok "good: $opts" "reply: $reply"; fx_host_disconnect_all; return ;;
	esac
	inst=${reply#instance=}
	inst=${inst%%,*}
	ctrl=nvme$inst
	wait_for 30 grep -qx live "/sys/class/nvme/$ctrl/state" || bad="state $(ctrl_attr "$ctrl" state)"
	for chk in "$@"; do
		attr=${chk%%=*}
		want=${chk#*=}
		have=$(ctrl_attr "$ctrl" "$attr")
		# shellcheck disable=SC2053 # want may be a glob
		[[ $have == $want ]] || bad="$bad $attr='$have' (want $want)"
	done
	if [ -z "$bad" ]; then
		ok "good: $opts -> $ctrl $* ($(secs_since "$t") s)"
	else
		not_ok "good: $opts" "$bad"
	fi
	echo 1 > "/sys/class/nvme/$ctrl/delete_controller" 2>/dev/null
	wait_for 60 test ! -e "/sys/class/nvme/$ctrl" || echo "# $ctrl not deleted within 60 s"
}

# bad OPTS [full]: the write must fail (not time out) and leave no controller.
bad() {
	local opts=$1 reply rc=0
	[ "${2:-}" = full ] || opts="$BASE,$opts"
	reply=$(nvmf_write "$opts" 60) || rc=$?
	if [ "$rc" = 124 ]; then
		not_ok "bad: $1 rejected" "timed out after 60 s"
	elif [ "$rc" = 0 ]; then
		not_ok "bad: $1 rejected" "was accepted: $reply"
	else
		ok "bad: $1 rejected (${reply##*: })"
	fi
	fx_host_disconnect_all >/dev/null
}

# ------------------------------------------------------------- good options
ncpu=$(nproc)
good "queue_size=32" sqsize=31
good "queue_size=16" sqsize=15
good "nr_io_queues=1" queue_count=2
good "nr_io_queues=1,nr_write_queues=1" queue_count=3
good "nr_io_queues=1,nr_poll_queues=1" queue_count=3
good "nr_io_queues=$ncpu" queue_count=$((ncpu + 1))
good "reconnect_delay=3" reconnect_delay=3
good "reconnect_delay=2,ctrl_loss_tmo=30" reconnect_delay=2 ctrl_loss_tmo=30
good "ctrl_loss_tmo=-1" ctrl_loss_tmo=off
good "fast_io_fail_tmo=5" fast_io_fail_tmo=5
good "keep_alive_tmo=7" kato=7
# nvme-fabrics of 6.12 (not 6.1) gives a hostnqn without hostid the default
# hostid, which belongs to the default hostnqn, and refuses the clash
# ("found same hostid ... but different hostnqn"): core behaviour, same for
# every transport.  Expect a refusal there.
reply=$(nvmf_write "$BASE,hostnqn=$HOST_NQN")
if [[ $reply == instance=* ]]; then
	fx_host_disconnect_all >/dev/null
	good "hostnqn=$HOST_NQN" hostnqn="$HOST_NQN"
elif dmesg | tail -n 5 | grep 'found same hostid .* but different hostnqn' >/dev/null; then
	ok "hostnqn=$HOST_NQN without hostid refused by nvme-fabrics (hostid clash with the default host, as on 6.12)"
else
	not_ok "good: hostnqn=$HOST_NQN" "reply: $reply"
fi
good "hostnqn=$HOST_NQN,hostid=$HOST_ID" hostnqn="$HOST_NQN" hostid="$HOST_ID"
good "host_traddr=$HOST_IP4" address="*host_traddr=$HOST_IP4"
good "tos=0"
good "tos=184"
good "disable_sqflow"
good "duplicate_connect"
good "queue_size=64,nr_io_queues=2,nr_write_queues=1,nr_poll_queues=1,reconnect_delay=1,ctrl_loss_tmo=10,fast_io_fail_tmo=2,keep_alive_tmo=3,hostnqn=$HOST_NQN,hostid=$HOST_ID,host_traddr=$HOST_IP4,tos=0,disable_sqflow" \
	sqsize=63 queue_count=5 reconnect_delay=1 ctrl_loss_tmo=10 fast_io_fail_tmo=2 kato=3 hostnqn="$HOST_NQN"
BASE6="transport=$TRANSPORT,traddr=$TGT_IP6,trsvcid=$TGT_PORT,nqn=$TEST_NQN"
fx_target_up --nqn "$TEST_NQN" --port 2 --adrfam ipv6 --traddr "$TGT_IP6" || not_ok "IPv6 port"
BASE_SAVE=$BASE
BASE=$BASE6
good "host_traddr=$HOST_IP6" address="traddr=$TGT_IP6*"
BASE=$BASE_SAVE

# tos above 255 is clamped by nvme-fabrics (6.1/6.12) - accept either outcome, but no oops.
reply=$(nvmf_write "$BASE,tos=999" 60)
case "$reply" in
instance=*) ok "tos=999: accepted (clamped to 255 by nvme-fabrics)"; fx_host_disconnect_all >/dev/null ;;
*"Invalid argument"*) ok "tos=999: rejected with EINVAL" ;;
*) not_ok "tos=999: accepted or EINVAL" "reply: $reply"; fx_host_disconnect_all >/dev/null ;;
esac

# ------------------------------------------------------------- bad options
bad "queue_size=0"
bad "queue_size=99999"
bad "queue_size=abc"
bad "nr_io_queues=-1"
bad "nr_io_queues=0"
bad "nr_write_queues=-1"
bad "nr_poll_queues=-1"
bad "reconnect_delay=0"
bad "keep_alive_tmo=-1"
bad "hostid=garbage"
bad "hostnqn=$(printf 'n%.0s' $(seq 1 300))"
bad "tos=-1"
bad "no_such_option=1"
bad "hdr_digest"
bad "data_digest"
bad "host_iface=veth0"
bad "host_traddr=999.1.1.1"
bad "transport=$TRANSPORT,traddr=999.1.1.1,trsvcid=$TGT_PORT,nqn=$TEST_NQN" full
bad "transport=$TRANSPORT,traddr=$TGT_IP4,trsvcid=abc,nqn=$TEST_NQN" full
bad "transport=$TRANSPORT,traddr=$TGT_IP4,trsvcid=99999,nqn=$TEST_NQN" full
bad "transport=$TRANSPORT,traddr=$TGT_IP4,trsvcid=$TGT_PORT" full
bad "transport=$TRANSPORT,nqn=$TEST_NQN" full
bad "transport=$TRANSPORT,traddr=$TGT_IP4,trsvcid=$TGT_PORT,nqn=nqn.2014-08.org.nvmexpress.rnvme:nosuch" full
bad "transport=$TRANSPORT,traddr=$TGT_IP4,trsvcid=4499,nqn=$TEST_NQN" full
bad "transport=$TRANSPORT,traddr=192.0.2.99,trsvcid=$TGT_PORT,nqn=$TEST_NQN,ctrl_loss_tmo=0" full
check "no controllers left after the bad options" wait_for 30 fx_no_fabrics_ctrls

# ------------------------------------------------------------- duplicate connect
reply=$(nvmf_write "$BASE")
case "$reply" in
instance=*)
	ok "first connect: $reply"
	reply2=$(nvmf_write "$BASE" 60)
	case "$reply2" in
	*"already in progress"*) ok "duplicate connect fails with EALREADY" ;;
	*) not_ok "duplicate connect fails with EALREADY" "reply: $reply2" ;;
	esac
	reply3=$(nvmf_write "$BASE,duplicate_connect" 60)
	case "$reply3" in
	instance=*) ok "duplicate connect with duplicate_connect works: $reply3" ;;
	*) not_ok "duplicate connect with duplicate_connect works" "reply: $reply3" ;;
	esac
	reply4=$(nvmf_write "$BASE,host_traddr=$HOST_IP4" 60)
	diag "same target with explicit host_traddr: ${reply4}"
	;;
*) not_ok "first connect" "reply: $reply" ;;
esac
check "disconnect-all" timeout 120 nvme disconnect-all
check "no controllers left" wait_for 30 fx_no_fabrics_ctrls

suite_end
