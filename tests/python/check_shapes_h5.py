#!/usr/bin/python3
"""The true shapes of a run's bodies (/shapes), read back with h5py and recomputed from the
body rows.

    check_shapes_h5.py RUN.h5

RUN.h5 is tests/scenes/shapes.toml run to its end: a capsule (radius 0.01 m, end spheres
0.04 m apart), an ellipsoid (semi-axes 0.03, 0.02, 0.01 m), two clumps (one kinematic) and
two spheres. In every frame, from each body's row (position, orientation, shape, clump
template) and the scene's sizes, the glyphs must be, in this order (to 1e-12 m):
  * ellipsoid rows, in body order: each clump sphere at x + R c_k with axes r_k R; the
    capsule's end spheres at x -/+ (l/2) R e_x with axes r R; the ellipsoid at x with axes
    (a R e_x, b R e_y, c R e_z);
  * then one cylinder row per capsule: x, axes (r R e_y, (l/2) R e_x, -r R e_z);
  * no row for a sphere; each row's body id and material those of its body.
Exit 0 if all hold, 1 otherwise.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import talus_h5  # noqa: E402

CAPSULE_RADIUS, CAPSULE_HALF = 0.01, 0.02
SEMI_AXES = np.array([0.03, 0.02, 0.01])
TOL = 1e-12


def expected(frame, templates):
    ellipsoids, cylinders = [], []
    for i in range(len(frame["id"])):
        shape = int(frame["shape"][i])
        if shape == 0:
            continue
        x = frame["position"][i]
        R = talus_h5.rotate(frame["orientation"][i], np.eye(3)).T  # columns: the body's axes
        row = lambda centre, axes: (int(frame["id"][i]), int(frame["material"][i]), centre, axes)  # noqa: E731
        if shape == 1:
            for side in (-1.0, 1.0):
                ellipsoids.append(row(x + side * CAPSULE_HALF * R[:, 0], CAPSULE_RADIUS * R.T))
            cylinders.append(row(x, np.stack([CAPSULE_RADIUS * R[:, 1], CAPSULE_HALF * R[:, 0],
                                               -CAPSULE_RADIUS * R[:, 2]])))
        elif shape == 2:
            ellipsoids.append(row(x, (SEMI_AXES * R).T))
        else:
            for c in templates[int(frame["clump"][i])]:
                ellipsoids.append(row(x + R @ c[:3], c[3] * R.T))
    return ellipsoids + cylinders, len(cylinders)


def main(argv):
    problems = []
    with talus_h5.load(argv[1]) as run:
        f = run._file
        first = f["clumps/first"][:]
        spheres = f["clumps/spheres"][:]
        templates = [spheres[first[t]:first[t + 1]] for t in range(len(first) - 1)]
        if len(run) < 3:
            problems.append(f"{len(run)} frames, expected at least 3")
        shapes_seen = set()
        for k in range(len(run)):
            frame = run.frame(k)
            shapes_seen |= set(int(s) for s in frame["shape"])
            want, cylinders = expected(frame, templates)
            got = run.shapes(k)
            if len(got["body"]) != len(want) or got["cylinders"] != cylinders:
                problems.append(f"frame {k}: {len(got['body'])} glyphs ({got['cylinders']} cylinders), "
                                f"expected {len(want)} ({cylinders})")
                continue
            for j, (body, material, centre, axes) in enumerate(want):
                if int(got["body"][j]) != body or int(got["material"][j]) != material:
                    problems.append(f"frame {k} glyph {j}: body {got['body'][j]}, expected {body}")
                dc = np.abs(got["position"][j] - centre).max()
                da = np.abs(got["axes"][j] - axes).max()
                if dc > TOL or da > TOL:
                    problems.append(f"frame {k} glyph {j} (body {body}): centre off by {dc:.3g} m, "
                                    f"axes by {da:.3g} m")
        if shapes_seen != {0, 1, 2, 3}:
            problems.append(f"shape codes {sorted(shapes_seen)}, expected 0 to 3")
        moved = np.abs(run.frame(-1)["position"] - run.frame(0)["position"]).max()
        if not moved > 1e-3:
            problems.append(f"the bodies moved only {moved:.3g} m: the frames do not test the pose")
    for p in problems[:20]:
        print("FAIL:", p)
    if not problems:
        print(f"OK: {len(run)} frames, every glyph where its body's row puts it (1e-12 m)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
