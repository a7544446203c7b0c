#!/bin/bash
# shellcheck disable=SC2317 # helpers are invoked indirectly (check, wait_for)
# 09-reconnect: the target takes its port away and gives it back (nvmet drops
# the association): the host recovers, queued writes complete and read back,
# a controller reset under fio loses nothing,
# fast_io_fail_tmo fails I/O at its deadline, ctrl_loss_tmo deletes the
# controller, rnvme's sysfs counters tell the story, optional backoff grows,
# a controller back on a port brings its waiting siblings back with it.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
suite_begin

fx_setup --nqn "$TEST_NQN" --port 1
link=$NVMET_CFS/ports/1/subsystems/$TEST_NQN
port_down() { rm -f "$link"; }
port_up() { [ -e "$link" ] || ln -s "$NVMET_CFS/subsystems/$TEST_NQN" "$link"; }
state_is() { grep -qx "$2" "/sys/class/nvme/$1/state" 2>/dev/null; }
rn() { cat "/sys/class/nvme/$1/rnvme/$2" 2>/dev/null; }
is_rnvme() { [ "$HOST_DRIVER" != inbox ]; }

connect() { # extra options
	local reply
	reply=$(nvmf_write "$(nvmf_opts),$1") || return 1
	echo "nvme$(echo "$reply" | sed -n 's/.*instance=\([0-9]*\).*/\1/p')"
}

# ---------------------------------------------------------- outage and recovery
ctrl=$(connect "reconnect_delay=1,ctrl_loss_tmo=60")
if [ -z "$ctrl" ] || ! dev=$(wait_ns_dev "$ctrl" 30); then
	bail "connect for the reconnect test failed"
fi
ok "connected $ctrl ($dev) with reconnect_delay=1,ctrl_loss_tmo=60"
head -c 8M /dev/urandom > /tmp/before.bin
head -c 4M /dev/urandom > /tmp/during.bin
check "write 8 MiB before the outage" dd if=/tmp/before.bin of="$dev" bs=1M oflag=direct status=none
if is_rnvme; then
	check "no error recorded yet" test "$(rn "$ctrl" last_error)" = none
	check "rdma_device names the host $RNVME_RDMA device" test "$(rn "$ctrl" rdma_device)" = "$RDMA_DEV0"
	check "inline_data_size is nvmet's default 4096" test "$(rn "$ctrl" inline_data_size)" = 4096
fi

t=$(now_ns)
port_down
if wait_for 60 state_is "$ctrl" connecting; then
	ok "$ctrl left live after the port went away ($(secs_since "$t") s)"
else
	not_ok "$ctrl went to connecting" "state: $(ctrl_attr "$ctrl" state)"
fi
# a write issued during the outage must wait, then complete after recovery
dd if=/tmp/during.bin of="$dev" bs=1M seek=16 oflag=direct status=none &
ddpid=$!
sleep 3
if is_rnvme; then
	check "error_recoveries = 1" test "$(rn "$ctrl" error_recoveries)" = 1
	attempts_made() { [ "$(rn "$ctrl" reconnect_attempts)" -ge 1 ]; }
	check "reconnect attempts are being made" wait_for 20 attempts_made
	le=$(rn "$ctrl" last_error)
	check "last_error says what happened: $le" test "$le" != none
	# -1 while an attempt runs (slow under KASAN): sample between attempts
	next_scheduled() {
		nr=$(rn "$ctrl" next_reconnect_ms)
		[ "${nr:--1}" -ge 0 ] && [ "${nr:--1}" -le 1500 ]
	}
	nr=
	if wait_for 10 next_scheduled; then
		ok "next_reconnect_ms is scheduled between attempts ($nr)"
	else
		not_ok "next_reconnect_ms is scheduled between attempts" "last value '$nr'"
	fi
fi
check "the write issued during the outage is still pending" kill -0 "$ddpid"
t=$(now_ns)
port_up
if wait_for 60 state_is "$ctrl" live; then
	ok "$ctrl live again $(secs_since "$t") s after the port came back"
else
	not_ok "$ctrl reconnected" "state: $(ctrl_attr "$ctrl" state)"
fi
if wait_for 60 bash -c "! kill -0 $ddpid" && wait "$ddpid"; then
	ok "the write issued during the outage completed ($WAIT_ELAPSED s after the port came back)"
else
	not_ok "the write issued during the outage completed"
fi
check "data written before the outage reads back intact" \
	cmp <(dd if="$dev" bs=1M count=8 iflag=direct status=none) /tmp/before.bin
check "data written during the outage reads back intact" \
	cmp <(dd if="$dev" bs=1M skip=16 count=4 iflag=direct status=none) /tmp/during.bin
if is_rnvme; then
	check "reconnects = 1" test "$(rn "$ctrl" reconnects)" = 1
	check "next_reconnect_ms = -1 once live" test "$(rn "$ctrl" next_reconnect_ms)" = -1
fi
# nvme-core after 6.12 counts a controller's reconnect attempts in its diag
# group; the transport adds an outage's attempts when it ends
diag=/sys/class/nvme/$ctrl/diag/reconnect_count
if grep -qw nvme_dev_diag_attrs_group /proc/kallsyms; then
	check "nvme-core's diag group is on the controller ($diag)" test -r "$diag"
fi
if [ -r "$diag" ]; then
	check "nvme-core's diag/reconnect_count counts the outage's attempts ($(cat "$diag") >= 1)" \
		test "$(cat "$diag")" -ge 1
fi
timeout 60 nvme disconnect -d "$ctrl" >/dev/null 2>&1

# ---------------------------------------------------------- controller reset
# nvme reset under fio with verify: a reset re-creates the queues and must
# not fail any I/O.  16 MiB, divided like every fio volume on the debug
# kernel (TEST_IO_DIV) down to 4 MiB: there fio wrote 241 KiB/s on a slow
# day and 16 MiB outlasted the 120 s bound; 4 MiB still takes several
# seconds on a fast day, and the reset comes 2 s after fio starts (checked).
reset_mib=$((16 / ${TEST_IO_DIV:-1}))
[ "$reset_mib" -ge 4 ] || reset_mib=4
ctrl=$(connect "reconnect_delay=1,ctrl_loss_tmo=60")
if [ -n "$ctrl" ] && dev=$(wait_ns_dev "$ctrl" 30); then
	timeout 120 fio --name=reset --filename="$dev" --rw=randwrite --bs=4k --size="${reset_mib}m" \
		--ioengine=libaio --iodepth=16 --direct=1 --verify=crc32c --do_verify=1 \
		--time_based=0 --output=/tmp/reset-fio.txt > /dev/null 2>&1 &
	fiopid=$!
	sleep 2
	# the reset must land under I/O: fio still running when it is issued
	if kill -0 "$fiopid" 2>/dev/null; then
		ok "fio ($reset_mib MiB) still running when the reset is issued"
	else
		not_ok "fio ($reset_mib MiB) still running when the reset is issued" "it ended within 2 s"
	fi
	t=$(now_ns)
	if timeout 60 nvme reset "/dev/$ctrl" >/dev/null 2>&1 && wait_for 60 state_is "$ctrl" live; then
		ok "nvme reset /dev/$ctrl under I/O: live again after $(secs_since "$t") s"
	else
		not_ok "nvme reset /dev/$ctrl under I/O" "state: $(ctrl_attr "$ctrl" state)"
	fi
	if wait_for 120 bash -c "! kill -0 $fiopid" && wait "$fiopid"; then
		ok "fio write+verify across the reset: no I/O error, no mismatch"
	else
		not_ok "fio write+verify across the reset" "$(tail -n 15 /tmp/reset-fio.txt 2>/dev/null)"
	fi
	timeout 60 nvme disconnect -d "$ctrl" >/dev/null 2>&1
else
	not_ok "connect for the reset test"
fi

# ---------------------------------------------------------- fast_io_fail_tmo
ctrl=$(connect "reconnect_delay=1,ctrl_loss_tmo=60,fast_io_fail_tmo=3")
if [ -n "$ctrl" ] && dev=$(wait_ns_dev "$ctrl" 30); then
	port_down
	wait_for 60 state_is "$ctrl" connecting
	t=$(now_ns)
	if timeout 60 dd if="$dev" of=/dev/null bs=4k count=1 iflag=direct status=none 2>/dev/null; then
		not_ok "I/O fails after fast_io_fail_tmo=3 while disconnected"
	else
		s=$(secs_since "$t")
		ok "I/O failed $s s after the controller was seen connecting, fast_io_fail_tmo=3"
		check "it failed at the deadline, not before 1 s or after 20 s ($s s)" \
			awk -v s="$s" 'BEGIN { exit !(s >= 1 && s <= 20) }'
	fi
	port_up
	check "reconnects after fast_io_fail" wait_for 60 state_is "$ctrl" live
	check "I/O works again" dd if="$dev" of=/dev/null bs=4k count=1 iflag=direct status=none
	timeout 60 nvme disconnect -d "$ctrl" >/dev/null 2>&1
else
	not_ok "connect with fast_io_fail_tmo=3"
fi

# ---------------------------------------------------------- ctrl_loss_tmo
ctrl=$(connect "reconnect_delay=1,ctrl_loss_tmo=4")
if [ -n "$ctrl" ] && wait_ns_dev "$ctrl" 30 >/dev/null; then
	t=$(now_ns)
	port_down
	if wait_for 90 test ! -e "/sys/class/nvme/$ctrl"; then
		s=$(secs_since "$t")
		ok "controller deleted $s s after the loss with ctrl_loss_tmo=4"
		check "not before ctrl_loss_tmo ($s s >= 4)" awk -v s="$s" 'BEGIN { exit !(s >= 4) }'
	else
		not_ok "controller deleted after ctrl_loss_tmo=4" "state: $(ctrl_attr "$ctrl" state)"
	fi
	port_up
else
	not_ok "connect with ctrl_loss_tmo=4"
fi

# ---------------------------------------------------------- backoff (rnvme only)
if is_rnvme; then
	p=/sys/module/rnvme/parameters
	check_fails "reconnect_jitter=51 is refused" bash -c "echo 51 > $p/reconnect_jitter"
	check "reconnect_jitter=20 is accepted" bash -c "echo 20 > $p/reconnect_jitter && [ \$(cat $p/reconnect_jitter) = 20 ]"
	echo 0 > "$p/reconnect_jitter"

	# outage_delays NAME COUNT AWK-CHECK DESC: connect, take the port away
	# until COUNT reconnects were scheduled, check their delays, recover.
	outage_delays() {
		local name=$1 count=$2 prog=$3 desc=$4 from delays
		ctrl=$(connect "reconnect_delay=1,ctrl_loss_tmo=60")
		if [ -z "$ctrl" ] || ! wait_ns_dev "$ctrl" 30 >/dev/null; then
			not_ok "connect for the $name test"
			return
		fi
		from=$(($(dmesg | wc -l) + 1))
		port_down
		wait_for 60 bash -c "[ \$(dmesg | tail -n +$from | grep -c '$ctrl: reconnecting in') -ge $count ]"
		delays=$(dmesg | tail -n +"$from" | sed -n "s/.*$ctrl: reconnecting in \([0-9.]*\) seconds.*/\1/p" | tr '\n' ' ')
		echo "# $name delays: $delays"
		check "$desc: $delays" awk -v d="$delays" "$prog"
		port_up
		check "reconnects with $name on" wait_for 30 state_is "$ctrl" live
		timeout 60 nvme disconnect -d "$ctrl" >/dev/null 2>&1
	}

	echo 8 > "$p/reconnect_backoff_max"
	outage_delays backoff 5 'BEGIN {
		n = split(d, a, " "); if (n < 4) exit 1
		for (i = 2; i <= n; i++) if (a[i] + 0 < a[i-1] + 0 || a[i] + 0 > 8) exit 1
		exit !(a[1] + 0 == 1 && a[n] + 0 == 8) }' "delays double and cap at 8 s"
	echo 0 > "$p/reconnect_backoff_max"

	echo 20 > "$p/reconnect_jitter"
	outage_delays jitter 4 'BEGIN {
		n = split(d, a, " "); if (n < 4) exit 1
		same = 1
		for (i = 1; i <= n; i++) { if (a[i] < 0.8 || a[i] > 1.2) exit 1; if (a[i] != a[1]) same = 0 }
		exit same }' "jitter 20%: delays within 0.8-1.2 s and not all equal"
	echo 0 > "$p/reconnect_jitter"

	# siblings: a controller that is back tells the others waiting for the
	# same target port (same traddr, trsvcid, host address) to try now,
	# not at the end of their own delay (rnvme_kick_siblings)
	a=$(connect "reconnect_delay=1,ctrl_loss_tmo=60")
	b=$(connect "reconnect_delay=30,ctrl_loss_tmo=120,duplicate_connect")
	if [ -z "$a" ] || [ -z "$b" ] || ! wait_ns_dev "$b" 30 >/dev/null; then
		not_ok "two controllers to one port for the sibling test" "got '$a' '$b'"
	else
		from=$(($(dmesg | wc -l) + 1))
		port_down
		wait_for 30 bash -c "! grep -qx live /sys/class/nvme/$a/state && ! grep -qx live /sys/class/nvme/$b/state" ||
			echo "# still live 30 s after the port went: $(cat "/sys/class/nvme/$a/state" "/sys/class/nvme/$b/state" | tr '\n' ' ')"
		sleep 3
		t=$(now_ns)
		port_up
		check "$a (reconnect_delay=1) is back after the port" wait_for 15 state_is "$a" live
		ta=$(secs_since "$t")
		wait_for 40 state_is "$b" live
		tb=$(secs_since "$t")
		# its own attempt would come about 26 s after the port (30 s after
		# the loss): 10 s leaves TCG its margin and still tells them apart
		tap_result "$b (reconnect_delay=30) is back with $a: ${tb} s after the port (${ta} s for $a; its own delay would take about 26 s)" \
			"$(state_is "$b" live && awk -v t="$tb" 'BEGIN { exit !(t <= 10) }' && echo 0 || echo 1)"
		check "$a's return is logged as a kick of one other controller" \
			bash -c "dmesg | tail -n +$from | grep '$a: .* answers again: 1 other controller' >/dev/null"
	fi
	for c in $a $b; do timeout 60 nvme disconnect -d "$c" >/dev/null 2>&1; done
fi

suite_end
