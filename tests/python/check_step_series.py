#!/usr/bin/python3
"""The step's series in /diagnostics (issue 24, part 4.4): flow totals and wall forces at
every step, whatever the frame interval.

    check_step_series.py RUN.h5

RUN.h5 is tests/scenes/hopper.toml run by the talus command (3 walls, an emitter, an outlet,
a frame every 0.05 s over about a thousand adaptive steps). Checks:
  - /diagnostics/wall_force is (S, 3, 3), the flow totals (S, 1), S the diagnostics' steps;
  - the totals never decrease, and the last step's equal the last frame's /flow totals;
  - at every frame, /flow's totals are the diagnostics' at the frame's step;
  - every /walls/force row is the dt-weighted mean of wall_force over the steps since the
    previous frame (to 1e-9 relative), and the weight the hopper's cone and cylinder carry
    is not zero while grains rest in it;
  - tools/talus_measure.py flow-rate --outlet 0 finds the mass of all 400 grains.
Exit 0 if all hold, 1 otherwise.
"""
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import talus_h5  # noqa: E402


def main(argv):
    if len(argv) != 2:
        print("usage: check_step_series.py RUN.h5", file=sys.stderr)
        return 2
    failures = []
    with talus_h5.load(argv[1]) as run:
        d, flow, walls = run.diagnostics, run.flow, run.walls
        S = len(d["step"])
        shapes = {"wall_force": (S, 3, 3), "emitted_total_count": (S, 1), "emitted_total_mass": (S, 1),
                  "removed_total_count": (S, 1), "removed_total_mass": (S, 1)}
        for name, shape in shapes.items():
            if name not in d or d[name].shape != shape:
                failures.append(f"/diagnostics/{name}: shape {d[name].shape if name in d else None}, expected {shape}")
        if failures:
            for f in failures:
                print("FAIL:", f)
            return 1
        print(f"{S} steps, {len(run)} frames")
        for name in ("emitted_total_count", "removed_total_count", "emitted_total_mass", "removed_total_mass"):
            if np.any(np.diff(d[name][:, 0]) < 0):
                failures.append(f"{name} decreases")
            if d[name][-1, 0] != flow[name][-1, 0]:
                failures.append(f"{name}: last step {d[name][-1, 0]}, last frame {flow[name][-1, 0]}")
        steps, dt, force = d["step"], d["dt"], d["wall_force"]
        worst = 0.0
        for k in range(1, len(run)):
            at = int(run.frames.step[k]) - 1  # diagnostics entry of the frame's step
            prev = int(run.frames.step[k - 1])  # first entry after the previous frame
            if steps[at] != run.frames.step[k]:
                failures.append(f"frame {k}: diagnostics entry {at} is step {steps[at]}")
                continue
            for name in ("emitted_total_count", "removed_total_count", "emitted_total_mass", "removed_total_mass"):
                if d[name][at, 0] != flow[name][k, 0]:
                    failures.append(f"frame {k}: /flow/{name} {flow[name][k, 0]} != step's {d[name][at, 0]}")
            span = slice(prev, at + 1)
            mean = np.tensordot(dt[span], force[span], axes=(0, 0)) / dt[span].sum()
            scale = max(float(np.abs(walls["force"][k]).max()), 1e-12)
            worst = max(worst, float(np.abs(mean - walls["force"][k]).max()) / scale)
        print(f"/walls/force against the dt-weighted mean of wall_force: largest relative difference {worst:.2g}")
        if worst > 1e-9:
            failures.append(f"/walls/force differs from the mean of the step series by {worst:.2g} (relative)")
        g = 9.81
        carried = -force[:, :2, 2].sum(axis=1)  # downward force on the cylinder and the cone [N]
        print(f"largest downward force on the cylinder and cone in a step: {carried.max():.4g} N "
              f"(the 300 grains weigh {300 * 2500 * 4 / 3 * np.pi * 0.002 ** 3 * g:.4g} N)")
        if not carried.max() > 0.0:
            failures.append("no step carries any weight on the hopper")
    # the flow-rate tool on the outlet's per-step total: all 400 grains' mass, a positive rate
    tool = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "talus_measure.py")
    png = os.path.splitext(argv[1])[0] + "_outlet_rate.png"
    out = subprocess.run([sys.executable, tool, "flow-rate", argv[1], "--outlet", "0", "--png", png],
                         capture_output=True, text=True)
    print(out.stdout.strip())
    m = re.search(r"mass passed outlet 0 by t = \S+ s: (\S+) kg", out.stdout)
    w = re.search(r"steady mass flow rate: (\S+) kg/s", out.stdout)
    grains = 400 * 2500.0 * 4.0 / 3.0 * np.pi * 0.002 ** 3
    if out.returncode != 0 or not m or not w:
        failures.append(f"flow-rate --outlet 0 failed ({out.returncode}): {out.stderr}")
    else:
        if abs(float(m.group(1)) - grains) > 1e-5 * grains:  # printed to 6 digits
            failures.append(f"flow-rate --outlet 0 found {m.group(1)} kg, the 400 grains are {grains:.6g} kg")
        if not float(w.group(1)) > 0.0:
            failures.append(f"flow-rate --outlet 0: rate {w.group(1)} kg/s")
    both = subprocess.run([sys.executable, tool, "flow-rate", argv[1], "--outlet", "0", "--level", "0"],
                          capture_output=True, text=True)
    if both.returncode == 0 or "one of them" not in both.stderr:
        failures.append(f"--outlet with --level was not refused: {both.stderr!r}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
