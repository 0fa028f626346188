#!/usr/bin/python3
"""Whole-scene benchmark of benchmarks/settle_pgs.toml (the quick start's scene until 2026-12-06:
PGS at a fixed 2 ms, kept unchanged for this benchmark's figures).

Runs build/bin/talus on the settle scene and prints: steps per second, contact-iterations
per second (sum over steps of contacts x iterations, divided by the total solver time),
and memory per body, (peak RSS of the run - peak RSS of a one-body run) / bodies.
Figures go to stdout and, as one CSV row per run, to benchmarks/results/settle.csv with
the machine named. Usage: /usr/bin/python3 benchmarks/settle_benchmark.py [--threads N]
"""
import argparse
import csv
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "tools"))
import talus_h5  # noqa: E402

ONE_BODY = """
[simulation]
dt = 1e-3
duration = 0.01
[output]
path = "one.h5"
interval = 0.01
[[material]]
name = "glass"
density = 2500.0
friction = 0.5
[[wall]]
type = "box"
min = [0.0, 0.0, 0.0]
max = [0.2, 0.2, 0.7]
material = "glass"
[[body]]
shape = "sphere"
radius = 0.005
material = "glass"
position = [0.1, 0.1, 0.1]
"""


def run(talus, scene, out, threads):
    """Run talus in a child; return (wall seconds, peak RSS bytes of that child)."""
    cmd = [talus, "run", scene, "-o", out, "--force", "--quiet"]
    if threads:
        cmd += ["--threads", str(threads)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True)
    wall = time.perf_counter() - t0
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if peak_kb < before:
        peak_kb = before
    return wall, peak_kb * 1024


def machine_name():
    cpu = "unknown cpu"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{platform.node()} ({cpu}, {os.cpu_count()} cores)"


def seconds(text):
    """A duration as talus prints it (tools/talus_main.cpp, seconds_text): "1,234 s", "12.3 ms"."""
    value, unit = text.split()
    return float(value.replace(",", "")) * {"s": 1.0, "ms": 1e-3, "µs": 1e-6, "us": 1e-6}[unit]


def append_rows(path, rows):
    """Appends dict rows to the CSV at `path`, with a header when the file is new."""
    new = not os.path.exists(path)
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        if new:
            w.writeheader()
        w.writerows(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--scene", default=os.path.join(TOP, "benchmarks", "settle_pgs.toml"))
    args = ap.parse_args()
    talus = os.path.join(TOP, "build", "bin", "talus")
    with tempfile.TemporaryDirectory() as tmp:
        one = os.path.join(tmp, "one.toml")
        with open(one, "w") as f:
            f.write(ONE_BODY)
        # baseline first: RUSAGE_CHILDREN keeps the maximum over all children so far
        _, base = run(talus, one, os.path.join(tmp, "one.h5"), args.threads)
        out = os.path.join(tmp, "settle.h5")
        wall, peak = run(talus, args.scene, out, args.threads)
        t = talus_h5.load(out)
        d = t.diagnostics
        steps = len(d["step"])
        bodies = int(t.frames.row_count[-1])
        solver_time = float(d["solver_wall_time"].sum())
        contact_its = float((d["contacts"].astype(float) * d["iterations"]).sum())
    row = {
        "machine": machine_name(),
        "threads": args.threads or os.cpu_count(),
        "bodies": bodies,
        "steps": steps,
        "wall_s": round(wall, 3),
        "steps_per_s": round(steps / wall, 2),
        "solver_s": round(solver_time, 3),
        "contact_iterations_per_s": round(contact_its / solver_time) if solver_time > 0 else 0,
        "mean_contacts": round(float(d["contacts"].mean()), 1),
        "mean_iterations": round(float(d["iterations"].mean()), 2),
        "final_residual": float(d["residual"][-1]),
        "bytes_per_body": round((peak - base) / bodies) if bodies else 0,
        "peak_rss_MB": round(peak / 2**20, 1),
    }
    for k, v in row.items():
        print(f"{k:26s} {v}")
    os.makedirs(os.path.join(TOP, "benchmarks", "results"), exist_ok=True)
    append_rows(os.path.join(TOP, "benchmarks", "results", "settle.csv"), [row])


if __name__ == "__main__":
    main()
