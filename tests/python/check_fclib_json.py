#!/usr/bin/python3
"""talus fclib --json --print-reactions on FCLIB files: for each solver, the reported
accuracy is recomputed here from r with an independent reader (h5py) and must agree to
1e-9 relative and be ≤ the tolerance.

Matrices are kept as their (row, column, value) entries and only ever multiplied with
vectors. For a global problem u = Hᵀ M⁻¹ (H r + f) + w, which is W r + q with
W = Hᵀ M⁻¹ H and q = Hᵀ M⁻¹ f + w, without forming W: M is block-diagonal (one block per
body: a diagonal for spheres), so M⁻¹ is applied block by block. The blocks are found
from M's entries, not assumed: a coupled M just gives larger blocks and the solve stays
exact. (A dense solve with the 12,000-dof M of Spheres-i099 took minutes with Debian's
reference BLAS.)"""
import json
import subprocess
import sys

import h5py
import numpy as np


def entries(g):
    """The (rows, cols, values) of an FCLIB sparse matrix: triplets (nz ≥ 0), compressed
    columns (nz = -1) or compressed rows (nz = -2)."""
    nz = int(g["nz"][0])
    p, i, x = g["p"][:].astype(np.int64), g["i"][:].astype(np.int64), g["x"][:]
    if nz >= 0:
        return i[:nz], p[:nz], x[:nz]
    outer = np.repeat(np.arange(len(p) - 1), np.diff(p))
    k = slice(0, p[-1])
    return (i[k], outer, x[k]) if nz == -1 else (outer, i[k], x[k])


def multiply(A, v, rows, transpose=False):
    """A v (or Aᵀ v) for A given by its entries; `rows` is the length of the result."""
    r, c, x = A
    if transpose:
        r, c = c, r
    return np.bincount(r, weights=x * v[c], minlength=rows)


def block_solver(M, d):
    """A function b ↦ M⁻¹ b for M (d × d, given by its entries), using its block-diagonal
    structure: index k ends a block if no entry couples an index ≤ k with one > k."""
    r, c, x = M
    lo, hi = np.minimum(r, c), np.maximum(r, c)
    reach = np.arange(d)
    np.maximum.at(reach, lo, hi)
    reach = np.maximum.accumulate(reach)
    ends = np.flatnonzero(reach == np.arange(d))
    starts = np.concatenate(([0], ends[:-1] + 1))
    sizes = ends - starts + 1
    block = np.repeat(np.arange(len(starts)), sizes)  # block of each index
    groups = []  # blocks of one size, solved together as a stack
    for s in np.unique(sizes):
        members = np.flatnonzero(sizes == s)
        slot = np.full(len(starts), -1)
        slot[members] = np.arange(len(members))
        A = np.zeros((len(members), s, s))
        mine = sizes[block[r]] == s
        b = block[r[mine]]
        np.add.at(A, (slot[b], r[mine] - starts[b], c[mine] - starts[b]), x[mine])
        idx = starts[members][:, None] + np.arange(s)[None, :]
        groups.append((A, idx))

    def solve(v):
        out = np.empty(d)
        for A, idx in groups:
            out[idx] = np.linalg.solve(A, v[idx][:, :, None])[:, :, 0]
        return out

    return solve, int(sizes.max())


def problem(path):
    """(u(r), q, mu): the local velocity as a function of the reactions, q = u(0), and μ."""
    with h5py.File(path, "r") as h:
        if "fclib_local" in h:
            g = h["fclib_local"]
            n = int(g["W/m"][0])
            W, q, mu = entries(g["W"]), g["vectors/q"][:], g["vectors/mu"][:]
            return (lambda r: multiply(W, r, n) + q), q, mu
        g = h["fclib_global"]
        d, m = int(g["M/m"][0]), int(g["H/n"][0])
        M, H = entries(g["M"]), entries(g["H"])
        f, w, mu = g["vectors/f"][:], g["vectors/w"][:], g["vectors/mu"][:]
    solve, largest = block_solver(M, d)
    print(f"{path.split('/')[-1]}: M is {d} × {d}, blocks of at most {largest}")

    def u(r):
        return multiply(H, solve(multiply(H, r, d) + f), m, transpose=True) + w

    return u, u(np.zeros(m)), mu


def project(v, mu):
    n, t = v[0], np.hypot(v[1], v[2])
    if mu * t <= -n:
        return np.zeros(3)
    if t <= mu * n:
        return v
    a = (n + mu * t) / (1 + mu * mu)
    return np.array([a, mu * a * v[1] / t, mu * a * v[2] / t])


def accuracy(u_of, q, mu, r):
    u = u_of(r)
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
        u_of, q, mu = problem(f)
        for solver in ("nsgs", "pgs", "apgd"):
            out = subprocess.run([talus, "fclib", f, "--solver", solver, "--tolerance", "1e-6",
                                  "--max-iterations", "50000", "--json", "--print-reactions"],
                                 check=True, capture_output=True, text=True).stdout
            d = json.loads(out)
            r = np.array(d["r"])
            mine = accuracy(u_of, q, mu, r)
            ok = (d["converged"] and mine <= 1e-6 and
                  abs(mine - d["relative_error"]) <= 1e-9 * max(mine, 1e-300) + 1e-15 and
                  d["contacts"] == len(mu) and abs(d["sum_rn"] - r[0::3].sum()) <= 1e-12 * abs(d["sum_rn"]))
            print(f"{f.split('/')[-1]} {solver}: {d['iterations']} iterations, talus {d['relative_error']:.3e}, "
                  f"recomputed {mine:.3e} (differ by {abs(mine - d['relative_error']) / max(mine, 1e-300):.1e} "
                  f"relative): {'ok' if ok else 'FAIL'}")
            failures += not ok
    sys.exit(1 if failures else 0)


main()
