#!/usr/bin/python3
"""Scaling of the settle scene with N: time per step and peak memory at N = 10^3 ... 10^6.

Each size is scenes/million.toml with its lattice and box shrunk to n x n x n beads,
n = round(N^(1/3)) (10, 22, 46, 100: 1000, 10648, 97336, 1000000 beads), same spacings,
bead, solver and output settings (float32, gzip 1), run with --set overrides: nothing but
the size changes. Each run takes --steps steps after an optional settling phase of
--settle simulated seconds, with frames only at the start and the end.

Measured, per size:
- time per step: the step loop's wall time as `talus run` reports it at the end
  ("steps: K in T s" of the "talus: done" line; set-up, i.e. scene parsing and generation, is excluded,
  frames handed to the background writer are included). With --settle, a second run of
  the settling phase alone is subtracted: (T(settle + steps) - T(settle)) / steps.
- peak memory: the child's peak resident set (ru_maxrss from os.wait4 on that child,
  so each size is measured alone), and bytes per body = peak RSS / N.
- mean contacts and solver iterations over the measured steps (from the diagnostics).

Writes benchmarks/results/scaling.csv (one row per size, the machine named) and
benchmarks/results/scaling.png (log-log: time per step and memory against N, with a
line of slope 1 through the largest size for reference), and prints the table.

    /usr/bin/python3 benchmarks/scaling.py [--sizes 1000,10000,100000,1000000]
        [--steps 20] [--settle 0] [--threads N] [--talus build/bin/talus]
        [--csv PATH] [--png PATH]

The 10^6 run needs a few GB and minutes per step on 2 cores: run it on an idle machine.
"""
import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "tools"))
sys.path.insert(0, os.path.join(TOP, "benchmarks"))
from settle_benchmark import machine_name  # noqa: E402
import talus_h5  # noqa: E402

SCENE = os.path.join(TOP, "scenes", "million.toml")
SPACING = 0.0033   # [m] lattice spacing of scenes/million.toml across (1.1 bead diameters)
SPACING_Z = 0.00303  # [m] and up, within a column (1.01 diameters)
FIRST = 0.0033     # [m] first lattice point across
FIRST_Z = 0.00153  # [m] and up (0.03 mm above the floor)
HEIGHT = 0.4       # [m] box height
DT = 5e-4          # [s] the scene's step
# "talus: done at t = 0.1 s. steps: 1,000 in 26.4 s (26.4 ms per step)"
STEPS_LINE = re.compile(r"steps: ([\d,]+) in ([\d,.]+) (s|ms|µs) ")
UNIT = {"s": 1.0, "ms": 1e-3, "µs": 1e-6}


def overrides(n, duration):
    """--set values that shrink scenes/million.toml to n^3 beads and run `duration` s."""
    last = FIRST + (n - 1) * SPACING
    top = FIRST_Z + (n - 1) * SPACING_Z + 0.5 * (SPACING_Z - 0.003)  # half a gap of slack
    side = last + SPACING  # the scene's clearance to the side walls (1.8 mm)
    return [f"particles.0.lattice.max=[{last!r}, {last!r}, {top!r}]",
            f"wall.0.max=[{side!r}, {side!r}, {HEIGHT!r}]",
            f"simulation.duration={duration!r}",
            f"output.interval={duration!r}"]  # frames at the start and the end only


def run(talus, n, steps, threads, out):
    """One run of `steps` steps at n^3; returns (steps, loop seconds, peak RSS bytes)."""
    cmd = [talus, "run", SCENE, "-o", out, "--force"]
    for s in overrides(n, steps * DT):
        cmd += ["--set", s]
    if threads:
        cmd += ["--threads", str(threads)]
    with tempfile.TemporaryFile(mode="w+") as err:
        child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read()
    if child.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({child.returncode}):\n{text[-2000:]}")
    m = STEPS_LINE.findall(text)
    if not m:
        raise RuntimeError(f"no 'steps: K in T s' line in the output of {' '.join(cmd)}")
    done = int(m[-1][0].replace(",", ""))
    seconds = float(m[-1][1].replace(",", "")) * UNIT[m[-1][2]]
    return done, seconds, usage.ru_maxrss * 1024  # Linux: kB


def diagnostics_means(path, first_step):
    """Mean contacts and iterations over the steps after `first_step`."""
    with talus_h5.load(path) as r:
        d = r.diagnostics
        keep = d["step"] > first_step
        return float(d["contacts"][keep].mean()), float(d["iterations"][keep].mean())


def plot(rows, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    n = np.array([r["bodies"] for r in rows], dtype=float)
    t = np.array([r["seconds_per_step"] for r in rows])
    mem = np.array([r["peak_rss_bytes"] for r in rows]) / 2**20
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
    for ax, y, label in ((axes[0], t, "time per step [s]"), (axes[1], mem, "peak RSS [MiB]")):
        ax.loglog(n, y, "o-", label="Talus")
        # through the largest size: at small N memory is the process's fixed cost
        ax.loglog(n, y[-1] * n / n[-1], "k--", lw=0.8, label="slope 1 (linear in N)")
        ax.set_xlabel("bodies N")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    axes[0].set_title("step loop wall time per step")
    axes[1].set_title("peak memory of the run")
    fig.suptitle(f"scenes/million.toml scaled: {machine_name()}", fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=120)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000,1000000",
                    help="bead counts; each becomes the nearest cube n^3")
    ap.add_argument("--steps", type=int, default=20, help="measured steps per size")
    ap.add_argument("--settle", type=float, default=0.0,
                    help="simulated seconds run before the measured steps (0: none)")
    ap.add_argument("--threads", type=int, default=0, help="worker threads (0: all cores)")
    ap.add_argument("--talus", default=os.path.join(TOP, "build", "bin", "talus"))
    ap.add_argument("--csv", default=os.path.join(TOP, "benchmarks", "results", "scaling.csv"))
    ap.add_argument("--png", default=os.path.join(TOP, "benchmarks", "results", "scaling.png"))
    args = ap.parse_args()
    if args.steps < 1:
        ap.error("--steps must be at least 1")
    settle_steps = int(round(args.settle / DT))

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            n = max(1, round(size ** (1.0 / 3.0)))
            out = os.path.join(tmp, f"n{n}.h5")
            total, loop, peak = run(args.talus, n, settle_steps + args.steps, args.threads, out)
            if settle_steps:
                _, settle_loop, settle_peak = run(args.talus, n, settle_steps, args.threads,
                                                  os.path.join(tmp, f"n{n}_settle.h5"))
                loop -= settle_loop
                peak = max(peak, settle_peak)
            contacts, iterations = diagnostics_means(out, settle_steps)
            row = {"machine": machine_name(), "n_per_axis": n, "bodies": n ** 3,
                   "settle_steps": settle_steps, "steps": args.steps,
                   "threads": args.threads or os.cpu_count(),
                   "loop_seconds": loop, "seconds_per_step": loop / args.steps,
                   "peak_rss_bytes": peak, "bytes_per_body": peak / n ** 3,
                   "mean_contacts": contacts, "mean_iterations": iterations}
            rows.append(row)
            print(f"N = {n ** 3:>8}: {row['seconds_per_step']:.4g} s/step, peak RSS "
                  f"{peak / 2**20:.1f} MiB ({row['bytes_per_body']:.0f} B/body), "
                  f"{contacts:.0f} contacts, {iterations:.1f} iterations", flush=True)

    os.makedirs(os.path.dirname(os.path.abspath(args.csv)), exist_ok=True)
    with open(args.csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    plot(rows, args.png)

    # marginal bytes per body: the growth of the peak over the smallest size, per added
    # body (the process's fixed cost, libraries and thread stacks, drops out)
    print(f"\n{'N':>9} {'s/step':>10} {'us/step/body':>13} {'peak MiB':>9} {'B/body':>8} "
          f"{'marginal B/body':>16}")
    for r in rows:
        base = rows[0]
        marginal = ((r["peak_rss_bytes"] - base["peak_rss_bytes"]) / (r["bodies"] - base["bodies"])
                    if r["bodies"] > base["bodies"] else float("nan"))
        print(f"{r['bodies']:>9} {r['seconds_per_step']:>10.4g} "
              f"{1e6 * r['seconds_per_step'] / r['bodies']:>13.3f} "
              f"{r['peak_rss_bytes'] / 2**20:>9.1f} {r['bytes_per_body']:>8.0f} {marginal:>16.0f}")
    if len(rows) > 1:
        import math
        a, b = rows[0], rows[-1]
        span = math.log(b["bodies"] / a["bodies"])
        print(f"log-log slopes from N = {a['bodies']} to {b['bodies']}: time "
              f"{math.log(b['seconds_per_step'] / a['seconds_per_step']) / span:.2f}, memory "
              f"{math.log(b['peak_rss_bytes'] / a['peak_rss_bytes']) / span:.2f} (1 = linear)")
    print(f"wrote {args.csv} and {args.png}")


if __name__ == "__main__":
    main()
