#!/usr/bin/python3
"""One process of 2 threads against 2 MPI ranks of 1 thread, the same scene, the same binary.

    /usr/bin/python3 benchmarks/ranks_run.py [--talus build/bin/talus] [--repeat 2]
        [--scene benchmarks/peers/settle_physics.toml ...] [--out benchmarks/results/ranks_run.csv]

Runs `talus run SCENE --threads 2` and `mpirun -np 2 talus run SCENE --threads 1
--rank-min-contacts N` alternately (N: the default, and 0 for every solve over the ranks),
`--repeat` times each, in this invocation: the machine is shared, so only side-by-side
figures compare. Each run's wall time a step comes from talus's "done" line; the ranks' line
(solves over the ranks, messages and kB an iteration) is kept; every file is compared with
the one-process run's by h5diff, but for the solver's wall time (they must be equal:
docs/mpi.md). Rows are appended to the
CSV with the machine, the commit and the date. Needs a quiet machine: nothing else running.
"""
import argparse
import datetime
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from settle_benchmark import append_rows, machine_name, seconds  # noqa: E402


def mpirun(np_, *args):
    return ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(np_), *args]


def env():
    e = dict(os.environ)
    e.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    e.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return e


def per_step(stderr):
    m = re.search(r"talus: done at t = \S+ s\. steps: ([\d,]+) in [\d.,]+ \S+ \(([\d.]+) (\S+) per step\)", stderr)
    if not m:
        raise SystemExit("no 'done' line in talus's output:\n" + stderr[-2000:])
    return int(m.group(1).replace(",", "")), seconds(f"{m.group(2)} {m.group(3)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--talus", default=os.path.join(TOP, "build", "bin", "talus"))
    ap.add_argument("--scene", action="append")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "ranks_run.csv"))
    a = ap.parse_args()
    scenes = [os.path.abspath(s) for s in a.scene] if a.scene else [os.path.join(HERE, "peers", "settle_physics.toml"),
                         os.path.join(HERE, "peers", "randompack_physics.toml")]
    commit = subprocess.run(["git", "-C", TOP, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for scene in scenes:
            name = os.path.splitext(os.path.basename(scene))[0]
            ref = os.path.join(tmp, name + "_one.h5")
            variants = [("1 process x 2 threads", [a.talus, "run", scene, "-o", ref, "--force", "--threads", "2"], ref)]
            for least in ("1000", "0"):
                out = os.path.join(tmp, f"{name}_np2_{least}.h5")
                variants.append((f"2 ranks x 1 thread, --rank-min-contacts {least}",
                                 mpirun(2, a.talus, "run", scene, "-o", out, "--force", "--threads", "1",
                                        "--rank-min-contacts", least), out))
            for k in range(a.repeat):
                for label, cmd, out in variants:
                    t0 = time.monotonic()
                    p = subprocess.run(cmd, capture_output=True, text=True, env=env(), cwd=tmp)
                    wall = time.monotonic() - t0
                    if p.returncode != 0:
                        raise SystemExit(f"{label} on {scene}: exit {p.returncode}\n{p.stderr[-2000:]}")
                    steps, step_s = per_step(p.stderr)
                    ranks = next((l for l in p.stderr.splitlines() if l.startswith("talus: ranks: ")), "")
                    same = out == ref or subprocess.run(
                        ["h5diff", "--exclude-path", "/diagnostics/solver_wall_time", ref, out],
                        capture_output=True).returncode == 0
                    if not same:
                        raise SystemExit(f"{label} on {scene}: the file differs from one process's")
                    print(f"{name:26s} {label:45s} {steps} steps, {step_s * 1e3:8.2f} ms a step ({wall:.0f} s)"
                          + (f"\n    {ranks}" if ranks else ""), flush=True)
                    rows.append({"date": datetime.date.today().isoformat(), "machine": machine_name(),
                                 "commit": commit, "scene": name, "run": label, "repeat": k + 1,
                                 "steps": steps, "ms_per_step": f"{step_s * 1e3:.3f}",
                                 "same_file": same, "ranks_line": ranks.replace("talus: ranks: ", "")})
    append_rows(a.out, rows)
    print(f"rows appended to {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
