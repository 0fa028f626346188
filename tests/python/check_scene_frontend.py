#!/usr/bin/python3
"""The Python scene front end, tools/talus_scene.py (issue 24, part 2).

    check_scene_frontend.py SCENE.toml OUTDIR

SCENE.toml is tests/scenes/small_box.toml. Checks:
  - the scene read into a dict (tomllib) and run through talus_scene.run gives the same bits
    in every body row, frame index and diagnostics column (but the solver's wall-clock time)
    as `talus run SCENE.toml`;
  - numpy numbers and arrays in the dict are written as plain TOML, and overrides reach the
    run as --set (a duration of 0.05 s ends the run at t = 0.05 s);
  - a misspelt key raises SceneError naming the written file, the line and the key, with exit
    status 2; talus_scene.check returns talus check's summary of a good scene.
Exit 0 if all hold, 1 otherwise.
"""
import os
import subprocess
import sys
import tomllib

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import talus_h5  # noqa: E402
import talus_scene  # noqa: E402


def main(argv):
    if len(argv) != 3:
        print("usage: check_scene_frontend.py SCENE.toml OUTDIR", file=sys.stderr)
        return 2
    scene_path, outdir = argv[1], argv[2]
    os.makedirs(outdir, exist_ok=True)
    failures = []
    with open(scene_path, "rb") as f:
        scene = tomllib.load(f)
    scene["simulation"]["duration"] = 0.2
    scene["simulation"]["gravity"] = np.array([0.0, 0.0, -9.81])  # numpy, as a user would
    scene["solver"]["max_iterations"] = np.int64(100)

    # the same run from the file itself, with the same two changes
    direct = os.path.join(outdir, "direct.h5")
    done = subprocess.run([talus_h5.talus_binary(), "run", scene_path, "-o", direct, "--force", "--quiet",
                           "--set", "simulation.duration=0.2", "--set", "simulation.gravity=[0.0, 0.0, -9.81]"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        print(f"FAIL: talus run {scene_path}: {done.stderr}")
        return 1
    import h5py
    with talus_scene.run(scene, os.path.join(outdir, "frontend.h5")) as run:
        print(f"front end: {len(run)} frames to t = {run.frames.time[-1]:.3g} s, "
              f"{len(run.frame(-1)['id'])} bodies")
    with h5py.File(direct, "r") as a, h5py.File(os.path.join(outdir, "frontend.h5"), "r") as b:
        compared = 0
        for group in ("bodies", "frames", "diagnostics"):
            for name, item in a[group].items():
                if not isinstance(item, h5py.Dataset) or name == "solver_wall_time":
                    continue
                compared += 1
                if item[()].tobytes() != b[group][name][()].tobytes():
                    failures.append(f"/{group}/{name} differs from the run of the file itself")
        print(f"{compared} datasets compared with `talus run {os.path.basename(scene_path)}`")
    with open(os.path.join(outdir, "frontend.toml")) as f:
        written = f.read()
    if "numpy" in written or "array(" in written:
        failures.append("numpy values were not written as plain TOML")

    with talus_scene.run(scene, os.path.join(outdir, "override.h5"),
                         overrides={"simulation.duration": 0.05}, threads=1) as run:
        if abs(run.frames.time[-1] - 0.05) > 1e-12:
            failures.append(f"the override of the duration gave a last frame at t = {run.frames.time[-1]}")

    bad = dict(scene, simulation=dict(scene["simulation"], durration=1.0))
    try:
        talus_scene.run(bad, os.path.join(outdir, "bad.h5"))
        failures.append("a misspelt key was not refused")
    except talus_scene.SceneError as e:
        print(f"misspelt key: exit {e.status}: {str(e).splitlines()[0]}")
        if e.status != 2 or "bad.toml:" not in str(e) or "simulation.durration" not in str(e):
            failures.append(f"the refusal does not name the file, line and key: {e}")
    summary = talus_scene.check(scene, os.path.join(outdir, "checked.toml"))
    print(f"check: {summary}")
    if "valid" not in summary:
        failures.append(f"talus check of the scene said: {summary}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
