#!/usr/bin/python3
"""Plot Stewart-Trinkle's four balls (seed 000 §4) from the CSVs that the test
LcpStepper.StewartTrinkleFourBallsConvergeAtFirstOrder writes to <build>/validation/.

usage: plot_four_balls.py BUILD_DIR OUT.png
Left: plan view (x, y) of the four centres for every h. Right: errors against the
h = 0.00125 reference vs h, with the paper's Table I and a slope-1 guide.
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

build, out = sys.argv[1], sys.argv[2]
traj = defaultdict(lambda: defaultdict(list))  # h -> ball -> [(x, y)]
with open(f"{build}/validation/stewart_trinkle_four_balls_trajectories.csv") as f:
    for row in csv.DictReader(f):
        traj[float(row["h"])][int(row["ball"])].append((float(row["x"]), float(row["y"])))
table = []
with open(f"{build}/validation/stewart_trinkle_four_balls_table.csv") as f:
    for row in csv.DictReader(f):
        if row["velocity_error"]:
            table.append((float(row["h"]), float(row["velocity_error"]), float(row["position_error"])))
paper = [(0.02, 0.5050, 0.2505), (0.01, 0.3523, 0.2015), (0.005, 0.1657, 0.0838), (0.0025, 0.0700, 0.0298)]

fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.5))
for h in sorted(traj):
    for ball, pts in sorted(traj[h].items()):
        xs, ys = zip(*pts)
        a.plot(xs, ys, lw=0.8 if h > 0.002 else 1.6, label=f"h = {h:g}" if ball == 1 else None,
               color=plt.cm.viridis(0.15 + 0.2 * sorted(traj).index(h)))
a.set_xlabel("x [m]"); a.set_ylabel("y [m]"); a.set_title("plan view, t in [0, 1] s"); a.legend(fontsize=8)
hs = [t[0] for t in table]
b.loglog(hs, [t[1] for t in table], "o-", label="velocity error (Talus)")
b.loglog(hs, [t[2] for t in table], "s-", label="position error (Talus)")
b.loglog([p[0] for p in paper], [p[1] for p in paper], "o--", mfc="none", label="velocity error (paper)")
b.loglog([p[0] for p in paper], [p[2] for p in paper], "s--", mfc="none", label="position error (paper)")
b.loglog(hs, [table[-1][1] * h / hs[-1] for h in hs], "k:", label="∝ h")
b.set_xlabel("h [s]"); b.set_ylabel("error vs h = 0.00125"); b.set_title("Table I"); b.legend(fontsize=8)
fig.tight_layout()
fig.savefig(out, dpi=120)
