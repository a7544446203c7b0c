#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""callgraph.py KBUILD_DIR: which rnvme source file uses which other's symbols.

Reads the symbol tables (nm) of the module's objects in
KBUILD_DIR/drivers/rnvme/*.o, as built by make module (build/KVER/kbuild;
those whose source is gone are skipped), and matches each object's undefined symbols to the object that defines them.
Prints, per file, the files whose functions it calls and whose data it
uses (with the symbols), then the cycles: strongly connected components of
the file graph, by calls alone and by calls and data together.  Static
inlines of the headers are not symbols and do not appear.
"""
import glob
import os
import subprocess
import sys


def symbols(obj):
    """(defined globals {name: kind}, undefined names) of one object"""
    out = subprocess.run(["nm", obj], check=True, capture_output=True,
                         text=True).stdout
    defined, undefined = {}, set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBRW":
            defined[parts[2]] = "call" if parts[1] in "TW" else "data"
    return defined, undefined


def sccs(nodes, edges):
    """Tarjan's strongly connected components with more than one node"""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: callgraph.py KBUILD_DIR (build/KVER/kbuild)")
    objs = sorted(glob.glob(os.path.join(sys.argv[1], "drivers/rnvme/*.o")))
    # an object whose source is gone (a removed file) is a leftover
    objs = [o for o in objs if not o.endswith(".mod.o") and
            os.path.exists(o[:-2] + ".c")]
    if not objs:
        sys.exit("callgraph.py: no objects under %s/drivers/rnvme" % sys.argv[1])
    owner, uses = {}, {}
    for obj in objs:
        name = os.path.basename(obj)[:-2] + ".c"
        defined, undefined = symbols(obj)
        for sym, kind in defined.items():
            owner[sym] = (name, kind)
        uses[name] = undefined

    calls, edges = {}, {}
    print("# file -> file it uses: the symbols (call: functions, data: objects)")
    for name in sorted(uses):
        per = {}
        for sym in sorted(uses[name]):
            if sym in owner and owner[sym][0] != name:
                target, kind = owner[sym]
                per.setdefault(target, {}).setdefault(kind, []).append(sym)
        edges[name] = set(per)
        calls[name] = {t for t in per if "call" in per[t]}
        for target in sorted(per):
            for kind in ("call", "data"):
                if kind in per[target]:
                    print("%s -> %s %s: %s" % (name, target, kind,
                                               " ".join(per[target][kind])))
    print()
    print("# summary: file -> files whose functions it calls [+ data only]")
    for name in sorted(uses):
        data = sorted(edges[name] - calls[name])
        print("%s -> %s%s" % (name, ", ".join(sorted(calls[name])) or "-",
                              " [+ %s]" % ", ".join(data) if data else ""))
    for what, graph in (("calls", calls), ("calls and data", edges)):
        print()
        print("# cycles by %s (strongly connected components)" % what)
        comps = sccs(uses.keys(), graph)
        for comp in comps:
            pairs = ["%s <-> %s" % (a, b) for i, a in enumerate(comp)
                     for b in comp[i + 1:] if b in graph[a] and a in graph[b]]
            print("{%s}; mutual: %s" % (", ".join(comp),
                                        "; ".join(pairs) or "none"))
        if not comps:
            print("none")


if __name__ == "__main__":
    main()
