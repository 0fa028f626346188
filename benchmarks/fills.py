#!/usr/bin/python3
"""One bed, several fills, one or more builds: the figures a change to the solver is judged by.

A pour is chaotic: the same scene on two builds that differ only in the last bits of one
rounding settles through different sequences of impacts and steps, and one run's time on
this machine moves by 10 % between sittings anyway (benchmarks/README.md, "Session 62").
So a change is measured over several fills
of the same bed: fill k adds 10 k to every `random = {..., seed = s}` of the scene's
[[particles]] tables (`--set particles.I.random.seed=...`), and each build runs every fill,
builds alternating within a fill so that the machine's noise falls on all of them.

    /usr/bin/python3 benchmarks/fills.py benchmarks/polydisperse_1to5.toml \\
        --binary 5d8746c=/tmp/talus_5d8746c --binary ee1795d=build/bin/talus --fills 3

Name each build by its commit (`--binary 5d8746c=/tmp/talus_5d8746c`): the name goes to the
CSV. Differences of a few per cent are not resolved this way: two builds doing the very same
computation (the bidisperse bed with its cluster sweeps off, before and after a change to
them) ran 5 % apart, from the code's layout or the machine; count the work too where it matters.

Prints one line per run (wall time, steps, solve time, converged share, mean height of the
last frame) and each build's means; appends the runs to benchmarks/results/fills.csv. Run it
with nothing else on the machine.
"""
import argparse
import datetime
import os
import re
import subprocess
import sys
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import talus_h5  # noqa: E402
from settle_benchmark import append_rows, machine_name, seconds  # noqa: E402


def seed_overrides(scene, fill):
    """--set arguments moving every [[particles]] random seed of `scene` by 10 × fill."""
    with open(scene, "rb") as f:
        data = tomllib.load(f)
    out = []
    for i, table in enumerate(data.get("particles", [])):
        rnd = table.get("random")
        if isinstance(rnd, dict) and "seed" in rnd:
            out += ["--set", f"particles.{i}.random.seed={int(rnd['seed']) + 10 * fill}"]
    return out


def run(binary, scene, fill, out_dir, name, extra):
    h5 = os.path.join(out_dir, f"{name}-fill{fill}.h5")
    cmd = [binary, "run", "--force", scene, "-o", h5] + seed_overrides(scene, fill) + extra
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"fills.py: {' '.join(cmd)} exited {p.returncode}:\n{p.stderr[-2000:]}")
    err = p.stderr
    m = re.search(r"steps: ([\d,]+) in ([\d.,]+ (?:µs|ms|s)) ", err)
    solve = re.search(r"solve \d+ % \(([\d.,]+ (?:µs|ms|s))\)", err)
    conv = re.search(r"steps converged \((\d+) %\)", err)
    if not (m and solve and conv):
        sys.exit(f"fills.py: no end-of-run lines from {binary}:\n{err[-2000:]}")
    solve_s = seconds(solve.group(1))
    traj = talus_h5.load(h5)
    z = float(traj.frame(len(traj) - 1)["position"][:, 2].mean())
    return {"steps": int(m.group(1).replace(",", "")), "time_s": seconds(m.group(2)), "solve_s": solve_s,
            "converged_pct": int(conv.group(1)), "mean_z_mm": round(1e3 * z, 4)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scene")
    ap.add_argument("--binary", action="append", required=True, metavar="NAME=PATH",
                    help="a build to run (repeat for several)")
    ap.add_argument("--fills", type=int, default=3)
    ap.add_argument("--first-fill", type=int, default=0, help="the first fill's k (more fills in a later sitting)")
    ap.add_argument("--out", default="/tmp/fills", help="where the runs' files go")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="passed to every run")
    ap.add_argument("--csv", default=os.path.join(ROOT, "benchmarks", "results", "fills.csv"))
    args = ap.parse_args()
    builds = []
    for b in args.binary:
        name, _, path = b.partition("=")
        if not path:
            sys.exit(f"fills.py: --binary {b}: expected NAME=PATH")
        builds.append((name, os.path.abspath(path)))
    os.makedirs(args.out, exist_ok=True)
    extra = [x for s in args.set for x in ("--set", s)]
    when = datetime.datetime.now().isoformat(timespec="seconds")
    where = machine_name()
    print(f"machine: {where}; {args.scene}, {args.fills} fills")
    rows = []
    for fill in range(args.first_fill, args.first_fill + args.fills):
        for name, path in builds:
            r = run(path, args.scene, fill, args.out, name, extra)
            rows.append({"date": when, "machine": where, "scene": os.path.relpath(os.path.abspath(args.scene), ROOT),
                         "build": name, "fill": fill, **r, "set": " ".join(args.set)})
            print(f"{name:>10} fill {fill}: {r['time_s']:7.1f} s, {r['steps']:6,} steps, solve {r['solve_s']:6.1f} s, "
                  f"{r['converged_pct']:3d} % converged, mean z {r['mean_z_mm']:.3f} mm", flush=True)
    for name, _ in builds:
        mine = [r for r in rows if r["build"] == name]
        mean = lambda k: sum(r[k] for r in mine) / len(mine)  # noqa: E731
        print(f"{name:>10} mean: {mean('time_s'):7.1f} s, {mean('steps'):8.0f} steps, solve {mean('solve_s'):6.1f} s, "
              f"{mean('converged_pct'):5.1f} % converged, mean z {mean('mean_z_mm'):.3f} mm")
    append_rows(args.csv, rows)


if __name__ == "__main__":
    main()
