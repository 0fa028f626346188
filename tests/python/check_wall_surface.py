#!/usr/bin/python3
"""/walls/surface, the walls as the output draws them, read back with h5py.

    check_wall_surface.py DRUM.h5 GATE.h5

DRUM.h5: tests/scenes/drum.toml run to t = 0.4 s (a finite cylinder, r = 0.1 m, length
0.1 m, axis x through (0, 0, 0.1), turning at 2 rad/s, between two planes x = -0.05 and
x = +0.05; a floor plane that vibrates from t = 0.5 s and a side plane that a table moves
along y from t = 0.3 s). Its surface: the cylinder's 128 points on the circle of radius 0.1
at x = -0.05 and 0.05, 128 triangles; each plane a square patch of 2 triangles through its
point. In frame k every cylinder point is its reference point turned by 2 t_k about the
axis; the end planes and the floor stay; the side plane is its reference patch shifted
along y, by 0 before 0.3 s and by more than 0 at the end. GATE.h5: tests/scenes/staged_gate.toml: a box (12 triangles over its 8 corners) and a
plane "gate" that the second stage removes: its four points coincide from the first frame
of that stage on, and not before. Exit 0 if all hold.
"""
import math
import sys

import h5py
import numpy as np


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    problems = []

    def expect(cond, what):
        if not cond:
            problems.append(what)

    with h5py.File(argv[1], "r") as f:
        s = f["walls/surface"]
        first, ref, tri, wall = s["first_point"][:], s["reference_points"][:], s["triangles"][:], s["wall"][:]
        v = int(first[-1])
        expect(list(first) == [0, 128, 132, 136, 140, 144], f"drum: first_point {first.tolist()}")
        expect(np.bincount(wall).tolist() == [128, 2, 2, 2, 2],
               f"drum: triangles per wall {np.bincount(wall).tolist()}")
        expect(tri.max() < v and tri.min() >= 0, "drum: a triangle names a point out of range")
        cyl = ref[:128]
        expect(np.allclose(np.hypot(cyl[:, 1], cyl[:, 2] - 0.1), 0.1, atol=1e-12, rtol=0),
               "drum: cylinder points not on the radius-0.1 circle about the axis")
        expect(np.allclose(np.sort(np.unique(np.round(cyl[:, 0], 12))), [-0.05, 0.05]),
               "drum: cylinder points not at its two ends")
        expect(np.allclose(ref[128:132, 0], -0.05) and np.allclose(ref[132:136, 0], 0.05),
               "drum: plane patches not in their planes")
        times = f["frames/time"][:]
        pts = f["walls/surface/points"]
        expect(pts.shape[0] == v * len(times), f"drum: {pts.shape[0]} point rows for {len(times)} frames of {v}")
        for k, t in enumerate(times):
            p = pts[k * v:(k + 1) * v]
            a = 2.0 * t
            c, sn = math.cos(a), math.sin(a)
            y, z = cyl[:, 1], cyl[:, 2] - 0.1
            want = np.column_stack([cyl[:, 0], c * y - sn * z, sn * y + c * z + 0.1])
            expect(np.allclose(p[:128], want, atol=1e-12, rtol=0), f"drum: frame {k}: cylinder not turned by {a} rad")
            expect(np.array_equal(p[128:140], ref[128:140]), f"drum: frame {k}: a still plane moved")
            shift = p[140:144] - ref[140:144]
            expect(np.allclose(shift, shift[0], atol=1e-15) and shift[0][0] == 0 and shift[0][2] == 0
                   and (shift[0][1] == 0) == (t <= 0.3),
                   f"drum: frame {k} (t = {t}): the side plane shifted by {shift.tolist()}")
        expect(len(times) > 2 and not np.allclose(pts[v:v + 128], cyl), "drum: the cylinder never turned")
        expect(times[-1] > 0.35, f"drum: the run ends at {times[-1]} s, before the side plane moves")

    with h5py.File(argv[2], "r") as f:
        s = f["walls/surface"]
        first = s["first_point"][:]
        expect(list(first) == [0, 8, 12], f"gate: first_point {first.tolist()}")
        expect(np.bincount(s["wall"][:]).tolist() == [12, 2], "gate: triangles per wall")
        v = int(first[-1])
        pts = f["walls/surface/points"]
        stage = f["diagnostics/stage"][:]
        step = f["diagnostics/step"][:]
        opened = int(step[np.argmax(stage == 1)])  # the first step of the second stage
        for k, fs in enumerate(f["frames/step"][:]):
            gate = pts[k * v + 8:(k + 1) * v]
            collapsed = bool(np.all(gate == gate[0]))
            # removed when the stage begins, before its first step
            expect(collapsed == (fs >= opened), f"gate: frame {k} (step {fs}): collapsed {collapsed}, "
                                                f"stage 2 from step {opened}")
    if problems:
        print("check_wall_surface:")
        for p in problems:
            print("  " + p)
        return 1
    print("check_wall_surface: the drum turns, the planes stay, the removed gate vanishes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
