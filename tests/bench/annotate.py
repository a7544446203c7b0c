#!/usr/bin/python3
"""Where a transport module's own instructions go, by source line.

usage: annotate.py BENCH_DIR WORKLOAD MODULE.ko [--transport rnvme] [--top N]
                    [--asm FUNCTION]

Reads BENCH_DIR/raw/exact.txt (the icount bench's exact per-address counts)
and raw/kallsyms.txt, takes the window of WORKLOAD's run over TRANSPORT, and
maps every counted address inside the module back to MODULE.ko (which must be
the very build the bench loaded) with objdump --line-numbers.  Prints
instructions per I/O per function and per source line, hottest first: the
instrument for the data-path work (Documentation/bench.rst).  --asm FUNCTION
prints that function's disassembly (with source lines) instead, each
instruction prefixed by how often it ran per I/O.
"""
import argparse
import bisect
import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import Kallsyms, exact_windows, MODULE_OF  # noqa: E402


def ko_lines(ko):
    """objdump of MODULE.ko -> {(function, offset in function): 'file:line'}"""
    out = subprocess.run(["objdump", "-d", "--line-numbers", "--no-show-raw-insn",
                          str(ko)], check=True, capture_output=True, text=True).stdout
    func, base, src, table = None, 0, "?", {}
    fre = re.compile(r"^([0-9a-f]+) <([^>]+)>:$")
    ire = re.compile(r"^\s*([0-9a-f]+):\s")
    for line in out.splitlines():
        m = fre.match(line)
        if m:
            func, base, src = m.group(2), int(m.group(1), 16), "?"
            continue
        if func and re.match(r"^/?[\w./-]+:\d+", line.strip()) and " " not in line.strip():
            src = line.strip().split(" ")[0]
            continue
        m = ire.match(line)
        if m and func:
            table[(func, int(m.group(1), 16) - base)] = src
    return table


def print_asm(ko, func, by_off, ios):
    """FUNCTION's disassembly, each instruction with its count per I/O"""
    out = subprocess.run(["objdump", "-d", "--line-numbers", "--no-show-raw-insn",
                          f"--disassemble={func}", str(ko)], check=True,
                         capture_output=True, text=True).stdout
    base = None
    ire = re.compile(r"^\s*([0-9a-f]+):\s")
    for line in out.splitlines():
        m = re.match(r"^([0-9a-f]+) <([^>]+)>:$", line)
        if m:
            base = int(m.group(1), 16)
            print(line)
            continue
        m = ire.match(line)
        if m and base is not None:
            n = by_off.get((func, int(m.group(1), 16) - base), 0)
            print(f"{n / ios:7.1f} {line}")
        elif base is not None and line.strip():
            print(f"        {line}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bench_dir")
    ap.add_argument("workload")
    ap.add_argument("ko")
    ap.add_argument("--transport", default="rnvme")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--asm", metavar="FUNCTION")
    a = ap.parse_args()
    base = Path(a.bench_dir)
    run = None
    for line in (base / "bench.jsonl").read_text().splitlines():
        r = json.loads(line) if line.strip() else {}
        if (r.get("workload") == a.workload and r.get("transport") == a.transport
                and r.get("exact_window") is not None):
            run = r
            break
    if run is None:
        sys.exit(f"annotate: no exact window for {a.workload} / {a.transport} in {base}")
    window = exact_windows(base / "raw" / "exact.txt")[run["exact_window"]]
    ksyms = Kallsyms(base / "raw" / "kallsyms.txt")
    mod = MODULE_OF[a.transport]
    lines = ko_lines(a.ko)
    ios = run["exact_ios"]
    by_func, by_line = defaultdict(int), defaultdict(int)
    by_off = defaultdict(int)
    unmapped = 0
    for addr, n in window[2].items():
        name, m = ksyms.lookup(addr)
        if m != mod:
            continue
        i = bisect.bisect_right(ksyms.addrs, addr) - 1
        off = addr - ksyms.addrs[i]
        by_func[name] += n
        by_off[(name, off)] += n
        src = lines.get((name, off))
        if src is None:
            unmapped += n
            src = f"{name}+{off:#x}"
        by_line[(src, name)] += n
    total = sum(by_func.values())
    if a.asm:
        print_asm(a.ko, a.asm, by_off, ios)
        return
    print(f"# {a.workload} / {a.transport}: {total / ios:.1f} module instructions per I/O"
          f" ({ios} I/Os; {unmapped / ios:.1f} not mapped to a line: is {a.ko} the build the bench ran?)")
    print("# per function")
    for f, n in sorted(by_func.items(), key=lambda kv: -kv[1]):
        print(f"{n / ios:8.1f}  {f}")
    print(f"# hottest source lines (top {a.top})")
    for (src, f), n in sorted(by_line.items(), key=lambda kv: -kv[1])[:a.top]:
        print(f"{n / ios:8.1f}  {src}  ({f})")


if __name__ == "__main__":
    main()
