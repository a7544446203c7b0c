#!/bin/bash
# rnvme-tool 08-stats: `rnvme stats` and `rnvme top` against rnvme.ko's telemetry: a known
# number of reads (fio number_ios) is what stats -o json counts and its percentiles agree with
# fio's completion latency within a factor of 2; --prometheus parses with a real parser
# (python3-prometheus-client's text_string_to_metric_families) and its histogram adds up; the
# RDMA port's own counters come along; bad input fails with a usage or not-found exit.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
tool_begin

[ "$HOST_DRIVER" = inbox ] && tap_skip_all "stats reads rnvme.ko's telemetry; the in-tree driver has none"
fx_setup --nqn "$TEST_NQN" --backing brd --size 64 --port 1
# on whatever the module's default (Documentation/bench.rst, "Telemetry")
check "telemetry switched on" sh -c 'echo 1 > /sys/module/rnvme/parameters/telemetry'
set_host_identity
rn -o json connect --transport "$TRANSPORT" --traddr "$TGT_IP4" --trsvcid "$TGT_PORT" --nqn "$TEST_NQN"
expect_rc "connect exits 0" 0
ctrl=$(jq -r .device "$R_OUT" 2>/dev/null)
dev=$(wait_ns_dev "$ctrl" 30) || bail "no namespace for $ctrl"
for q in "$(basename "$dev")" "$(path_ns "$ctrl" 2>/dev/null)"; do
	[ -n "$q" ] && [ -w "/sys/block/$q/queue/nomerges" ] && echo 2 > "/sys/block/$q/queue/nomerges"
done
udevadm settle 2>/dev/null

rn stats --reset "$ctrl"
expect_rc "stats --reset $ctrl exits 0" 0
N=1000
FIO=$(mktemp)
timeout 120 fio --name=r --filename="$dev" --direct=1 --ioengine=libaio --iodepth=4 --rw=randread \
	--bs=4k --size=32m --norandommap --randrepeat=0 --number_ios=$N --output-format=json > "$FIO" 2>/dev/null
check "fio did $N reads" test "$(jq '.jobs[0].read.total_ios' "$FIO" 2>/dev/null)" = $N

rn -o json stats "$ctrl"
expect_rc "stats -o json $ctrl exits 0" 0
expect_json "the I/O queues' read histogram holds exactly $N" ".controllers[0].io_latency.read.count == $N"
expect_json "completed_read over the I/O queues is $N" "[.controllers[0].queues[] | select(.qid >= 1) | .counters.completed_read] | add == $N"
expect_json "admin queue and $(jq '[.controllers[0].queues[] | select(.qid >= 1)] | length' "$R_OUT" 2>/dev/null) I/O queue(s), all live" \
	'.controllers[0].queues[0].type == "admin" and ([.controllers[0].queues[].live] | all)'
ours=$(jq '.controllers[0].io_latency.read.p50_ns' "$R_OUT" 2>/dev/null)
theirs=$(jq -r '.jobs[0].read.clat_ns.percentile["50.000000"]' "$FIO")
tap_result "p50 read ($ours ns) within a factor of 2 of fio's clat ($theirs ns)" \
	"$(awk -v a="$ours" -v b="$theirs" 'BEGIN { print (a > 0 && b > 0 && a <= 2 * b && b <= 2 * a) ? 0 : 1 }')"
expect_json "the RDMA port's own counters (rdma statistic) are there" '.controllers[0].rdma_counters | length > 0'
diag "rdma counters: $(jq -c '.controllers[0].rdma_counters' "$R_OUT" 2>/dev/null | cut -c1-200)"

rn stats --prometheus "$ctrl"
expect_rc "stats --prometheus exits 0" 0
cp "$R_OUT" /tmp/prom.txt
# shellcheck disable=SC2016 # python, not shell
if out=$(python3 - /tmp/prom.txt "$N" 2>&1 <<'PY'
import sys
from prometheus_client.parser import text_string_to_metric_families
text = open(sys.argv[1]).read()
fams = {f.name: f for f in text_string_to_metric_families(text)}
h = fams["rnvme_queue_latency_seconds"]
assert h.type == "histogram", h.type
count = sum(s.value for s in h.samples if s.name.endswith("_count") and s.labels["class"] == "read" and s.labels["queue"] != "0")
inf = sum(s.value for s in h.samples if s.name.endswith("_bucket") and s.labels["le"] == "+Inf" and s.labels["class"] == "read" and s.labels["queue"] != "0")
assert count == int(sys.argv[2]) == inf, (count, inf)
c = fams["rnvme_queue_completed_read"]
assert c.type == "counter", c.type
assert "rnvme_rdma_port_counter" in fams
print(f"{len(fams)} families, {sum(len(f.samples) for f in fams.values())} samples, read _count {count:.0f}")
PY
); then
	ok "prometheus_client parses the exposition: $out"
else
	not_ok "prometheus_client parses the exposition" "$out"
fi

rn stats "$ctrl"
expect_rc "stats (text) exits 0" 0
if grep -q "^$ctrl " "$R_OUT" && [ "$(awk 'length > 80' "$R_OUT" | wc -l)" = 0 ]; then
	ok "stats text names $ctrl, fits 80 columns"
else
	not_ok "stats text names $ctrl, fits 80 columns" "$(show_run)"
fi
rn top -n 2 -i 0.5 --sort latency "$ctrl"
expect_rc "top -n 2 exits 0" 0
if [ "$(grep -c '^rnvme top:' "$R_OUT")" = 2 ] && [ "$(awk 'length > 80' "$R_OUT" | wc -l)" = 0 ]; then
	ok "top showed two frames in 80 columns"
else
	not_ok "top showed two frames in 80 columns" "$(show_run)"
fi

rn stats nvme999
expect_rc "stats of a missing controller exits 5" 5
rn stats 'nvme0;x'
expect_rc "stats of a malformed name exits 2" 2
rn top --sort name
expect_rc "top --sort name exits 2" 2

rm -f "$FIO" /tmp/prom.txt
check "disconnect" timeout 60 "$RNVME_BIN" disconnect --device "$ctrl"
suite_end
