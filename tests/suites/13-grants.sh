#!/bin/bash
# shellcheck disable=SC2317,SC2119 # helpers are invoked indirectly (check, wait_for)
# 13-grants: the target changes the number of I/O queues it grants (nvmet
# attr_qid_max) between associations of one controller, and the host resets
# into the new shape: up from one queue to read/write/poll maps, down to one,
# to the middle and up again, once with writes in flight.  After each reset:
# the controller is live, queue_count and the blk-mq hardware queues follow
# the grant, polling is on exactly when a poll queue was granted, and the
# data written before, during and after reads back.  Where nvmet can limit
# the queue size (6.10+), a smaller size after a reconnect is refused until
# the target allows the old one again.  (rnvme sized its blk-mq
# maps from the first grant and panicked when a later one added poll queues;
# the in-tree nvme_rdma panics when the grant shrinks, so with
# HOST_DRIVER=inbox the shrinking steps are skipped.)
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
suite_begin

fx_setup --nqn "$TEST_NQN" --port 1
subsys=$NVMET_CFS/subsystems/$TEST_NQN
[ -w "$subsys/attr_qid_max" ] || tap_skip_all "nvmet of $(uname -r) has no attr_qid_max"
[ "$(nproc)" -ge 2 ] || tap_skip_all "needs 2 vCPUs for 2 read queues (have $(nproc))"
grant() { echo "$1" > "$subsys/attr_qid_max"; }
state_is() { grep -qx "$2" "/sys/class/nvme/$1/state" 2>/dev/null; }
# the controller's own (path) block device: its blk-mq queues, not the
# multipath head's
path_blk() {
	local p
	for p in /sys/class/nvme/"$1"/nvme*n*; do
		[ -d "$p/mq" ] && { basename "$p"; return 0; }
	done
	return 1
}
hw_queues() { local b; b=$(path_blk "$1") && find "/sys/block/$b/mq" -mindepth 1 -maxdepth 1 -type d | wc -l; }
io_poll() { local b; b=$(path_blk "$1") && cat "/sys/block/$b/queue/io_poll"; }

grant 1
# 2 read + 1 write + 1 poll queue wanted; the first association gets one
reply=$(nvmf_write "$(nvmf_opts),nr_io_queues=2,nr_write_queues=1,nr_poll_queues=1,reconnect_delay=1,ctrl_loss_tmo=60")
ctrl=nvme$(echo "$reply" | sed -n 's/.*instance=\([0-9]*\).*/\1/p')
if [ "$ctrl" = nvme ] || ! dev=$(wait_ns_dev "$ctrl" 30); then
	bail "connect with qid_max 1 failed: $reply"
fi
ok "connected $ctrl ($dev) while the target grants one I/O queue"
check "queue_count 2 (admin + 1)" test "$(ctrl_attr "$ctrl" queue_count)" = 2
check "1 blk-mq hardware queue" test "$(hw_queues "$ctrl")" = 1
check "polling off without a poll queue" test "$(io_poll "$ctrl")" = 0

head -c 8M /dev/urandom > /tmp/g.base
check "write 8 MiB at the first grant" dd if=/tmp/g.base of="$dev" bs=1M oflag=direct status=none
step=0

# reset_live DESC: reset $ctrl; a test point for its return to live (60 s)
reset_live() {
	local t
	t=$(now_ns)
	echo 1 > "/sys/class/nvme/$ctrl/reset_controller" 2>/dev/null
	if wait_for 60 state_is "$ctrl" live; then
		ok "$1 ($(secs_since "$t") s)"
	else
		not_ok "$1" "state: $(ctrl_attr "$ctrl" state); $(dmesg | tail -n 5)"
		return 1
	fi
}

# regrant QID_MAX QUEUE_COUNT HW_QUEUES POLL: change the grant, reset, verify
regrant() {
	local qmax=$1 qc=$2 hw=$3 poll=$4
	step=$((step + 1))
	grant "$qmax"
	reset_live "[$step] reset into qid_max $qmax: live again" || return 1
	check "[$step] queue_count $qc" test "$(ctrl_attr "$ctrl" queue_count)" = "$qc"
	check "[$step] $hw blk-mq hardware queue(s)" wait_for 10 test "$(hw_queues "$ctrl")" = "$hw"
	check "[$step] io_poll $poll" test "$(io_poll "$ctrl")" = "$poll"
	check "[$step] the first 8 MiB read back" cmp -n 8388608 /tmp/g.base "$dev"
	head -c 2M /dev/urandom > /tmp/g.step
	check "[$step] write and read back 2 MiB at offset $((16 + step * 2)) MiB" bash -c \
		"dd if=/tmp/g.step of=$dev bs=1M seek=$((16 + step * 2)) oflag=direct status=none &&
		 cmp /tmp/g.step <(dd if=$dev bs=1M skip=$((16 + step * 2)) count=2 iflag=direct status=none)"
	# polled I/O needs a poll queue: without one 6.1 falls back to
	# interrupts and 6.12 fails it (EOPNOTSUPP), both in the block layer
	if [ "$poll" = 1 ]; then
		check "[$step] polled reads (io_uring, hipri) complete" timeout 60 fio --name=poll \
			--filename="$dev" --rw=randread --bs=4k --iodepth=4 --ioengine=io_uring --hipri=1 \
			--direct=1 --size=8m --io_size=2m --output=/dev/null
	else
		check "[$step] reads at depth 4 (io_uring) complete" timeout 60 fio --name=irq \
			--filename="$dev" --rw=randread --bs=4k --iodepth=4 --ioengine=io_uring \
			--direct=1 --size=8m --io_size=2m --output=/dev/null
	fi
}

# up: 4 queues = 1 write (default map) + 2 read + 1 poll
regrant 4 5 4 1
if [ "$HOST_DRIVER" = inbox ]; then
	tap_skip "the in-tree nvme_rdma panics when the grant shrinks" "grant shrinking steps"
else
	regrant 1 2 1 0		# down to one shared queue
	regrant 2 3 2 0		# write + read, no poll
fi
regrant 4 5 4 1		# up again

# a grant change with writes in flight: they wait out the reset and land
grant 2
head -c 8M /dev/urandom > /tmp/g.during
dd if=/tmp/g.during of="$dev" bs=64k seek=512 oflag=direct status=none &
ddpid=$!
sleep 0.5
reset_live "reset to qid_max 2 under writes: live again"
if timeout 120 tail --pid="$ddpid" -f /dev/null && wait "$ddpid"; then
	ok "the writes in flight across the reset completed"
else
	not_ok "the writes in flight across the reset completed"
fi
check "and read back (8 MiB at 32 MiB)" bash -c \
	"cmp /tmp/g.during <(dd if=$dev bs=64k skip=512 count=128 iflag=direct status=none)"
check "queue_count 3 after the reset under writes" test "$(ctrl_attr "$ctrl" queue_count)" = 3

check "disconnect $ctrl" timeout 60 nvme disconnect -d "$ctrl"
check "controller gone" wait_for 30 test ! -e "/sys/class/nvme/$ctrl"
grant 128

# ------------------------------------------------ the queue size shrinks
# nvmet of 6.10+ limits a port's queue size (param_max_queue_size, settable
# while the port has no subsystem).  The blk-mq tag set keeps the depth of
# the first association; queues of a later, smaller one could not hold its
# tags: rnvme refuses such an association and keeps retrying, and takes the
# target back once the size is restored.
pq=$NVMET_CFS/ports/1/param_max_queue_size
link=$NVMET_CFS/ports/1/subsystems/$TEST_NQN
state_of() { ctrl_attr "$1" state; }
if [ ! -e "$pq" ]; then
	tap_skip "nvmet of $(uname -r) has no param_max_queue_size (6.10+)" "queue size shrink across a reconnect"
elif [ "$HOST_DRIVER" = inbox ]; then
	tap_skip "checks rnvme's refusal" "queue size shrink across a reconnect"
else
	reply=$(nvmf_write "$(nvmf_opts),queue_size=64,reconnect_delay=1,ctrl_loss_tmo=120")
	ctrl=nvme$(echo "$reply" | sed -n 's/.*instance=\([0-9]*\).*/\1/p')
	if [ "$ctrl" = nvme ] || ! dev=$(wait_ns_dev "$ctrl" 30); then
		not_ok "connect with queue_size=64" "$reply"
	else
		ok "connected $ctrl with queue_size=64"
		head -c 4M /dev/urandom > /tmp/g.base
		check "write 4 MiB" dd if=/tmp/g.base of="$dev" bs=1M oflag=direct status=none
		rm -f "$link"
		echo 16 > "$pq"
		ln -s "$subsys" "$link"
		refused() { dmesg | grep "$ctrl: the controller now allows I/O queues of 16 entries, too few for the 6[34] commands" >/dev/null; }
		if wait_for 60 refused; then
			ok "an association with 16-entry queues is refused"
		else
			not_ok "an association with 16-entry queues is refused" "state $(state_of "$ctrl"); $(dmesg | grep "$ctrl" | tail -n 4)"
		fi
		check "$ctrl is not live at the smaller size (state: $(state_of "$ctrl"))" test "$(state_of "$ctrl")" != live
		le=$(cat "/sys/class/nvme/$ctrl/rnvme/last_error" 2>/dev/null)
		check "last_error says so: $le" bash -c "echo '$le' | grep 'failed (-28): queue size shrank to 16 (tag set depth 6[34])' >/dev/null"
		rm -f "$link"
		echo -1 > "$pq"
		ln -s "$subsys" "$link"
		t=$(now_ns)
		if wait_for 60 state_is "$ctrl" live; then
			ok "back to live once the target allows 64 again ($(secs_since "$t") s)"
			check "the 4 MiB read back" cmp -n 4194304 /tmp/g.base "$dev"
			check "64 reads in flight complete (fio QD64, 4 MiB)" timeout 120 fio --name=qd64 \
				--filename="$dev" --rw=randread --bs=4k --iodepth=64 --ioengine=libaio \
				--direct=1 --size=16m --io_size=4m --output=/dev/null
		else
			not_ok "back to live once the target allows 64 again" "state $(state_of "$ctrl")"
		fi
		check "disconnect $ctrl" timeout 60 nvme disconnect -d "$ctrl"
	fi
fi
rm -f /tmp/g.base /tmp/g.step /tmp/g.during
suite_end
