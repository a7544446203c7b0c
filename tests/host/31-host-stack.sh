#!/bin/bash
# make bench's host-stack figure (TAP): tests/bench/report.py on a synthetic
# run with exact counts whose attribution is known.  Three windows of 100
# I/Os (rnvme, nvme_rdma, nvme_tcp) over one kallsyms with functions of every
# class and every ib_core side (Documentation/bench.rst "Host stack"): the
# host stack (module + block layer + nvme-core + host-only ib_core), the
# shared ib_core, the target's and Soft-RoCE's shares, the ib_core functions
# on no list, their ratios against nvme_rdma, the Markdown and the perf path.
# usage: tests/host/31-host-stack.sh [KVER]   (KVER is ignored)
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
x=$work/exact
mkdir -p "$x/raw"
py=/usr/bin/python3
[ -x "$py" ] || py=python3

fio() { # FILE IOPS
	printf '{"jobs": [{"read": {"iops": %s, "total_ios": 1000, "clat_ns": {"percentile": {"50.000000": 1, "99.000000": 2, "99.900000": 3}}}, "write": {"iops": 0, "total_ios": 0}}]}\n' \
		"$2" > "$x/$1"
}
fio raw/w.rnvme.m.json 10000
fio raw/w.rdma.m.json 9000
fio raw/w.tcp.m.json 20000

# One function per 0x100 bytes; a count at a function's address + 4 is
# that function's.  find_gid carries a compiler suffix.
cat > "$x/raw/kallsyms.txt" <<'EOF'
ffffffff81000000 T blk_mq_submit_bio
ffffffff81000100 T submit_bio
ffffffff81000200 T _raw_spin_lock
ffffffffc0001000 t rnvme_queue_rq	[rnvme]
ffffffffc0001100 t rnvme_recv_done	[rnvme]
ffffffffc0002000 t nvme_rdma_queue_rq	[nvme_rdma]
ffffffffc0002100 t nvme_rdma_send_done	[nvme_rdma]
ffffffffc0002800 t nvme_tcp_queue_rq	[nvme_tcp]
ffffffffc0003000 t nvme_setup_cmd	[nvme_core]
ffffffffc0003800 t nvmf_reg_read32	[nvme_fabrics]
ffffffffc0004000 t ib_map_mr_sg	[ib_core]
ffffffffc0004100 t ib_sg_to_pages	[ib_core]
ffffffffc0004200 t ib_mr_pool_get	[ib_core]
ffffffffc0004300 t ib_mr_pool_put	[ib_core]
ffffffffc0004400 t ib_poll_handler	[ib_core]
ffffffffc0004500 t ib_cq_completion_softirq	[ib_core]
ffffffffc0004600 t __ib_process_cq	[ib_core]
ffffffffc0004700 t ib_dma_virt_map_sg	[ib_core]
ffffffffc0004800 t ib_cq_poll_work	[ib_core]
ffffffffc0004900 t rdma_rw_ctx_init	[ib_core]
ffffffffc0004a00 t find_gid.isra.0	[ib_core]
ffffffffc0004b00 t rdma_find_gid_by_port	[ib_core]
ffffffffc0004c00 t ib_device_get_by_netdev	[ib_core]
ffffffffc0004d00 t ib_query_port	[ib_core]
ffffffffc0005000 t cma_work_handler	[rdma_cm]
ffffffffc0006000 t rxe_requester	[rdma_rxe]
ffffffffc0007000 t nvmet_req_init	[nvmet]
ffffffffc0007100 t nvmet_rdma_recv_done	[nvmet_rdma]
ffffffffc0007200 t nvmet_tcp_io_work	[nvmet_tcp]
ffffffffc0007300 t null_queue_rq	[null_blk]
EOF
# Per I/O (100 I/Os per window):
#   rnvme:     module 200 + 100 = 300, block 3000 + 1000, nvme-core 100 + 50,
#              host ib_core map_mr_sg 30 + sg_to_pages 40 + poll_handler 20
#              + completion_softirq 10 = 100 -> host stack 4,550;
#              shared __ib_process_cq 60 + ib_dma_virt_map_sg 20 = 80;
#              target nvmet 500 + nvmet_rdma 200 + null_blk 300 + ib_core
#              (cq_poll_work 15, rdma_rw_ctx_init 35) = 1,050;
#              Soft-RoCE rxe_requester 20,000 + ib_core (find_gid 2,000,
#              find_gid_by_port 500, get_by_netdev 300) = 22,800;
#              other ib_core ib_query_port 10 + cma_work_handler 5 = 15
#   nvme_rdma: module 300 + 150 = 450, block 4,000, nvme-core 150, host
#              ib_core mr_pool_get 50 + put 50 + map_mr_sg 30 + sg_to_pages
#              40 + poll_handler 160 + completion_softirq 70 = 400 -> host
#              stack 5,000; shared 100; target 1,050; Soft-RoCE 21,200 +
#              2,800 = 24,000; other 0
#   nvme_tcp:  module 600, block 4,000, nvme-core 150 -> host stack 4,750;
#              target nvmet 500 + nvmet_tcp 800 + null_blk 300 = 1,600;
#              no shared or Soft-RoCE figure
# ratios against nvme_rdma: host stack 0.91 (rnvme), 0.95 (nvme_tcp);
# shared 0.8; target 1.0; Soft-RoCE 0.95
cat > "$x/raw/exact.txt" <<'EOF'
window 0 user 0 kernel 2949500
ffffffffc0001004 20000
ffffffffc0001104 10000
ffffffff81000004 300000
ffffffff81000104 100000
ffffffff81000204 100000
ffffffffc0003004 10000
ffffffffc0003804 5000
ffffffffc0004004 3000
ffffffffc0004104 4000
ffffffffc0004404 2000
ffffffffc0004504 1000
ffffffffc0004604 6000
ffffffffc0004704 2000
ffffffffc0004804 1500
ffffffffc0004904 3500
ffffffffc0004a04 200000
ffffffffc0004b04 50000
ffffffffc0004c04 30000
ffffffffc0004d04 1000
ffffffffc0005004 500
ffffffffc0006004 2000000
ffffffffc0007004 50000
ffffffffc0007104 20000
ffffffffc0007304 30000
end 0
window 1 user 0 kernel 3115000
ffffffffc0002004 30000
ffffffffc0002104 15000
ffffffff81000004 300000
ffffffff81000104 100000
ffffffff81000204 100000
ffffffffc0003004 10000
ffffffffc0003804 5000
ffffffffc0004004 3000
ffffffffc0004104 4000
ffffffffc0004204 5000
ffffffffc0004304 5000
ffffffffc0004404 16000
ffffffffc0004504 7000
ffffffffc0004604 10000
ffffffffc0004804 1500
ffffffffc0004904 3500
ffffffffc0004a04 200000
ffffffffc0004b04 50000
ffffffffc0004c04 30000
ffffffffc0006004 2120000
ffffffffc0007004 50000
ffffffffc0007104 20000
ffffffffc0007304 30000
end 1
window 2 user 0 kernel 735000
ffffffffc0002804 60000
ffffffff81000004 300000
ffffffff81000104 100000
ffffffff81000204 100000
ffffffffc0003004 10000
ffffffffc0003804 5000
ffffffffc0007004 50000
ffffffffc0007204 80000
ffffffffc0007304 30000
end 2
EOF
cat > "$x/bench.jsonl" <<'EOF'
{"pass": "measure", "transport": "rnvme", "workload": "w", "rep": 0, "window_ns": 1000000000, "busy_ns": 1000000000, "ios": 10000, "tx_pkts": 30000, "wr": 25000, "cqe": -1, "fio": "raw/w.rnvme.m.json", "exact_window": 0, "exact_ios": 100}
{"pass": "measure", "transport": "rdma", "workload": "w", "rep": 0, "window_ns": 1000000000, "busy_ns": 1000000000, "ios": 9000, "tx_pkts": 27000, "wr": -1, "cqe": -1, "fio": "raw/w.rdma.m.json", "exact_window": 1, "exact_ios": 100}
{"pass": "measure", "transport": "tcp", "workload": "w", "rep": 0, "window_ns": 1000000000, "busy_ns": 1000000000, "ios": 20000, "tx_pkts": 50000, "wr": -1, "cqe": -1, "fio": "raw/w.tcp.m.json", "exact_window": 2, "exact_ios": 100}
EOF
if "$py" "$REPO/tests/bench/report.py" "$x/bench.jsonl" "$x" --clock icount --commit abc123 > "$x/out.txt" 2>&1; then
	ok "report.py runs on a synthetic run with exact counts of every ib_core side"
else
	not_ok "report.py runs on a synthetic run with exact counts of every ib_core side"
	diag < "$x/out.txt"
fi

# check DIR DESC PYTHON-EXPRESSION over rows r (rnvme), b (nvme_rdma),
# t (nvme_tcp, when there is one); near(a, b) for floats
check() {
	if "$py" - "$1/results.json" "$3" <<'EOF' 2>"$work/err"; then
import json, sys
rows = json.load(open(sys.argv[1]))
r = next(x for x in rows if x["transport"] == "rnvme")
b = next(x for x in rows if x["transport"] == "nvme_rdma")
t = next((x for x in rows if x["transport"] == "nvme_tcp"), None)
q = r["ratio_vs_nvme_rdma"]
def near(a, e):
    return a is not None and abs(a - e) < 1e-9
ok = eval(sys.argv[2])
sys.exit(0 if ok else 1)
EOF
		ok "$2"
	else
		not_ok "$2"
		{ echo "expression: $3"; cat "$work/err"; head -c 2500 "$1/results.json"; echo; } | diag
	fi
}
check "$x" "host_stack_per_io = module + block + nvme-core + host-only ib_core (4,550; 5,000; nvme_tcp 4,750)" \
	'near(r["host_stack_per_io"], 4550) and near(b["host_stack_per_io"], 5000) and near(t["host_stack_per_io"], 4750)'
check "$x" "host stack parts: rnvme 300 + 4,000 + 150 + 100, nvme_rdma 450 + 4,000 + 150 + 400" \
	'[r["host_stack"][k] for k in ("transport", "block", "nvme-core", "ib_core_host", "host_stack")] == [300, 4000, 150, 100, 4550] and [b["host_stack"][k] for k in ("transport", "block", "nvme-core", "ib_core_host", "host_stack")] == [450, 4000, 150, 400, 5000]'
check "$x" "shared ib_core (__ib_process_cq, ib_dma_virt_map_sg) apart, not in the host stack (80, 100; none for nvme_tcp)" \
	'near(r["ib_shared_per_io"], 80) and near(b["ib_shared_per_io"], 100) and t["ib_shared_per_io"] is None and r["host_stack"]["ib_core_shared"] == 80'
check "$x" "target share = nvmet + nvmet_rdma + null_blk + rdma_rw_*/ib_cq_poll_work (1,050 both; nvme_tcp 1,600)" \
	'near(r["target_share_per_io"], 1050) and near(b["target_share_per_io"], 1050) and near(t["target_share_per_io"], 1600) and r["host_stack"]["ib_core_target"] == 50 and r["host_stack"]["nvmet"] == 1000'
check "$x" "Soft-RoCE share = rdma_rxe + GID lookups (find_gid.isra.0 too) and device references (22,800; 24,000; none for nvme_tcp)" \
	'near(r["rxe_share_per_io"], 22800) and near(b["rxe_share_per_io"], 24000) and t["rxe_share_per_io"] is None and r["host_stack"]["ib_core_rxe"] == 2800'
check "$x" "ib_core functions on no list (ib_query_port, rdma_cm's) are other: 15 and 0, in no figure" \
	'r["host_stack"]["ib_core_other"] == 15 and b["host_stack"]["ib_core_other"] == 0'
check "$x" "the sides add up to the where table's ib_core (100 + 80 + 50 + 2,800 + 15)" \
	'sum(r["host_stack"]["ib_core_" + s] for s in ("host", "shared", "target", "rxe", "other")) == r["where"]["ib_core"] == 3045'
check "$x" "ratios against nvme_rdma: host stack 0.91 (nvme_tcp 0.95), shared 0.8, target 1.0, Soft-RoCE 0.95" \
	'near(q["host_stack_per_io"], 0.91) and near(t["ratio_vs_nvme_rdma"]["host_stack_per_io"], 0.95) and near(q["ib_shared_per_io"], 0.8) and near(q["target_share_per_io"], 1.0) and near(q["rxe_share_per_io"], 0.95) and near(b["ratio_vs_nvme_rdma"]["host_stack_per_io"], 1.0)'
check "$x" "ib_core functions listed with their side, largest first" \
	'r["ib_core_functions"][0] == ["find_gid.isra.0", "rxe", 2000] and ["ib_sg_to_pages", "host", 40] in r["ib_core_functions"] and ["__ib_process_cq", "shared", 60] in r["ib_core_functions"] and ["rdma_rw_ctx_init", "target", 35] in r["ib_core_functions"] and ["cma_work_handler", "other", 5] in r["ib_core_functions"]'
check "$x" "the older figures are unchanged (module 300, where's block 4,000 and rest 1,000)" \
	'r["module_insn_per_io"] == 300 and r["where"]["block"] == 4000 and r["where"]["rest"] == 1000 and r["where"]["rdma_rxe"] == 20000 and r["where"]["nvmet"] == 1000'
if grep -q '^| w | rnvme | 100,000 | 0.9000 | 300 | 0.667 | 4,550 | 0.910 | 10,000 |' "$x/results.md"; then
	ok "results.md: the host stack and its ratio in the main table"
else
	not_ok "results.md: the host stack and its ratio in the main table"; diag < "$x/results.md"
fi
if grep -q '^| w | rnvme | 300 | 4,000 | 150 | 100 | 4,550 | 0.910 | 80 | 1,050 | 1.000 | 22,800 | 0.950 | 15 |$' "$x/results.md" &&
	grep -q '^| w | nvme_tcp | 600 | 4,000 | 150 | 0 | 4,750 | 0.950 | – | 1,600 | 1.524 | – | – | 0 |$' "$x/results.md"; then
	ok "results.md: the host stack table (parts, shares, ratios; nvme_tcp without Soft-RoCE)"
else
	not_ok "results.md: the host stack table (parts, shares, ratios; nvme_tcp without Soft-RoCE)"; diag < "$x/results.md"
fi

# The perf profile pass (BENCH_PROFILE=perf) gets the same attribution:
# period 1000, 1000 I/Os -> one sample is one instruction per I/O
p=$work/perf
mkdir -p "$p/raw"
cp "$x"/raw/w.rnvme.m.json "$x"/raw/w.rdma.m.json "$p/raw/"
cat > "$p/raw/w.rnvme.perf.txt" <<'EOF'
       300  [rnvme]            [k] rnvme_queue_rq
      4000  [kernel.kallsyms]  [k] blk_mq_submit_bio
       150  [nvme_core]        [k] nvme_setup_cmd
        70  [ib_core]          [k] ib_sg_to_pages
        60  [ib_core]          [k] __ib_process_cq
        40  [ib_core]          [k] rdma_rw_ctx_wrs
       900  [nvmet]            [k] nvmet_req_init
      2000  [ib_core]          [k] find_gid
     20000  [rdma_rxe]         [k] rxe_requester
EOF
cat > "$p/raw/w.rdma.perf.txt" <<'EOF'
       500  [nvme_rdma]        [k] nvme_rdma_queue_rq
      4000  [kernel.kallsyms]  [k] blk_mq_submit_bio
       150  [nvme_core]        [k] nvme_setup_cmd
       350  [ib_core]          [k] ib_mr_pool_get
EOF
cat > "$p/bench.jsonl" <<'EOF'
{"pass": "measure", "transport": "rnvme", "workload": "w", "rep": 0, "window_ns": 1000000000, "busy_ns": 1000000000, "ios": 10000, "tx_pkts": 30000, "wr": 25000, "cqe": -1, "fio": "raw/w.rnvme.m.json"}
{"pass": "measure", "transport": "rdma", "workload": "w", "rep": 0, "window_ns": 1000000000, "busy_ns": 1000000000, "ios": 9000, "tx_pkts": 27000, "wr": -1, "cqe": -1, "fio": "raw/w.rdma.m.json"}
{"pass": "profile", "transport": "rnvme", "workload": "w", "rep": 0, "window_ns": 1000000000, "busy_ns": 1000000000, "ios": 1000, "tx_pkts": 3000, "wr": 2500, "cqe": 1500, "fio": "raw/w.rnvme.m.json", "perf": "raw/w.rnvme.perf.txt", "period": 1000}
{"pass": "profile", "transport": "rdma", "workload": "w", "rep": 0, "window_ns": 1000000000, "busy_ns": 1000000000, "ios": 1000, "tx_pkts": 3000, "wr": -1, "cqe": 3000, "fio": "raw/w.rdma.m.json", "perf": "raw/w.rdma.perf.txt", "period": 1000}
EOF
if "$py" "$REPO/tests/bench/report.py" "$p/bench.jsonl" "$p" --clock icount --commit abc123 > "$p/out.txt" 2>&1; then
	ok "report.py runs on a synthetic perf profile pass"
else
	not_ok "report.py runs on a synthetic perf profile pass"
	diag < "$p/out.txt"
fi
check "$p" "perf: host stack 4,520 and 5,000 (ratio 0.904), shared 60, target 940, Soft-RoCE 22,000" \
	'near(r["host_stack_per_io"], 4520) and near(b["host_stack_per_io"], 5000) and near(q["host_stack_per_io"], 0.904) and near(r["ib_shared_per_io"], 60) and near(r["target_share_per_io"], 940) and near(r["rxe_share_per_io"], 22000) and r["profile"] == "perf"'
echo "1..$n"
[ "$failed" = 0 ]
