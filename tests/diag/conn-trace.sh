#!/bin/bash
# diag/conn-trace: where one connect's time goes, rnvme beside the in-tree
# nvme_rdma, in one guest: six connects each (a host NQN apiece), with the
# nvme, rdma_cm, rdma_core and sched_process_exec tracepoints and a trace
# marker around each connect; rnvme once more under the package's modprobe.d
# redirect.  Not a test: it asserts nothing about the
# figures; the trace lands in the results directory (conn-trace.txt).
#   RNVME_SUITE_DIR=diag SUITES=conn-trace tests/run-all.sh --kver KVER --out DIR
# (Documentation/scale.rst: the fixture's modprobe install line per connect)
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
suite_begin
fx_setup --nqn "$TEST_NQN" --port 1
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T
echo 20000 > $T/buffer_size_kb
for e in nvme/nvme_setup_cmd nvme/nvme_complete_rq rdma_cma rdma_core sched/sched_process_exec; do
	echo 1 > "$T/events/$e/enable" 2>/dev/null || echo "# no $e events"
done
echo 1 > $T/tracing_on
run() { # NAME
	local i hid t out
	for i in 1 2 3 4 5 6; do
		hid=$(printf '5ca1e000-0000-4000-8000-%012d' "$i")
		t=$(now_ns)
		echo "CT $1 $i start" > $T/trace_marker
		out=$(nvmf_write "transport=rdma,traddr=$TGT_IP4,trsvcid=$TGT_PORT,nqn=$TEST_NQN,hostnqn=nqn.2014-08.org.nvmexpress:uuid:$hid,hostid=$hid,nr_io_queues=2")
		echo "CT $1 $i end" > $T/trace_marker
		echo "# $1 connect $i: $(secs_since "$t") s ($out)"
		sleep 1
	done
	fx_host_disconnect_all
}
run rnvme
# the package's redirect in place of the fixture's block line, rnvme loaded
# as on a host where it serves every connect
rm -f /etc/modprobe.d/rnvme-test-block-inbox.conf
cp "$REPO/tools/packaging/modprobe.d/rnvme.conf" /etc/modprobe.d/rnvme.conf ||
	bail "copy the package's modprobe.d/rnvme.conf"
run rnvme-redirect
rm -f /etc/modprobe.d/rnvme.conf
rmmod rnvme || bail "rmmod rnvme"
rm -f /etc/modprobe.d/rnvme-test-block-inbox.conf
modprobe nvme-rdma || bail "modprobe nvme-rdma"
run nvme_rdma
echo 0 > $T/tracing_on
cp $T/trace "$RESULTS/conn-trace.txt"
ok "trace of 6 + 6 connects in $RESULTS/conn-trace.txt"
suite_end
