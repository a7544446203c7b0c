#!/usr/bin/env python3
"""Compare two `make bench` runs: how far apart their figures are.

usage: compare.py RUN_A RUN_B [--insn-tol PCT] [--module-tol PCT]

RUN_A and RUN_B are result directories (build/bench/<time>) or their
results.json.  For every (transport, workload) in both, prints
insn_per_io and module_insn_per_io of each run and the relative change,
then the largest change of each.  Exit status 1 when a change exceeds its
tolerance (default 0.5 % for insn_per_io and 2 % for module_insn_per_io,
the repeatability the bench promises for two runs of one commit), 2 on bad
input.
"""
import argparse
import json
import sys
from pathlib import Path


def rows(path):
    p = Path(path)
    if p.is_dir():
        p = p / "results.json"
    try:
        data = json.loads(p.read_text())
    except (OSError, ValueError) as e:
        sys.exit(f"compare: cannot read {p}: {e}")
    return {(r["transport"], r["workload"]): r for r in data}, data[0].get("commit", "?") if data else "?"


def change(a, b):
    if a is None or b is None or a == 0:
        return None
    return (b - a) / a * 100


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--insn-tol", type=float, default=0.5)
    ap.add_argument("--module-tol", type=float, default=2.0)
    args = ap.parse_args()
    ra, ca = rows(args.a)
    rb, cb = rows(args.b)
    keys = sorted(set(ra) & set(rb), key=lambda k: (k[1], k[0]))
    if not keys:
        print("compare: the runs share no (transport, workload)", file=sys.stderr)
        return 2
    print(f"A: {args.a} (commit {ca})\nB: {args.b} (commit {cb})\n")
    print(f"{'workload':<24} {'transport':<10} {'insn/IO A':>11} {'B':>11} {'change':>8}"
          f"   {'module A':>9} {'B':>9} {'change':>8}")
    worst = {"insn_per_io": (0.0, None), "module_insn_per_io": (0.0, None)}
    for k in keys:
        a, b = ra[k], rb[k]
        line = f"{k[1]:<24} {k[0]:<10}"
        for key, width in (("insn_per_io", 11), ("module_insn_per_io", 9)):
            c = change(a.get(key), b.get(key))
            va = "–" if a.get(key) is None else f"{a[key]:,.1f}"
            vb = "–" if b.get(key) is None else f"{b[key]:,.1f}"
            cs = "–" if c is None else f"{c:+.3f}%"
            line += f" {va:>{width}} {vb:>{width}} {cs:>8}  "
            if c is not None and abs(c) > abs(worst[key][0]):
                worst[key] = (c, k)
        print(line.rstrip())
    bad = False
    print()
    for key, tol in (("insn_per_io", args.insn_tol), ("module_insn_per_io", args.module_tol)):
        c, k = worst[key]
        where = f" ({k[1]}, {k[0]})" if k else ""
        verdict = "ok" if abs(c) <= tol else "EXCEEDS"
        bad |= abs(c) > tol
        print(f"largest {key} change: {c:+.3f}%{where}; tolerance {tol}%: {verdict}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
