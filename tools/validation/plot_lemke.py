#!/usr/bin/python3
"""Plot Lemke's method on random P-matrix LCPs from the CSV that the test Lemke.SizesTable
writes to <build>/validation/.

usage: plot_lemke.py BUILD_DIR OUT.png
Left: pivots against the size n (both matrix kinds, five problems each) with n and n/2
guides. Right: the natural residual ‖min(z, Mz + q)‖∞ and, for n ≤ 12, the distance to the
solution found by enumerating all 2ⁿ index sets.
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

build, out = sys.argv[1], sys.argv[2]
rows = defaultdict(list)
with open(f"{build}/validation/lemke_sizes.csv") as f:
    for r in csv.DictReader(f):
        rows[r["kind"]].append(r)
fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.3))
labels = {"spd": "A Aᵀ + I (symmetric)", "dominant": "row-dominant (non-symmetric)"}
for (kind, rs), colour in zip(sorted(rows.items()), ("tab:blue", "tab:orange")):
    n = [int(r["n"]) for r in rs]
    a.plot(n, [max(1, int(r["pivots"])) for r in rs], "o", color=colour, alpha=0.6, label=labels[kind])
    b.plot(n, [max(1e-17, float(r["residual"])) for r in rs], "o", color=colour, alpha=0.6,
           label=f"{labels[kind]}: residual")
    e = [(int(r["n"]), max(1e-17, float(r["error_vs_enumeration"]))) for r in rs
         if r["error_vs_enumeration"]]
    b.plot([x for x, _ in e], [y for _, y in e], "x", color=colour,
           label=f"{labels[kind]}: |z − z_enum|∞")
ns = [2, 400]
a.plot(ns, ns, "k:", lw=1, label="n")
a.plot(ns, [x / 2 for x in ns], "k--", lw=1, label="n / 2")
a.set_xscale("log")
a.set_yscale("log")
a.set_xlabel("LCP size n")
a.set_ylabel("pivots")
a.set_title("Lemke (lexicographic) on random P-matrix LCPs")
a.legend(fontsize=8)
b.set_xscale("log")
b.set_yscale("log")
b.set_ylim(1e-17, 1e-8)
b.axhline(1e-10, color="grey", lw=0.8, ls=":")
b.set_xlabel("LCP size n")
b.set_ylabel("(zeros drawn at 1e-17)")
b.set_title("natural residual and error vs enumeration")
b.legend(fontsize=7)
fig.tight_layout()
fig.savefig(out, dpi=110)
print(f"wrote {out}")
