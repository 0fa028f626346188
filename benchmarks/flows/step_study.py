#!/usr/bin/python3
"""Flowing beds with only their physics, at the default step and at 0.25 ms (issue 22).

A settling bed forgets its path; a flowing one does not. This runs each flowing bed of this
folder with the defaults, with the defaults under the other friction law, and at
max_dt = 0.25 ms under both laws (the reference: a step short enough that the law's
difference is small), one run each, one after the other, and prints what each measures:

  chute_physics.toml     mean down-slope speed of the beads over t >= 3 s [m/s]
  rockdrum_physics.toml  the bed's centre of mass over t >= 1 s: its angle from the
                         vertical through the drum's axis [deg] and its height [mm]

Usage (from the repository's root, after a Release build):
  /usr/bin/python3 benchmarks/flows/step_study.py [--talus build/bin/talus]
      [--beds chute,rockdrum] [--csv benchmarks/results/flows_step_study.csv]

Figures and their reading: benchmarks/README.md, "Session 45".
"""
import argparse
import csv
import os
import subprocess
import sys
import time

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
VARIANTS = [
    ("defaults", []),
    ("defaults, friction ccp", ["solver.friction=ccp"]),
    ("max_dt 0.25 ms, coulomb", ["simulation.max_dt=2.5e-4", "solver.friction=coulomb"]),
    ("max_dt 0.25 ms, ccp", ["simulation.max_dt=2.5e-4", "solver.friction=ccp"]),
]


def frames(h):
    f = h["frames"]
    return zip(f["time"][...], f["first_row"][...], f["row_count"][...])


def chute(h):
    v = h["bodies/velocity"]
    speeds = [v[a:a + n, 0].mean() for t, a, n in frames(h) if t >= 3.0]
    return {"down-slope speed [m/s]": float(np.mean(speeds))}


def rockdrum(h):
    p = h["bodies/position"]
    angle, z = [], []
    for t, a, n in frames(h):
        if t < 1.0:
            continue
        c = p[a:a + n].mean(axis=0)
        angle.append(np.degrees(np.arctan2(abs(c[0]), -c[2])))
        z.append(c[2] * 1e3)
    return {"angle [deg]": float(np.mean(angle)), "angle sd [deg]": float(np.std(angle)),
            "centre height [mm]": float(np.mean(z))}


BEDS = {"chute": chute, "rockdrum": rockdrum}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--talus", default="build/bin/talus")
    ap.add_argument("--beds", default="chute,rockdrum")
    ap.add_argument("--out", default="/tmp/talus_flows", help="directory for the trajectories")
    ap.add_argument("--csv", default=None, help="append the rows to this CSV")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rows = []
    for bed in a.beds.split(","):
        scene = os.path.join(HERE, f"{bed}_physics.toml")
        for name, sets in VARIANTS:
            out = os.path.join(a.out, f"{bed}_{len(rows)}.h5")
            cmd = [a.talus, "run", "--force", scene, "-o", out]
            for s in sets:
                cmd += ["--set", s]
            t0 = time.monotonic()
            p = subprocess.run(cmd, capture_output=True, text=True)
            seconds = time.monotonic() - t0
            if p.returncode != 0:
                print(f"{bed}, {name}: exit {p.returncode}\n{p.stderr}", file=sys.stderr)
                return 1
            with h5py.File(out, "r") as h:
                d = h["diagnostics"]
                row = {"bed": bed, "variant": name, "steps": int(len(d["dt"])),
                       "mean step [ms]": float(d["dt"][...].mean() * 1e3), "time [s]": round(seconds, 1),
                       "converged [%]": float(d["converged"][...].mean() * 100)}
                row.update(BEDS[bed](h))
            rows.append(row)
            print(", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in row.items()),
                  flush=True)
    if a.csv:
        keys = list(dict.fromkeys(k for r in rows for k in r))  # in order of first appearance
        new = not os.path.exists(a.csv)
        with open(a.csv, "a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys)
            if new:
                w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
