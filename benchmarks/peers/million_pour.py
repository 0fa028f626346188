#!/usr/bin/python3
"""A million grains poured at random, against LIGGGHTS's rate on the random pack (issue 22).

    /usr/bin/python3 benchmarks/peers/million_pour.py [--duration 0.25] [--wall-limit S]
        [--threads 2] [--procs 2] [--skip-liggghts] [--scene S] [--set K=V ...]

Runs Talus on benchmarks/peers/pour_million.toml (10⁶ spheres of 3 mm falling at random
into a 0.6 × 0.6 × 0.3 m box, the physics only: the engine's defaults) for `--duration`
simulated seconds, and LIGGGHTS on ../shared/peers/liggghts/in.randompack (24,389 of the same
grains, same fall, same box height) in this one invocation. LIGGGHTS cannot run the million
on this machine in a session (hours), so its time for the million is extrapolated from its
particle-step rate on the random pack: grains × steps / loop time, the loop time being
LIGGGHTS's own "Loop time" (its set-up and insertion left out, which favours LIGGGHTS). Its
time per simulated second for N grains is then N / (its dt × that rate). Talus's figure is
its whole process's wall time (fill, set-up and output included) over the simulated time.

The default duration, 0.25 s, is the pour: the grains from the top land at about 0.25 s,
and those are the short, heavily iterated steps (on the random pack the first 0.25 s take
about two thirds of the 0.5 s run's time), so the time per simulated second it gives is
above that of the whole settle (conservative for Talus). `--duration 0.5` runs the whole
settle to rest.

On this 2-core machine the pour takes hours (about 1,340 s for its first 0.113 s, and the
steps shorten as the grains land): `--wall-limit S` stops Talus with SIGTERM after S seconds
of wall time (it stops after its step, closes the trajectory and writes a checkpoint), and
the figures are then those of the simulated time it reached, which the output says. The
first 0.1 s is mostly free fall, so a limited run understates the pour's cost.

Prints the two rates, their ratio (issue 22's goal: Talus at least 3× faster), Talus's peak
resident memory (goal: at most 1 GB), steps, step sizes, converged share, largest
penetration and kinetic energy; appends a row to benchmarks/results/pour_million.csv.
`--keep DIR` keeps Talus's trajectory (and its checkpoint, after a wall limit) in DIR: a
stopped pour can be continued, or its last state started from (`[start] from`).
"""
import argparse
import datetime
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from liggghts_side_by_side import (DIAMETER, SHARED, TOP, append_rows, ensure_peers,  # noqa: E402
                                   liggghts_output, machine_name)
import talus_h5  # noqa: E402  (tools/, on the path from liggghts_side_by_side)

def run_talus(binary, scene, duration, threads, sets, workdir, wall_limit=None):
    """Runs Talus with its progress shown (stopped by SIGTERM after `wall_limit` seconds, if
    given); returns its figures and the child's peak RSS."""
    if not os.access(binary, os.X_OK):
        sys.exit(f"million_pour: build {binary} first (tools/run or tools/test)")
    out_h5 = os.path.join(workdir, "pour_million.h5")
    cmd = [binary, "run", scene, "-o", out_h5, "--force", "--threads", str(threads),
           "--set", f"simulation.duration={duration}"]
    for s in sets:
        cmd += ["--set", s]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    child = subprocess.Popen(cmd)
    stopped = False
    try:
        child.wait(timeout=wall_limit)
    except subprocess.TimeoutExpired:
        child.send_signal(signal.SIGTERM)  # stops after the step: trajectory closed, checkpoint
        stopped = True
        child.wait()
    wall = time.perf_counter() - t0
    stopped = stopped and child.returncode == 143  # (it may have ended on its own meanwhile)
    if child.returncode != 0 and not stopped:
        sys.exit(f"million_pour: talus failed with exit {child.returncode}")
    peak = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) * 1024
    with talus_h5.load(out_h5) as run:
        d = run.diagnostics
        last = run.frame(-1)
        return {
            "wall": wall, "peak": peak, "bodies": len(last["id"]), "stopped": stopped,
            "time": float(d["time"][-1]),
            "steps": int(d["step"][-1]),
            "dt": (float(np.min(d["dt"])), float(np.max(d["dt"]))),
            "converged": float(np.mean(d["converged"])),
            "penetration": float(np.max(d["contact_infeasibility"])),
            "ke": float(d["kinetic_energy"][-1]),
            "contacts": int(np.max(d["contacts"])) if "contacts" in d else -1,
            "z": float(np.mean(last["position"][:, 2])),
        }


def run_liggghts(input_path, procs, workdir):
    """Runs LIGGGHTS; returns (loop seconds, atoms, steps, its dt)."""
    with open(input_path) as f:
        text = f.read()
    m = re.search(r"^\s*timestep\s+(\S+)", text, re.M)
    if not m:
        sys.exit(f"million_pour: no timestep in {input_path}")
    dt = float(m.group(1))
    out, _ = liggghts_output(input_path, procs, workdir, "million_pour")
    loops = re.findall(r"Loop time of (\S+) on \d+ procs for (\d+) steps with (\d+) atoms",
                       out.stdout)
    if not loops:
        sys.exit("million_pour: no 'Loop time' line from LIGGGHTS:\n" + out.stdout[-2000:])
    seconds = sum(float(t) for t, _, _ in loops)
    steps = sum(int(s) for _, s, _ in loops)
    atoms = int(loops[-1][2])
    return seconds, atoms, steps, dt


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=0.25, help="simulated seconds (default 0.25)")
    ap.add_argument("--wall-limit", type=float, help="stop Talus after this many seconds of wall time")
    ap.add_argument("--threads", type=int, default=2, help="Talus threads (default 2)")
    ap.add_argument("--procs", type=int, default=2, help="LIGGGHTS MPI processes (default 2)")
    ap.add_argument("--scene", default=os.path.join(HERE, "pour_million.toml"))
    ap.add_argument("--liggghts-input", default=os.path.join(SHARED, "in.randompack"))
    ap.add_argument("--set", action="append", default=[], help="override a Talus scene value")
    ap.add_argument("--talus", default=os.path.join(TOP, "build", "bin", "talus"))
    ap.add_argument("--skip-liggghts", action="store_true", help="run Talus only")
    ap.add_argument("--keep", help="a directory to keep Talus's trajectory and checkpoint in")
    args = ap.parse_args(argv)
    if not args.skip_liggghts:
        ensure_peers()
    with tempfile.TemporaryDirectory(prefix="talus-million-") as work:
        t = run_talus(args.talus, args.scene, args.duration, args.threads, args.set, work, args.wall_limit)
        t_rate = t["wall"] / t["time"]
        reached = f" (stopped at the wall limit: 0 to {t['time']:.4g} s of {args.duration:g})" if t["stopped"] else ""
        print(f"Talus{reached}: {t['bodies']} grains, {t['time']:g} s simulated in {t['wall']:.1f} s wall on "
              f"{args.threads} thread(s): {t_rate:.0f} s per simulated second; {t['steps']} steps "
              f"of {t['dt'][0]:.3g} to {t['dt'][1]:.3g} s ({100 * t['converged']:.0f} % converged), "
              f"up to {t['contacts']} contacts; peak memory {t['peak'] / 1e9:.2f} GB (goal <= 1 GB); "
              f"largest penetration {100 * t['penetration'] / DIAMETER:.3f} % of d; kinetic energy "
              f"at the end {t['ke']:.3g} J; mean z {1e3 * t['z']:.3f} mm", flush=True)
        if args.keep:
            os.makedirs(args.keep, exist_ok=True)
            for name in os.listdir(work):
                shutil.move(os.path.join(work, name), os.path.join(args.keep, name))
        if args.skip_liggghts:
            return 0
        l_loop, l_atoms, l_steps, l_dt = run_liggghts(args.liggghts_input, args.procs, work)
    l_rate = l_atoms * l_steps / l_loop
    l_per_second = t["bodies"] / (l_dt * l_rate)
    ratio = l_per_second / t_rate
    print(f"LIGGGHTS: {l_atoms} grains x {l_steps} steps in a loop time of {l_loop:.1f} s on "
          f"{args.procs} MPI process(es): {l_rate / 1e6:.2f} M particle-steps/s; at dt {l_dt:g} s, "
          f"{t['bodies']} grains would take {l_per_second:.0f} s per simulated second")
    print(f"LIGGGHTS (extrapolated) / Talus: {ratio:.2f}x (goal >= 3); Talus peak memory "
          f"{t['peak'] / 1e9:.2f} GB (goal <= 1 GB)", flush=True)
    append_rows("pour_million.csv",
                ["date", "machine", "talus_threads", "liggghts_procs", "bodies",
                 "simulated_s", "stopped_at_wall_limit", "talus_wall_s", "talus_s_per_simulated_s", "talus_peak_rss_bytes",
                 "talus_steps", "talus_dt_min_s", "talus_dt_max_s", "talus_converged_share",
                 "talus_max_contacts", "talus_max_penetration_m", "talus_final_ke_j",
                 "liggghts_atoms", "liggghts_steps", "liggghts_loop_s",
                 "liggghts_particle_steps_per_s", "liggghts_s_per_simulated_s_extrapolated",
                 "ratio", "talus_overrides"],
                [[datetime.date.today().isoformat(), machine_name(), args.threads, args.procs,
                  t["bodies"], f"{t['time']:.6g}", int(t["stopped"]), f"{t['wall']:.2f}", f"{t_rate:.1f}", t["peak"],
                  t["steps"], f"{t['dt'][0]:.4g}", f"{t['dt'][1]:.4g}", f"{t['converged']:.3f}",
                  t["contacts"], f"{t['penetration']:.4g}", f"{t['ke']:.4g}", l_atoms, l_steps,
                  f"{l_loop:.2f}", f"{l_rate:.4g}", f"{l_per_second:.1f}", f"{ratio:.3f}",
                  " ".join(args.set)]])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
