#!/usr/bin/python3
"""How often a SIGKILL leaves a torn metadata block in a trajectory, and what it costs.

    benchmarks/kill_stress.py [--talus build/bin/talus] [--kills 300] [--seed 1]
                              [--scene tests/scenes/small_box.toml] [--out /tmp/kill_stress]

Starts `talus run SCENE` (a frame every 5 steps, a long duration) afresh --kills times and
kills it with SIGKILL 0 to 2.2 s after its first line, as io.killed_runs does five times.
After each kill every dataset of the file is opened and its last row read, in SWMR mode
with talus_h5's 24 read attempts (a torn block then fails at once instead of holding the
reader), and `talus info --json` is asked how many frames it leaves out (torn_frames).
Prints one line per kill that left something unreadable, then the totals:
- torn: kills after which some dataset did not read in full;
- frames left out: the sum of talus info's torn_frames;
- unreadable: kills after which talus info itself failed (a dataset it needs was torn).
The files of such kills are kept in --out. Takes about 2.5 s a kill on 2 cores. A figure,
not a test (docs/output-format.md, "Reading a file that is being written, or was killed").
"""
import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
import tomllib

import h5py

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "tools"))
import talus_h5  # noqa: E402

EVERY = 5  # steps between frames, as io.killed_runs


def unreadable(path):
    """The datasets of `path` whose last row does not read (HDF5's message for each)."""
    bad = []
    try:
        f = talus_h5._open_swmr(path)
    except OSError as e:
        return [f"(the file): {e}"]
    def walk(group, prefix):  # by names, so that one object that does not open stops nothing else
        for name in group:
            try:
                obj = group[name]
                if isinstance(obj, h5py.Group):
                    walk(obj, f"{prefix}{name}/")
                elif obj.shape and obj.shape[0]:
                    obj[obj.shape[0] - 1]
            except (OSError, KeyError, RuntimeError) as e:
                bad.append(f"{prefix}{name}: {e}")
    with f:
        walk(f, "/")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--talus", default=os.path.join(TOP, "build", "bin", "talus"))
    ap.add_argument("--kills", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--scene", default=os.path.join(TOP, "tests", "scenes", "small_box.toml"))
    ap.add_argument("--out", default="/tmp/kill_stress")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    with open(a.scene, "rb") as f:
        dt = tomllib.load(f).get("simulation", {}).get("dt")
    if dt is None:
        sys.exit(f"kill_stress: {a.scene} has no [simulation] dt (the frame cadence is set in steps)")
    rng = random.Random(a.seed)
    out = os.path.join(a.out, "killed.h5")
    torn = left_out = failed = 0
    for k in range(a.kills):
        child = subprocess.Popen([a.talus, "run", a.scene, "-o", out, "--force",
                                  "--set", "simulation.duration=1000.0", "--set", f"output.interval={EVERY * dt!r}"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        child.stderr.readline()
        time.sleep(rng.uniform(0.0, 2.2))
        child.send_signal(signal.SIGKILL)
        child.wait()
        bad = unreadable(out)
        info = subprocess.run([a.talus, "info", "--json", out], capture_output=True, text=True, timeout=60)
        frames_out = json.loads(info.stdout)["torn_frames"] if info.returncode == 0 else None
        if bad or frames_out or info.returncode != 0:
            torn += 1
            left_out += frames_out or 0
            failed += info.returncode != 0
            kept = os.path.join(a.out, f"torn_{a.seed}_{k}.h5")
            os.replace(out, kept)
            what = (f"talus info leaves out {frames_out} frames" if info.returncode == 0
                    else f"talus info exit {info.returncode}: {info.stderr.strip()}")
            print(f"kill {k}: {what}; unreadable: {bad} ({kept})", flush=True)
    print(f"{a.kills} kills of {os.path.basename(a.scene)}: {torn} torn, {left_out} frames left out in all, "
          f"{failed} unreadable by talus info", flush=True)


if __name__ == "__main__":
    main()
