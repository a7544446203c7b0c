#!/bin/bash
# shellcheck disable=SC2317,SC2119 # helpers are invoked indirectly (check, wait_for)
# 04-io-verify: data integrity with fio crc32c verify (random write/rw, 512 B..1 MiB,
# QD1 and QD32), end-to-end comparison with the backing device, flush, discard,
# write zeroes.
#   namespace A: brd ramdisk, 512 B LBA  (TEST_NQN)
#   namespace B: null_blk memory-backed, 4 KiB LBA, discard enabled (TEST_NQN2)
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
suite_begin

fx_setup --nqn "$TEST_NQN" --backing brd --size 128
fx_target_up --nqn "$TEST_NQN2" --backing nullb --size 64 || bail "null_blk namespace"
nullb=$FX_BACKING_DEV

nvme_connect >/dev/null 2>&1 || bail "connect $TEST_NQN"
timeout 90 nvme connect -t "$TRANSPORT" -a "$TGT_IP4" -s "$TGT_PORT" -n "$TEST_NQN2" >/dev/null 2>&1 || bail "connect $TEST_NQN2"
ca=$(ctrls_for_nqn "$TEST_NQN")
cb=$(ctrls_for_nqn "$TEST_NQN2")
A=$(wait_ns_dev "$ca" 30) || bail "no namespace for $TEST_NQN"
B=$(wait_ns_dev "$cb" 30) || bail "no namespace for $TEST_NQN2"
echo "# A=$A (ctrl $ca, brd /dev/ram0, lba $(blockdev --getss "$A")), B=$B (ctrl $cb, $nullb, lba $(blockdev --getss "$B"))"

FIO_LOG=$(mktemp -d)
# TEST_IO_DIV=N divides the volume of every fio job (not its block sizes or
# queue depths): the debug kernel's siw runs move about 1 MB/s.
io_div=${TEST_IO_DIV:-1}
[[ $io_div =~ ^[1-9][0-9]*$ ]] || bail "TEST_IO_DIV must be a positive integer"
mib() { fx_mib "$1"; }
[ "$io_div" = 1 ] || echo "# fio volumes divided by $io_div (TEST_IO_DIV)"
# fio_job NAME FIO-ARGS...: run a verify job, bounded; the log goes to diagnostics on failure.
fio_job() {
	local name=$1 rc=0 t
	shift
	t=$(now_ns)
	timeout 600 fio --name="$name" --direct=1 --verify_fatal=1 --do_verify=1 \
		--randrepeat=0 --norandommap=0 --group_reporting --output-format=normal "$@" \
		> "$FIO_LOG/$name.log" 2>&1 || rc=$?
	echo "# fio $name: $(secs_since "$t") s"
	if [ "$rc" = 0 ] && ! grep -qE 'verify: bad|crc32c: verify failed|err= *[1-9]' "$FIO_LOG/$name.log"; then
		ok "fio $name"
		grep -E '^ *(WRITE|READ):' "$FIO_LOG/$name.log" | diag
	else
		not_ok "fio $name" "exit $rc" "$(tail -n 30 "$FIO_LOG/$name.log")"
	fi
}

fio_job randwrite-96m-qd32 --filename="$A" --ioengine=libaio --iodepth=32 --rw=randwrite \
	--bs=64k --size="$(mib 96)" --verify=crc32c
fio_job bsrange-512-1m-qd1 --filename="$A" --ioengine=libaio --iodepth=1 --rw=randwrite \
	--bsrange=512-1m --size="$(mib 32)" --verify=crc32c
fio_job bssplit-qd32 --filename="$A" --ioengine=libaio --iodepth=32 --rw=randwrite \
	--bssplit=512/10:4k/40:32k/20:128k/20:1m/10 --size="$(mib 48)" --verify=crc32c
fio_job randrw-qd32 --filename="$A" --ioengine=libaio --iodepth=32 --rw=randrw --rwmixread=50 \
	--bs=16k --size="$(mib 32)" --verify=crc32c
fio_job seq-1m-qd4 --filename="$A" --ioengine=libaio --iodepth=4 --rw=write \
	--bs=1m --size="$(mib 32)" --verify=crc32c
fio_job 4k-lba-bsrange-qd32 --filename="$B" --ioengine=libaio --iodepth=32 --rw=randwrite \
	--bsrange=4k-1m --size="$(mib 32)" --verify=crc32c
# Buffers in huge pages, 512 bytes into a page: a request's data is then one
# bio_vec over several pages that starts inside one, which rnvme maps as one
# scatterlist entry without blk_rq_map_sg() (io.c, rnvme_map_one_segment()).
hp=/proc/sys/vm/nr_hugepages
if [ ! -e "$hp" ]; then
	tap_skip "this kernel has no huge pages (CONFIG_HUGETLBFS)" "fio hugepage-offset-qd16"
else
	hp0=$(cat "$hp")
	if echo 16 > "$hp" && [ "$(cat "$hp")" -ge 4 ]; then
		fio_job hugepage-offset-qd16 --filename="$A" --ioengine=libaio --iodepth=16 \
			--rw=randwrite --bsrange=512-256k --iomem=shmhuge --iomem_align=512 \
			--size="$(mib 32)" --verify=crc32c
	else
		not_ok "fio hugepage-offset-qd16" "could get $(cat "$hp") huge pages, not 4"
	fi
	echo "$hp0" > "$hp"
fi

# Selective signaling (rnvme only; Documentation/rnvme.rst, Data path): at
# QD32 most SENDs of 4 KiB writes in the capsule and of reads (behind a
# REG_MR) go unsignaled (their requests wait, parked, for a later signaled
# completion or a probe); at QD1 they stay signaled.  Counters of controller
# A's queues.
sig_counters() {
	local d=/sys/class/nvme/$ca/rnvme f v out=
	for f in sends sends_signaled parked probes; do
		read -r v < "$d/$f" || return 1
		out="$out $v"
	done
	echo "$out"
}
if [ -e "/sys/class/nvme/$ca/rnvme/sends" ]; then
	read -r s0 g0 p0 q0 <<< "$(sig_counters)"
	fio_job 4k-inline-qd32 --filename="$A" --ioengine=libaio --iodepth=32 --rw=randwrite \
		--bs=4k --size=4m --verify=crc32c
	read -r s1 g1 p1 q1 <<< "$(sig_counters)"
	sends=$((s1 - s0)) sig=$((g1 - g0))
	echo "# 4k QD32 write+verify: $sends SENDs, $sig signaled, $((p1 - p0)) requests parked, $((q1 - q0)) probes"
	# 1024 writes in the capsule, then 1024 verify reads by MR, both at
	# QD32.  Those posted with fewer than 8 commands in flight are signaled
	# (rnvme_send_signaled(), its KUnit cases).  How many that is depends on
	# how the host schedules the guest's two vCPUs against fio's submitter:
	# a third on an idle host, 1030 of 2049 in a CI run with the tool's
	# compile beside the VM (the one-vCPU bench: 7-9 %).  Every one was
	# signaled with the data path before issue 18: the check is for that,
	# with the scheduler's share as margin.
	tap_result "QD32: at most three quarters of the writes' and verify reads' SENDs signaled ($sig of $sends)" \
		"$([ "$sends" -ge 2048 ] && [ $((sig * 4)) -le $((sends * 3)) ] && echo 0 || echo 1)"
	# Completion batching (Documentation/rnvme.rst, "Ending"): at QD32 the
	# reads' successful answers end in blk-mq batches (rnvme_complete_batch
	# once a batch, nvme_complete_batch_req once a request in it); at QD1
	# nothing else is in flight when an answer comes, so none batches.
	probes=0
	fx_kprobes_on rnvme:rnvme_complete_batch nvme_core:nvme_complete_batch_req && probes=1
	read -r s0 g0 p0 q0 <<< "$(sig_counters)"
	fio_job 4k-read-qd32 --filename="$A" --ioengine=libaio --iodepth=32 --rw=randread \
		--bs=4k --size=4m --do_verify=0
	read -r s1 g1 p1 q1 <<< "$(sig_counters)"
	if [ "$probes" = 1 ]; then
		nb=$(fx_kprobe_hits rnvme_complete_batch) nr=$(fx_kprobe_hits nvme_complete_batch_req)
		echo "# 4k QD32 reads: $nr of 1024 requests ended in $nb batches"
		tap_result "QD32 reads end in completion batches ($nr requests in $nb batches)" \
			"$([ "$nb" -gt 0 ] && [ "$nr" -ge "$nb" ] && [ "$nr" -le 1100 ] && echo 0 || echo 1)"
	else
		tap_skip "no kprobe events (tracefs, CONFIG_KPROBE_EVENTS)" "QD32 reads end in completion batches"
	fi
	sends=$((s1 - s0)) sig=$((g1 - g0)) parked=$((p1 - p0))
	echo "# 4k QD32 reads: $sends SENDs, $sig signaled, $parked requests parked, $((q1 - q0)) probes"
	# Parking happens when a response overtakes its SEND's retirement.
	# rxe retires a SEND when the target's ACK comes back, which a read's
	# response regularly beats (about 300 of 1024 parked); siw completes a
	# SEND as soon as TCP has taken it, so there a later signaled SEND has
	# usually retired it first and parking is a matter of timing (0 or a
	# few).  The count is asked of rxe only and printed for both.
	want_parked=0
	[ "$RDMA_MOD" = rdma_rxe ] && want_parked=1
	tap_result "QD32 reads: at most half signaled$([ $want_parked = 1 ] && echo ", some parked until retired") ($sig of $sends signaled, $parked parked)" \
		"$([ "$sends" -ge 1024 ] && [ $((sig * 2)) -le "$sends" ] && { [ $want_parked = 0 ] || [ "$parked" -gt 0 ]; } && echo 0 || echo 1)"
	read -r s0 g0 p0 q0 <<< "$(sig_counters)"
	[ "$probes" = 1 ] && fx_kprobes_on rnvme:rnvme_complete_batch nvme_core:nvme_complete_batch_req
	fio_job 4k-inline-qd1 --filename="$A" --ioengine=libaio --iodepth=1 --rw=randwrite \
		--bs=4k --size=2m --do_verify=0
	read -r s1 g1 p1 q1 <<< "$(sig_counters)"
	if [ "$probes" = 1 ]; then
		nb=$(fx_kprobe_hits rnvme_complete_batch)
		tap_result "QD1 writes end one by one: no completion batch ($nb)" "$([ "$nb" = 0 ] && echo 0 || echo 1)"
		fx_kprobes_off
	fi
	sends=$((s1 - s0)) sig=$((g1 - g0))
	echo "# 4k QD1 writes: $sends SENDs, $sig signaled, $((p1 - p0)) requests parked, $((q1 - q0)) probes"
	tap_result "QD1: in-capsule writes stay signaled ($sig of $sends)" \
		"$([ "$sends" -gt 100 ] && [ $((sig * 100)) -ge $((sends * 95)) ] && echo 0 || echo 1)"
fi

# End to end: what the host wrote is what the target stored (4 MiB, or
# less with TEST_IO_DIV: over siw on the debug kernel 4 MiB each way took
# about 40 s).
e2e=$(((4 + io_div - 1) / io_div))
pat=$FIO_LOG/pattern
head -c 4M /dev/urandom > "$pat"
check "dd $e2e MiB at offset 8 MiB to $A" dd if="$pat" of="$A" bs=1M seek=8 count="$e2e" oflag=direct status=none
check "backing /dev/ram0 holds the same $e2e MiB" cmp -n $((e2e * 1048576)) "$pat" <(dd if=/dev/ram0 bs=1M skip=8 count="$e2e" status=none)
check "reading it back over the fabric matches" cmp -n $((e2e * 1048576)) "$pat" <(dd if="$A" bs=1M skip=8 count="$e2e" iflag=direct status=none)

# Flush.
check "nvme flush $A" timeout 60 nvme flush "$A"
check "nvme flush $B" timeout 60 nvme flush "$B"

# Write zeroes (NVMe Write Zeroes command and BLKZEROOUT).
check "dd random 1 MiB to $B" dd if="$pat" of="$B" bs=1M count=1 oflag=direct status=none
lbas=$((1048576 / $(blockdev --getss "$B")))
check "nvme write-zeroes $B (1 MiB)" timeout 60 nvme write-zeroes "$B" --start-block=0 --block-count=$((lbas - 1))
check "range reads back as zeroes" cmp -n 1048576 /dev/zero <(dd if="$B" bs=1M count=1 iflag=direct status=none)
check "dd random 1 MiB to $A" dd if="$pat" of="$A" bs=1M seek=2 count=1 oflag=direct status=none
check "blkdiscard -z (zeroout) 1 MiB on $A" timeout 60 blkdiscard -z -o $((2 * 1048576)) -l 1048576 "$A"
check "zeroed range reads back as zeroes" cmp -n 1048576 /dev/zero <(dd if="$A" bs=1M skip=2 count=1 iflag=direct status=none)

# Discard (null_blk backing supports it).
dmax=$(cat "/sys/block/$(basename "$B")/queue/discard_max_bytes" 2>/dev/null || echo 0)
if [ "$dmax" -gt 0 ]; then
	check "dd random 1 MiB to $B at 4 MiB" dd if="$pat" of="$B" bs=1M seek=4 count=1 oflag=direct status=none
	check "blkdiscard 1 MiB on $B (discard_max_bytes=$dmax)" timeout 60 blkdiscard -o $((4 * 1048576)) -l 1048576 "$B"
	if cmp -s -n 1048576 /dev/zero <(dd if="$B" bs=1M skip=4 count=1 iflag=direct status=none); then
		diag "discarded range reads back as zeroes"
	else
		diag "discarded range does not read back as zeroes (allowed: discard is advisory)"
	fi
	check "discard with fio trim verify-free workload" timeout 300 fio --name=trim --filename="$B" \
		--direct=1 --ioengine=libaio --iodepth=16 --rw=randtrim --bs=64k --size=16m --output-format=terse
else
	tap_skip "$B has no discard support (discard_max_bytes=0)" "blkdiscard"
fi
check "blkdiscard on the whole of $B" timeout 120 blkdiscard "$B"

# A working path is never taken for a broken one: nothing above cut or
# slowed the fabric, so neither controller may have gone through error
# recovery (rnvme counts them; a false "path silent" from the ACK watchdog
# stalled I/O for a reconnect of 12 s each, three times in one run over siw
# on the debug kernel).
if [ -e "/sys/class/nvme/$ca/rnvme/error_recoveries" ]; then
	ra=$(cat "/sys/class/nvme/$ca/rnvme/error_recoveries")
	rb=$(cat "/sys/class/nvme/$cb/rnvme/error_recoveries")
	tap_result "no error recovery on a working path ($ca: $ra, $cb: $rb)" \
		"$([ "$ra" = 0 ] && [ "$rb" = 0 ] && echo 0 || echo 1)" \
		"$(fx_dmesg_since_mark | grep -E 'recover|silent' | tail -n 8)"
fi

rm -rf "$FIO_LOG"
check "disconnect-all" timeout 120 nvme disconnect-all
suite_end
