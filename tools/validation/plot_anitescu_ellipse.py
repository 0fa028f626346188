#!/usr/bin/python3
"""Plot Anitescu-Miller-Hart's ellipse (seed 002 §4, their Figures 1 and 2) from the CSV
that the test AnitescuEllipse.InfeasibilityGrowsWithoutStabilisationAndStaysBoundedWithIt
writes to <build>/validation/.

usage: plot_anitescu_ellipse.py BUILD_DIR OUT.png
Top: frames of the ellipse (LCP stepper, γ = 0.2). Bottom: constraint infeasibility
I(q) (the largest penetration) against time for γ = 0, 0.2 and 1, LCP stepper (left) and
PGS on the CCP (right).
"""
import csv
import math
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.patches import Ellipse

build, out = sys.argv[1], sys.argv[2]
runs = defaultdict(list)  # (solver, gamma) -> rows
with open(f"{build}/validation/anitescu_ellipse.csv") as f:
    for row in csv.DictReader(f):
        runs[(row["solver"], float(row["gamma"]))].append(
            {k: float(v) for k, v in row.items() if k != "solver"})

fig = plt.figure(figsize=(12, 8))
top = fig.add_subplot(2, 1, 1)
frames = runs[("lemke", 0.2)]
times = [0.0, 0.6, 1.1, 1.5, 2.0, 3.0, 4.0, 5.5, 7.0, 10.0]
for i, t in enumerate(times):
    s = min(frames, key=lambda r: abs(r["t"] - t))
    shift = 11.0 * i  # frames side by side, as the paper's Figure 1
    top.add_patch(Ellipse((s["x"] + shift, s["z"]), 8.0, 4.0, angle=math.degrees(s["angle"]),
                          fill=False, lw=1.2))
    top.text(shift, -1.6, f"t = {s['t']:.2f}", ha="center", fontsize=8)
top.axhline(0.0, color="k", lw=1)
top.set_xlim(-6, 11.0 * (len(times) - 1) + 6)
top.set_ylim(-2.5, 11)
top.set_aspect("equal")
top.set_axis_off()
top.set_title("ellipse (axes 8 and 4) dropped from height 8 spinning at 3 rad/s, μ = 0.3, h = 0.05 "
              "(LCP stepper, γ = 0.2)")

for k, solver in enumerate(("lemke", "pgs")):
    ax = fig.add_subplot(2, 2, 3 + k)
    for gamma, colour in ((0.0, "tab:red"), (0.2, "tab:blue"), (1.0, "tab:green")):
        rows = runs[(solver, gamma)]
        ax.plot([r["t"] for r in rows], [r["infeasibility"] for r in rows], color=colour,
                lw=1, label=f"γ = {gamma:g}")
    ax.set_xlabel("t")
    ax.set_ylabel("infeasibility I(q) (largest penetration)")
    ax.set_title({"lemke": "LCP stepper (lemke)", "pgs": "CCP (pgs)"}[solver])
    ax.legend()
fig.tight_layout()
fig.savefig(out, dpi=110)
print(f"wrote {out}")
