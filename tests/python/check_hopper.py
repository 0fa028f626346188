#!/usr/bin/python3
"""A hopper and an orifice plate in use (issue 24, part 4.2).

    check_hopper.py RUN.h5 [TALUS SCENE]

RUN.h5 is tests/scenes/hopper.toml run by the talus command: a cylinder over a cone, a
random fill in a box wider than the cone's lower part, an emitter, a plate with a round hole
under the cone's outlet, an outlet plane below. Checks, each against the geometry written in
the scene (recomputed here, not taken from the engine):
  - the fill put every grain inside the hopper (none outside the cone between its ends);
  - in no frame does a grain overlap the cylinder, the cone or the plate by more than 1 % of
    its radius, on either side of the cone and the plate;
  - every grain placed or emitted has left through the outlet by the end (the flow counts);
  - the output shows the cone and the plate: /walls/surface has 128 triangles for each;
  - given TALUS and SCENE: the scene run on 1 and on 3 threads gives the same bits in every
    body row and every diagnostics column but the solver's wall-clock time.
Exit 0 if all hold, 1 otherwise.
"""
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import talus_h5  # noqa: E402

R_GRAIN = 0.002
CYL_R, CYL_Z = 0.04, (0.08, 0.2)
CONE_Z, CONE_R = (0.03, 0.08), (0.012, 0.04)
PLATE_Z, HOLE_R = 0.015, 0.02
FILL = 300


def segment_distance(rho, z, p0, p1):
    """Distance in the (ρ, z) half-plane from points to the segment p0 → p1."""
    d = np.array(p1) - np.array(p0)
    t = np.clip(((rho - p0[0]) * d[0] + (z - p0[1]) * d[1]) / (d @ d), 0.0, 1.0)
    return np.hypot(rho - (p0[0] + t * d[0]), z - (p0[1] + t * d[1]))


def same_bits_on_1_and_3_threads(talus, scene, out_dir):
    """Problems found running `scene` on 1 and on 3 threads (an empty list when none)."""
    import h5py
    paths = []
    for threads in (1, 3):
        path = os.path.join(out_dir, f"hopper_threads{threads}.h5")
        run = subprocess.run([talus, "run", scene, "-o", path, "--force", "--quiet", "--threads", str(threads)],
                             capture_output=True, text=True)
        if run.returncode != 0:
            return [f"{threads} threads: talus run exited {run.returncode}: {run.stderr}"]
        paths.append(path)
    problems = []
    with h5py.File(paths[0], "r") as a, h5py.File(paths[1], "r") as b:
        for group in ("bodies", "frames", "diagnostics", "flow", "walls"):
            for name, item in a[group].items():
                if not isinstance(item, h5py.Dataset) or name == "solver_wall_time":
                    continue
                if item[()].tobytes() != b[group][name][()].tobytes():
                    problems.append(f"/{group}/{name} differs between 1 and 3 threads")
    print("1 and 3 threads: " + ("the same bits" if not problems else f"{len(problems)} datasets differ"))
    return problems


def main(argv):
    if len(argv) not in (2, 4):
        print("usage: check_hopper.py RUN.h5 [TALUS SCENE]", file=sys.stderr)
        return 2
    failures = []
    with talus_h5.load(argv[1]) as run:
        first = run.frame(0)["position"]
        rho0, z0 = np.hypot(first[:, 0], first[:, 1]), first[:, 2]
        within = (z0 >= CONE_Z[0]) & (z0 <= CONE_Z[1])
        cone_r = CONE_R[0] + (CONE_R[1] - CONE_R[0]) * (z0 - CONE_Z[0]) / (CONE_Z[1] - CONE_Z[0])
        print(f"fill: {len(first)} grains, {int(within.sum())} between the cone's ends")
        if len(first) != FILL:
            failures.append(f"the first frame holds {len(first)} grains, not {FILL}")
        if np.any(within & (rho0 > cone_r)):
            failures.append(f"{int((within & (rho0 > cone_r)).sum())} grains placed outside the cone")
        worst = {"cylinder": 0.0, "cone": 0.0, "plate": 0.0}
        for k in range(len(run)):
            x = run.frame(k)["position"]
            if len(x) == 0:
                continue
            rho, z = np.hypot(x[:, 0], x[:, 1]), x[:, 2]
            in_cyl = (z >= CYL_Z[0]) & (z <= CYL_Z[1])
            if np.any(in_cyl):
                worst["cylinder"] = max(worst["cylinder"], float(np.max(rho[in_cyl] + R_GRAIN - CYL_R)))
            cone = segment_distance(rho, z, (CONE_R[0], CONE_Z[0]), (CONE_R[1], CONE_Z[1]))
            worst["cone"] = max(worst["cone"], float(np.max(R_GRAIN - cone)))
            plate = segment_distance(rho, z, (HOLE_R, PLATE_Z), (10.0, PLATE_Z))
            worst["plate"] = max(worst["plate"], float(np.max(R_GRAIN - plate)))
        for wall, depth in worst.items():
            print(f"largest overlap with the {wall}: {depth:.3g} m ({100 * depth / R_GRAIN:.2f} % of r)")
            if depth > 0.01 * R_GRAIN:
                failures.append(f"a grain overlaps the {wall} by {depth:.3g} m")
        emitted = int(run.flow["emitted_total_count"][-1].sum())
        removed = int(run.flow["removed_total_count"][-1].sum())
        left = len(run.frame(-1)["position"])
        print(f"emitted {emitted}, removed {removed}, left {left} at t = {run.frames.time[-1]:.3f} s")
        if emitted < 50:
            failures.append(f"only {emitted} grains emitted")
        if removed != FILL + emitted or left != 0:
            failures.append(f"{FILL + emitted - removed} grains did not leave the hopper ({left} left in the last frame)")
    import h5py
    with h5py.File(argv[1], "r") as f:
        names = list(f["walls"].attrs["names"])
        tri_wall = f["walls/surface/wall"][()]
        for name in ("hopper", "plate"):
            count = int(np.sum(tri_wall == names.index(name)))
            print(f"/walls/surface: {count} triangles for {name}")
            if count != 128:
                failures.append(f"{name} has {count} surface triangles, not 128")
    if len(argv) == 4:
        failures += same_bits_on_1_and_3_threads(argv[2], argv[3], os.path.dirname(os.path.abspath(argv[1])))
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
