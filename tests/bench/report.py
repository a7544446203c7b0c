#!/usr/bin/env python3
"""Summarise a `make bench` run: medians per transport and workload, the
ratios rnvme / nvme_rdma and rnvme / nvme_tcp, as Markdown, JSON and a PNG
chart.  Input: bench.jsonl written by tests/guest/bench.sh."""
import json
import statistics
import sys
from pathlib import Path

NAMES = {"rnvme": "rnvme", "rdma": "nvme_rdma", "tcp": "nvme_tcp"}
# metric, higher is better?
METRICS = [("iops", True), ("iops_per_cpu_s", True), ("p50_us", False),
           ("p99_us", False), ("p999_us", False)]


def pct(side, p):
    return side.get("clat_ns", {}).get("percentile", {}).get(p, 0) / 1000.0


def from_fio(run, fio_json):
    """Fill a run's metrics from fio's JSON output."""
    job = fio_json["jobs"][0]
    rd, wr = job["read"], job["write"]
    ios = rd["total_ios"] + wr["total_ios"]
    main = rd if rd["total_ios"] >= wr["total_ios"] else wr
    cpu = run["cpu_s"]
    run.update({
        "iops": rd["iops"] + wr["iops"], "bw_kib": rd["bw"] + wr["bw"], "ios": ios,
        "runtime_s": max(rd["runtime"], wr["runtime"]) / 1000.0,
        "p50_us": pct(main, "50.000000"), "p99_us": pct(main, "99.000000"),
        "p999_us": pct(main, "99.900000"),
        "iops_per_cpu_s": (ios / cpu) if cpu > 0 else 0,
    })
    if "tx_pkts" in run:
        # fio counts I/Os after the ramp; the packet counter runs throughout,
        # so scale the I/Os to the whole wall time
        total = ios * run["wall_s"] / run["runtime_s"] if run["runtime_s"] else 0
        run["pkts_per_io"] = run["tx_pkts"] / total if total else 0
    return run


def load(path):
    runs = []
    for line in Path(path).read_text().splitlines():
        if not line.strip():
            continue
        run = json.loads(line)
        if "fio" in run:    # the guest stores fio's JSON as it is
            raw = Path(path).parent / run["fio"]
            try:
                text = raw.read_text()
                # fio may print warnings before the JSON object
                run = from_fio(run, json.loads(text[text.index("{"):]))
            except (OSError, ValueError, KeyError) as e:
                print(f"report: skipping {raw}: {e}", file=sys.stderr)
                continue
        runs.append(run)
    if not runs:
        sys.exit(f"report: no fio results in {path}")
    return runs


def summarise(runs):
    table = {}
    for r in runs:
        table.setdefault(r["workload"], {}).setdefault(r["transport"], []).append(r)
    out = {}
    for wl, per_t in table.items():
        out[wl] = {}
        for t, rs in per_t.items():
            out[wl][t] = {m: statistics.median(x[m] for x in rs) for m, _ in METRICS}
            out[wl][t]["pkts_per_io"] = statistics.median(x.get("pkts_per_io", 0) for x in rs)
            out[wl][t]["runs"] = len(rs)
    return out


def ratio(a, b, higher_better):
    if not a or not b:
        return None
    # ratios are "rnvme relative to the other": >1 is better for rnvme in
    # throughput metrics; for latency we report rnvme/other (<1 is better)
    return a / b


def main():
    src, outdir = Path(sys.argv[1]), Path(sys.argv[2])
    summary = summarise(load(src))
    order = [w for w in ["randread-4k-qd1", "randread-4k-qd32", "randread-4k-qd128",
                         "randwrite-4k-qd32", "seqread-128k-qd8", "seqwrite-128k-qd8",
                         "randrw70-4k-qd32", "randread-4k-qd1-polled"] if w in summary]
    order += sorted(w for w in summary if w not in order)

    result = {"workloads": {}, "note": "medians over repetitions; TCG guest: only ratios measured in one run mean anything"}
    lines = ["| workload | transport | IOPS | IOPS/CPU-s | p50 us | p99 us | p99.9 us | pkts/IO | runs |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    rlines = ["| workload | IOPS rnvme/rdma | IOPS rnvme/tcp | IOPS/CPU-s rnvme/rdma | IOPS/CPU-s rnvme/tcp | p99 rnvme/rdma | p99.9 rnvme/rdma |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    for wl in order:
        per_t = summary[wl]
        result["workloads"][wl] = {"medians": {NAMES.get(t, t): v for t, v in per_t.items()}, "ratios": {}}
        for t in ["rnvme", "rdma", "tcp"]:
            if t in per_t:
                v = per_t[t]
                lines.append(f"| {wl} | {NAMES[t]} | {v['iops']:.0f} | {v['iops_per_cpu_s']:.0f} | "
                             f"{v['p50_us']:.0f} | {v['p99_us']:.0f} | {v['p999_us']:.0f} | "
                             f"{v['pkts_per_io']:.1f} | {v['runs']} |")
        rat = {}
        for other in ["rdma", "tcp"]:
            if "rnvme" in per_t and other in per_t:
                for m, hb in METRICS:
                    rat[f"{m}_rnvme_over_{NAMES[other]}"] = ratio(per_t["rnvme"][m], per_t[other][m], hb)
        result["workloads"][wl]["ratios"] = rat

        def f(k):
            v = rat.get(k)
            return f"{v:.2f}" if v is not None else "-"
        rlines.append(f"| {wl} | {f('iops_rnvme_over_nvme_rdma')} | {f('iops_rnvme_over_nvme_tcp')} | "
                      f"{f('iops_per_cpu_s_rnvme_over_nvme_rdma')} | {f('iops_per_cpu_s_rnvme_over_nvme_tcp')} | "
                      f"{f('p99_us_rnvme_over_nvme_rdma')} | {f('p999_us_rnvme_over_nvme_rdma')} |")

    md = ["# rnvme bench", "",
          "Medians over repetitions, one VM run (QEMU TCG, Soft-RoCE). Absolute numbers mean little under",
          "emulation; compare the ratios. Throughput ratios > 1 and latency ratios < 1 favour rnvme.", "",
          "## Ratios", ""] + rlines + ["", "## Medians", ""] + lines + [""]
    outdir.mkdir(parents=True, exist_ok=True)
    (outdir / "results.md").write_text("\n".join(md))
    (outdir / "results.json").write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
    print("\n".join(rlines))
    print()
    print("\n".join(lines))

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report: python3-matplotlib not installed; no chart", file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(10, 5))
    width = 0.2
    series = [("iops_rnvme_over_nvme_rdma", "IOPS vs nvme_rdma"),
              ("iops_per_cpu_s_rnvme_over_nvme_rdma", "IOPS/CPU-s vs nvme_rdma"),
              ("p99_us_rnvme_over_nvme_rdma", "p99 latency vs nvme_rdma (lower better)"),
              ("iops_rnvme_over_nvme_tcp", "IOPS vs nvme_tcp")]
    for i, (key, label) in enumerate(series):
        vals = [result["workloads"][w]["ratios"].get(key) or 0 for w in order]
        ax.bar([x + i * width for x in range(len(order))], vals, width, label=label)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks([x + 1.5 * width for x in range(len(order))])
    ax.set_xticklabels(order, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("rnvme / other")
    ax.set_title("rnvme relative to in-tree transports (one TCG run, medians)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(outdir / "ratios.png", dpi=100)


if __name__ == "__main__":
    main()
