#!/usr/bin/python3
"""Which source folder includes which, and whether every arrow points down the layers.

Usage: /usr/bin/python3 tools/include_graph.py [--check] [ROOT]

The layers, lowest first: core/ (plain data and math); collision/ and solvers/ (one stage
each, side by side: neither includes the other); engine/flow/ and engine/distributed/ (side
by side); engine/world/ (the step);
io/; tools/. A folder may include only folders of lower layers (tests/ and benchmarks/ may
include anything). Prints "from -> to (number of #include lines)" per pair of folders; with
--check, exits 1 when an arrow points sideways or up, naming the files.
"""
import os
import re
import sys
from collections import defaultdict

LAYERS = {"core": 0, "collision": 1, "solvers": 1, "engine/flow": 2, "engine/distributed": 2,
          "engine/world": 3,
          "io": 4, "tools": 5}
FREE = ("tests", "benchmarks")


def folder_of(path):
    for f in sorted(list(LAYERS) + list(FREE), key=len, reverse=True):
        if path == f or path.startswith(f + "/"):
            return f
    return None


def main():
    args = [a for a in sys.argv[1:] if a != "--check"]
    check = "--check" in sys.argv[1:]
    root = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), ".."))
    edges = defaultdict(list)
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith(("build", ".git"))]
        for name in files:
            if not name.endswith((".cpp", ".hpp", ".h")):
                continue
            rel = os.path.relpath(os.path.join(d, name), root)
            src = folder_of(rel)
            if src is None:
                continue
            with open(os.path.join(d, name), encoding="utf-8") as f:
                for m in re.finditer(r'^#include "([^"]+)"', f.read(), re.M):
                    dst = folder_of(m.group(1))
                    if dst and dst != src:
                        edges[(src, dst)].append(rel)
    bad = []
    for (src, dst), files in sorted(edges.items()):
        up = src not in FREE and (dst in FREE or LAYERS[dst] >= LAYERS[src])
        print(f"{src} -> {dst} ({len(files)}){'   <- not down the layers' if up else ''}")
        if up:
            bad.append((src, dst, sorted(set(files))))
    if check and bad:
        for src, dst, files in bad:
            print(f"include_graph: {src} must not include {dst}: {', '.join(files)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
