#!/usr/bin/python3
"""Plot exact Coulomb friction against the CCP on a sphere sliding on a plane, from the CSVs
the tests Coulomb.SlidingSphere* write to <build>/validation/ (issue 8).

usage: plot_coulomb.py BUILD_DIR OUT.png
A sphere (r = 5 cm, μ = 0.3) starts sliding at 2 m/s. Left: the speed of its centre and of
its rim (ω r); the analytic law under Coulomb friction, v0 − μ g t and 5/2 μ g t until both
meet at 5/7 v0. Right: the vertical velocity: zero under "coulomb" (every solver), a hop of
about μ v0 under the CCP (PGS).
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

build, out = sys.argv[1], sys.argv[2]
runs = {"nsgs": "nsgs (coulomb)", "pgs": "pgs, fixed point (coulomb)", "pj": "pj, fixed point (coulomb)",
        "apgd": "apgd, fixed point (coulomb)", "ccp_pgs": "pgs, CCP"}
data = {}
for key in runs:
    with open(f"{build}/validation/coulomb_sliding_sphere_{key}.csv") as f:
        rows = [[float(r[c]) for c in ("t", "vx", "vz", "omega_r")] for r in csv.DictReader(f)]
    data[key] = np.array(rows)

mu, g, v0 = 0.3, 9.81, 2.0
t_roll = 2 * v0 / (7 * mu * g)
t = np.linspace(0, 0.3, 301)
v = np.where(t < t_roll, v0 - mu * g * t, 5 / 7 * v0)
w = np.where(t < t_roll, 2.5 * mu * g * t, 5 / 7 * v0)

fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
a.plot(t, v, "k-", lw=3, alpha=0.25, label="analytic: v0 − μ g t, then 5/7 v0")
a.plot(t, w, "k--", lw=3, alpha=0.25, label="analytic: 5/2 μ g t (ω r)")
styles = {"nsgs": "C0", "pgs": "C1", "pj": "C2", "apgd": "C3", "ccp_pgs": "C7"}
for key, label in runs.items():
    d = data[key]
    a.plot(d[:, 0], d[:, 1], color=styles[key], lw=1, label=f"v_x, {label}")
    a.plot(d[:, 0], d[:, 3], color=styles[key], lw=1, ls=":")
    b.plot(d[:, 0], d[:, 2], color=styles[key], lw=1.2, label=label)
a.set_xlabel("t [s]")
a.set_ylabel("speed [m/s] (dotted: ω r)")
a.set_title("sliding, then rolling")
a.legend(fontsize=7)
b.set_xlabel("t [s]")
b.set_ylabel("v_z [m/s]")
b.set_title("normal velocity: no lift-off under Coulomb")
b.legend(fontsize=8)
fig.tight_layout()
fig.savefig(out, dpi=110)
print(f"wrote {out}")
