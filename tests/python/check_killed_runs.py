#!/usr/bin/python3
"""A run killed with SIGKILL at five random moments leaves a trajectory that still reads.

    check_killed_runs.py TALUS SCENE OUTDIR [SEED] [--mpirun NP [--parallel-output]]

Each time, `talus run SCENE` (a frame every 5 steps, a long duration) is started afresh and
killed with SIGKILL after a random delay (seeded, 0 to 2.2 s of wall time after its first
line, so some kills land in the first frames and some hundreds of frames in). Then:
- `talus info` exits 0 and reports some number of frames F (0 if killed before the first;
  frames whose rows' chunk index the kill tore are left out, and both readers must leave out
  the same number: docs/output-format.md);
- h5py opens the file (in SWMR read mode, as tools/talus_h5.py does: a file killed while
  being written keeps its "open for writing" mark until `h5clear -s --increment=0`, which
  `talus info` says) and tools/talus_h5.py finds the same F complete frames;
- the frames are consistent: times and steps strictly increasing, steps on the 5-step
  cadence, each frame's rows right after the previous frame's, as many rows as bodies, and
  every row of the last frame finite; the diagnostics' steps run 1, 2, 3, ... without gaps
  and cover every complete frame's step.
With --mpirun NP the run is `mpirun -np NP talus run` (docs/mpi.md), and the kill is a
SIGKILL to every rank at once (a node lost, the kernel's out-of-memory killer): rank 0's file
must read the same way, and mpirun must end. With --parallel-output every rank writes its own
rows of the file (docs/output-format.md, "A file written in parallel": no SWMR, a committed
frame count instead), and `talus info` must say so.
Exit status 0 when all five hold.
"""
import faulthandler
import os
import random
import re
import select
import signal
import subprocess
import sys
import time
import tomllib

import numpy as np

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "tools"))
import talus_h5  # noqa: E402

EVERY = 5  # steps between frames
STALL = 60  # [s] the longest a step of the test may take before it is reported as stuck
WATCHDOG = 4 * STALL  # [s] the longest one kill's round may take (faulthandler, below)


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def main():
    args = sys.argv[1:]
    ranks = 0
    if "--mpirun" in args:
        i = args.index("--mpirun")
        ranks = int(args[i + 1])
        del args[i:i + 2]
    parallel = "--parallel-output" in args
    if parallel:
        args.remove("--parallel-output")
    talus, scene, outdir = args[0:3]
    seed = int(args[3]) if len(args) > 3 else 20261123
    launcher, env = [], None
    if ranks:  # the MPI tests' own launcher (check_mpi_runs.py)
        from check_mpi_runs import children, env as mpi_env, mpirun
        launcher, env = mpirun(ranks), mpi_env()
    rng = random.Random(seed)
    os.makedirs(outdir, exist_ok=True)
    out = os.path.join(outdir, "killed.h5")
    with open(scene, "rb") as f:
        dt = tomllib.load(f)["simulation"]["dt"]
    for k in range(5):
        # A kill that hangs the test stops it here with every thread's stack, instead of
        # running into ctest's timeout in silence. (Twice in CI a kill tore a metadata block
        # and h5py retried it for ever; the writer now keeps blocks within pages and the
        # loader gives up on a torn one: docs/output-format.md, check_damaged_trajectory.py.)
        faulthandler.dump_traceback_later(WATCHDOG, exit=True)
        delay = rng.uniform(0.0, 2.2)
        child = subprocess.Popen(
            launcher + [talus, "run", scene, "-o", out, "--force",
                        "--set", "simulation.duration=1000.0", "--set", f"output.interval={EVERY * dt!r}",
                        *(["--parallel-output"] if parallel else [])],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        # the delay counts from the run's first line (file created, first frame handed over),
        # so a slow start (a sanitizer build, a loaded machine) does not eat it
        # a run that never starts would hang the test until ctest's timeout: say where instead
        if not select.select([child.stderr], [], [], STALL)[0]:
            child.kill()
            fail(f"kill {k}: talus run printed nothing in {STALL} s (stuck before its first line)")
        child.stderr.readline()
        time.sleep(delay)
        if child.poll() is not None:
            fail(f"kill {k}: the run ended by itself ({child.returncode}): {child.stderr.read()!r}")
        if ranks:
            pids = children(child.pid)
            if len(pids) != ranks:
                child.kill()
                fail(f"kill {k}: mpirun has {len(pids)} child processes, expected {ranks}")
            for pid in pids:
                os.kill(pid, signal.SIGKILL)
            try:
                child.wait(timeout=STALL)
            except subprocess.TimeoutExpired:
                child.kill()
                fail(f"kill {k}: mpirun did not end after its ranks were killed")
            if child.returncode == 0:
                fail(f"kill {k}: mpirun exited 0 after its ranks were killed")
        else:
            child.send_signal(signal.SIGKILL)
            child.wait()
            if child.returncode != -signal.SIGKILL:
                fail(f"kill {k}: exit status {child.returncode}, expected SIGKILL")

        try:
            info = subprocess.run([talus, "info", out], capture_output=True, text=True, timeout=STALL)
        except subprocess.TimeoutExpired:
            fail(f"kill {k}: talus info of the killed file did not finish in {STALL} s")
        if info.returncode != 0:
            fail(f"kill {k}: talus info exited {info.returncode}: {info.stderr}")
        m = re.search(r"^\s*frames:\s*(\d+)", info.stdout, re.M)
        if not m:
            fail(f"kill {k}: no frame count in talus info:\n{info.stdout}")
        frames = int(m.group(1))  # 0 is possible: killed before the first frame was written
        if parallel and "written in parallel and not closed" not in info.stdout:
            fail(f"kill {k}: talus info does not say the file was written in parallel and not closed:\n{info.stdout}")

        with talus_h5.load(out) as run:
            if len(run) != frames:
                fail(f"kill {k}: talus info says {frames} frames, the loader finds {len(run)}")
            if frames == 0:
                print(f"kill {k}: after {delay:.2f} s, no frame complete yet, file readable", flush=True)
                continue
            idx = run.frames
            if not (np.all(np.diff(idx.time) > 0) and np.all(np.diff(idx.step) > 0)):
                fail(f"kill {k}: frame times or steps not increasing")
            if not np.all(idx.step % EVERY == 0):
                fail(f"kill {k}: frame steps off the {EVERY}-step cadence: {idx.step[:10]}")
            if not (idx.first_row[0] == 0 and
                    np.array_equal(idx.first_row[1:], idx.first_row[:-1] + idx.row_count[:-1])):
                fail(f"kill {k}: frames' rows are not contiguous")
            last = run.frame(-1)
            if len(last["id"]) != idx.row_count[-1]:
                fail(f"kill {k}: last frame has {len(last['id'])} rows, index says {idx.row_count[-1]}")
            for key in ("position", "velocity", "orientation"):
                if not np.all(np.isfinite(last[key])):
                    fail(f"kill {k}: non-finite {key} in the last frame")
            steps = run.diagnostics["step"]
            if len(steps) and not np.array_equal(steps, np.arange(1, len(steps) + 1)):
                fail(f"kill {k}: diagnostics steps are not 1, 2, 3, ...")
            if idx.step[-1] > len(steps):
                fail(f"kill {k}: frame at step {idx.step[-1]} but diagnostics end at {len(steps)}")
        torn = re.search(r"^\s*torn:\s*(\d+)", info.stdout, re.M)
        if torn and int(torn.group(1)) != run.torn_frames:
            fail(f"kill {k}: talus info leaves out {torn.group(1)} torn frames, the loader {run.torn_frames}")
        print(f"kill {k}: after {delay:.2f} s, {frames} complete frames (up to step "
              f"{int(idx.step[-1])}), file consistent"
              + (f"; {torn.group(1)} more left out, their chunk index torn by the kill" if torn else ""),
              flush=True)
    faulthandler.cancel_dump_traceback_later()
    print("all five killed runs left readable, consistent trajectories")


if __name__ == "__main__":
    main()
