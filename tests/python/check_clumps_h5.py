#!/usr/bin/python3
"""A clump run read back through tools/talus_h5.py.

    check_clumps_h5.py RUN.h5

RUN.h5 is tests/scenes/clumps.toml run to its end. Checks, with the tolerance of each:
  * /clumps holds the three templates of the scene (2, 3, 2 spheres) with the scene's radii,
    and each template's sphere-to-sphere distances are the scene's (a rigid re-expression,
    1e-12 m);
  * every body is a clump (shape code 3) with a template index in range and its radius
    column equal to the template's bounding radius max |c_k| + r_k (1e-15 m);
  * frame 0: the [[body]] clump's spheres are where the scene writes them, position +
    R(orientation) c (1e-12 m);
  * every frame: every sphere stays inside the box [0, 0.2]² × [0, 0.4] but for at most
    2e-5 m of penetration (measured 2.6e-6 m; the smallest sphere radius is 8e-3 m);
  * the summary names the clumps.
Exit 0 if all hold, 1 otherwise.
"""
import contextlib
import io
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import talus_h5  # noqa: E402

SCENE_TEMPLATES = [
    [[0.0, 0.0, 0.0, 0.01], [0.015, 0.0, 0.0, 0.01]],
    [[0.0, 0.0, 0.0, 0.01], [0.014, 0.0, 0.0, 0.01], [0.0, 0.014, 0.0, 0.01]],
    [[-0.008, 0.0, 0.0, 0.008], [0.008, 0.0, 0.0, 0.008]],
]
BODY_POSITION = np.array([0.05, 0.1, 0.01])
BODY_ORIENTATION = np.array([0.9238795325112867, 0.0, 0.0, 0.3826834323650898])


def distances(c):
    c = np.asarray(c)[:, :3]
    return np.linalg.norm(c[:, None, :] - c[None, :, :], axis=2)


def main(argv):
    if len(argv) != 2:
        print("usage: check_clumps_h5.py RUN.h5", file=sys.stderr)
        return 2
    problems = []

    def expect(cond, what):
        if not cond:
            problems.append(what)

    with talus_h5.load(argv[1]) as run:
        templates = run.clump_templates
        expect([len(t) for t in templates] == [2, 3, 2], f"template sizes {[len(t) for t in templates]}")
        for t, want in zip(templates, SCENE_TEMPLATES):
            want = np.array(want)
            expect(np.array_equal(t[:, 3], want[:, 3]), f"template radii {t[:, 3]} != {want[:, 3]}")
            err = np.abs(distances(t) - distances(want)).max()
            expect(err <= 1e-12, f"template distances differ from the scene's by {err} m")
        bound = [max(np.linalg.norm(t[:, :3], axis=1) + t[:, 3]) for t in templates]
        first = run.frame(0)
        expect(np.all(first["shape"] == 3), f"shape codes {set(first['shape'].tolist())}")
        expect(np.all((first["clump"] >= 0) & (first["clump"] < len(templates))), "clump index out of range")
        rad_err = max(abs(first["radius"][i] - bound[first["clump"][i]]) for i in range(len(first["id"])))
        expect(rad_err <= 1e-15, f"radius column differs from the bounding radius by {rad_err} m")
        spheres, owner = run.spheres(first)
        body0 = spheres[owner == 0]
        want = BODY_POSITION + talus_h5.rotate(BODY_ORIENTATION, np.array(SCENE_TEMPLATES[0])[:, :3])
        err = np.abs(body0[:, :3] - want).max()
        expect(err <= 1e-12, f"[[body]] clump spheres {err} m from where the scene puts them")
        worst = 0.0
        for k in range(len(run)):
            s, _ = run.spheres(run.frame(k))
            lo = (s[:, :3] - s[:, 3:]).min()
            hi = (s[:, :3] + s[:, 3:] - np.array([0.2, 0.2, 0.4])).max()
            worst = max(worst, -lo, hi)
        expect(worst <= 2e-5, f"a sphere leaves the box by {worst} m")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            print(talus_h5.summary(run))
        expect("30 clump" in out.getvalue() and "3 templates" in out.getvalue(),
               f"summary: {out.getvalue()}")
        print(f"check_clumps_h5: worst wall penetration {worst:.3g} m, template distance error "
              f"{err:.3g} m")

    for p in problems:
        print("check_clumps_h5:", p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
