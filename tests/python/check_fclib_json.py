#!/usr/bin/python3
"""talus fclib --json --print-reactions on FCLIB files: for each solver, the reported
accuracy is recomputed here from r with an independent reader (h5py; W condensed with a
dense solve for global problems) and must agree to 1e-9 relative and be ≤ the tolerance."""
import json
import subprocess
import sys

import h5py
import numpy as np


def csparse(g, rows, cols):
    nz = int(g["nz"][0])
    p, i, x = g["p"][:], g["i"][:], g["x"][:]
    A = np.zeros((rows, cols))
    if nz >= 0:
        for k in range(nz):
            A[i[k], p[k]] += x[k]
    else:
        outer = cols if nz == -1 else rows
        for o in range(outer):
            for k in range(p[o], p[o + 1]):
                if nz == -1:
                    A[i[k], o] += x[k]
                else:
                    A[o, i[k]] += x[k]
    return A


def problem(path):
    with h5py.File(path, "r") as h:
        if "fclib_local" in h:
            g = h["fclib_local"]
            n = int(g["W/m"][0])
            return csparse(g["W"], n, n), g["vectors/q"][:], g["vectors/mu"][:]
        g = h["fclib_global"]
        d, m = int(g["M/m"][0]), int(g["H/n"][0])
        M, H = csparse(g["M"], d, d), csparse(g["H"], d, m)
        MinvH = np.linalg.solve(M, H)
        q = H.T @ np.linalg.solve(M, g["vectors/f"][:]) + g["vectors/w"][:]
        return H.T @ MinvH, q, g["vectors/mu"][:]


def project(v, mu):
    n, t = v[0], np.hypot(v[1], v[2])
    if mu * t <= -n:
        return np.zeros(3)
    if t <= mu * n:
        return v
    a = (n + mu * t) / (1 + mu * mu)
    return np.array([a, mu * a * v[1] / t, mu * a * v[2] / t])


def accuracy(W, q, mu, r):
    u = W @ r + q
    F = []
    for c in range(len(mu)):
        rc, uc = r[3 * c:3 * c + 3], u[3 * c:3 * c + 3]
        uh = uc + np.array([mu[c] * np.hypot(uc[1], uc[2]), 0.0, 0.0])
        F.append(rc - project(rc - uh, mu[c]))
    return np.linalg.norm(np.concatenate(F)) / (1 + np.linalg.norm(q))


def main():
    talus, files = sys.argv[1], sys.argv[2:]
    failures = 0
    for f in files:
        W, q, mu = problem(f)
        for solver in ("nsgs", "pgs", "apgd"):
            out = subprocess.run([talus, "fclib", f, "--solver", solver, "--tolerance", "1e-6",
                                  "--max-iterations", "50000", "--json", "--print-reactions"],
                                 check=True, capture_output=True, text=True).stdout
            d = json.loads(out)
            r = np.array(d["r"])
            mine = accuracy(W, q, mu, r)
            ok = (d["converged"] and mine <= 1e-6 and
                  abs(mine - d["relative_error"]) <= 1e-9 * max(mine, 1e-300) + 1e-15 and
                  d["contacts"] == len(mu) and abs(d["sum_rn"] - r[0::3].sum()) <= 1e-12 * abs(d["sum_rn"]))
            print(f"{f.split('/')[-1]} {solver}: {d['iterations']} iterations, talus {d['relative_error']:.3e}, "
                  f"recomputed {mine:.3e}: {'ok' if ok else 'FAIL'}")
            failures += not ok
    sys.exit(1 if failures else 0)


main()
