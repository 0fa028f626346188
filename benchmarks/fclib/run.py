#!/usr/bin/python3
"""Talus's contact solvers against Siconos's on the FCLIB problems, with one accuracy measure.

    /usr/bin/python3 benchmarks/fclib/run.py [--talus build/bin/talus]
        [--problems ../shared/fclib] [--solvers pgs,pj,apgd,nsgs,maxdiss,lemke,siconos-nsgs,...]
        [--tolerance 1e-6] [--siconos-tolerance T] [--max-iterations 100000] [--timeout 300]
        [--csv benchmarks/results/fclib.csv] [--png benchmarks/results/fclib_profile.png]
        [--no-siconos] [--no-check]

Problems: every *.hdf5 under --problems in the FCLIB layout (/fclib_local: W, q, mu;
/fclib_global: M, H, f, w, mu). Only 3-D problems are run (spacedim 3, no equality
constraints G or V, R); the others are skipped with a note (the rolling-friction Chute
file, spacedim 5).

Solvers, each started from r = 0, tolerance --tolerance, at most --max-iterations
iterations, killed after --timeout seconds:
- Talus, one process per run:
      talus fclib FILE --solver S --tolerance T --max-iterations N --json --print-reactions
  for S in pgs, pj, apgd, nsgs (the Coulomb law), maxdiss and lemke (their own friction
  models: maximum dissipation, a polyhedral cone of 8 directions; they approach the Coulomb
  solution but are not expected to reach 1e-6 of it, and lemke refuses problems above its
  size limit). It prints one JSON object (file, formulation, contacts,
  solver, iterations, seconds = solver wall time, error, relative_error, sum_rn, converged,
  r = the 3n reactions, normal first per contact). A failure (non-zero exit, bad JSON,
  missing r, timeout) is recorded as not solved with the reason in the `note` column.
- Siconos (python3-siconos, when `import siconos.numerics` works): NSGS, PROX and NSN-AC
  (Alart-Curnier nonsmooth Newton) through fc3d_driver on the local problem (W, q, mu) as
  a sparse (CSC) NumericsMatrix; global problems are condensed first (below). Siconos's
  own tolerance is --tolerance (or --siconos-tolerance) and its iteration cap
  --max-iterations; everything else is Siconos's default (NSGS: light error test with a
  full one at the end; PROX: NSN-AC inside). Each solve runs in a child process of this script (a crash or a time-out
  loses that run only); only the fc3d_driver call is timed.

Accuracy, the same for every solution, computed here from r alone: u = W r + q,
û = u + [mu ||u_T||, 0, 0] per contact, F = r - Pi_K(r - û) with K the cone
||r_T|| <= mu r_N, and relative_error = ||F||_2 / (1 + ||q||_2). A run *solves* a problem
when relative_error <= --tolerance, whatever the solver itself reported (its own figure
is kept in `own_error`, `own_converged`). Siconos 4.4's own error divides ||F|| by
max(||q||, ||r||, ||u||) instead, so the two can disagree by orders of magnitude when the
reactions are large (benchmarks/fclib/README.md).

Global problems (M v = H r + f, u = H^T v + w) are condensed to W = H^T M^-1 H,
q = H^T M^-1 f + w (scipy's sparse LU when scipy is there, dense numpy otherwise).
Matrices are read from the CSparse layout: nz = -2 CSR (p: m+1 row pointers), nz = -1
CSC (p: n+1 column pointers), nz >= 0 triplets (rows in i, columns in p). Unless
--no-check, the reader is first checked against libfclib's (ctypes, when libfclib.so.0
loads) on every problem, and the condensation against Siconos's
globalFrictionContact_reformulation_FrictionContact on the global problems of at most
2,000 degrees of freedom.

Writes one CSV row per (problem, solver) run, the machine named (--csv), and the Dolan-Moré
performance profile (--png): for each solver, the fraction of the problems it solved
within tau times the fastest time any solver needed to solve that problem, tau from 1 to
10^3 on a log axis. Prints a progress line per run to stderr and the table to stdout.
"""
import argparse
import csv
import glob
import json
import math
import os
import subprocess
import sys
import time

import h5py
import numpy as np

try:
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla
except ImportError:  # dense numpy throughout: fine for these problem sizes
    sp = None
    spla = None

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "benchmarks"))

TALUS_SOLVERS = ["pgs", "pj", "apgd", "nsgs", "maxdiss", "lemke"]
# our name -> Siconos solver id constant
SICONOS_SOLVERS = {"siconos-nsgs": "SICONOS_FRICTION_3D_NSGS",
                   "siconos-prox": "SICONOS_FRICTION_3D_PROX",
                   "siconos-nsn-ac": "SICONOS_FRICTION_3D_NSN_AC"}
TALUS_KEYS = ["file", "formulation", "contacts", "solver", "iterations", "seconds", "error",
              "relative_error", "sum_rn", "converged"]
EXTRA_TALUS_KEYS = set()   # keys talus's JSON has beyond TALUS_KEYS: named once at the end
CSV_COLUMNS = ["problem", "formulation", "contacts", "solver", "iterations", "seconds",
               "relative_error", "solved", "machine", "own_error", "own_converged", "note"]
CHECK_MAX_DOFS = 2000   # Siconos's reformulation is dense-slow above this (66 s at 12,000)
MIN_SECONDS = 1e-7      # a floor for the profile's time ratios (a reported 0 s)


def machine_name():
    try:
        from settle_benchmark import machine_name as house_machine_name
        return house_machine_name()
    except Exception:  # the house helper lives in benchmarks/; keep working without it
        cpu = "unknown cpu"
        try:
            with open("/proc/cpuinfo") as f:
                cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), cpu)
        except OSError:
            pass
        return f"{os.uname().nodename} ({cpu}, {os.cpu_count()} cores)"


# ---------------------------------------------------------------------------------------
# Reading FCLIB files

def csparse_parts(group):
    """The CSparse fields of an FCLIB matrix group: (m, n, nz, p, i, x)."""
    m, n, nz = (int(np.asarray(group[k][()]).reshape(-1)[0]) for k in ("m", "n", "nz"))
    return m, n, nz, group["p"][()].astype(np.int64), group["i"][()].astype(np.int64), \
        group["x"][()].astype(np.float64)


def matrix_from_parts(m, n, nz, p, i, x):
    """A CSparse matrix as scipy CSR (duplicates summed), or a dense array without scipy."""
    if nz == -2:    # compressed rows: p row pointers, i column indices
        if len(p) != m + 1:
            raise ValueError(f"CSR matrix: {len(p)} row pointers for {m} rows")
        k = int(p[m])
        rows = np.repeat(np.arange(m), np.diff(p))
        cols = i[:k]
    elif nz == -1:  # compressed columns: p column pointers, i row indices
        if len(p) != n + 1:
            raise ValueError(f"CSC matrix: {len(p)} column pointers for {n} columns")
        k = int(p[n])
        rows = i[:k]
        cols = np.repeat(np.arange(n), np.diff(p))
    elif nz >= 0:   # triplets: rows in i, columns in p
        k = nz
        rows, cols = i[:k], p[:k]
    else:
        raise ValueError(f"unknown CSparse nz = {nz}")
    vals = x[:k]
    if len(rows) != k or len(cols) != k or len(vals) != k:
        raise ValueError("CSparse arrays shorter than the entry count")
    if k and (rows.min() < 0 or rows.max() >= m or cols.min() < 0 or cols.max() >= n):
        raise ValueError(f"CSparse index out of range for a {m} x {n} matrix")
    if sp is not None:
        a = sp.coo_matrix((vals, (rows, cols)), shape=(m, n)).tocsr()
        a.sum_duplicates()
        return a
    a = np.zeros((m, n))
    np.add.at(a, (rows, cols), vals)
    return a


def read_matrix(group):
    return matrix_from_parts(*csparse_parts(group))


def vector(group, name):
    return np.asarray(group["vectors"][name][()], dtype=np.float64).reshape(-1)


class Problem:
    """A 3-D FCLIB problem as the local one: u = W r + q, cone coefficients mu."""

    def __init__(self, path):
        self.path = path
        self.name = os.path.splitext(os.path.basename(path))[0]
        self.skip = None    # why this problem is not run, or None
        self.M = self.H = self.f = self.w = None
        with h5py.File(path, "r") as h5:
            groups = [k for k in h5.keys() if k.startswith("fclib")]
            self.formulation = {"fclib_local": "local", "fclib_global": "global"}.get(
                groups[0] if groups else "", "/".join(groups) or "?")
            g = h5[groups[0]] if groups else None
            self.spacedim = int(np.asarray(g["spacedim"][()]).reshape(-1)[0]) \
                if g is not None and "spacedim" in g else None
            if self.spacedim != 3:
                self.skip = f"spacedim {self.spacedim}: 3-D problems only"
                return
            if self.formulation not in ("local", "global"):
                self.skip = f"group {self.formulation}: only /fclib_local and /fclib_global are read"
                return
            extra = [k for k in ("V", "R", "G") if k in g]
            if extra:
                self.skip = f"has {', '.join(extra)} (equality constraints): not supported here"
                return
            self.mu = vector(g, "mu")
            if self.formulation == "local":
                self.W = read_matrix(g["W"])
                self.q = vector(g, "q")
            else:
                self.M = read_matrix(g["M"])
                self.H = read_matrix(g["H"])
                self.f = vector(g, "f")
                self.w = vector(g, "w")
                self.W, self.q = condense(self.M, self.H, self.f, self.w)
        self.contacts = len(self.mu)
        if self.W.shape != (3 * self.contacts, 3 * self.contacts) or len(self.q) != 3 * self.contacts:
            raise ValueError(f"{path}: W {self.W.shape}, q {len(self.q)} for {self.contacts} contacts")
        self.norm_q = float(np.linalg.norm(self.q))


def condense(M, H, f, w):
    """W = H^T M^-1 H and q = H^T M^-1 f + w of a global problem."""
    if sp is None:
        X = np.linalg.solve(M, np.column_stack([H, f]))
        return H.T @ X[:, :-1], H.T @ X[:, -1] + w
    M = M.tocsc()
    H = H.tocsc()
    off = M - sp.diags(M.diagonal())
    if off.count_nonzero() == 0:    # a lumped (diagonal) mass matrix: scale the rows of H
        inv = sp.diags(1.0 / M.diagonal())
        MiH, Mif = inv @ H, f / M.diagonal()
    else:
        lu = spla.splu(M)
        MiH = sp.csc_matrix(lu.solve(H.toarray()))
        Mif = lu.solve(f)
    W = (H.T @ MiH).tocsr()
    W.sum_duplicates()
    return W, H.T @ Mif + w


# ---------------------------------------------------------------------------------------
# The accuracy measure

def project_on_cone(z, mu):
    """Rows of z = (normal, t1, t2) projected on {||t|| <= mu n}."""
    zn, zt = z[:, 0], z[:, 1:]
    nt = np.linalg.norm(zt, axis=1)
    out = np.zeros_like(z)
    inside = nt <= mu * zn                      # already in the cone
    out[inside] = z[inside]
    side = ~inside & ~(mu * nt <= -zn)          # not in the polar cone either: onto the side
    a = (zn[side] + mu[side] * nt[side]) / (1.0 + mu[side] ** 2)
    out[side, 0] = a
    out[side, 1:] = (mu[side] * a / nt[side])[:, None] * zt[side]
    return out                                  # the polar cone's points go to 0


def natural_map_error(problem, r):
    """(||F||_2, ||F||_2 / (1 + ||q||_2)) of reactions r for the local problem."""
    r = np.asarray(r, dtype=np.float64)
    u = problem.W @ r + problem.q
    R, U = r.reshape(-1, 3), u.reshape(-1, 3)
    uhat = U.copy()
    uhat[:, 0] += problem.mu * np.linalg.norm(U[:, 1:], axis=1)
    F = R - project_on_cone(R - uhat, problem.mu)
    err = float(np.linalg.norm(F))
    return err, err / (1.0 + problem.norm_q)


# ---------------------------------------------------------------------------------------
# Checks of the reader and the condensation

def check_with_libfclib(problems):
    """Compares our matrices with libfclib's reading of the same files; returns lines."""
    import ctypes as C

    try:
        lib = C.CDLL("libfclib.so.0")
    except OSError:
        return ["reader check: libfclib.so.0 not found, skipped"]

    class Mat(C.Structure):
        _fields_ = [("nzmax", C.c_int), ("m", C.c_int), ("n", C.c_int),
                    ("p", C.POINTER(C.c_int)), ("i", C.POINTER(C.c_int)),
                    ("x", C.POINTER(C.c_double)), ("nz", C.c_int), ("info", C.c_void_p)]

    class Local(C.Structure):
        _fields_ = [("W", C.POINTER(Mat)), ("V", C.POINTER(Mat)), ("R", C.POINTER(Mat)),
                    ("mu", C.POINTER(C.c_double)), ("q", C.POINTER(C.c_double)),
                    ("s", C.POINTER(C.c_double)), ("spacedim", C.c_int), ("info", C.c_void_p)]

    class Global(C.Structure):
        _fields_ = [("M", C.POINTER(Mat)), ("H", C.POINTER(Mat)), ("G", C.POINTER(Mat)),
                    ("mu", C.POINTER(C.c_double)), ("f", C.POINTER(C.c_double)),
                    ("b", C.POINTER(C.c_double)), ("w", C.POINTER(C.c_double)),
                    ("spacedim", C.c_int), ("info", C.c_void_p)]

    lib.fclib_read_local.restype = C.POINTER(Local)
    lib.fclib_read_global.restype = C.POINTER(Global)
    lib.fclib_read_local.argtypes = lib.fclib_read_global.argtypes = [C.c_char_p]

    def theirs(ptr):
        a = ptr.contents
        if a.nz == -2:
            np_p, k = a.m + 1, a.p[a.m]
        elif a.nz == -1:
            np_p, k = a.n + 1, a.p[a.n]
        else:
            np_p, k = a.nz, a.nz
        arr = lambda c, n: np.ctypeslib.as_array(c, (n,)).astype(np.int64) if n else np.zeros(0, np.int64)
        x = np.ctypeslib.as_array(a.x, (k,)).copy() if k else np.zeros(0)
        return matrix_from_parts(a.m, a.n, a.nz, arr(a.p, np_p), arr(a.i, k), x)

    def diff(a, b):
        return float(abs(a - b).max())

    lines, worst = [], 0.0
    for pb in problems:
        if pb.skip:
            continue
        if pb.formulation == "local":
            ptr = lib.fclib_read_local(pb.path.encode())
            if not ptr:
                lines.append(f"reader check: libfclib could not read {pb.name}")
                continue
            d = max(diff(theirs(ptr.contents.W), pb.W),
                    float(np.abs(np.ctypeslib.as_array(ptr.contents.q, (len(pb.q),)) - pb.q).max()))
        else:
            ptr = lib.fclib_read_global(pb.path.encode())
            if not ptr:
                lines.append(f"reader check: libfclib could not read {pb.name}")
                continue
            g = ptr.contents
            d = max(diff(theirs(g.M), pb.M), diff(theirs(g.H), pb.H),
                    float(np.abs(np.ctypeslib.as_array(g.f, (len(pb.f),)) - pb.f).max()),
                    float(np.abs(np.ctypeslib.as_array(g.w, (len(pb.w),)) - pb.w).max()))
        worst = max(worst, d)
        if d != 0.0:
            lines.append(f"reader check: {pb.name} differs from libfclib's by {d:.3g}")
    lines.append(f"reader check: our reader and libfclib's agree (largest difference {worst:.3g})")
    return lines


def check_with_siconos_condensation(problems):
    """Our W, q of the small global problems against Siconos's reformulation; returns lines."""
    import siconos.numerics as sn

    if sp is None:
        return ["condensation check: needs scipy, skipped"]
    lines = []
    for pb in problems:
        if pb.skip or pb.formulation != "global" or pb.M.shape[0] > CHECK_MAX_DOFS:
            continue
        g = sn.GlobalFrictionContactProblem()
        g.dimension = 3
        g.numberOfContacts = pb.contacts
        g.M = siconos_matrix(pb.M)
        g.H = siconos_matrix(pb.H)
        g.q = pb.f.copy()   # Siconos: M v = q + H r, u = H^T v + b
        g.b = pb.w.copy()
        g.mu = pb.mu.copy()
        local = sn.globalFrictionContact_reformulation_FrictionContact(g)
        W = sn.NM_csc(local.M)
        dW = abs(W - pb.W).max() / max(abs(pb.W).max(), 1e-300)
        dq = np.abs(np.asarray(local.q) - pb.q).max() / max(np.abs(pb.q).max(), 1e-300)
        lines.append(f"condensation check: {pb.name}: W and q agree with Siconos's to "
                     f"{dW:.1e} and {dq:.1e} (relative to their largest entries)")
        if dW > 1e-10 or dq > 1e-10:
            raise SystemExit(f"run.py: our condensation of {pb.name} disagrees with Siconos's")
    return lines


# ---------------------------------------------------------------------------------------
# Siconos (in a child process: `run.py --siconos-worker FILE SOLVER`)

def siconos_matrix(a):
    """A matrix in the form Siconos's Python layer takes without copying indices."""
    if sp is None:
        return np.ascontiguousarray(a)
    c = sp.csc_matrix(a)
    c.indices = c.indices.astype(np.int64)
    c.indptr = c.indptr.astype(np.int64)
    return c


def siconos_worker(path, solver, tolerance, max_iterations):
    """Solves one problem with one Siconos solver; prints a JSON line like talus's."""
    import siconos.numerics as sn

    pb = Problem(path)
    problem = sn.FrictionContactProblem(3, siconos_matrix(pb.W), pb.q.copy(), pb.mu.copy())
    options = sn.SolverOptions(getattr(sn, SICONOS_SOLVERS[solver]))
    options.iparam[sn.SICONOS_IPARAM_MAX_ITER] = max_iterations
    options.dparam[sn.SICONOS_DPARAM_TOL] = tolerance
    n = 3 * pb.contacts
    r, u = np.zeros(n), np.zeros(n)
    t0 = time.perf_counter()
    info = sn.fc3d_driver(problem, r, u, options)
    seconds = time.perf_counter() - t0
    out = {"file": path, "formulation": pb.formulation, "contacts": pb.contacts,
           "solver": solver, "iterations": int(options.iparam[sn.SICONOS_IPARAM_ITER_DONE]),
           "seconds": seconds, "relative_error": float(options.dparam[sn.SICONOS_DPARAM_RESIDU]),
           "converged": info == 0, "info": int(info)}
    if solver == "siconos-prox":    # PROX's iterations are outer ones; the Newton steps inside:
        out["inner_iterations"] = int(
            options.iparam[sn.SICONOS_FRICTION_3D_PROXIMAL_IPARAM_CUMULATIVE_ITER_DONE])
    out["r"] = [float(v) for v in r]
    sys.stdout.flush()
    print("\nSICONOS_RESULT " + json.dumps(out), flush=True)


# ---------------------------------------------------------------------------------------
# Runs

def last_line(text, limit=300):
    """The end of a message, its lines joined (CLI11 puts "Run with --help" after the error)."""
    lines = [l.strip() for l in (text or "").splitlines() if l.strip()]
    joined = " / ".join(lines[-3:])
    return joined if len(joined) <= limit else "..." + joined[-limit:]


def result_row(pb, solver, machine):
    return {"problem": pb.name, "formulation": pb.formulation, "contacts": pb.contacts,
            "solver": solver, "iterations": "", "seconds": "", "relative_error": "",
            "solved": 0, "machine": machine, "own_error": "", "own_converged": "", "note": ""}


def score(row, pb, reply, tolerance, notes):
    """Fills row from a solver's JSON reply (iterations, seconds, r, own figures)."""
    row["iterations"] = reply.get("iterations", "")
    row["seconds"] = reply.get("seconds", "")
    row["own_error"] = reply.get("relative_error", "")
    if "converged" in reply:
        row["own_converged"] = int(bool(reply["converged"]))
    r = reply.get("r")
    if r is None:
        notes.append("no reactions in the reply (r)")
    elif len(r) != 3 * pb.contacts:
        notes.append(f"{len(r)} reactions for {pb.contacts} contacts")
    else:
        r = np.asarray(r, dtype=np.float64)
        if not np.all(np.isfinite(r)):
            notes.append("non-finite reactions")
        else:
            _, rel = natural_map_error(pb, r)
            row["relative_error"] = rel
            row["solved"] = int(rel <= tolerance)
    row["note"] = "; ".join(notes)
    return row


def run_talus(args, pb, solver, machine):
    row = result_row(pb, "talus-" + solver, machine)
    cmd = [args.talus, "fclib", pb.path, "--solver", solver, "--tolerance", repr(args.tolerance),
           "--max-iterations", str(args.max_iterations), "--json", "--print-reactions"]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        row["note"] = f"timed out after {args.timeout:g} s"
        return row
    except OSError as e:
        row["note"] = f"could not run {args.talus}: {e.strerror or e}"
        return row
    if out.returncode != 0:
        row["note"] = (f"exit status {out.returncode}: "
                       f"{last_line(out.stderr) or last_line(out.stdout) or '(no message)'}")
        return row
    try:
        reply = json.loads(out.stdout)
        if not isinstance(reply, dict):
            raise ValueError("not an object")
    except ValueError:
        row["note"] = f"stdout is not one JSON object: {last_line(out.stdout, 120)!r}"
        return row
    notes = []
    missing = [k for k in TALUS_KEYS if k not in reply]
    if missing:
        notes.append("JSON lacks " + ", ".join(missing))
    EXTRA_TALUS_KEYS.update(set(reply) - set(TALUS_KEYS) - {"r"})
    if reply.get("contacts", pb.contacts) != pb.contacts:
        notes.append(f"talus counts {reply['contacts']} contacts")
    if reply.get("formulation", pb.formulation) != pb.formulation:
        notes.append(f"talus calls it {reply['formulation']}")
    return score(row, pb, reply, args.tolerance, notes)


def run_siconos(args, pb, solver, machine):
    row = result_row(pb, solver, machine)
    own = args.tolerance if args.siconos_tolerance is None else args.siconos_tolerance
    cmd = [sys.executable, os.path.abspath(__file__), "--siconos-worker", pb.path, solver,
           "--tolerance", repr(own), "--max-iterations", str(args.max_iterations)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        row["note"] = f"timed out after {args.timeout:g} s"
        return row
    tagged = [l for l in out.stdout.splitlines() if l.startswith("SICONOS_RESULT ")]
    if out.returncode != 0 or not tagged:
        row["note"] = (f"exit status {out.returncode}: "
                       f"{last_line(out.stderr) or last_line(out.stdout) or '(no message)'}")
        return row
    reply = json.loads(tagged[-1].split(" ", 1)[1])
    notes = []
    if "inner_iterations" in reply:
        notes.append(f"{reply['inner_iterations']} Newton iterations inside")
    if not reply["converged"]:
        notes.append(f"Siconos info {reply['info']}")
    if args.siconos_tolerance is not None:
        notes.append(f"Siconos's own tolerance {args.siconos_tolerance:g}")
    return score(row, pb, reply, args.tolerance, notes)


# ---------------------------------------------------------------------------------------
# Output: CSV, profile, table

def write_csv(path, rows):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
        w.writeheader()
        for row in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})


def profile_ratios(rows, solvers, problems):
    """{solver: [ratio per problem]}: time over the fastest solver's that solved it, inf if
    the solver did not solve it."""
    best = {}
    for row in rows:
        if row["solved"]:
            t = max(float(row["seconds"]), MIN_SECONDS)
            best[row["problem"]] = min(best.get(row["problem"], math.inf), t)
    ratios = {s: [] for s in solvers}
    for s in solvers:
        for p in problems:
            row = next((r for r in rows if r["solver"] == s and r["problem"] == p), None)
            if row is not None and row["solved"]:
                ratios[s].append(max(float(row["seconds"]), MIN_SECONDS) / best[p])
            else:
                ratios[s].append(math.inf)
    return ratios


def draw_profile(path, rows, solvers, problems, machine, tolerance):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ratios = profile_ratios(rows, solvers, problems)
    finite = [x for v in ratios.values() for x in v if math.isfinite(x)]
    top = max(1e3, 10 ** math.ceil(math.log10(max(finite)))) if finite else 1e3
    fig, ax = plt.subplots(figsize=(7.5, 5))
    for s in solvers:
        v = sorted(ratios[s])
        xs = [1.0] + [x for x in v if math.isfinite(x)] + [top]
        ys = [0.0] + [sum(1 for y in v if y <= x) / len(problems) for x in xs[1:]]
        talus = s.startswith("talus")   # Talus solid and thick, Siconos dashed
        ax.step(xs, ys, where="post", linestyle="-" if talus else "--",
                linewidth=2.2 if talus else 1.5,
                label=f"{s} ({sum(math.isfinite(x) for x in v)}/{len(problems)})")
    ax.set_xscale("log")
    ax.set_xlim(1, top)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("τ (time / fastest time on the problem)")
    ax.set_ylabel(f"fraction of the {len(problems)} problems solved within τ")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="lower right", fontsize=8, title="solver (problems solved)")
    ax.set_title(f"FCLIB performance profile, relative error ≤ {tolerance:g}\n{machine}",
                 fontsize=10)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def fmt(v, spec):
    return format(v, spec) if isinstance(v, (int, float)) and v != "" else str(v)


def print_table(rows, solvers, problems, skipped, tolerance, machine):
    print(f"FCLIB problems, tolerance {tolerance:g} on ||F|| / (1 + ||q||), {machine}")
    print(f"{'problem':40} {'form':6} {'nc':>4} {'solver':15} {'iters':>7} {'seconds':>9} "
          f"{'rel. error':>10} {'own error':>10} ok  note")
    for row in rows:
        print(f"{row['problem'][:40]:40} {row['formulation']:6} {row['contacts']:>4} "
              f"{row['solver']:15} {fmt(row['iterations'], 'd'):>7} {fmt(row['seconds'], '.4g'):>9} "
              f"{fmt(row['relative_error'], '.2e'):>10} {fmt(row['own_error'], '.2e'):>10} "
              f"{'yes' if row['solved'] else 'no ':3} {row['note']}")
    for name, why in skipped:
        print(f"skipped {name}: {why}")
    ratios = profile_ratios(rows, solvers, problems)
    print(f"\n{'solver':15} {'solved':>7} {'fastest on':>10} {'within 2x':>9} "
          f"{'within 10x':>10} {'seconds on the solved':>22}")
    for s in solvers:
        v = ratios[s]
        total = sum(float(r["seconds"]) for r in rows if r["solver"] == s and r["solved"])
        print(f"{s:15} {sum(math.isfinite(x) for x in v):>3}/{len(problems):<3} "
              f"{sum(x <= 1.0 for x in v):>10} {sum(x <= 2.0 for x in v):>9} "
              f"{sum(x <= 10.0 for x in v):>10} {total:>22.4g}")


# ---------------------------------------------------------------------------------------

def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--talus", default=os.path.join(TOP, "build", "bin", "talus"),
                    help="the talus binary (default build/bin/talus)")
    ap.add_argument("--problems", default=os.path.normpath(os.path.join(TOP, "..", "shared", "fclib")),
                    help="directory of FCLIB .hdf5 files (default ../shared/fclib)")
    ap.add_argument("--tolerance", type=float, default=1e-6,
                    help="for every solver and for 'solved' (default 1e-6)")
    ap.add_argument("--siconos-tolerance", type=float, default=None,
                    help="Siconos's own stopping tolerance (default: --tolerance)")
    ap.add_argument("--max-iterations", type=int, default=100000,
                    help="iteration cap of every solver (default 100000)")
    ap.add_argument("--solvers", default=",".join(TALUS_SOLVERS + list(SICONOS_SOLVERS)),
                    help="comma-separated subset of " + ", ".join(TALUS_SOLVERS + list(SICONOS_SOLVERS)))
    ap.add_argument("--timeout", type=float, default=300, help="seconds per run (default 300)")
    ap.add_argument("--csv", default=os.path.join(TOP, "benchmarks", "results", "fclib.csv"))
    ap.add_argument("--png", default=os.path.join(TOP, "benchmarks", "results", "fclib_profile.png"))
    ap.add_argument("--no-siconos", action="store_true", help="Talus's solvers only")
    ap.add_argument("--no-check", action="store_true",
                    help="skip the reader and condensation checks against libfclib and Siconos")
    ap.add_argument("--siconos-worker", nargs=2, metavar=("FILE", "SOLVER"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.siconos_worker:
        siconos_worker(args.siconos_worker[0], args.siconos_worker[1], args.tolerance,
                       args.max_iterations)
        return 0

    talus_solvers, siconos_solvers = [], []
    for s in (x.strip().lower() for x in args.solvers.split(",") if x.strip()):
        s = s.removeprefix("talus-")
        if s in TALUS_SOLVERS:
            talus_solvers.append(s)
        elif s in SICONOS_SOLVERS or "siconos-" + s in SICONOS_SOLVERS:
            siconos_solvers.append(s if s in SICONOS_SOLVERS else "siconos-" + s)
        else:
            ap.error(f"unknown solver {s!r}")
    have_siconos = False
    if siconos_solvers and not args.no_siconos:
        try:
            import siconos.numerics  # noqa: F401
            have_siconos = True
        except ImportError as e:
            print(f"run.py: no Siconos ({e}): Talus's solvers only", file=sys.stderr)
    if not have_siconos:
        siconos_solvers = []
    solvers = ["talus-" + s for s in talus_solvers] + siconos_solvers

    files = sorted(glob.glob(os.path.join(args.problems, "*.hdf5")), key=str.lower)
    if not files:
        sys.exit(f"run.py: no .hdf5 files in {args.problems}")
    problems, skipped = [], []
    for path in files:
        pb = Problem(path)
        if pb.skip:
            print(f"run.py: skipping {pb.name}: {pb.skip}", file=sys.stderr)
            skipped.append((pb.name, pb.skip))
        problems.append(pb)
    if not args.no_check:
        for line in check_with_libfclib(problems):
            print("run.py: " + line, file=sys.stderr)
        if have_siconos:
            for line in check_with_siconos_condensation(problems):
                print("run.py: " + line, file=sys.stderr)
    problems = [pb for pb in problems if not pb.skip]
    if talus_solvers and not os.path.exists(args.talus):
        print(f"run.py: {args.talus} does not exist: its runs will be recorded as failed",
              file=sys.stderr)

    machine = machine_name()
    rows = []
    total = len(problems) * len(solvers)
    for pb in problems:
        for s in solvers:
            t0 = time.perf_counter()
            if s.startswith("talus-"):
                row = run_talus(args, pb, s.removeprefix("talus-"), machine)
            else:
                row = run_siconos(args, pb, s, machine)
            rows.append(row)
            if row["relative_error"] == "":
                what = f"failed: {row['note']}"
            else:
                what = (f"{'solved' if row['solved'] else 'NOT solved'}, "
                        f"{fmt(row['iterations'], 'd')} iterations, {fmt(row['seconds'], '.3g')} s, "
                        f"error {fmt(row['relative_error'], '.2e')}"
                        f"{' (' + row['note'] + ')' if row['note'] else ''}")
            print(f"[{len(rows)}/{total}] {pb.name} {s}: {what} "
                  f"[{time.perf_counter() - t0:.1f} s wall]", file=sys.stderr, flush=True)

    if EXTRA_TALUS_KEYS:
        print("run.py: talus's JSON also has " + ", ".join(sorted(EXTRA_TALUS_KEYS)) +
              " (not used)", file=sys.stderr)
    names = [pb.name for pb in problems]
    write_csv(args.csv, rows)
    draw_profile(args.png, rows, solvers, names, machine, args.tolerance)
    print_table(rows, solvers, names, skipped, args.tolerance, machine)
    print(f"\nwrote {os.path.relpath(args.csv)} and {os.path.relpath(args.png)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
