#!/usr/bin/python3
"""Plot the joint tests' pendulum and chain (Anitescu, Miller & Hart 2003, γ-stabilisation)
from the CSVs that Joints.DistancePendulumPeriodIsTwoPiRootLOverG and
Joints.ChainDriftIsBoundedWithStabilisationAndGrowsWithout write to <build>/validation/.

usage: plot_joints.py BUILD_DIR OUT.png
Left: the distance-joint pendulum's x(t) against the small-angle solution. Right: the
chain's joint infeasibility I(q) = max |g_j| for γ_s = 0, 0.2 and 1 (log scale).
"""
import csv
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

build, out = sys.argv[1], sys.argv[2]
with open(f"{build}/validation/joints_pendulum.csv") as f:
    rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(f)]
t = [r["t"] for r in rows]
x = [r["x"] for r in rows]
T = rows[0]["expected_period"]
theta0, L = 5.0 * math.pi / 180.0, 1.0
fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.3))
a.plot(t, x, color="tab:blue", lw=2, label="Talus (PGS, distance joint, h = 1 ms)")
a.plot(t, [L * math.sin(theta0 * math.cos(2 * math.pi * s / T)) for s in t], "k:", lw=1.5,
       label=f"small-angle solution, T = {T:.4f} s")
a.set_xlabel("t [s]")
a.set_ylabel("x [m]")
a.set_title("pendulum, L = 1 m, 5°")
a.legend(fontsize=8, loc="lower left")

with open(f"{build}/validation/joints_chain.csv") as f:
    rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(f)]
t = [r["t"] for r in rows]
for key, colour, label in (("gamma_0", "tab:red", "γ_s = 0"), ("gamma_0.2", "tab:blue", "γ_s = 0.2"),
                           ("gamma_1", "tab:green", "γ_s = 1")):
    b.plot(t, [max(1e-12, r[key]) for r in rows], color=colour, lw=1, label=label)
b.set_yscale("log")
b.set_xlabel("t [s]")
b.set_ylabel("joint infeasibility I(q) = max |g_j| [m]")
b.set_title("5-sphere chain released at 45° (PGS, h = 1 ms)")
b.legend(fontsize=8)
fig.tight_layout()
fig.savefig(out, dpi=110)
print(f"wrote {out}")
