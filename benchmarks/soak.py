#!/usr/bin/python3
"""Soak: a long run of a small scene, with the process's memory sampled as it goes.

A run of days must not grow: every per-step buffer is reused or given back, the warm-start
cache holds only the last step's contacts, and the trajectory is streamed to disk. This
runs scenes/rotating_drum.toml with --count beads, 400 by default (a turning drum:
contacts are made and broken all the time, and its walls move), for --steps steps, 10^5
by default (50 s of simulated time at its dt of 0.5 ms: 0.3 s of filling, then the drum
turns), with a frame every --frame-interval simulated seconds (0.05 s: 1000 frames).

While it runs, the resident set of the talus process (VmRSS in /proc/PID/status) is read
each time it prints a progress line (every 5 s when stderr is not a terminal), together
with the step the line reports. Printed and written:
- benchmarks/results/soak.csv: step, simulated time, wall time, RSS per sample;
- benchmarks/results/soak.png: RSS against steps;
- the RSS after 10 % of the steps and at the end, the slope of a least-squares line
  through the samples of the second half (KiB per 10^4 steps), and the verdict: "flat"
  when the second half grew by less than max(1 MiB, 1 %) of its starting RSS.
Exit status 1 when the memory is not flat, so the script can gate a release.

    /usr/bin/python3 benchmarks/soak.py [--steps 100000] [--count 400] [--threads N]
        [--frame-interval 0.05] [--talus build/bin/talus] [--csv PATH] [--png PATH]

About 5 minutes for 10^5 steps of 400 beads on 2 cores.
"""
import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "benchmarks"))
from settle_benchmark import machine_name  # noqa: E402

SCENE = os.path.join(TOP, "scenes", "rotating_drum.toml")
DT = 5e-4         # [s] the scene's step
FILL = 0.3        # [s] its first stage (the beads settle in the still drum)
PROGRESS = re.compile(r"t ([0-9.eE+-]+)/([0-9.eE+-]+) s")


def rss_kib(pid):
    """Resident set of a live process [KiB], or None once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def soak(talus, steps, count, threads, frame_interval, out):
    """Runs the drum for `steps` steps; returns the samples (step, t, wall, rss KiB)."""
    turn = steps * DT - FILL
    if turn <= 0:
        raise SystemExit(f"--steps must exceed the fill stage's {round(FILL / DT)} steps")
    cmd = [talus, "run", SCENE, "-o", out, "--force",
           "--set", f"stage.1.duration={turn!r}", "--set", f"output.interval={frame_interval!r}",
           "--set", f"particles.0.random.count={count}"]
    if threads:
        cmd += ["--threads", str(threads)]
    samples = []
    start = time.monotonic()
    child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    tail = []
    for line in child.stderr:  # not a terminal: a progress line every 5 s
        tail = (tail + [line])[-20:]
        m = PROGRESS.search(line)
        if not m:
            continue
        rss = rss_kib(child.pid)
        if rss is None:
            break
        t = float(m.group(1))
        samples.append((int(round(t / DT)), t, time.monotonic() - start, rss))
    if child.wait() != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({child.returncode}):\n{''.join(tail)}")
    return samples


def fit_slope(xs, ys):
    """Least-squares slope of ys against xs."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx > 0 else 0.0


def plot(samples, png, steps, count):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot([s[0] for s in samples], [s[3] / 1024 for s in samples], "o-", ms=3)
    ax.set_xlabel("step")
    ax.set_ylabel("resident set [MiB]")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.set_title(f"soak: scenes/rotating_drum.toml, {count} beads, {steps} steps", fontsize=10)
    fig.suptitle(machine_name(), fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=120)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=100000)
    ap.add_argument("--count", type=int, default=400, help="beads in the drum")
    ap.add_argument("--threads", type=int, default=0, help="talus threads (default: all cores)")
    ap.add_argument("--frame-interval", type=float, default=0.05, help="[s] between frames")
    ap.add_argument("--talus", default=os.path.join(TOP, "build", "bin", "talus"))
    ap.add_argument("--csv", default=os.path.join(TOP, "benchmarks", "results", "soak.csv"))
    ap.add_argument("--png", default=os.path.join(TOP, "benchmarks", "results", "soak.png"))
    args = ap.parse_args()
    if not os.access(args.talus, os.X_OK):
        raise SystemExit(f"no talus binary at {args.talus}: build it first (tools/run or tools/test)")

    with tempfile.TemporaryDirectory() as tmp:
        samples = soak(args.talus, args.steps, args.count, args.threads, args.frame_interval,
                       os.path.join(tmp, "soak.h5"))
    if len(samples) < 6:
        raise SystemExit(f"only {len(samples)} samples: run more steps")
    with open(args.csv, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["machine", machine_name()])
        w.writerow(["step", "time_s", "wall_s", "rss_kib"])
        for s in samples:
            w.writerow([s[0], f"{s[1]:.6g}", f"{s[2]:.2f}", s[3]])
    plot(samples, args.png, args.steps, args.count)

    early = next(s for s in samples if s[0] >= args.steps // 10)
    half = [s for s in samples if s[0] >= args.steps // 2]
    slope = fit_slope([s[0] for s in half], [s[3] for s in half]) * 1e4  # KiB per 10^4 steps
    growth = half[-1][3] - half[0][3]
    allowed = max(1024, 0.01 * half[0][3])
    flat = growth < allowed
    print(f"soak: {samples[-1][0]} steps of scenes/rotating_drum.toml ({args.count} beads) in {samples[-1][2]:.0f} s "
          f"on {machine_name()}, {len(samples)} samples")
    print(f"  RSS at step {early[0]}: {early[3] / 1024:.1f} MiB; at step {samples[-1][0]}: "
          f"{samples[-1][3] / 1024:.1f} MiB; peak sample {max(s[3] for s in samples) / 1024:.1f} MiB")
    print(f"  second half: {growth:+d} KiB from step {half[0][0]} to {half[-1][0]} "
          f"(allowed < {allowed:.0f} KiB), fitted slope {slope:+.1f} KiB per 10^4 steps")
    print(f"  memory {'flat' if flat else 'GROWING'}; wrote {args.csv} and {args.png}")
    return 0 if flat else 1


if __name__ == "__main__":
    sys.exit(main())
