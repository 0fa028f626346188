#!/usr/bin/python3
"""Plot Stewart-Trinkle's spinning rod (seed 000 §4) from the CSV that the test
SpinningRod.StewartTrinkleStoryAtThreeStepsConvergesAsHShrinks writes to <build>/validation/.

usage: plot_spinning_rod.py BUILD_DIR OUT.png
Left: side view (x, z) of the rod every 0.04 s at h = 0.0025, as the paper draws it.
Right: height of each end above the table against time for every h, and the paper's
event times (first end 0.383 s, second end 0.548 s).
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

build, out = sys.argv[1], sys.argv[2]
runs = defaultdict(list)
with open(f"{build}/validation/spinning_rod.csv") as f:
    for row in csv.DictReader(f):
        runs[float(row["h"])].append({k: float(v) for k, v in row.items()})

fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.8), gridspec_kw={"width_ratios": [1.1, 1]})
half, r = 0.25, 0.05
for s in runs[0.0025]:
    if abs(s["t"] / 0.04 - round(s["t"] / 0.04)) > 1e-6 or s["t"] > 0.64 + 1e-9:
        continue
    x0, z0 = s["x"] - half * s["axis_x"], s["z"] - half * s["axis_z"]
    x1, z1 = s["x"] + half * s["axis_x"], s["z"] + half * s["axis_z"]
    shade = 0.25 + 0.6 * (1 - s["t"] / 0.64)
    a.plot([x0, x1], [z0, z1], color=str(shade), lw=6, solid_capstyle="round")
a.axhline(0.0, color="k", lw=1)
a.set_aspect("equal")
a.set_xlabel("x [m]")
a.set_ylabel("z [m]")
a.set_title("rod every 0.04 s (h = 0.0025 s, darker = later)")

colours = {0.01: "tab:red", 0.005: "tab:orange", 0.0025: "tab:green", 0.00125: "tab:blue"}
for h, samples in sorted(runs.items(), reverse=True):
    t = [s["t"] for s in samples]
    b.plot(t, [s["gap_down"] for s in samples], color=colours.get(h, "k"), lw=1,
           label=f"h = {h:g} s")
    b.plot(t, [s["gap_up"] for s in samples], color=colours.get(h, "k"), lw=1, ls="--")
for t_paper in (0.383, 0.548):
    b.axvline(t_paper, color="grey", lw=0.8, ls=":")
b.set_xlim(0.3, 0.7)
b.set_ylim(-0.01, 0.35)
b.set_xlabel("t [s]")
b.set_ylabel("height of the end's lowest point [m]")
b.set_title("first end (solid), second end (dashed); paper's events dotted")
b.legend()
fig.tight_layout()
fig.savefig(out, dpi=110)
print(f"wrote {out}")
