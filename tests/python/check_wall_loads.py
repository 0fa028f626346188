#!/usr/bin/python3
"""The /walls rows of a run of tests/scenes/drop.toml (one bead dropped onto a floor).

    check_wall_loads.py DROP.h5 [--expect-contacts]

Before the bead lands the floor feels nothing; once it rests, the mean force over each
frame interval is its weight, straight down, and the torque about the floor's reference
point is (contact point - reference) x force. With [output] wall_contacts = true the file
also holds each frame's contacts: none before the landing, then the bead's one contact on the
floor, whose impulse over the step is its weight times dt. Exit 0 if all hold.
"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import talus_h5  # noqa: E402


def main(argv):
    problems = []
    with talus_h5.load(argv[1]) as run:
        w = run.walls
        if not w:
            print("no /walls group", file=sys.stderr)
            return 1
        force, torque = w["force"], w["torque"]
        if force.shape != (len(run), 1, 3) or torque.shape != (len(run), 1, 3):
            problems.append(f"shapes {force.shape} {torque.shape}, expected ({len(run)}, 1, 3)")
        if w["names"] != ["wall.0"]:
            problems.append(f"names {w['names']}")
        ref = w["torque_reference_points"][0]
        g = 9.81
        last = run.frame(-1)
        r = float(last["radius"][0])
        rho = float(run.attrs["material_density"][int(last["material"][0])])
        weight = rho * 4.0 / 3.0 * math.pi * r ** 3 * g
        t = run.frames.time
        # free fall from 0.5 m to the floor (centre at r): lands at sqrt(2 (0.5 - r) / g) = 0.316 s
        landing = math.sqrt(2 * (0.5 - r) / g)
        for k in range(len(run)):
            if t[k] < landing - 0.02:
                if np.abs(force[k]).max() != 0.0:
                    problems.append(f"frame {k} (t = {t[k]}) before landing: force {force[k, 0]}")
            elif t[k] > landing + 0.05:
                f = force[k, 0]
                if abs(f[2] + weight) > 1e-6 * weight or abs(f[0]) > 1e-9 or abs(f[1]) > 1e-9:
                    problems.append(f"frame {k} (t = {t[k]}): force {f}, expected (0, 0, {-weight})")
                x = run.frame(k)["position"][0]
                expected = np.cross(np.array([x[0], x[1], 0.0]) - ref, f)
                if np.abs(torque[k, 0] - expected).max() > 1e-9 * weight:
                    problems.append(f"frame {k}: torque {torque[k, 0]}, expected {expected}")
        contacts = [run.wall_contacts(k) for k in range(len(run))]
        if contacts[0] is not None:
            bead = int(last["id"][0])
            for k, c in enumerate(contacts):
                rows = len(c["wall"])
                if t[k] < landing - 0.02:
                    if rows != 0:
                        problems.append(f"frame {k} (t = {t[k]}) before landing: {rows} wall contacts")
                elif t[k] > landing + 0.05:
                    x = run.frame(k)["position"][0]
                    if rows != 1 or int(c["wall"][0]) != 0 or int(c["body"][0]) != bead:
                        problems.append(f"frame {k}: contacts wall {c['wall']} body {c['body']}, "
                                        f"expected the bead {bead} on wall 0")
                        continue
                    if np.abs(c["point"][0] - np.array([x[0], x[1], 0.0])).max() > 1e-9:
                        problems.append(f"frame {k}: contact point {c['point'][0]}, expected under "
                                        f"the bead {x}")
                    f = c["impulse"][0] / c["dt"]
                    if abs(f[2] + weight) > 1e-6 * weight or abs(f[0]) > 1e-9 or abs(f[1]) > 1e-9:
                        problems.append(f"frame {k}: contact impulse / dt {f}, expected "
                                        f"(0, 0, {-weight})")
                    if np.abs(c["angular_impulse"][0]).max() != 0.0:
                        problems.append(f"frame {k}: angular impulse {c['angular_impulse'][0]} "
                                        "without rolling resistance")
        elif len(argv) > 2 and argv[2] == "--expect-contacts":
            problems.append("no /walls/contacts in the file")
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
