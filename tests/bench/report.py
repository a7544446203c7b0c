#!/usr/bin/env python3
"""Summarise a `make bench` run as Markdown, JSON and a PNG chart.

Input: bench.jsonl written by tests/guest/bench.sh (one line per fio run, a
"measure" pass and, under icount, a "profile" pass) with fio's JSON and the
perf reports under raw/.  Per transport and workload (median over the
repetitions of the measure pass):

  insn_per_io         busy guest ns / I/Os completed (/proc/stat idle and
                      /sys/block stat over the same window); under icount a
                      guest ns is one instruction
  module_insn_per_io  the transport module's own instructions per I/O:
                      exact, from the insn-count plugin's counts over the
                      marked window (raw/exact.txt, addresses mapped with
                      raw/kallsyms.txt) / the I/Os of that window; or, with
                      BENCH_PROFILE=perf, perf samples x the sample period /
                      the I/Os of the profile run
  iops, lat_p50/p99/p999  fio (completion latency, guest ns)
  wr_per_io           work requests the host posted (rnvme counts them:
                      sysfs wr_posted; the exact counts cannot give it, see
                      rxe_posts_per_io)
  posts_per_io        the host's ib_post_send calls on its send queues, its
                      doorbells (rnvme counts them: sysfs send_posts)
  cqe_per_io          host completions: calls of the transport's
                      completion handlers (*_done; exact counts of their
                      first instruction, or kprobe hits in the perf pass)
  rxe_posts_per_io    (exact counts) calls of Soft-RoCE's post verbs
                      (rxe_post_send, rxe_post_recv, rxe_post_srq_recv:
                      the count of their first instruction) per I/O, the
                      host's and the target's: both run rdma_rxe in the
                      guest, and a per-address count does not know its
                      caller.  The target's share is the same for both
                      RDMA drivers on a workload, so the difference is the
                      hosts'.  Work requests per post cannot be counted
                      this way (rxe's per-WR post_one_send is inlined)
  host_stack_per_io   the host's own stack per I/O: the transport module +
                      the block layer + nvme-core (with nvme-fabrics) + the
                      ib_core functions only the host calls (IB_SIDE below);
                      ib_core functions both sides call are not in it
                      (ib_shared_per_io).  The block layer is counted whole:
                      on the default null_blk target that includes the
                      target's bio path; BENCH_BACKING=file keeps the
                      target out of it (Documentation/bench.rst "Host stack")
  ib_shared_per_io    ib_core functions the host and the target both call
                      (__ib_process_cq, ib_dma_virt_map_sg)
  target_share_per_io the target: nvmet, nvmet_rdma/tcp, null_blk and the
                      ib_core functions only it calls (rdma_rw_*, its
                      workqueue CQ polling)
  rxe_share_per_io    Soft-RoCE: rdma_rxe and the ib_core functions it calls
                      per packet (GID lookups, device references)
  ratio_vs_nvme_rdma  each of the above divided by nvme_rdma's

usage: report.py BENCH.jsonl OUTDIR [--clock icount|wall] [--commit SHA]
"""
import argparse
import bisect
import json
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

NAMES = {"rnvme": "rnvme", "rdma": "nvme_rdma", "tcp": "nvme_tcp"}
MODULE_OF = {"rnvme": "rnvme", "rdma": "nvme_rdma", "tcp": "nvme_tcp"}
KEYS = ["insn_per_io", "module_insn_per_io", "iops", "lat_p50", "lat_p99",
        "lat_p999", "wr_per_io", "posts_per_io", "cqe_per_io", "rxe_posts_per_io",
        "host_stack_per_io", "ib_shared_per_io", "target_share_per_io",
        "rxe_share_per_io"]
# Soft-RoCE's post verbs: one call per ib_post_send/ib_post_recv/
# ib_post_srq_recv of the host or the target (rxe_posts_per_io)
RXE_POSTS = ("rxe_post_send", "rxe_post_recv", "rxe_post_srq_recv")
# where the instructions go: class -> kernel modules (perf dso "[name]")
CLASSES = [
    ("transport", None),
    ("rdma_rxe", {"rdma_rxe"}),
    ("ib_core", {"ib_core", "rdma_cm", "ib_cm", "iw_cm", "ib_uverbs"}),
    ("nvme-core", {"nvme_core", "nvme_fabrics"}),
    ("nvmet", {"nvmet", "nvmet_rdma", "nvmet_tcp", "null_blk"}),
]
# Who an ib_core function's instructions belong to (ib_core class only;
# Documentation/bench.rst "Host stack" gives the reasons).  Debian 6.1's
# drivers/infiniband, this bench's fabric (Soft-RoCE, RoCE v2) and its users:
# the host (rnvme or nvme_rdma: softirq CQs, direct CQs on poll queues, fast
# registration) and the target (nvmet_rdma: workqueue CQs, rdma_rw without
# MRs on RoCE).  A per-address count does not know its caller, so a function
# belongs to a side only if, in this guest, no other side calls it.
IB_SIDE = {
    # host: memory registration (rxe_map_mr_sg calls ib_sg_to_pages back),
    # nvme_rdma's MR pool (rdma_rw takes MRs only on iWARP, max_sgl_rd
    # devices or with force_mr: not on Soft-RoCE), the host's CQ
    # poll contexts (IB_POLL_SOFTIRQ, IB_POLL_DIRECT)
    "ib_map_mr_sg": "host", "ib_sg_to_pages": "host",
    "ib_mr_pool_get": "host", "ib_mr_pool_put": "host",
    "ib_poll_handler": "host", "ib_cq_completion_softirq": "host",
    "ib_process_cq_direct": "host",
    # both: the CQ loop behind every poll context, and the virtual DMA
    # mapping (the host's ib_dma_map_sg and the target's rdma_rw_ctx_init)
    "__ib_process_cq": "shared", "__poll_cq": "shared",
    "ib_dma_virt_map_sg": "shared",
    # target: nvmet_rdma's CQs (IB_POLL_WORKQUEUE); rdma_rw_* by prefix
    "ib_cq_poll_work": "target", "ib_cq_completion_workqueue": "target",
    # Soft-RoCE: per-packet GID lookups and device references (rxe_recv.c,
    # rxe_net.c; static cache.c helpers listed in case they are not inlined)
    "rdma_find_gid_by_port": "rxe", "find_gid": "rxe",
    "rdma_get_gid_attr": "rxe", "rdma_put_gid_attr": "rxe",
    "rdma_read_gid_attr_ndev_rcu": "rxe", "ib_device_get_by_netdev": "rxe",
    "ib_device_put": "rxe", "is_gid_entry_valid": "rxe",
    "is_gid_entry_free": "rxe", "rdma_gid_table": "rxe",
    "get_gid_entry": "rxe", "put_gid_entry": "rxe",
}
IB_SIDE_PREFIX = (("rdma_rw_", "target"),)
IB_SIDES = ("host", "shared", "target", "rxe", "other")
BLOCK_SYM = re.compile(r"^_*(blk|bio|bdev|blkdev|submit_bio|sbitmap|elv|dd_|"
                       r"disk_|part_|bvec|iov_iter|dio_|iomap_dio|rq_|__rq_|"
                       r"req_|dma_map|dma_unmap)")
PERF_LINE = re.compile(r"^\s*(\d+)\s+(\S+)\s+\[(.)\]\s+(.+?)\s*$")


def pct(side, p):
    """Total latency (submission + completion; fio --lat_percentiles=1), else
    completion latency: nvme_tcp often completes a write inside io_submit,
    so its clat alone is near zero."""
    for key in ("lat_ns", "clat_ns"):
        perc = side.get(key, {}).get("percentile")
        if perc:
            return perc.get(p, 0)
    return 0


def fio_metrics(fio_json):
    job = fio_json["jobs"][0]
    rd, wr = job["read"], job["write"]
    main = rd if rd["total_ios"] >= wr["total_ios"] else wr
    return {"iops": rd["iops"] + wr["iops"],
            "lat_p50": pct(main, "50.000000"), "lat_p99": pct(main, "99.000000"),
            "lat_p999": pct(main, "99.900000")}


def read_json(path):
    text = path.read_text()
    return json.loads(text[text.index("{"):])   # fio may print warnings first


def classify(dso, sym, transport, modsyms):
    name = dso.strip("[]")
    if name == "kernel.kallsyms":
        name = modsyms.get(sym, "kernel")
    return classify_exact(sym, name, transport)


def module_symbols(path):
    """symbol -> module from the guest's /proc/kallsyms (raw/module-symbols.txt)"""
    out = {}
    if path.exists():
        for line in path.read_text().splitlines():
            parts = line.split()
            if len(parts) == 2:
                out[parts[0]] = parts[1].strip("[]")
    return out


def perf_profile(path, transport, period, ios, modsyms):
    """Instructions per I/O by class and the top functions, from perf report."""
    by_class = defaultdict(int)
    by_sym = defaultdict(int)
    items = []
    total = 0
    for line in path.read_text().splitlines():
        m = PERF_LINE.match(line)
        if not m:
            continue
        n, dso, _, sym = int(m.group(1)), m.group(2), m.group(3), m.group(4)
        total += n
        cls = classify(dso, sym, transport, modsyms)
        by_class[cls] += n
        by_sym[f"{sym} [{modsyms[sym]}]" if sym in modsyms else f"{sym} {dso}"] += n
        items.append((sym, cls, n))
    scale = period / ios if ios else 0
    classes = {c: round(by_class.get(c, 0) * scale, 1)
               for c in [c for c, _ in CLASSES] + ["block", "rest"]}
    top = sorted(by_sym.items(), key=lambda kv: -kv[1])[:12]
    out = {"samples": total, "classes": classes,
           "top": [[s, round(n * scale, 1)] for s, n in top]}
    out.update(host_stack(items, scale, transport))
    return out


class Kallsyms:
    """Text symbols of the guest's /proc/kallsyms: address -> (name, module);
    module is "kernel" for the core image."""

    def __init__(self, path):
        syms = []
        for line in path.read_text().splitlines():
            parts = line.split()
            if len(parts) < 3 or parts[1] not in "tTwW":
                continue
            mod = parts[3].strip("[]") if len(parts) > 3 else "kernel"
            syms.append((int(parts[0], 16), parts[2], mod))
        syms.sort()
        self.addrs = [a for a, _, _ in syms]
        self.syms = [(n, m) for _, n, m in syms]
        self.entry = {(n, m): a for a, n, m in syms}
        self.cache = {}

    def lookup(self, addr):
        hit = self.cache.get(addr)
        if hit is None:
            i = bisect.bisect_right(self.addrs, addr) - 1
            hit = self.syms[i] if i >= 0 else ("?", "kernel")
            self.cache[addr] = hit
        return hit


def exact_windows(path):
    """raw/exact.txt -> {window: (user, kernel, {addr: count})}"""
    out, cur = {}, None
    with open(path) as f:
        for line in f:
            if line.startswith("window "):
                w = line.split()
                cur = {}
                out[int(w[1])] = (int(w[3]), int(w[5]), cur)
            elif line.startswith("end ") or line.startswith("#"):
                cur = None
            elif cur is not None:
                a, n = line.split()
                cur[int(a, 16)] = int(n)
    return out


def classify_exact(name, mod, transport):
    if mod == MODULE_OF[transport]:
        return "transport"
    for cls, mods in CLASSES[1:]:
        if mod in mods:
            return cls
    if mod == "kernel" and BLOCK_SYM.match(name):
        return "block"
    return "rest"


def ib_side(name):
    """host, shared, target, rxe or other for a function of the ib_core
    class; a compiler suffix (.isra.0, .constprop.0, .cold) is ignored."""
    base = name.split(".")[0]
    side = IB_SIDE.get(base)
    if side:
        return side
    for prefix, side in IB_SIDE_PREFIX:
        if base.startswith(prefix):
            return side
    return "other"


def host_stack(items, scale, transport):
    """items: (function, class, instructions).  The host stack and the
    shares per I/O, their parts, and the ib_core functions by side
    (nvme_tcp: no shared ib_core or Soft-RoCE share)."""
    part = defaultdict(int)
    ib_fn = defaultdict(int)
    for name, cls, n in items:
        if cls == "ib_core":
            side = ib_side(name)
            part["ib_core_" + side] += n
            ib_fn[(name, side)] += n
        elif cls in ("transport", "block", "nvme-core", "nvmet", "rdma_rxe"):
            part[cls] += n
    total = {
        "host_stack": part["transport"] + part["block"] + part["nvme-core"] +
        part["ib_core_host"],
        "target_share": part["nvmet"] + part["ib_core_target"],
        "rxe_share": part["rdma_rxe"] + part["ib_core_rxe"],
    }
    keys = (["transport", "block", "nvme-core", "nvmet", "rdma_rxe"] +
            ["ib_core_" + s for s in IB_SIDES])
    parts = {k: round(part[k] * scale, 1) for k in keys}
    parts.update({k: round(v * scale, 1) for k, v in total.items()})
    # every ib_core function of at least 0.05 per I/O, so that "other" can
    # be read off and the lists above checked against a run
    fns = sorted(((k, c) for k, c in ib_fn.items() if c * scale >= 0.05),
                 key=lambda kv: (-kv[1], kv[0]))
    rdma = transport != "tcp"
    return {"host_stack_per_io": total["host_stack"] * scale,
            "ib_shared_per_io": part["ib_core_shared"] * scale if rdma else None,
            "target_share_per_io": total["target_share"] * scale,
            "rxe_share_per_io": total["rxe_share"] * scale if rdma else None,
            "host_stack": parts,
            "ib_core_functions": [[n, side, round(c * scale, 1)]
                                  for (n, side), c in fns]}


def exact_profile(window, transport, ios, ksyms):
    """Instructions per I/O by class and function, and transport completion
    handler calls (the count of each *_done function's first instruction)."""
    user, kernel, counts = window
    by_class = defaultdict(int)
    by_sym = defaultdict(int)
    by_fn = defaultdict(int)
    for addr, n in counts.items():
        name, mod = ksyms.lookup(addr)
        cls = classify_exact(name, mod, transport)
        by_class[cls] += n
        by_sym[(name, mod)] += n
        by_fn[(name, cls)] += n
    by_class["rest"] += user
    tmod = MODULE_OF[transport]
    cqe = sum(counts.get(a, 0) for (n, m), a in ksyms.entry.items()
              if m == tmod and n.endswith("_done"))
    rxe = [ksyms.entry[(n, "rdma_rxe")] for n in RXE_POSTS
           if (n, "rdma_rxe") in ksyms.entry]
    posts = sum(counts.get(a, 0) for a in rxe)
    scale = 1 / ios if ios else 0
    classes = {c: round(by_class.get(c, 0) * scale, 1)
               for c in [c for c, _ in CLASSES] + ["block", "rest"]}
    top = sorted(by_sym.items(), key=lambda kv: -kv[1])[:12]
    mtop = sorted(((k, v) for k, v in by_sym.items() if k[1] == tmod),
                  key=lambda kv: -kv[1])[:10]
    out = {"instructions": user + kernel, "classes": classes,
           "module_top": [[n, round(c * scale, 1)] for (n, _), c in mtop],
           "insn_per_io": (user + kernel) * scale,
           "cqe_per_io": cqe * scale if transport != "tcp" else None,
           "rxe_posts_per_io": posts * scale if rxe and transport != "tcp" else None,
           "top": [[f"{n} [{m}]", round(c * scale, 1)] for (n, m), c in top]}
    out.update(host_stack(((n, cls, c) for (n, cls), c in by_fn.items()), scale,
                           transport))
    return out


def load(path):
    base = Path(path).parent
    modsyms = module_symbols(base / "raw" / "module-symbols.txt")
    windows, ksyms = {}, None
    if (base / "raw" / "exact.txt").exists() and (base / "raw" / "kallsyms.txt").exists():
        windows = exact_windows(base / "raw" / "exact.txt")
        ksyms = Kallsyms(base / "raw" / "kallsyms.txt")
    measure, profile = defaultdict(list), {}
    for line in Path(path).read_text().splitlines():
        if not line.strip():
            continue
        run = json.loads(line)
        key = (run["transport"], run["workload"])
        try:
            run.update(fio_metrics(read_json(base / run["fio"])))
        except (OSError, ValueError, KeyError) as e:
            print(f"report: skipping {run['fio']}: {e}", file=sys.stderr)
            continue
        ios = run["ios"]
        run["insn_per_io"] = run["busy_ns"] / ios if ios else None
        run["wr_per_io"] = run["wr"] / ios if ios and run["wr"] >= 0 else None
        posts = run.get("posts", -1)
        run["posts_per_io"] = posts / ios if ios and posts >= 0 else None
        # kprobe hits cover the whole fio run, the window only a part of it
        all_ios = run.get("ios_total", ios)
        run["cqe_per_io"] = run["cqe"] / all_ios if all_ios and run["cqe"] >= 0 else None
        run["pkts_per_io"] = run["tx_pkts"] / ios if ios else None
        run["busy_frac"] = run["busy_ns"] / run["window_ns"] if run["window_ns"] else None
        win = run.get("exact_window")
        if win is not None:
            if win in windows and run.get("exact_ios"):
                run["exact"] = exact_profile(windows[win], run["transport"],
                                             run["exact_ios"], ksyms)
            else:
                print(f"report: no exact counts for window {win} ({run['fio']})",
                      file=sys.stderr)
        if run.get("pass") == "profile":
            if "perf" in run and (base / run["perf"]).exists():
                # perf sampled the whole fio run: divide by all its I/Os
                run["profile"] = perf_profile(base / run["perf"], run["transport"],
                                              run["period"], run.get("ios_total", ios),
                                              modsyms)
            profile[key] = run
        else:
            measure[key].append(run)
    if not measure:
        sys.exit(f"report: no fio results in {path}")
    return measure, profile


def median(runs, k):
    vals = [r[k] for r in runs if r.get(k) is not None]
    return statistics.median(vals) if vals else None


HOST_KEYS = ("host_stack_per_io", "ib_shared_per_io", "target_share_per_io",
             "rxe_share_per_io")


def host_keys(row, profs):
    """The host stack and the shares: medians over the repetitions; the
    parts and the ib_core functions of the repetition whose host stack is
    the median (the lower middle one of an even count)."""
    for k in HOST_KEYS:
        vals = [p[k] for p in profs if p.get(k) is not None]
        row[k] = statistics.median(vals) if vals else None
    mid = statistics.median_low(p["host_stack_per_io"] for p in profs)
    p = next(p for p in profs if p["host_stack_per_io"] == mid)
    row["host_stack"] = p["host_stack"]
    row["ib_core_functions"] = p["ib_core_functions"]


def summarise(measure, profile, clock, commit):
    rows = []
    for (t, w), runs in sorted(measure.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        row = {"transport": NAMES[t], "workload": w, "clock": clock, "commit": commit,
               "reps": len(runs)}
        for k in KEYS + ["pkts_per_io", "busy_frac"]:
            row[k] = median(runs, k)
        row["insn_per_io_from_iops"] = 1e9 / row["iops"] if row["iops"] else None
        prof = profile.get((t, w))
        row["module_insn_per_io"] = None
        exact = [r["exact"] for r in runs if "exact" in r]
        if exact:
            row["profile"] = "exact"
            row["module_insn_per_io"] = statistics.median(
                e["classes"]["transport"] for e in exact)
            row["exact_insn_per_io"] = statistics.median(e["insn_per_io"] for e in exact)
            if exact[0]["cqe_per_io"] is not None:
                row["cqe_per_io"] = statistics.median(e["cqe_per_io"] for e in exact)
            if exact[0].get("rxe_posts_per_io") is not None:
                row["rxe_posts_per_io"] = statistics.median(
                    e["rxe_posts_per_io"] for e in exact)
            row["where"] = exact[0]["classes"]
            row["top_functions"] = exact[0]["top"]
            row["module_top_functions"] = exact[0]["module_top"]
            host_keys(row, exact)
        elif prof:
            row["profile"] = "perf"
            if prof.get("cqe_per_io") is not None:
                row["cqe_per_io"] = prof["cqe_per_io"]
            if "profile" in prof:
                row["module_insn_per_io"] = prof["profile"]["classes"]["transport"]
                row["where"] = prof["profile"]["classes"]
                row["top_functions"] = prof["profile"]["top"]
                row["profile_insn_per_io"] = prof["insn_per_io"]
                host_keys(row, [prof["profile"]])
        rows.append(row)
    ref = {r["workload"]: r for r in rows if r["transport"] == "nvme_rdma"}
    for r in rows:
        b = ref.get(r["workload"])
        r["ratio_vs_nvme_rdma"] = {
            k: (r[k] / b[k] if b and r.get(k) is not None and b.get(k) else None)
            for k in KEYS}
    knob_rows(rows)
    return rows


def knob_rows(rows):
    """(variant, workload, row, ratios against the same transport and
    workload under the defaults) for every WORKLOAD@VARIANT row."""
    base = {(r["transport"], r["workload"]): r for r in rows if "@" not in r["workload"]}
    out = []
    for r in rows:
        if "@" not in r["workload"]:
            continue
        w, v = r["workload"].split("@", 1)
        b = base.get((r["transport"], w))
        q = {k: (r[k] / b[k] if b and r.get(k) is not None and b.get(k) else None)
             for k in ("insn_per_io", "module_insn_per_io", "lat_p50", "lat_p99")}
        r["ratio_vs_default"] = q
        out.append((v, w, r, q))
    return sorted(out, key=lambda x: (x[0], x[1], x[2]["transport"]))


def fmt(v, nd=0):
    if v is None:
        return "–"
    return f"{v:,.{nd}f}"


def markdown(rows, clock, commit):
    unit = "instructions" if clock == "icount" else "busy ns"
    lat = "instructions" if clock == "icount" else "ns"
    out = [f"# make bench ({clock} clock, commit {commit})", "",
           f"insn/IO: {unit} per I/O of the whole guest; module: the transport "
           f"module's own ({'exact counts' if any(r.get('profile') == 'exact' for r in rows) else 'profile pass'}); "
           f"latencies in {lat}; ratios against nvme_rdma.  WR/IO: work requests "
           f"rnvme posted (its own counter); rxe posts/IO: calls of Soft-RoCE's post "
           f"verbs by host and target together (exact counts).  host stack: the "
           f"module, the block layer, nvme-core and the host's own ib_core "
           f"functions (below).", ""]
    out.append("| workload | transport | insn/IO | ×rdma | module insn/IO | ×rdma | "
               "host stack/IO | ×rdma | IOPS | "
               "p50 | p99 | p99.9 | WR/IO | CQE/IO | rxe posts/IO | pkts/IO | posts/IO |")
    out.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        q = r["ratio_vs_nvme_rdma"]
        out.append(f"| {r['workload']} | {r['transport']} | {fmt(r['insn_per_io'])} | "
                   f"{fmt(q['insn_per_io'], 4)} | {fmt(r['module_insn_per_io'])} | "
                   f"{fmt(q['module_insn_per_io'], 3)} | {fmt(r.get('host_stack_per_io'))} | "
                   f"{fmt(q.get('host_stack_per_io'), 3)} | {fmt(r['iops'])} | {fmt(r['lat_p50'])} | "
                   f"{fmt(r['lat_p99'])} | {fmt(r['lat_p999'])} | {fmt(r['wr_per_io'], 2)} | "
                   f"{fmt(r['cqe_per_io'], 2)} | {fmt(r['rxe_posts_per_io'], 2)} | "
                   f"{fmt(r['pkts_per_io'], 2)} | {fmt(r.get('posts_per_io'), 2)} |")
    prof = [r for r in rows if r.get("where")]
    if prof:
        classes = list(prof[0]["where"].keys())
        src = "exact counts" if prof[0].get("profile") == "exact" else "profile pass"
        out += ["", f"## Where the instructions go (per I/O, {src})", "",
                "| workload | transport | " + " | ".join(classes) + " |",
                "|---|---|" + "---:|" * len(classes)]
        for r in prof:
            out.append(f"| {r['workload']} | {r['transport']} | " +
                       " | ".join(fmt(r["where"][c]) for c in classes) + " |")
        out += ["", "## Top functions (instructions per I/O)", ""]
        for r in prof:
            out.append(f"- **{r['workload']} / {r['transport']}**: " +
                       ", ".join(f"{s.split()[0]} {fmt(n)}" for s, n in r["top_functions"][:8]))
    hs = [r for r in rows if r.get("host_stack")]
    if hs:
        out += ["", "## Host stack (instructions per I/O)", "",
                "The host's own work: its transport module, the block layer (the "
                "target's bio path to null_blk included: the same functions), "
                "nvme-core and the ib_core functions only the host calls.  ib_core "
                "functions both sides call are *shared* and left out; the target "
                "(nvmet, null_blk) and Soft-RoCE (rdma_rxe) with the ib_core "
                "functions only each of them calls; *other*: ib_core functions on "
                "no list.  Documentation/bench.rst, \"Host stack\".", "",
                "| workload | transport | module | block | nvme-core | host ib_core | "
                "host stack | ×rdma | shared ib_core | target | ×rdma | Soft-RoCE | "
                "×rdma | other ib_core |",
                "|---|---|" + "---:|" * 12]
        for r in hs:
            h, q = r["host_stack"], r["ratio_vs_nvme_rdma"]
            # nvme_tcp: no shared ib_core or Soft-RoCE figure (as in the JSON)
            shared = h["ib_core_shared"] if r.get("ib_shared_per_io") is not None else None
            rxe = h["rxe_share"] if r.get("rxe_share_per_io") is not None else None
            out.append(f"| {r['workload']} | {r['transport']} | {fmt(h['transport'])} | "
                       f"{fmt(h['block'])} | {fmt(h['nvme-core'])} | "
                       f"{fmt(h['ib_core_host'])} | {fmt(h['host_stack'])} | "
                       f"{fmt(q.get('host_stack_per_io'), 3)} | "
                       f"{fmt(shared)} | {fmt(h['target_share'])} | "
                       f"{fmt(q.get('target_share_per_io'), 3)} | {fmt(rxe)} | "
                       f"{fmt(q.get('rxe_share_per_io'), 3)} | {fmt(h['ib_core_other'])} |")
        out += ["", "ib_core functions by side (instructions per I/O):", ""]
        for r in hs:
            by = defaultdict(list)
            for n, side, c in r["ib_core_functions"]:
                by[side].append(f"{n} {fmt(c)}")
            text = "; ".join(f"{side}: " + ", ".join(by[side][:6])
                             for side in IB_SIDES if by[side])
            out.append(f"- **{r['workload']} / {r['transport']}**: {text or '–'}")
    knobs = knob_rows(rows)
    if knobs:
        out += ["", "## Knobs (BENCH_KNOBS): each variant against the defaults, same run", "",
                "| variant | workload | transport | insn/IO | ×default | module insn/IO | "
                "×default | p50 | ×default | p99 | ×default |",
                "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for v, w, r, q in knobs:
            out.append(f"| {v} | {w} | {r['transport']} | {fmt(r['insn_per_io'])} | "
                       f"{fmt(q['insn_per_io'], 3)} | {fmt(r['module_insn_per_io'])} | "
                       f"{fmt(q['module_insn_per_io'], 3)} | {fmt(r['lat_p50'])} | "
                       f"{fmt(q['lat_p50'], 3)} | {fmt(r['lat_p99'])} | {fmt(q['lat_p99'], 3)} |")
    mod = [r for r in rows if r.get("module_top_functions")]
    if mod:
        out += ["", "## The transport module's own functions (instructions per I/O)", ""]
        for r in mod:
            out.append(f"- **{r['workload']} / {r['transport']}**: " +
                       ", ".join(f"{s} {fmt(n)}" for s, n in r["module_top_functions"]))
    return "\n".join(out) + "\n"


def chart(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report: matplotlib missing, no chart", file=sys.stderr)
        return
    wl = sorted({r["workload"] for r in rows if "@" not in r["workload"]})
    fig, ax = plt.subplots(figsize=(10, 4.5))
    width = 0.27
    for i, (t, key) in enumerate([("rnvme", "insn_per_io"), ("rnvme", "module_insn_per_io"),
                                  ("nvme_tcp", "insn_per_io")]):
        vals = []
        for w in wl:
            r = next((r for r in rows if r["transport"] == t and r["workload"] == w), None)
            v = r["ratio_vs_nvme_rdma"].get(key) if r else None
            vals.append(v or 0)
        ax.bar([x + i * width for x in range(len(wl))], vals, width,
               label=f"{t} {key.replace('_', ' ')}")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks([x + width for x in range(len(wl))])
    ax.set_xticklabels(wl, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("× nvme_rdma (lower is better)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jsonl")
    ap.add_argument("outdir")
    ap.add_argument("--clock", default="wall")
    ap.add_argument("--commit", default="unknown")
    a = ap.parse_args()
    measure, profile = load(a.jsonl)
    rows = summarise(measure, profile, a.clock, a.commit)
    out = Path(a.outdir)
    (out / "results.json").write_text(json.dumps(rows, indent=2, sort_keys=True) + "\n")
    md = markdown(rows, a.clock, a.commit)
    (out / "results.md").write_text(md)
    chart(rows, out / "ratios.png")
    print(md)


if __name__ == "__main__":
    main()
