#!/bin/bash
# shellcheck disable=SC2317,SC2154 # helpers are invoked indirectly (check, wait_for); hist_*, io_*, all_*, pct_* come from eval "$(tel vars)"
# 16-telemetry: the per-queue counters and latency histograms of
# rnvme/telemetry (Documentation/rnvme.rst, "Telemetry"), decoded by
# tests/lib/telemetry.py (not the rnvme tool):
#   - fio runs a known number of reads and of writes (number_ios): the I/O
#     queues' histograms add up to exactly that many, split by class; the
#     data path counters (registered reads, in-capsule 4 KiB writes) agree;
#   - the histogram's percentiles agree with fio's completion latency within
#     a factor of 2;
#   - reset zeroes the counters; telemetry=0 stops counting;
#   - a controller connected with telemetry off has no telemetry memory and
#     reads as one that counted nothing (ns_since_reset 0, its queues' own
#     gauges live); switching on gives it its memory, counting from then;
#   - a path flap (the target's port taken away and given back under fio)
#     shows up as flushed work completions and requeued/failed-over commands.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
suite_begin

[ "$HOST_DRIVER" = inbox ] && tap_skip_all "rnvme telemetry: the in-tree driver has none"

fx_setup --nqn "$TEST_NQN" --backing brd --size 128 --port 1
# On by default (Documentation/bench.rst, "Telemetry"); connected with it
# off: telemetry memory comes with the switch (Documentation/rnvme.rst,
# "Telemetry").
check "telemetry is on by default" grep -qx Y /sys/module/rnvme/parameters/telemetry
check "telemetry switched off" sh -c 'echo 0 > /sys/module/rnvme/parameters/telemetry'
nvme_connect --ctrl-loss-tmo=60 --reconnect-delay=1 >/dev/null 2>&1 || bail "connect $TEST_NQN"
ctrl=$(ctrls_for_nqn "$TEST_NQN")
dev=$(wait_ns_dev "$ctrl" 30) || bail "no namespace for $TEST_NQN"
T="$(dirname "$0")/../lib/telemetry.py"
tel() { python3 "$T" "$ctrl" "$@"; }
d=/sys/class/nvme/$ctrl/rnvme
check "telemetry, telemetry_layout and telemetry_reset exist" test -r "$d/telemetry" -a -r "$d/telemetry_layout" -a -e "$d/telemetry_reset"
check "layout version 1" grep -qx 'version 1' "$d/telemetry_layout"
check "the file decodes (magic, version, size)" tel sum completed_other
# never on: one JSON read (python starts slowly under TCG), fields by jq
off=$(tel)
nq=$(jq '.header.nr_queues' <<< "$off")
ns0=$(jq '.header.ns_since_reset' <<< "$off")
ans0=$(jq '[.queues[] | .completed_read + .completed_write + .completed_other + .submitted_other] | add' <<< "$off")
sends0=$(jq '[.queues[].sends] | add' <<< "$off")
tap_result "never on: $nq records, nothing counted ($ans0 commands), ns_since_reset $ns0" \
	"$([ "$nq" = "$(ctrl_attr "$ctrl" queue_count)" ] && [ "$ans0" = 0 ] && [ "$ns0" = 0 ] && echo 0 || echo 1)"
tap_result "never on: the queues' own gauges are live ($sends0 SENDs)" "$([ "${sends0:-0}" -gt 0 ] && echo 0 || echo 1)"
check "never on: a reset succeeds" sh -c "echo 1 > $d/telemetry_reset"
check "telemetry switched on" sh -c 'echo 1 > /sys/module/rnvme/parameters/telemetry'
ns1=$(tel | jq '.header.ns_since_reset')
tap_result "switched on: counting since its memory came ($ns1 ns)" "$([ "${ns1:-0}" -gt 0 ] && echo 0 || echo 1)"

# no merging: every fio I/O is one command
for q in "$(basename "$dev")" "$(path_ns "$ctrl" 2>/dev/null)"; do
	[ -n "$q" ] && [ -w "/sys/block/$q/queue/nomerges" ] && echo 2 > "/sys/block/$q/queue/nomerges"
done
udevadm settle 2>/dev/null
sleep 1
check "reset" sh -c "echo 1 > $d/telemetry_reset"
zero=$(tel hist all io)
check "after reset the I/O queues' histograms are empty ($zero)" test "$zero" = 0
check_fails "reset refuses '0'" sh -c "echo 0 > $d/telemetry_reset"

FIO=$(mktemp -d)
NR=3000 NW=1000
t=$(now_ns)
timeout 120 fio --name=r --filename="$dev" --direct=1 --ioengine=libaio --iodepth=8 --rw=randread \
	--bs=4k --size=64m --norandommap --randrepeat=0 --number_ios=$NR --output-format=json \
	> "$FIO/r.json" 2> "$FIO/r.err"
echo "# fio $NR reads: $(secs_since "$t") s"
timeout 120 fio --name=w --filename="$dev" --direct=1 --ioengine=libaio --iodepth=8 --rw=randwrite \
	--bs=4k --size=64m --norandommap --randrepeat=0 --number_ios=$NW --output-format=json \
	> "$FIO/w.json" 2> "$FIO/w.err"
fr=$(jq '.jobs[0].read.total_ios' "$FIO/r.json" 2>/dev/null)
fw=$(jq '.jobs[0].write.total_ios' "$FIO/w.json" 2>/dev/null)
check "fio did $NR reads and $NW writes (fio: $fr, $fw)" test "$fr" = $NR -a "$fw" = $NW
eval "$(tel vars)"
echo "# histograms of the I/O queues: read $hist_read, write $hist_write, all $hist_all"
tap_result "read histogram counts add up to exactly $NR ($hist_read)" "$([ "$hist_read" = $NR ] && echo 0 || echo 1)"
tap_result "write histogram counts add up to exactly $NW ($hist_write)" "$([ "$hist_write" = $NW ] && echo 0 || echo 1)"
tap_result "no other command on the I/O queues ($((hist_all - hist_read - hist_write)))" "$([ "$hist_all" = $((NR + NW)) ] && echo 0 || echo 1)"
for n in submitted_read:$NR completed_read:$NR submitted_write:$NW completed_write:$NW \
	bytes_read:$((NR * 4096)) bytes_write:$((NW * 4096)) data_registered:$NR data_inline:$NW \
	host_aborted:0 requeued:0 status_success:$((NR + NW)); do
	v=io_${n%%:*}
	tap_result "${n%%:*} = ${n#*:} (${!v})" "$([ "${!v}" = "${n#*:}" ] && echo 0 || echo 1)"
done
echo "# admin queue: $all_completed_other commands since the reset, $all_keep_alive_count keep-alives (last $all_keep_alive_last_ns ns, max $all_keep_alive_max_ns ns)"
# nvmet grants traffic-based keep-alive: while fio completes commands the
# host sends none, so a short fio run may see none.  The first after it is
# due within kato (5 s here); 15 s is a margin for TCG.
ka_counted() { [ "$(tel sum keep_alive_count)" -gt 0 ]; }
t=$(now_ns)
if ka_counted || wait_for 15 ka_counted; then
	ok "keep-alive round trips are counted ($(tel sum keep_alive_count) after fio + $(secs_since "$t") s)"
else
	not_ok "keep-alive round trips are counted" "none in fio's $((NR + NW)) commands and 15 s after (kato $(ctrl_attr "$ctrl" kato 2>/dev/null))"
fi

# percentiles: ours (bucket upper bound) against fio's clat
within2() { awk -v a="$1" -v b="$2" 'BEGIN { print (a > 0 && b > 0 && a <= 2 * b && b <= 2 * a) ? 0 : 1 }'; }
for p in 50 90 99; do
	v=pct_read_$p
	fio_p=$(jq -r ".jobs[0].read.clat_ns.percentile[\"$p.000000\"]" "$FIO/r.json")
	tap_result "p$p read latency within a factor of 2 of fio's clat (${!v} vs $fio_p ns)" "$(within2 "${!v}" "$fio_p")"
done
fio_p=$(jq -r '.jobs[0].write.clat_ns.percentile["50.000000"]' "$FIO/w.json")
tap_result "p50 write latency within a factor of 2 of fio's clat ($pct_write_50 vs $fio_p ns)" "$(within2 "$pct_write_50" "$fio_p")"

# telemetry=0: nothing new is counted
p=/sys/module/rnvme/parameters/telemetry
if [ -w "$p" ]; then
	echo 0 > "$p"
	h0=$(tel hist all io)
	dd if="$dev" of=/dev/null bs=4k count=100 iflag=direct status=none
	h1=$(tel hist all io)
	echo 1 > "$p"
	tap_result "telemetry=0 counts nothing ($h0 -> $h1)" "$([ "$h0" = "$h1" ] && echo 0 || echo 1)"
	dd if="$dev" of=/dev/null bs=4k count=100 iflag=direct status=none
	h2=$(tel hist all io)
	tap_result "telemetry=1 counts again ($h1 -> $h2)" "$([ $((h2 - h1)) = 100 ] && echo 0 || echo 1)"
fi

# path flap under fio: the target's port goes away for 2 s
link=$NVMET_CFS/ports/1/subsystems/$TEST_NQN
echo 1 > "$d/telemetry_reset"
fio --name=flap --filename="$dev" --direct=1 --ioengine=libaio --iodepth=16 --rw=randread \
	--bs=4k --size=64m --norandommap --time_based --runtime=6 --output-format=terse \
	> "$FIO/flap.out" 2>&1 &
fpid=$!
sleep 1.5
t=$(now_ns)
rm -f "$link"
sleep 2
ln -s "$NVMET_CFS/subsystems/$TEST_NQN" "$link"
if wait_for 30 ctrl_live "$ctrl"; then ok "live again $(secs_since "$t") s after the flap"; else not_ok "live again after the flap"; fi
wait "$fpid"
tap_result "fio across the flap ended without error" $?
eval "$(tel vars)"
echo "# flap: $wc_errors error completions ($all_wc_wr_flush_err flushed), $all_host_aborted ended by the host, $all_requeued requeued, $all_failovers failed over, $all_rejected refused at dispatch"
echo "# flap: NVMe status: success $all_status_success generic $all_status_generic path $all_status_path dnr $all_status_dnr last $all_status_last"
tap_result "the flap shows in the WC status counters ($all_wc_wr_flush_err WR_FLUSH_ERR)" "$([ "$all_wc_wr_flush_err" -gt 0 ] && echo 0 || echo 1)"
tap_result "the flap shows in the requeue/failover counters ($all_requeued requeued, $all_failovers failovers)" \
	"$([ $((all_requeued + all_failovers)) -gt 0 ] && echo 0 || echo 1)"
tap_result "every posted read ended once: $io_submitted_read submitted = $io_completed_read answered + $io_host_aborted ended by the host" \
	"$([ "$io_submitted_read" = $((io_completed_read + io_host_aborted)) ] && echo 0 || echo 1)"

rm -rf "$FIO"
check "disconnect-all" timeout 120 nvme disconnect-all
suite_end
