#!/usr/bin/python3
"""Effect of warm start on the settle scene: iterations, residual and solver time per step
with [solver] warm_start on and off, over the settled part of the run (t > 0.6 s), with a
generous iteration cap (500) so the cold solver is not simply cut off at the scene's 30.

Usage: /usr/bin/python3 benchmarks/warm_start_benchmark.py [--solver pgs|pj|apgd]
Writes benchmarks/results/warm_start.csv (one row per setting, machine named).
"""
import argparse
import csv
import os
import platform
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "tools"))
import talus_h5  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--solver", default="pgs")
    ap.add_argument("--cap", type=int, default=500)
    args = ap.parse_args()
    talus = os.path.join(TOP, "build", "bin", "talus")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for warm in ("true", "false"):
            out = os.path.join(tmp, f"warm_{warm}.h5")
            subprocess.run([talus, "run", os.path.join(TOP, "benchmarks", "settle_pgs.toml"), "-o", out,
                            "--force", "--quiet", "--set", f'solver.type="{args.solver}"',
                            "--set", f"solver.warm_start={warm}",
                            "--set", f"solver.max_iterations={args.cap}"], check=True)
            d = talus_h5.load(out).diagnostics
            m = d["time"] > 0.6
            rows.append({
                "machine": f"{platform.node()} ({os.cpu_count()} cores)",
                "solver": args.solver, "warm_start": warm, "iteration_cap": args.cap,
                "mean_iterations": round(float(d["iterations"][m].mean()), 1),
                "mean_residual": float(d["residual"][m].mean()),
                "converged_percent": round(100.0 * float(d["converged"][m].mean()), 1),
                "solver_s_per_step": round(float(d["solver_wall_time"][m].mean()), 4),
            })
    for r in rows:
        print(", ".join(f"{k} {v}" for k, v in r.items() if k != "machine"))
    os.makedirs(os.path.join(TOP, "benchmarks", "results"), exist_ok=True)
    path = os.path.join(TOP, "benchmarks", "results", "warm_start.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
