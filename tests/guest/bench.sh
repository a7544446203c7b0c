#!/bin/bash
# Guest side of `make bench`: one nvmet target (null_blk) exported over
# Soft-RoCE and TCP; rnvme (registered as transport "rnvme"), the in-tree
# nvme_rdma and nvme_tcp each connect to it with the same queue counts; fio
# runs every workload against each, in rotating order, BENCH_REPS times.
# Writes one JSON line per fio run to $RESULTS/bench.jsonl (transport,
# workload, repetition, busy CPU-seconds of the guest from /proc/stat, wall
# time, packets sent) and fio's own JSON to $RESULTS/raw/.
#   BENCH_RUNTIME  seconds per fio run (default 5, after 1 s of ramp)
#   BENCH_REPS     repetitions (default 3)
#   BENCH_WORKLOADS  subset of workload names (default: all)
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"

rt=${BENCH_RUNTIME:-5}
reps=${BENCH_REPS:-3}
out=$RESULTS/bench.jsonl
: > "$out"

# One block device per controller: turn native multipath off before
# nvme-core loads, or the three controllers would share one head device.
modprobe nvme-core multipath=N || bail "cannot load nvme-core"
[ "$(cat /sys/module/nvme_core/parameters/multipath)" = N ] ||
	bail "nvme-core was already loaded with multipath on"

fx_rxe_up || bail "rxe setup failed"
# The fabric's MTU (BENCH_MTU, default 1500).  RoCE deployments run jumbo
# frames (4200 fits RDMA MTU 4096); all three transports share the veth pair.
mtu=${BENCH_MTU:-1500}
if [ "$mtu" != 1500 ]; then
	for nd in veth0 veth1; do
		ip link set "$nd" mtu "$mtu" || bail "cannot set MTU $mtu on $nd"
	done
fi
echo "# fabric MTU $mtu; $RDMA_DEV0 $(ibv_devinfo -d "$RDMA_DEV0" 2>/dev/null | grep -o "active_mtu:.*" | tr -s "\t " " ")"
fx_target_up --backing nullb --size 256 || bail "rdma target setup failed"
# null_blk allocates its memory on first write: whichever transport wrote a
# block first would pay for it.  Write the whole device once, locally.
t=$(now_ns)
dd if=/dev/zero of="$FX_BACKING_DEV" bs=1M count=256 oflag=direct status=none ||
	bail "cannot prefill $FX_BACKING_DEV"
echo "# prefilled $FX_BACKING_DEV (256 MiB) in $(secs_since "$t") s"
fx_target_up --port 2 --trtype tcp --trsvcid 4421 || bail "tcp target setup failed"

modprobe nvme-rdma || bail "cannot load nvme-rdma"
modprobe nvme-tcp || bail "cannot load nvme-tcp"
insmod "$RNVME_KO" transport_name=rnvme || bail "cannot load rnvme.ko transport_name=rnvme"

# Same queues for everyone: 2 interrupt-driven I/O queues (one per vCPU),
# one poll queue, depth 128.
common="nqn=$TEST_NQN,nr_io_queues=2,nr_poll_queues=1,queue_size=128"
declare -A dev
for t in rnvme rdma tcp; do
	port=$TGT_PORT
	[ $t = tcp ] && port=4421
	reply=$(nvmf_write "transport=$t,traddr=$TGT_IP4,trsvcid=$port,$common,duplicate_connect") ||
		bail "connect over $t failed: $reply"
	inst=$(echo "$reply" | sed -n 's/.*instance=\([0-9]*\).*/\1/p')
	d=$(wait_ns_dev "nvme$inst" 30) || bail "no namespace for nvme$inst ($t)"
	dev[$t]=$d
	echo "# $t: nvme$inst -> $d, queues $(ctrl_attr "nvme$inst" queue_count)"
done

# name|fio arguments
workloads=(
	"randread-4k-qd1|--rw=randread --bs=4k --iodepth=1 --ioengine=libaio"
	"randread-4k-qd32|--rw=randread --bs=4k --iodepth=32 --ioengine=libaio"
	"randread-4k-qd128|--rw=randread --bs=4k --iodepth=128 --ioengine=libaio"
	"randwrite-4k-qd32|--rw=randwrite --bs=4k --iodepth=32 --ioengine=libaio"
	"seqread-128k-qd8|--rw=read --bs=128k --iodepth=8 --ioengine=libaio"
	"seqwrite-128k-qd8|--rw=write --bs=128k --iodepth=8 --ioengine=libaio"
	"randrw70-4k-qd32|--rw=randrw --rwmixread=70 --bs=4k --iodepth=32 --ioengine=libaio"
	"randread-4k-qd1-polled|--rw=randread --bs=4k --iodepth=1 --ioengine=io_uring --hipri=1"
)

busy_jiffies() { # user+nice+system+irq+softirq+steal of all CPUs
	awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat
}
# Packets sent on all interfaces but lo: RoCE (UDP over the veth pair) and
# TCP alike, so packets per I/O compare the transports' wire work.
tx_packets() {
	awk 'NR > 2 && $1 != "lo:" { s += $11 } END { print s + 0 }' /proc/net/dev
}
hz=$(getconf CLK_TCK)
transports=(rnvme rdma tcp)
run=0
# fio's JSON goes to raw/ as it is: the host's report.py parses it (a Python
# start per run costs seconds under TCG).
mkdir -p "$RESULTS/raw"
for ((r = 0; r < reps; r++)); do
	w=0
	for entry in "${workloads[@]}"; do
		name=${entry%%|*} args=${entry#*|}
		if [ -n "${BENCH_WORKLOADS:-}" ] && [[ " $BENCH_WORKLOADS " != *" $name "* ]]; then
			continue
		fi
		for ((k = 0; k < 3; k++)); do
			# rotate the order per repetition and workload
			t=${transports[$(((k + r + w) % 3))]}
			raw=raw/$name.$t.$r.json
			p0=$(tx_packets)
			b0=$(busy_jiffies)
			s0=$(date +%s.%N)
			# shellcheck disable=SC2086 # args is a word list
			if ! timeout $((rt + 60)) fio --name="$name" --filename="${dev[$t]}" $args \
				--direct=1 --time_based --runtime="$rt" --ramp_time=1 --size=128m \
				--percentile_list=50:99:99.9 --output-format=json \
				--output="$RESULTS/$raw" >/dev/null 2>&1; then
				echo "# fio $name on $t failed"
				continue
			fi
			b1=$(busy_jiffies)
			s1=$(date +%s.%N)
			p1=$(tx_packets)
			cpu=$(awk -v a="$b0" -v b="$b1" -v hz="$hz" 'BEGIN { printf "%.3f", (b - a) / hz }')
			wall=$(awk -v a="$s0" -v b="$s1" 'BEGIN { printf "%.3f", b - a }')
			printf '{"transport": "%s", "workload": "%s", "rep": %d, "cpu_s": %s, "wall_s": %s, "tx_pkts": %d, "fio": "%s"}\n' \
				"$t" "$name" "$r" "$cpu" "$wall" $((p1 - p0)) "$raw" >> "$out"
			run=$((run + 1))
			iops=$(awk -F: '/"iops" :/ { s += $2; if (++n == 2) exit } END { printf "%.0f", s }' "$RESULTS/$raw")
			echo "# [$run] rep $r $name $t: $iops IOPS, $cpu cpu-s, $wall s"
		done
		w=$((w + 1))
	done
done

nvme disconnect-all >/dev/null 2>&1
fx_host_disconnect_all
rmmod rnvme nvme_rdma nvme_tcp 2>/dev/null
fx_target_down
fx_rxe_down
echo "# bench: $run fio runs"
