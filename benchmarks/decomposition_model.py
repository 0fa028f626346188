#!/usr/bin/python3
"""A weak-scaling model of a distributed Talus step, from counted exchanges (issue 25).

    /usr/bin/python3 benchmarks/decomposition_model.py [--counts CSV] [--out CSV]

Reads the per-rank counts of build/bin/talus_decomposition_benchmark (ghosts, neighbour
ranks, contacts, bytes a rank sends per solver iteration; its 10⁶-grain bed) and prints, as
a MODEL, the time per step, memory per rank and the sizes of a frame and a checkpoint for
10⁷, 10⁸ and 10⁹ grains on 10³, 10⁴ and 10⁵ cores (one rank per core). docs/mpi.md
("A weak-scaling model") states the assumptions and shows the table.

Assumptions (each a parameter below):
- compute: the bgs sweep's 30 M contact-iterations/s per core (60 M measured on the 2-core
  development machine, benchmarks/README.md), 50 sweeps a step (the random pack's pour takes
  45-47, its settled steps about 60), and the solve 55 % of the step (the pour's profile);
- network: 2 µs per message, 1 GB/s per rank for its exchanges, a tree all-reduce of the
  residual each sweep (2 log2 P messages);
- the exchange scheme of docs/mpi.md: per round, increments of boundary contacts back to the
  ghost's owner and the owners' velocities out to their ghosts, to each neighbour rank; one
  round a sweep for the Jacobi methods (PJ, APGD), one per colour (12) for bgs;
- memory: docs/memory.md's refusal figures, 44 MB + 340 bytes per body held (owned and
  ghost) + 520 per contact (above the resident peak: conservative); output: 130 bytes per body and frame in float64 (73 in float32), a checkpoint
  190 bytes per body (docs/output-format.md, docs/memory.md).
"""
import argparse
import csv
import math
import os

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

RATE = 30e6          # contact-iterations per second per core
SWEEPS = 50          # per step
SOLVE_SHARE = 0.55   # the solve's share of a step
ALPHA = 2e-6         # s per message
BETA = 1e9           # bytes per second per rank
COLOURS = 12         # bgs's colours on a packed bed
BODY_BYTES, CONTACT_BYTES, BASE_BYTES = 340, 520, 44e6
FRAME64, FRAME32, CHECKPOINT = 130, 73, 190


def load(path):
    rows = []
    with open(path) as f:
        for r in csv.DictReader(line for line in f if not line.startswith("#")):
            rows.append({k: float(v) for k, v in r.items()})
    biggest = max(r["grains"] for r in rows)
    # the rows of the largest bed that have neighbours to exchange with
    return [r for r in rows if r["grains"] == biggest and r["ranks"] > 1]


def nearest(rows, per_rank):
    """The counted row whose grains per rank is nearest (on a log scale)."""
    return min(rows, key=lambda r: abs(math.log(r["grains_per_rank"] / per_rank)))


def model(rows, grains, cores):
    per_rank = grains / cores
    r = nearest(rows, per_rank)
    scale = per_rank / r["grains_per_rank"]  # counts taken at a nearby size, scaled
    contacts = r["contacts_mean"] * scale
    ghosts = r["ghosts_mean"] * scale ** (2.0 / 3.0)
    sent = r["bytes_per_iteration_mean"] * scale ** (2.0 / 3.0)
    nbrs = r["neighbours_mean"]
    compute = contacts / RATE
    reduce_ = 2 * math.log2(cores) * ALPHA
    jacobi = compute + 2 * nbrs * ALPHA + sent / BETA + reduce_
    coloured = compute + 2 * COLOURS * nbrs * ALPHA + sent / BETA + reduce_
    return {
        "grains": grains, "cores": cores, "grains_per_rank": per_rank,
        "ghost_share": ghosts / per_rank, "neighbours": nbrs,
        "sweep_compute_ms": compute * 1e3,
        "step_s_jacobi": SWEEPS * jacobi + SWEEPS * compute * (1 / SOLVE_SHARE - 1),
        "step_s_bgs": SWEEPS * coloured + SWEEPS * compute * (1 / SOLVE_SHARE - 1),
        "comm_share_bgs": (coloured - compute) / coloured,
        "memory_per_rank_MB": (BASE_BYTES + BODY_BYTES * (per_rank + ghosts) + CONTACT_BYTES * contacts) / 1e6,
        "frame_GB_float64": FRAME64 * grains / 1e9, "frame_GB_float32": FRAME32 * grains / 1e9,
        "checkpoint_GB": CHECKPOINT * grains / 1e9,
        "counted_at": int(r["grains_per_rank"]),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--counts", default=os.path.join(TOP, "benchmarks/results/decomposition.csv"))
    ap.add_argument("--out", default=os.path.join(TOP, "benchmarks/results/decomposition_model.csv"))
    a = ap.parse_args()
    rows = load(a.counts)
    out = [model(rows, n, c) for n in (1e7, 1e8, 1e9) for c in (1e3, 1e4, 1e5)]
    with open(a.out, "w", newline="") as f:
        f.write("# MODEL (benchmarks/decomposition_model.py): assumptions in its docstring and docs/mpi.md\n")
        w = csv.DictWriter(f, fieldnames=list(out[0]))
        w.writeheader()
        for m in out:
            w.writerow({k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in m.items()})
    print("MODEL | grains | cores | grains/rank | ghosts/owned | step, PJ/APGD [s] | step, bgs [s] "
          "| bgs exchange share | memory/rank [MB] | frame f64 / f32 [GB] | checkpoint [GB]")
    for m in out:
        print(f"| {m['grains']:.0e} | {m['cores']:.0e} | {m['grains_per_rank']:,.0f} | {m['ghost_share']:.2f} "
              f"| {m['step_s_jacobi']:.3g} | {m['step_s_bgs']:.3g} | {100 * m['comm_share_bgs']:.0f} % "
              f"| {m['memory_per_rank_MB']:.0f} | {m['frame_GB_float64']:.3g} / {m['frame_GB_float32']:.3g} "
              f"| {m['checkpoint_GB']:.3g} |")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
