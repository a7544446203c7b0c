#!/bin/bash
# make bench's report (TAP): tests/bench/report.py on a synthetic run whose
# figures are known: two transports x one workload, a measure and a profile
# pass, fio JSON and perf reports, and a second run with the insn-count
# plugin's exact counts.  Checks every JSON key the bench promises,
# instructions per I/O (busy ns / I/Os), the module's own (its perf samples x
# period / I/Os), the module breakdown, WR/CQE per I/O and the ratios.
# usage: tests/host/30-bench-report.sh [KVER]   (KVER is ignored)
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/raw"

fio() { # FILE IOPS P50 P99 P999
	printf '{"jobs": [{"read": {"iops": %s, "total_ios": 1000, "clat_ns": {"percentile": {"50.000000": %s, "99.000000": %s, "99.900000": %s}}}, "write": {"iops": 0, "total_ios": 0}}]}\n' \
		"$2" "$3" "$4" "$5" > "$work/$1"
}
# rnvme: 10000 I/Os in 1e9 busy ns -> 100000 insn/IO; nvme_rdma 125000
fio raw/w.rnvme.m.json 10000 90000 150000 300000
fio raw/w.rdma.m.json 8000 120000 200000 400000
fio raw/w.rnvme.p.json 9000 0 0 0
fio raw/w.rdma.p.json 7000 0 0 0
# profile: period 1000, 1000 I/Os: 7000 samples in [rnvme] and 1000 mapped
# to it from [kernel.kallsyms] -> 8000 insn/IO
cat > "$work/raw/w.rnvme.perf.txt" <<'EOF'
      5000  [rnvme]            [k] rnvme_queue_rq
      2000  [rnvme]            [k] rnvme_recv_done
      3000  [rdma_rxe]         [k] rxe_requester
      1000  [kernel.kallsyms]  [k] blk_mq_submit_bio
       500  [kernel.kallsyms]  [k] _raw_spin_lock
      1000  [kernel.kallsyms]  [k] rnvme_map_data
       400  [nvme_core]        [k] nvme_setup_cmd
       100  fio                [.] td_io_queue
EOF
# perf files an insmod'ed module's functions under [kernel.kallsyms]: the
# guest's /proc/kallsyms module symbols map them back
printf 'rnvme_map_data [rnvme]\nrxe_requester [rdma_rxe]\n' > "$work/raw/module-symbols.txt"
cat > "$work/raw/w.rdma.perf.txt" <<'EOF'
     10000  [nvme_rdma]        [k] nvme_rdma_queue_rq
      3000  [rdma_rxe]         [k] rxe_requester
EOF
cat > "$work/bench.jsonl" <<'EOF'
{"pass": "measure", "transport": "rnvme", "workload": "w", "rep": 0, "window_ns": 1000000000, "busy_ns": 1000000000, "ios": 10000, "tx_pkts": 30000, "wr": 25000, "cqe": -1, "fio": "raw/w.rnvme.m.json"}
{"pass": "measure", "transport": "rdma", "workload": "w", "rep": 0, "window_ns": 1000000000, "busy_ns": 1000000000, "ios": 8000, "tx_pkts": 24000, "wr": -1, "cqe": -1, "fio": "raw/w.rdma.m.json"}
{"pass": "profile", "transport": "rnvme", "workload": "w", "rep": 0, "window_ns": 1000000000, "busy_ns": 1000000000, "ios": 1000, "tx_pkts": 3000, "wr": 2500, "cqe": 1500, "fio": "raw/w.rnvme.p.json", "perf": "raw/w.rnvme.perf.txt", "period": 1000}
{"pass": "profile", "transport": "rdma", "workload": "w", "rep": 0, "window_ns": 1000000000, "busy_ns": 1000000000, "ios": 1000, "tx_pkts": 3000, "wr": -1, "cqe": 3000, "fio": "raw/w.rdma.p.json", "perf": "raw/w.rdma.perf.txt", "period": 1000}
EOF
py=/usr/bin/python3
[ -x "$py" ] || py=python3
if "$py" "$REPO/tests/bench/report.py" "$work/bench.jsonl" "$work" --clock icount --commit abc123 > "$work/out.txt" 2>&1; then
	ok "report.py runs on a synthetic icount run"
else
	not_ok "report.py runs on a synthetic icount run"
	sed 's/^/# /' "$work/out.txt"
fi
check() { # DESC PYTHON-EXPRESSION over rows r (rnvme) and b (nvme_rdma)
	if "$py" - "$work/results.json" "$2" <<'EOF' 2>"$work/err"; then
import json, sys
rows = json.load(open(sys.argv[1]))
r = next(x for x in rows if x["transport"] == "rnvme")
b = next(x for x in rows if x["transport"] == "nvme_rdma")
ok = eval(sys.argv[2])
sys.exit(0 if ok else 1)
EOF
		ok "$1"
	else
		not_ok "$1"
		{ echo "expression: $2"; cat "$work/err"; head -c 1500 "$work/results.json"; echo; } | diag
	fi
}
check "every promised key, the clock and the commit" \
	'all(k in r for k in ["transport","workload","insn_per_io","module_insn_per_io","iops","lat_p50","lat_p99","lat_p999","wr_per_io","cqe_per_io","rxe_posts_per_io","ratio_vs_nvme_rdma","clock","commit"]) and r["clock"] == "icount" and r["commit"] == "abc123"'
check "insn_per_io = busy ns / I/Os (100000 and 125000)" 'r["insn_per_io"] == 100000 and b["insn_per_io"] == 125000'
check "module_insn_per_io = module samples (incl. kallsyms-mapped) x period / I/Os (8000 and 10000)" \
	'r["module_insn_per_io"] == 8000 and b["module_insn_per_io"] == 10000'
check "where the instructions go: rdma_rxe 3000, block 1000, nvme-core 400, rest 600" \
	'r["where"]["rdma_rxe"] == 3000 and r["where"]["block"] == 1000 and r["where"]["nvme-core"] == 400 and r["where"]["rest"] == 600'
check "wr_per_io from rnvme's counter (2.5), none for nvme_rdma; cqe_per_io from the profile pass (1.5, 3)" \
	'r["wr_per_io"] == 2.5 and b["wr_per_io"] is None and r["cqe_per_io"] == 1.5 and b["cqe_per_io"] == 3'
check "ratios against nvme_rdma (insn 0.8, module 0.8, IOPS 1.25, p99 0.75, CQE 0.5)" \
	'abs(r["ratio_vs_nvme_rdma"]["insn_per_io"] - 0.8) < 1e-9 and abs(r["ratio_vs_nvme_rdma"]["module_insn_per_io"] - 0.8) < 1e-9 and r["ratio_vs_nvme_rdma"]["iops"] == 1.25 and r["ratio_vs_nvme_rdma"]["lat_p99"] == 0.75 and r["ratio_vs_nvme_rdma"]["cqe_per_io"] == 0.5 and b["ratio_vs_nvme_rdma"]["insn_per_io"] == 1'
check "top function first: rnvme_queue_rq at 5000 insn/IO" 'r["top_functions"][0][0].startswith("rnvme_queue_rq") and r["top_functions"][0][1] == 5000'
if grep -q '^| w | rnvme | 100,000 | 0.8000 | 8,000 | 0.800 |' "$work/results.md"; then
	ok "results.md has the row with the ratios"
else
	not_ok "results.md has the row with the ratios"; sed 's/^/# /' "$work/results.md" | head -20
fi

# Exact counts (insn-count plugin): kallsyms + exact.txt, two windows
x=$work/exact
mkdir -p "$x/raw"
cp "$work"/raw/w.rnvme.m.json "$work"/raw/w.rdma.m.json "$x/raw/"
cat > "$x/raw/kallsyms.txt" <<'EOF'
ffffffff81000000 T blk_mq_submit_bio
ffffffff81001000 T _raw_spin_lock
ffffffffc0001000 t rnvme_queue_rq	[rnvme]
ffffffffc0001080 d rnvme_data	[rnvme]
ffffffffc0001100 t rnvme_recv_done	[rnvme]
ffffffffc0002000 t nvme_rdma_queue_rq	[nvme_rdma]
ffffffffc0002100 t nvme_rdma_send_done	[nvme_rdma]
ffffffffc0003000 t rxe_requester	[rdma_rxe]
ffffffffc0003400 t rxe_post_send	[rdma_rxe]
ffffffffc0003800 t rxe_post_recv	[rdma_rxe]
ffffffffc0004000 t nvme_setup_cmd	[nvme_core]
EOF
# window 0 (rnvme, 100 I/Os): module 7000 -> 70/IO, 200 calls of
# rnvme_recv_done -> 2 CQE/IO, rxe 300/IO, block 20, nvme-core 4, rest
# (500 kernel + 1000 user) 15; window 1 (nvme_rdma): module 10150 -> 101.5,
# 150 calls of nvme_rdma_send_done -> 1.5 CQE/IO; rxe's post verbs: 250 +
# 56 calls in window 0 (3.06 posts/IO, inside rxe's 300/IO), 300 + 100 in
# window 1 (4.0)
cat > "$x/raw/exact.txt" <<'EOF'
window 0 user 1000 kernel 39900
ffffffffc0001000 100
ffffffffc0001004 5000
ffffffffc0001100 200
ffffffffc0001110 1700
ffffffffc0003010 29694
ffffffffc0003400 250
ffffffffc0003800 56
ffffffff81000010 2000
ffffffff81001000 500
ffffffffc0004000 400
end 0
window 1 user 0 kernel 10550
ffffffffc0002000 100
ffffffffc0002010 9900
ffffffffc0002100 150
ffffffffc0003400 300
ffffffffc0003800 100
end 1
# 2 windows, 15 kernel instruction addresses seen
EOF
cat > "$x/bench.jsonl" <<'EOF'
{"pass": "measure", "transport": "rnvme", "workload": "w", "rep": 0, "window_ns": 1000000000, "busy_ns": 1000000000, "ios": 10000, "tx_pkts": 30000, "wr": 25000, "cqe": -1, "fio": "raw/w.rnvme.m.json", "exact_window": 0, "exact_ios": 100}
{"pass": "measure", "transport": "rdma", "workload": "w", "rep": 0, "window_ns": 1000000000, "busy_ns": 1000000000, "ios": 8000, "tx_pkts": 24000, "wr": -1, "cqe": -1, "fio": "raw/w.rdma.m.json", "exact_window": 1, "exact_ios": 100}
EOF
if "$py" "$REPO/tests/bench/report.py" "$x/bench.jsonl" "$x" --clock icount --commit abc123 > "$x/out.txt" 2>&1; then
	ok "report.py runs on a synthetic run with exact counts"
else
	not_ok "report.py runs on a synthetic run with exact counts"
	diag < "$x/out.txt"
fi
work=$x
check "exact: module_insn_per_io = the module's counted instructions / window I/Os (70 and 101.5)" \
	'r["module_insn_per_io"] == 70 and b["module_insn_per_io"] == 101.5 and r["profile"] == "exact"'
check "exact: CQE/IO = calls of the module's *_done functions / I/Os (2.0, 1.5)" \
	'r["cqe_per_io"] == 2.0 and b["cqe_per_io"] == 1.5'
check "exact: rxe posts/IO = calls of rdma_rxe's post verbs / I/Os (3.06, 4.0)" \
	'abs(r["rxe_posts_per_io"] - 3.06) < 1e-9 and b["rxe_posts_per_io"] == 4.0'
check "exact: where (rdma_rxe 300, block 20, nvme-core 4, rest 15 incl. user) and the window's 409 insn/IO" \
	'r["where"] == {"transport": 70, "rdma_rxe": 300, "ib_core": 0, "nvme-core": 4, "nvmet": 0, "block": 20, "rest": 15} and r["exact_insn_per_io"] == 409'
check "exact: the module's own top function is rnvme_queue_rq at 51 insn/IO" \
	'r["module_top_functions"][0] == ["rnvme_queue_rq", 51]'
# the plugin and the guest's marker build warning-free
if cc -O2 -Wall -Wextra -Werror -shared -fPIC -o "$work/insn-count.so" "$REPO/tests/bench/insn-count.c" 2>"$work/cc.err" &&
	cc -O2 -Wall -Wextra -Werror -o "$work/mark" "$REPO/tests/bench/mark.c" 2>>"$work/cc.err" &&
	objdump -d "$work/mark" > "$work/mark.dis" &&
	grep -q 'movabs \$0x4e4947454d564e52' "$work/mark.dis" &&
	grep -q 'movabs \$0x444e45454d564e52' "$work/mark.dis"; then
	ok "insn-count.so and mark build with -Werror; mark carries both marker instructions"
else
	not_ok "insn-count.so and mark build with -Werror; mark carries both marker instructions"
	diag < "$work/cc.err"
fi
echo "1..$n"
[ "$failed" = 0 ]
