#!/usr/bin/python3
"""Solver benchmarks on the settled 100k-sphere pile: run, plot, summarise.

Runs talus_solver_benchmark (build it first, see benchmarks/README.md) in order:
generate (only when benchmarks/data/pile100k_state.h5 is missing or stale), convergence,
throughput, breakdown; then plots benchmarks/results/convergence.png from the
convergence_<solver>.csv files and prints a short summary of every figure.

Usage: /usr/bin/python3 benchmarks/solver_benchmark.py [--build-dir DIR] [--results DIR]
       [--plot-only] [--budget SECONDS] [--skip STAGE ...] [--scene TOML --state H5]
       [--methods pgs,pgs@1.3,pj,apgd]

--scene/--state take another reference problem (scenes/pack100k_deep.toml, the deep random
pack of issue 22); --methods compares other methods or relaxations; the plot draws every
convergence_<method>.csv found in --results.
"""
import argparse
import csv
import os
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(TOP, "benchmarks", "results")  # --results changes it
SOLVERS = ("pgs", "pj", "apgd")  # the default methods; --methods names others (pgs@1.3, ...)
STALE = 3  # exit code of talus_solver_benchmark: state file missing or stale


def load_average():
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def run(binary, args):
    print(f"\n$ {os.path.relpath(binary, TOP)} {' '.join(args)}   (load {load_average():.2f})",
          flush=True)
    t0 = time.perf_counter()
    rc = subprocess.run([binary] + args).returncode
    print(f"({time.perf_counter() - t0:.0f} s)", flush=True)
    return rc


def read_csv(path):
    """Rows of a CSV as dicts, skipping '#' comment lines; and the comment lines."""
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    comments = [l[1:].strip() for l in lines if l.startswith("#")]
    rows = list(csv.DictReader(l for l in lines if not l.startswith("#")))
    return rows, comments


def thin(xs, ys, n_max=1500):
    """At most ~n_max points, log-spaced in the index, so the PNG stays small."""
    n = len(xs)
    if n <= n_max:
        return xs, ys
    import numpy as np
    idx = np.unique(np.concatenate([np.geomspace(1, n, n_max).astype(int) - 1, [n - 1]]))
    return [xs[i] for i in idx], [ys[i] for i in idx]


def plot_convergence(out_png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import glob
    palette = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown",
               "tab:pink", "tab:olive", "tab:cyan"]
    styles = {"cold": "-", "warm": "--"}
    fig, (ax_it, ax_t) = plt.subplots(1, 2, figsize=(10, 4.2))
    title = None
    # every method measured into RESULTS: convergence_<label>.csv, label "pgs" or "pgs_w1.3"
    labels = sorted(os.path.basename(p)[len("convergence_"):-len(".csv")]
                    for p in glob.glob(os.path.join(RESULTS, "convergence_*.csv"))
                    if not p.endswith("convergence_table.csv"))
    labels.sort(key=lambda l: (SOLVERS.index(l.split("_")[0]) if l.split("_")[0] in SOLVERS else 9, l))
    colours = {l: palette[k % len(palette)] for k, l in enumerate(labels)}
    for solver in labels:
        path = os.path.join(RESULTS, f"convergence_{solver}.csv")
        rows, comments = read_csv(path)
        for c in comments:
            if c.startswith("problem:"):
                title = c[len("problem:"):].strip()
        for start in ("cold", "warm"):
            sel = [r for r in rows if r["start"] == start]
            if not sel:
                continue
            it = [max(int(r["iteration"]), 1) for r in sel]  # PJ's first entry is iteration 0
            sec = [float(r["seconds"]) for r in sel]
            res = [float(r["residual"]) for r in sel]
            label = f"{solver.upper().replace('_W', ' ω=')} {start}"
            if solver.startswith("apgd"):
                # APGD is not monotone and returns its best iterate: draw the running
                # minimum (what a solve stopped there would return), the raw iterates faint
                for ax, xs in ((ax_it, it), (ax_t, sec)):
                    x, y = thin(xs, res)
                    ax.plot(x, y, styles[start], color=colours[solver], lw=0.5, alpha=0.3)
                best, low = [], float("inf")
                for r in res:
                    low = min(low, r)
                    best.append(low)
                res = best
                label += " (best so far)"
            x, y = thin(it, res)
            ax_it.plot(x, y, styles[start], color=colours[solver], lw=1.4, label=label)
            x, y = thin(sec, res)
            ax_t.plot(x, y, styles[start], color=colours[solver], lw=1.4, label=label)
    for ax, xlabel in ((ax_it, "iteration"), (ax_t, "solver time [s]")):
        ax.set_yscale("log")
        ax.set_xscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("residual r [m/s] (docs/design.md §6)")
        for t in (1e-3, 1e-4, 1e-5):
            ax.axhline(t, color="0.75", lw=0.8, zorder=0)
        ax.grid(True, which="major", color="0.9", lw=0.6)
    ax_it.legend(fontsize=8, ncol=1)
    if title:
        fig.suptitle(title, fontsize=8)
    fig.tight_layout()
    fig.savefig(out_png, dpi=90)
    plt.close(fig)
    print(f"wrote {os.path.relpath(out_png, TOP)} ({os.path.getsize(out_png) / 1024:.0f} kB)")


def summary():
    lines = []
    path = os.path.join(RESULTS, "convergence_table.csv")
    if os.path.exists(path):
        rows, _ = read_csv(path)
        if rows:
            lines.append(f"Machine: {rows[0]['machine']}")
            lines.append(f"Convergence on the 100k pile ({rows[0]['contacts']} contacts), "
                         "iterations / seconds to reach r (or contacts still above it at exit):")
            by = {}
            for r in rows:
                if r["result"] == "reached":
                    cell = f"{r['iterations']} it / {float(r['seconds']):.2f} s"
                else:  # "not reached in N iterations", and how many contacts are still above
                    cell = (f"not in {r['result'].split()[3]} it "
                            f"({r.get('contacts_above_at_exit', '?')} above)")
                by.setdefault((r["solver"], r["start"]), {})[r["threshold_m_s"]] = cell
            lines.append(f"  {'':11s} {'1e-3 m/s':>28s} {'1e-4 m/s':>28s} {'1e-5 m/s':>28s}")
            for (solver, start), cells in by.items():
                lines.append(f"  {solver.upper():4s} {start:6s} " + " ".join(
                    f"{cells.get(t, ''):>28s}" for t in ("0.001", "0.0001", "1e-05")))
    path = os.path.join(RESULTS, "throughput.csv")
    if os.path.exists(path):
        rows, _ = read_csv(path)
        lines.append("Throughput (contact-iterations/s; speedup of 2 threads over 1):")
        for r in rows:
            extra = ""
            if r["bytes_streamed_per_contact"]:
                extra = (f", {r['bytes_streamed_per_contact']}+{r['bytes_bodies_per_contact']} B/contact"
                         f" -> {r['streamed_GB_s']}-{r['all_GB_s']} GB/s of {r['copy_bandwidth_GB_s']}"
                         " GB/s copy")
            lines.append(f"  {r['solver'].upper():4s} {r['threads']} thread(s): "
                         f"{float(r['contact_iterations_per_s']):.3g}/s, "
                         f"speedup {float(r['speedup_vs_1_thread']):.2f}{extra}")
    path = os.path.join(RESULTS, "step_breakdown.csv")
    if os.path.exists(path):
        rows, _ = read_csv(path)
        if rows:
            lines.append(f"Step breakdown ({rows[0]['bodies']} bodies, {float(rows[0]['mean_contacts']):.0f}"
                         f" contacts, {rows[0]['mean_iterations']} PGS iterations, "
                         f"{rows[0]['threads']} threads), mean s per step:")
            lines.append("  " + ", ".join(f"{r['stage']} {float(r['mean_s']):.3f} ({r['percent_of_step']}%)"
                                          for r in rows))
    print("\n== summary ==")
    print("\n".join(lines))


def main():
    global RESULTS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-dir", default=os.path.join(TOP, "build-bench"))
    ap.add_argument("--results", default=RESULTS, help="directory of the CSV and PNG files")
    ap.add_argument("--plot-only", action="store_true", help="only plot and summarise the CSVs")
    ap.add_argument("--budget", type=float, default=60.0, help="wall seconds per convergence solve")
    ap.add_argument("--scene", help="scene of the reference problem (default: the binary's, "
                    "scenes/pile100k.toml)")
    ap.add_argument("--state", help="its cached settled state (default: the binary's)")
    ap.add_argument("--methods", help="convergence: comma list of solvers, each optionally @ω "
                    "(default pgs,pj,apgd)")
    ap.add_argument("--skip", nargs="*", default=[],
                    choices=["convergence", "throughput", "breakdown"], help="stages to skip")
    args = ap.parse_args()
    RESULTS = os.path.abspath(args.results)
    binary = os.path.join(args.build_dir, "bin", "talus_solver_benchmark")
    if not args.plot_only:
        if not os.path.exists(binary):
            sys.exit(f"{binary} is missing: cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release "
                     "-DTALUS_BUILD_TESTS=OFF && cmake --build build-bench --target "
                     "talus_solver_benchmark")
        if load_average() > 1.0:
            print(f"note: load average {load_average():.2f} > 1; timings will be noisy")
        conv = ["--budget", str(args.budget)] + (["--methods", args.methods] if args.methods else [])
        stages = [("convergence", conv), ("throughput", []),
                  ("breakdown", [])]
        for name, extra in stages:
            if name in args.skip:
                continue
            common = ["--results", RESULTS]
            if args.scene:
                common += ["--scene", os.path.abspath(args.scene)]
            if args.state:
                common += ["--state", os.path.abspath(args.state)]
            rc = run(binary, common + [name] + extra)
            if rc == STALE:  # no cached pile yet, or it was made from another scene
                if run(binary, common + ["generate"]) != 0:
                    sys.exit("generate failed")
                rc = run(binary, common + [name] + extra)
            if rc != 0:
                sys.exit(f"{name} failed (exit {rc})")
    plot_convergence(os.path.join(RESULTS, "convergence.png"))
    summary()


if __name__ == "__main__":
    main()
