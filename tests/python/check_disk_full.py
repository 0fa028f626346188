#!/usr/bin/python3
"""A run whose disk fills up stops with exit 4, names the path, and keeps its frames.

    check_disk_full.py TALUS SCENE OUTDIR

Mounts a 3 MB tmpfs at OUTDIR/full (needs root; without root or mount(8) the test is
skipped with exit status 77) and runs SCENE there with a frame every step for 1000 s.
Uncompressed, the need is known before the first step (rows × bytes per row):
- the run does not start: exit 4, a message naming the path and the megabytes needed and
  free, and no trajectory file left.
Compressed (the default gzip level; the need is then only an upper bound and a warning is
printed), the disk fills within a few hundred frames:
- the exit status is 4 (I/O error), not a crash (an HDF5 clean-up at exit on the failed
  file used to end the process with SIGSEGV, status 139), and stderr names the trajectory
  and says "No space left on device";
- `talus info` reads the file and reports F > 0 complete frames; tools/talus_h5.py (SWMR
  read, as for a killed run) finds the same F; their times and steps increase, their rows
  are contiguous and the last frame's values are finite.
Exit status 0 when all hold.
"""
import os
import re
import subprocess
import sys

import numpy as np

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "tools"))
import talus_h5  # noqa: E402

SKIP = 77


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def main():
    talus, scene, outdir = sys.argv[1:4]
    if os.geteuid() != 0:
        print("skipped: mounting a small tmpfs needs root")
        sys.exit(SKIP)
    mnt = os.path.join(outdir, "full")
    os.makedirs(mnt, exist_ok=True)
    subprocess.run(["umount", mnt], capture_output=True)  # a mount left by an earlier run
    mount = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3M", "tmpfs", mnt],
                           capture_output=True, text=True)
    if mount.returncode != 0:
        print(f"skipped: cannot mount a tmpfs here: {mount.stderr.strip()}")
        sys.exit(SKIP)
    try:
        out = os.path.join(mnt, "full.h5")
        with open(scene) as f:
            dt = float(re.search(r"^dt\s*=\s*([0-9.eE+-]+)", f.read(), re.M).group(1))
        cmd = [talus, "run", scene, "-o", out, "--force", "--quiet",
               "--set", "simulation.duration=1000.0", "--set", f"output.interval={dt!r}"]
        early = subprocess.run(cmd + ["--set", "output.compression=0"],
                               capture_output=True, text=True, timeout=600)
        if early.returncode != 4 or "not started" not in early.stderr or out not in early.stderr \
                or "MB free" not in early.stderr:
            fail(f"uncompressed: expected exit 4 before the first step, naming the path and the "
                 f"room; got {early.returncode}:\n{early.stderr[-2000:]}")
        if os.path.exists(out):
            fail("uncompressed: a run refused for want of room left a trajectory file")
        print(f"uncompressed: refused before the first step: {early.stderr.strip().splitlines()[0]}")

        run = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if "warning" not in run.stderr:
            fail(f"compressed: no warning that the rows may not fit:\n{run.stderr[-2000:]}")
        if run.returncode != 4:
            fail(f"exit status {run.returncode}, expected 4 (I/O error):\n{run.stderr[-2000:]}")
        if out not in run.stderr or not ("No space left on device" in run.stderr or
                                         "write failed" in run.stderr):
            fail(f"the message does not name the path and the cause:\n{run.stderr[-2000:]}")

        info = subprocess.run([talus, "info", out], capture_output=True, text=True)
        if info.returncode != 0:
            fail(f"talus info exited {info.returncode}: {info.stderr}")
        frames = int(re.search(r"^\s*frames:\s*(\d+)", info.stdout, re.M).group(1))
        if frames == 0:
            fail("no frame kept: the disk held several before it filled")
        with talus_h5.load(out) as traj:
            if len(traj) != frames:
                fail(f"talus info says {frames} frames, the loader finds {len(traj)}")
            idx = traj.frames
            if not (np.all(np.diff(idx.time) > 0) and np.all(np.diff(idx.step) > 0)):
                fail("frame times or steps not increasing")
            if not (idx.first_row[0] == 0 and
                    np.array_equal(idx.first_row[1:], idx.first_row[:-1] + idx.row_count[:-1])):
                fail("frames' rows are not contiguous")
            last = traj.frame(-1)
            for key in ("position", "velocity", "orientation"):
                if not np.all(np.isfinite(last[key])):
                    fail(f"non-finite {key} in the last frame")
        print(f"disk full after {frames} frames (up to step {int(idx.step[-1])}): exit 4, "
              f"path named, every kept frame consistent")
    finally:
        subprocess.run(["umount", mnt], capture_output=True)


if __name__ == "__main__":
    main()
