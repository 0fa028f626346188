#!/usr/bin/python3
"""Plot the maximum-dissipation contact model (Preclik & Rüde 2017, seed 004) from the CSVs
the tests MaxDissipation.HyperbolaWithTwoLocalMinimaFindsTheGlobalOne and
MaxDissipation.SlidingSphereDeceleratesAtMuGWithoutLiftOff write to <build>/validation/.

usage: plot_max_dissipation.py BUILD_DIR OUT.png
Left: the plane of maximum compression of one contact (the seed's Figure 4, left):
contours of the objective ½γᵀWγ + bᵀγ over the tangential impulse, the conic section (a
hyperbola), the unconstrained minimum, Talus's solution and the brute-force minimum.
Middle: the objective along the section by angle (Figure 4, right / Figure 3).
Right: a sphere sliding on a plane, maximum dissipation against the CCP (PGS).
"""
import csv
import math
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

build, out = sys.argv[1], sys.argv[2]
rows = defaultdict(list)
with open(f"{build}/validation/max_dissipation_hyperbola.csv") as f:
    for r in csv.DictReader(f):
        rows[r["kind"]].append([float(r["a"]), float(r["b"]), float(r["c"])])
W = np.array(rows["W"])
b = np.array(rows["b"][0])
mu = rows["mu"][0][0]
gamma = np.array(rows["gamma"][0])
brute = np.array(rows["brute"][0])
section = np.array(rows["section"])  # phi, f, 0

a_t = W[0, 1:] / W[0, 0]
beta = -b[0] / W[0, 0]


def on_plane(gu, gw):
    gn = beta - a_t[0] * gu - a_t[1] * gw
    return gn


fig, (p1, p2, p3) = plt.subplots(1, 3, figsize=(16, 4.8))
span = 1.2 * max(1e-9, np.abs(gamma[1:]).max(), np.abs(brute[1:]).max())
U, V = np.meshgrid(np.linspace(gamma[1] - span, gamma[1] + span, 400),
                   np.linspace(gamma[2] - span, gamma[2] + span, 400))
GN = on_plane(U, V)
G = np.stack([GN, U, V])
F = 0.5 * np.einsum("i...,ij,j...->...", G, W, G) + np.einsum("i,i...->...", b, G)
p1.contour(U, V, F, levels=np.linspace(F.min(), F.min() + 0.5 * (F.max() - F.min()), 30),
           colors="0.6", linewidths=0.7)
cone = np.hypot(U, V) - mu * GN
p1.contour(U, V, cone, levels=[0.0], colors="tab:blue", linewidths=1.8)
p1.contourf(U, V, cone, levels=[-np.inf, 0.0], colors=["tab:blue"], alpha=0.12)
# unconstrained minimum on the plane: minimise f(β e_n + P γ_t), P = [-a_t; I]
P = np.vstack([-a_t, np.eye(2)])
g0 = np.array([beta, 0.0, 0.0])
x_free = np.linalg.solve(P.T @ W @ P, -(P.T @ (W @ g0 + b)))
p1.plot(*x_free, "kx", ms=10, mew=2, label="unconstrained minimum")
p1.plot(gamma[1], gamma[2], "r+", ms=14, mew=2.5, label="Talus (exact solve)")
p1.plot(brute[1], brute[2], "o", mfc="none", mec="k", ms=10, label="brute force")
p1.set_xlabel("γ_u [N s]")
p1.set_ylabel("γ_w [N s]")
p1.set_title(f"plane of maximum compression, μ = {mu:g}\n(blue tint: inside the cone; blue line: conic section)")
p1.legend(fontsize=8, loc="lower left")
p1.set_aspect("equal")

phi = section[:, 0]
fs = section[:, 1]
p2.plot(np.degrees(phi), fs, color="tab:blue")
bad = ~np.isfinite(fs)
p2.fill_between(np.degrees(phi), 0, 1, where=bad, transform=p2.get_xaxis_transform(),
                color="0.85", label="no section point (infeasible)")
k = np.nanargmin(fs)
p2.plot(np.degrees(phi[k]), fs[k], "r+", ms=14, mew=2.5, label="global minimum")
finite = fs[np.isfinite(fs)]
p2.set_ylim(fs[k] - 0.1 * abs(fs[k]), fs[k] + 2.0 * abs(fs[k]))
p2.set_xlabel("angle of γ_t on the section [deg]")
p2.set_ylabel("½γᵀWγ + bᵀγ [J]")
p2.set_title("objective along the conic section: two local minima")
p2.legend(fontsize=8)

traj = defaultdict(lambda: defaultdict(list))
with open(f"{build}/validation/max_dissipation_sliding_sphere.csv") as f:
    for r in csv.DictReader(f):
        for key in ("t", "vx", "vz", "omega_r"):
            traj[r["model"]][key].append(float(r[key]))
mu_s, g, v0 = 0.3, 9.81, 2.0
t = np.linspace(0, 0.3, 301)
t_roll = 2 * v0 / (7 * mu_s * g)
p3.plot(t, np.where(t < t_roll, v0 - mu_s * g * t, 5 / 7 * v0), "k:", lw=2, label="analytic v_x")
for model, colour in (("maxdiss", "tab:red"), ("pgs", "tab:blue")):
    d = traj[model]
    p3.plot(d["t"], d["vx"], color=colour, label=f"{model}: v_x")
    p3.plot(d["t"], d["vz"], color=colour, ls="--", label=f"{model}: v_z")
p3.set_xlabel("t [s]")
p3.set_ylabel("velocity [m/s]")
p3.set_title("sphere sliding at 2 m/s, μ = 0.3, h = 1 ms\n(the CCP lifts off: v_z > 0 at first)")
p3.legend(fontsize=8)
fig.tight_layout()
fig.savefig(out, dpi=110)
print(f"wrote {out}")
