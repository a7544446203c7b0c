#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Decode /sys/class/nvme/nvmeN/rnvme/telemetry (the test suites' own reader,
independent of the rnvme tool's): prints JSON, or one figure.

  telemetry.py CTRL                 JSON: header, per-queue counters, histogram sums
  telemetry.py CTRL sum NAME [io]   a counter summed over all queues (io: qid >= 1)
  telemetry.py CTRL hist CLASS|all [io]   histogram counts summed (io: qid >= 1)
  telemetry.py CTRL pct CLASS P     percentile P (0..100) of CLASS on the I/O
                                    queues, in ns: the upper bound of its bucket
  telemetry.py CTRL vars            all of it as shell assignments, for one eval
                                    (python starts slowly under TCG): io_NAME,
                                    all_NAME (sums), hist_CLASS / hist_all (I/O
                                    queues), pct_CLASS_P (P = 50 90 99), wc_errors;
                                    poll_NAME and hist_poll_CLASS: the poll
                                    queues' (flags bit 0)
Layout: Documentation/rnvme.rst, "Telemetry".
"""
import json
import struct
import sys

MAGIC = 0x314c4554454d564e


def read(ctrl):
    d = f"/sys/class/nvme/{ctrl}/rnvme"
    layout = {}
    with open(f"{d}/telemetry_layout") as f:
        for line in f:
            k, *v = line.split()
            layout[k] = v
    with open(f"{d}/telemetry", "rb") as f:
        raw = f.read()
    w = struct.unpack(f"={len(raw) // 8}Q", raw)
    names = layout["header"]
    hdr = dict(zip(names, w[:len(names)]))
    if hdr["magic"] != MAGIC or hdr["version"] != int(layout["version"][0]):
        sys.exit(f"{ctrl}: bad telemetry header {hdr}")
    hw, rw, ns = hdr["header_words"], hdr["record_words"], hdr["scalars"]
    nb = hdr["hist_buckets"]
    if len(w) != hw + hdr["nr_queues"] * rw:
        sys.exit(f"{ctrl}: {len(w)} words, header says {hw} + {hdr['nr_queues']} x {rw}")
    queues = []
    for q in range(hdr["nr_queues"]):
        r = w[hw + q * rw: hw + (q + 1) * rw]
        rec = dict(zip(layout["scalars"], r[:ns]))
        rec["hist"] = {c: list(r[ns + i * nb: ns + (i + 1) * nb])
                       for i, c in enumerate(layout["histograms"])}
        queues.append(rec)
    return hdr, queues


def upper_ns(b, hdr):
    """Upper bound of bucket b in ns (None: the overflow bucket)."""
    ms, sb = hdr["hist_min_shift"], hdr["hist_sub_bits"]
    if b == 0:
        return 1 << ms
    if b == hdr["hist_buckets"] - 1:
        return None
    e = ms + (b - 1) // (1 << sb)
    s = (b - 1) % (1 << sb)
    return ((1 << sb) + s + 1) << (e - sb)


def pct(hdr, queues, cls, p):
    sel = [q for q in queues if q["qid"] >= 1]
    h = [sum(q["hist"][cls][b] for q in sel) for b in range(hdr["hist_buckets"])]
    total, acc = sum(h), 0
    for b, n in enumerate(h):
        acc += n
        if total and acc >= p / 100 * total:
            return upper_ns(b, hdr) or -1
    return -1


def main():
    hdr, queues = read(sys.argv[1])
    args = sys.argv[2:]
    io = args[-1:] == ["io"]
    sel = [q for q in queues if not io or q["qid"] >= 1]
    if not args:
        out = {"header": hdr, "queues": [
            {k: (v if k != "hist" else {c: sum(h) for c, h in v.items()})
             for k, v in q.items()} for q in queues]}
        print(json.dumps(out, indent=1))
    elif args[0] == "sum":
        print(sum(q[args[1]] for q in sel))
    elif args[0] == "hist":
        cls = list(queues[0]["hist"]) if args[1] == "all" else [args[1]]
        print(sum(sum(q["hist"][c]) for q in sel for c in cls))
    elif args[0] == "pct":
        print(pct(hdr, queues, args[1], float(args[2])))
    elif args[0] == "vars":
        names = [k for k in queues[0] if k != "hist"]
        for n in names:
            print(f"io_{n}={sum(q[n] for q in queues if q['qid'] >= 1)}")
            print(f"all_{n}={sum(q[n] for q in queues)}")
            print(f"poll_{n}={sum(q[n] for q in queues if q['flags'] & 1)}")
        io = [q for q in queues if q["qid"] >= 1]
        for c in queues[0]["hist"]:
            print(f"hist_{c}={sum(sum(q['hist'][c]) for q in io)}")
            print(f"hist_poll_{c}={sum(sum(q['hist'][c]) for q in queues if q['flags'] & 1)}")
            for p in (50, 90, 99):
                print(f"pct_{c}_{p}={pct(hdr, queues, c, p)}")
        print(f"hist_all={sum(sum(h) for q in io for h in q['hist'].values())}")
        print(f"wc_errors={sum(q[n] for q in queues for n in names if n.startswith('wc_') and n != 'wc_success')}")
    else:
        sys.exit(f"unknown request {args}")


main()
