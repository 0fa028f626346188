#!/usr/bin/python3
"""How `talus run` fails: clearly, with the right exit code, and nothing lost.

    check_failures.py TALUS SCENE OUTDIR

SCENE is a box of beads falling from rest (tests/scenes/small_box.toml). Checked:
1. speeds beyond a bound: with simulation.max_speed = 0.5 m/s the falling beads pass it
   after some frames. Exit code 3; stderr names the bodies (by id) and the time; the
   trajectory keeps every frame before the failure and ends with the last good state (the
   state before the failed step, at the time the message names; every body finite in it),
   and `talus info` reads it.
2. an absurd force (gravity 1e300 m/s^2): exit code 3 with the bodies named at step 1, not
   an abort (this once ended in std::terminate from the broad phase).
3. an output path that cannot be created: exit code 4 naming the path, before any step.
"""
import os
import re
import subprocess
import sys

import numpy as np

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "tools"))
import talus_h5  # noqa: E402


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def run(talus, *args):
    p = subprocess.run([talus, "run", *args], capture_output=True, text=True)
    return p.returncode, p.stderr


def main():
    talus, scene, outdir = sys.argv[1:4]
    os.makedirs(outdir, exist_ok=True)

    # 1. beyond max_speed, mid-run
    out = os.path.join(outdir, "too_fast.h5")
    code, err = run(talus, scene, "-o", out, "--force", "--quiet",
                    "--set", "simulation.max_speed=0.5", "--set", "output.interval=0.01")
    if code != 3:
        fail(f"max_speed: exit code {code}, expected 3:\n{err}")
    m = re.search(r"beyond max_speed.* at t = ([0-9.eE+-]+) s \(step (\d+)\), bodies with id((?: \d+)+)", err)
    if not m:
        fail(f"max_speed: the message does not name the time and bodies:\n{err}")
    t_fail, ids = float(m.group(1)), [int(x) for x in m.group(3).split()]
    if "the trajectory holds every frame" not in err or out not in err:
        fail(f"max_speed: the message does not say what the trajectory holds:\n{err}")
    info = subprocess.run([talus, "info", out], capture_output=True, text=True)
    if info.returncode != 0:
        fail(f"max_speed: talus info exited {info.returncode}: {info.stderr}")
    with talus_h5.load(out) as r:
        n = len(r)
        if n < 2:
            fail(f"max_speed: only {n} frame(s) kept")
        if not np.all(np.diff(r.frames.time) > 0):
            fail("max_speed: frame times not increasing")
        if abs(r.frames.time[-1] - t_fail) > 1e-12:
            fail(f"max_speed: the last frame is at t = {r.frames.time[-1]}, not the last good "
                 f"state at {t_fail}")
        last = r.frame(-1)
        if not (np.all(np.isfinite(last["position"])) and np.all(np.isfinite(last["velocity"]))):
            fail("max_speed: the last frame is not finite")
        if not set(ids) <= set(last["id"].tolist()):
            fail(f"max_speed: named bodies {ids} are not bodies of the run")
        speed = np.linalg.norm(last["velocity"], axis=1).max()
    print(f"1. max_speed 0.5 m/s: exit 3 at t = {t_fail:g} s naming {len(ids)} bodies; "
          f"{n} frames kept, the last at t = {r.frames.time[-1]:g} s (fastest {speed:.3f} m/s)")

    # 2. absurd gravity
    out = os.path.join(outdir, "absurd.h5")
    code, err = run(talus, scene, "-o", out, "--force", "--quiet",
                    "--set", "simulation.gravity=[0.0, 0.0, -1e300]")
    if code != 3 or not re.search(r"bodies with id \d+", err):
        fail(f"absurd gravity: exit code {code}, expected 3 naming bodies:\n{err}")
    print("2. gravity 1e300: exit 3, bodies named")

    # 3. an output path that cannot be created
    bad = os.path.join(outdir, "no_such_dir", "deeper", "out.h5")
    code, err = run(talus, scene, "-o", bad, "--force")
    if code != 4 or bad not in err:
        fail(f"unwritable output: exit code {code}, expected 4 naming {bad}:\n{err}")
    if "steps:" in err or re.search(r"\bt [0-9.]+/", err):
        fail(f"unwritable output: steps were run:\n{err}")
    print("3. unwritable output path: exit 4 before any step, path named")


if __name__ == "__main__":
    main()
