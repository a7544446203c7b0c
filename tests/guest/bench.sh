#!/bin/bash
# Guest side of `make bench`: one nvmet target (null_blk) exported over
# Soft-RoCE and TCP; rnvme (registered as transport "rnvme"), the in-tree
# nvme_rdma and nvme_tcp each connect to it with the same queue counts; fio
# runs every workload against each, in rotating order, BENCH_REPS times.
# Writes one JSON object per fio run to $RESULTS/bench.jsonl.
#   BENCH_RUNTIME  seconds per fio run (default 8)
#   BENCH_REPS     repetitions (default 3)
#   BENCH_WORKLOADS  subset of workload names (default: all)
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"

rt=${BENCH_RUNTIME:-8}
reps=${BENCH_REPS:-3}
out=$RESULTS/bench.jsonl
: > "$out"

# One block device per controller: turn native multipath off before
# nvme-core loads, or the three controllers would share one head device.
modprobe nvme-core multipath=N || bail "cannot load nvme-core"
[ "$(cat /sys/module/nvme_core/parameters/multipath)" = N ] ||
	bail "nvme-core was already loaded with multipath on"

fx_rxe_up || bail "rxe setup failed"
fx_target_up --backing nullb --size 256 || bail "rdma target setup failed"
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
hz=$(getconf CLK_TCK)
transports=(rnvme rdma tcp)
run=0
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
			b0=$(busy_jiffies)
			# shellcheck disable=SC2086 # args is a word list
			if ! j=$(timeout $((rt + 60)) fio --name="$name" --filename="${dev[$t]}" $args \
				--direct=1 --time_based --runtime="$rt" --ramp_time=1 --size=128m \
				--percentile_list=50:99:99.9 --output-format=json 2>/dev/null); then
				echo "# fio $name on $t failed"
				continue
			fi
			b1=$(busy_jiffies)
			cpu=$(awk -v a="$b0" -v b="$b1" -v hz="$hz" 'BEGIN { printf "%.3f", (b - a) / hz }')
			echo "$j" | python3 -c '
import json, sys
t, name, rep, cpu = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
job = json.load(sys.stdin)["jobs"][0]
rd, wr = job["read"], job["write"]
def pct(side, p):
    return side.get("clat_ns", {}).get("percentile", {}).get(p, 0) / 1000.0
ios = rd["total_ios"] + wr["total_ios"]
main = rd if rd["total_ios"] >= wr["total_ios"] else wr
print(json.dumps({
    "transport": t, "workload": name, "rep": rep, "cpu_s": cpu,
    "iops": rd["iops"] + wr["iops"], "bw_kib": rd["bw"] + wr["bw"], "ios": ios,
    "runtime_s": max(rd["runtime"], wr["runtime"]) / 1000.0,
    "p50_us": pct(main, "50.000000"), "p99_us": pct(main, "99.000000"),
    "p999_us": pct(main, "99.900000"),
    "iops_per_cpu_s": (ios / cpu) if cpu > 0 else 0,
}))' "$t" "$name" "$r" "$cpu" >> "$out"
			run=$((run + 1))
			echo "# [$run] rep $r $name $t: $(tail -n 1 "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print("%.0f IOPS, p99 %.0f us, %.2f cpu-s" % (d["iops"], d["p99_us"], d["cpu_s"]))')"
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
