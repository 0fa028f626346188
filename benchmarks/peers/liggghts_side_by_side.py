#!/usr/bin/python3
"""Talus and LIGGGHTS on the same settling beds, side by side (issues 6 and 22).

    /usr/bin/python3 benchmarks/peers/liggghts_side_by_side.py [--bed settle|randompack|both|bidisperse|polydisperse|all]
        [--threads 2] [--procs 2] [--liggghts-input IN --talus-scene S] [--set K=V ...]

--bed (issue 22; default both) runs each shared LIGGGHTS input beside its Talus twin that
holds only the physics (benchmarks/peers/settle_physics.toml, randompack_physics.toml: no
dt, no [solver], the engine's defaults), both in this one invocation, and checks issue
22's goals on each: Talus at least 5x faster, mean heights within 1 %, largest
penetration at most 1 % of d, final kinetic energy at most max(LIGGGHTS's, 1e-5 J). `--bed bidisperse` runs a third bed written here, not one of the
shared inputs (benchmarks/peers/in.bidisperse and bidisperse_physics.toml: 2 and 4 mm
grains in equal volumes), where the penetration counts against the small diameter; `all`
runs the three. `--bed polydisperse` runs, alone, benchmarks/polydisperse_1to5.toml (150
grains of 10 mm and 12,000 of 2 mm) beside its peer benchmarks/peers/in.polydisperse_1to5,
the penetration again against the small diameter.
Rows go to benchmarks/results/peers_liggghts_beds.csv. With --liggghts-input and
--talus-scene instead, the one pair given, as issue 6 ran it (settle_24389.toml, the
tuned twin), with rows in peers_liggghts.csv.

The scene: 24,389 spheres of 3 mm (2500 kg/m³, μ = 0.5) on a simple-cubic lattice of
3.3 mm in a 0.1 × 0.1 m box settle under gravity for 0.5 s. LIGGGHTS runs the given input
(soft Hertz contact, dt = 2.5e-5 s) on `--procs` MPI processes; Talus runs
benchmarks/peers/settle_24389.toml (hard contact) on `--threads` threads. Prints each
engine's wall time, their ratio, both beds' final centre-of-mass heights and their
difference, and Talus's largest penetration over the run against the diameter; appends a
row to benchmarks/results/peers_liggghts.csv. Installs the [peers] packages of
tools/debian-packages.txt (liggghts, openmpi-bin) if they are missing.

Wall times are of the whole process (start-up, set-up, output), measured the same way for
both. The goal of issue 6: Talus at least 5× faster, centre-of-mass heights within 2 %,
largest penetration below 1 % of the diameter.
"""
import argparse
import csv
import datetime
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "tools"))
sys.path.insert(0, os.path.join(TOP, "benchmarks"))
import talus_h5  # noqa: E402
from settle_benchmark import machine_name  # noqa: E402

DIAMETER = 0.003  # [m] the grains of the shared beds (issue 6's single pair)


def ensure_peers():
    if shutil.which("liggghts") and shutil.which("mpirun"):
        return
    subprocess.run(["bash", "-c", 'source "$0/tools/lib/deps.sh" && '
                    'talus_ensure_packages "$0/tools/debian-packages.txt" peers', TOP], check=True)


def liggghts_output(input_path, procs, workdir, who="liggghts_side_by_side"):
    """Runs LIGGGHTS on `procs` MPI processes in `workdir`; returns (its output, wall seconds).
    A failure ends the script with LIGGGHTS's last words."""
    shutil.copy(input_path, os.path.join(workdir, "in.settle"))
    cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(procs),
           "liggghts", "-in", "in.settle", "-log", "none"]
    t0 = time.perf_counter()
    out = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        sys.exit(f"{who}: LIGGGHTS failed ({out.returncode}):\n{out.stdout[-2000:]}"
                 f"\n{out.stderr[-2000:]}")
    return out, wall


def run_liggghts(input_path, procs, workdir):
    """Runs LIGGGHTS; returns (wall seconds, final mean z [m], atoms, steps)."""
    out, wall = liggghts_output(input_path, procs, workdir)
    # thermo_style custom step atoms ke c_zc cpu: the last row before "Loop time"
    rows = []
    header = None
    for line in out.stdout.splitlines():
        words = line.split()
        if words[:2] == ["Step", "Atoms"]:
            header = words
            continue
        if header and len(words) == len(header) and re.fullmatch(r"\d+", words[0]):
            rows.append(words)
    if not rows:
        sys.exit("liggghts_side_by_side: no thermo output from LIGGGHTS:\n" + out.stdout[-2000:])
    last = dict(zip(header, rows[-1]))
    zc_key = next(k for k in header if k.lower() in ("zc", "c_zc"))
    ke_key = next((k for k in header if k.lower() == "kineng"), None)  # thermo "ke"
    ke = float(last[ke_key]) if ke_key else float("nan")
    return wall, float(last[zc_key]), int(last["Atoms"]), int(last["Step"]), ke


def run_talus(binary, scene, threads, sets, workdir):
    """Runs Talus; returns (wall seconds, final mean z [m], bodies, steps, max penetration)."""
    if not os.access(binary, os.X_OK):
        sys.exit(f"liggghts_side_by_side: build {binary} first (tools/run or tools/test)")
    out_h5 = os.path.join(workdir, "talus.h5")
    cmd = [binary, "run", scene, "-o", out_h5, "--force", "--quiet", "--threads", str(threads)]
    for s in sets:
        cmd += ["--set", s]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True)
    wall = time.perf_counter() - t0
    with talus_h5.load(out_h5) as run:
        last = run.frame(-1)
        z = float(np.mean(last["position"][:, 2]))  # equal masses: the centre of mass
        pen = float(np.max(run.diagnostics["contact_infeasibility"]))
        steps = int(run.diagnostics["step"][-1])
        ke = float(run.diagnostics["kinetic_energy"][-1])
        dt = run.diagnostics.get("dt")
        dts = (float(np.min(dt)), float(np.max(dt))) if dt is not None else (float("nan"),) * 2
        converged = float(np.mean(run.diagnostics["converged"]))
        return wall, z, len(last["id"]), steps, pen, ke, dts, converged


def append_rows(name, header, rows):
    """Appends rows to benchmarks/results/NAME, writing the header first into a new file."""
    path = os.path.join(TOP, "benchmarks", "results", name)
    new = not os.path.exists(path)
    with open(path, "a", newline="") as f:
        w = csv.writer(f)
        if new:
            w.writerow(header)
        w.writerows(rows)


SHARED = os.path.join(TOP, "..", "shared", "peers", "liggghts")
PEERS = os.path.join(TOP, "benchmarks", "peers")
BEDS = {  # LIGGGHTS input, the Talus twin that holds only the physics, the smallest diameter
    "settle": (os.path.join(SHARED, "in.settle"), os.path.join(PEERS, "settle_physics.toml"), 0.003),
    "randompack": (os.path.join(SHARED, "in.randompack"), os.path.join(PEERS, "randompack_physics.toml"), 0.003),
    "bidisperse": (os.path.join(PEERS, "in.bidisperse"), os.path.join(PEERS, "bidisperse_physics.toml"), 0.002),
    "polydisperse": (os.path.join(PEERS, "in.polydisperse_1to5"),
                     os.path.join(TOP, "benchmarks", "polydisperse_1to5.toml"), 0.002),
}


def run_bed(args, bed, work):
    """Issue 22's side by side on one shared bed; prints and returns the CSV row."""
    l_in, t_scene, diameter = BEDS[bed]
    t_wall, t_z, t_n, t_steps, t_pen, t_ke, t_dt, t_conv = run_talus(
        args.talus, t_scene, args.threads, args.set, work)
    print(f"{bed}: Talus    {t_wall:8.2f} s wall on {args.threads} thread(s), {t_n} spheres, "
          f"{t_steps} steps of {t_dt[0]:.3g} to {t_dt[1]:.3g} s ({100 * t_conv:.0f} % converged); "
          f"mean z = {t_z * 1e3:.4f} mm; largest penetration {100 * t_pen / diameter:.3f} % of d; "
          f"kinetic energy at the end {t_ke:.3g} J", flush=True)
    if args.skip_liggghts:
        return None
    l_wall, l_z, l_n, l_steps, l_ke = run_liggghts(l_in, args.procs, work)
    print(f"{bed}: LIGGGHTS {l_wall:8.2f} s wall on {args.procs} MPI process(es), {l_n} spheres, "
          f"{l_steps} steps; mean z = {l_z * 1e3:.4f} mm; kinetic energy at the end {l_ke:.3g} J")
    ratio = l_wall / t_wall
    dz = (t_z - l_z) / l_z
    goals = {"5x faster": ratio >= 5.0, "height within 1 %": abs(dz) <= 0.01,
             "penetration <= 1 % of d": t_pen <= 0.01 * diameter,
             "at rest": t_ke <= max(l_ke if np.isfinite(l_ke) else 0.0, 1e-5)}
    print(f"{bed}: LIGGGHTS / Talus {ratio:.2f}x; heights differ by {100 * dz:+.2f} %; goals: " +
          ", ".join(f"{k} {'yes' if v else 'NO'}" for k, v in goals.items()), flush=True)
    return [datetime.date.today().isoformat(), machine_name(), bed, args.threads, args.procs,
            f"{t_wall:.3f}", f"{l_wall:.3f}", f"{ratio:.3f}", f"{t_z:.6g}", f"{l_z:.6g}",
            f"{dz:.5f}", f"{t_pen:.4g}", f"{t_ke:.4g}", f"{l_ke:.4g}", t_steps,
            f"{t_dt[0]:.4g}", f"{t_dt[1]:.4g}", f"{t_conv:.3f}", " ".join(args.set)]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2, help="Talus threads (default 2)")
    ap.add_argument("--procs", type=int, default=2, help="LIGGGHTS MPI processes (default 2)")
    ap.add_argument("--bed", choices=("settle", "randompack", "both", "bidisperse", "polydisperse",
                                      "all"),
                    help="issue 22's physics-only twins (the default: both shared beds; all: "
                         "and the bidisperse bed; polydisperse: the 1 and 5 mm bed alone)")
    ap.add_argument("--liggghts-input", help="with --talus-scene: one pair of your own")
    ap.add_argument("--talus-scene", help="e.g. benchmarks/peers/settle_24389.toml (issue 6)")
    ap.add_argument("--set", action="append", default=[], help="override a Talus scene value")
    ap.add_argument("--talus", default=os.path.join(TOP, "build", "bin", "talus"),
                    help="the talus binary (default build/bin/talus, a Release build)")
    ap.add_argument("--skip-liggghts", action="store_true", help="run Talus only")
    args = ap.parse_args(argv)
    if args.liggghts_input is None and args.talus_scene is None:
        if not args.skip_liggghts:
            ensure_peers()
        rows = []
        beds = {None: ("settle", "randompack"), "both": ("settle", "randompack"),
                "all": ("settle", "randompack", "bidisperse")}.get(args.bed, (args.bed,))
        for bed in beds:
            with tempfile.TemporaryDirectory(prefix="talus-peers-") as work:
                rows.append(run_bed(args, bed, work))
        if args.skip_liggghts:
            return 0
        append_rows("peers_liggghts_beds.csv",
                    ["date", "machine", "bed", "talus_threads", "liggghts_procs",
                     "talus_wall_s", "liggghts_wall_s", "ratio", "talus_mean_z_m",
                     "liggghts_mean_z_m", "z_diff_rel", "talus_max_penetration_m",
                     "talus_final_ke_j", "liggghts_final_ke_j", "talus_steps",
                     "talus_dt_min_s", "talus_dt_max_s", "talus_converged_share",
                     "talus_overrides"], rows)
        return 0
    args.liggghts_input = args.liggghts_input or os.path.join(
        TOP, "..", "shared", "peers", "liggghts", "in.settle")
    args.talus_scene = args.talus_scene or os.path.join(TOP, "benchmarks", "peers", "settle_24389.toml")
    if not args.skip_liggghts:
        if not os.path.exists(args.liggghts_input):
            sys.exit(f"liggghts_side_by_side: no LIGGGHTS input at {args.liggghts_input}")
        ensure_peers()
    with tempfile.TemporaryDirectory(prefix="talus-peers-") as work:
        t_wall, t_z, t_n, t_steps, t_pen, _, _, _ = run_talus(args.talus, args.talus_scene,
                                                             args.threads, args.set, work)
        print(f"Talus:    {t_wall:8.2f} s wall on {args.threads} thread(s), {t_n} spheres, "
              f"{t_steps} steps; centre of mass z = {t_z * 1e3:.4f} mm; largest penetration "
              f"{t_pen * 1e6:.2f} um = {100 * t_pen / DIAMETER:.3f} % of d")
        if args.skip_liggghts:
            return 0
        l_wall, l_z, l_n, l_steps, _ = run_liggghts(args.liggghts_input, args.procs, work)
    print(f"LIGGGHTS: {l_wall:8.2f} s wall on {args.procs} MPI process(es), {l_n} spheres, "
          f"{l_steps} steps; centre of mass z = {l_z * 1e3:.4f} mm")
    ratio = l_wall / t_wall
    dz = (t_z - l_z) / l_z
    print(f"LIGGGHTS / Talus wall time: {ratio:.2f}x (goal >= 5); centre-of-mass heights differ "
          f"by {100 * dz:+.2f} % (goal within 2 %); Talus penetration "
          f"{100 * t_pen / DIAMETER:.3f} % of d (goal < 1 %)")
    append_rows("peers_liggghts.csv",
                ["date", "machine", "talus_threads", "liggghts_procs", "talus_wall_s",
                 "liggghts_wall_s", "ratio", "talus_com_z_m", "liggghts_com_z_m",
                 "com_diff_rel", "talus_max_penetration_m", "talus_overrides"],
                [[datetime.date.today().isoformat(), machine_name(), args.threads, args.procs,
                  f"{t_wall:.3f}", f"{l_wall:.3f}", f"{ratio:.3f}", f"{t_z:.6g}", f"{l_z:.6g}",
                  f"{dz:.5f}", f"{t_pen:.4g}", " ".join(args.set)]])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
