#!/usr/bin/python3
"""The numbers granular engineers read off a run, from a Talus trajectory (HDF5).

    /usr/bin/python3 tools/talus_measure.py TOOL OUT.h5 [options]      (--help per tool)

(Debian's /usr/bin/python3 has numpy, h5py and matplotlib; so has the script's shebang.)

Tools (each prints its figure and writes a PNG, by default OUT_<tool>.png):

  flow-rate         mass that has passed below a level (or left through an outlet) over
                    time, and the steady discharge rate W [kg/s] fitted to it
  packing           solid volume fraction in a box region (exact sphere-box volumes): one
                    frame and its profile in slabs, or every frame over time
  repose            angle of repose of a heap: a straight-line fit to its free surface
  runout            run-out distance and final profile of a column collapse
  velocity-profile  mean velocity across a chute or a drum, binned along a line
  drum-angle        dynamic angle of repose of the free surface in a rotating drum

From the contacts of a run written with [output] contacts = true (/contacts):

  coordination      mean coordination number (contacts per grain), with and without
                    rattlers, and its distribution
  stress            Love-Weber mean stress tensor of the grains in a box region
  force-distribution  P(f/<f>) of the normal contact forces, and the exponential decay of
                    its tail
  force-chains      a picture of the contact network, lines as wide as their force

Bodies are treated as spheres of their written radius (a capsule's or ellipsoid's bounding
radius overestimates its volume); masses are density x 4/3 pi r^3, with the density of the
body's material from the file. Every function below works on plain numpy arrays, so it can
be used from Python without a file; the command line only reads the file and plots.
"""
import argparse
import math
import os
import sys

try:
    import numpy as np
    import h5py  # noqa: F401  (read through talus_h5; imported here to say early if it is missing)
except ImportError as missing:
    _HOW = (f"{missing.name} is missing for {sys.executable}: run with /usr/bin/python3 "
            "(Debian's python3-h5py and python3-numpy: apt install python3-h5py python3-numpy)")
    if __name__ == "__main__":
        print(f"talus_measure: {_HOW}", file=sys.stderr)
        sys.exit(1)
    raise ImportError(_HOW, name=missing.name) from missing

AXES = {"x": 0, "y": 1, "z": 2}


# ----------------------------------------------------------------------------------------
# Geometry helpers
# ----------------------------------------------------------------------------------------

def _disc_primitive(x, R):
    """S(x) = integral of sqrt(R^2 - t^2) dt from 0 to x, for |x| <= R."""
    x = np.clip(x, -R, R)
    h = np.sqrt(np.maximum(R * R - x * x, 0.0))
    safe_R = np.where(R > 0, R, 1.0)  # R = 0: x is 0 too, and so is the area
    s = np.arcsin(np.clip(x / safe_R, -1.0, 1.0))
    return 0.5 * (x * h + R * R * s)


def _disc_lower_left(a, b, R):
    """Area of the part of the disc |(X, Y)| <= R with X <= a and Y <= b (arrays broadcast)."""
    a = np.clip(a, -R, R)
    b_in = np.clip(b, -R, R)
    w = np.sqrt(np.maximum(R * R - b_in * b_in, 0.0))  # |X| < w: the line Y = b cuts the disc
    # On |X| < w the column {Y <= b} inside the disc has length h + b; outside that band it is
    # the whole chord 2h when b >= 0 and nothing when b < 0.
    lo_mid = -w
    hi_mid = np.minimum(a, w)
    mid = np.where(hi_mid > lo_mid,
                   _disc_primitive(hi_mid, R) - _disc_primitive(lo_mid, R) + b_in * (hi_mid - lo_mid), 0.0)
    left_hi = np.minimum(a, -w)
    left = np.where(left_hi > -R, 2.0 * (_disc_primitive(left_hi, R) - _disc_primitive(-R, R)), 0.0)
    right = np.where(a > w, 2.0 * (_disc_primitive(a, R) - _disc_primitive(w, R)), 0.0)
    outer = np.where(b_in >= 0.0, left + right, 0.0)
    return np.where(R > 0, mid + outer, 0.0)


def disc_rectangle_area(cx, cy, R, x0, x1, y0, y1):
    """Exact area of disc (centre (cx, cy), radius R) intersected with [x0, x1] x [y0, y1]."""
    def F(a, b):
        return _disc_lower_left(a - cx, b - cy, R)
    return np.maximum(F(x1, y1) - F(x0, y1) - F(x1, y0) + F(x0, y0), 0.0)


_GL_X, _GL_W = np.polynomial.legendre.leggauss(24)


def sphere_box_volume(centres, radii, lo, hi, panels=16):
    """Volume of each sphere inside the box [lo, hi]: exact cross-section areas (disc x
    rectangle) integrated over z by composite Gauss-Legendre (16 panels x 24 points; relative
    error below 1e-6 for a sphere cut anywhere). Spheres wholly in or out are exact."""
    c = np.asarray(centres, dtype=float).reshape(-1, 3)
    r = np.asarray(radii, dtype=float).reshape(-1)
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    vol = np.zeros(len(r))
    inside = np.all((c - r[:, None] >= lo) & (c + r[:, None] <= hi), axis=1)
    vol[inside] = 4.0 / 3.0 * math.pi * r[inside] ** 3
    touching = np.flatnonzero(~inside & np.all((c + r[:, None] > lo) & (c - r[:, None] < hi), axis=1))
    if len(touching):
        ct, rt = c[touching], r[touching]
        za = np.maximum(lo[2], ct[:, 2] - rt)
        zb = np.minimum(hi[2], ct[:, 2] + rt)
        # nodes: (spheres, panels x points), all spheres at once
        t = (np.arange(panels)[:, None] + 0.5 * (_GL_X[None, :] + 1.0)).ravel() / panels
        w = np.tile(_GL_W, panels) * 0.5 / panels
        z = za[:, None] + (zb - za)[:, None] * t[None, :]
        rho = np.sqrt(np.maximum(rt[:, None] ** 2 - (z - ct[:, 2:3]) ** 2, 0.0))
        area = disc_rectangle_area(ct[:, 0:1], ct[:, 1:2], rho, lo[0], hi[0], lo[1], hi[1])
        vol[touching] = (zb - za) * (area @ w)
    return vol


def packing_fraction(centres, radii, lo, hi):
    """Solid volume fraction of the box [lo, hi]: sum of sphere-box volumes / box volume."""
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    box = float(np.prod(hi - lo))
    if box <= 0:
        raise ValueError("the region has no volume (need min < max on every axis)")
    return float(sphere_box_volume(centres, radii, lo, hi).sum()) / box


def sphere_masses(radii, materials, densities):
    """m = rho(material) 4/3 pi r^3 per body."""
    rho = np.asarray(densities, dtype=float)[np.asarray(materials, dtype=int)]
    return rho * 4.0 / 3.0 * math.pi * np.asarray(radii, dtype=float) ** 3


def _line_fit(x, y):
    """Least-squares y = a + s x; returns (a, s, rms residual)."""
    A = np.vstack([np.ones_like(x), x]).T
    (a, s), *_ = np.linalg.lstsq(A, y, rcond=None)
    rms = float(np.sqrt(np.mean((a + s * x - y) ** 2))) if len(x) else float("nan")
    return float(a), float(s), rms


def surface_profile(horizontal, tops, bin_width, lo=None, hi=None):
    """Free-surface height per bin: the highest particle top (z + r) among the particles whose
    horizontal coordinate falls in each bin. Returns (bin centres, heights) of non-empty bins."""
    h = np.asarray(horizontal, dtype=float)
    t = np.asarray(tops, dtype=float)
    lo = h.min() if lo is None else lo
    hi = h.max() if hi is None else hi
    nb = max(1, int(math.ceil((hi - lo) / bin_width)))
    k = np.clip(((h - lo) / bin_width).astype(int), 0, nb - 1)
    top = np.full(nb, -np.inf)
    np.maximum.at(top, k, t)
    centres = lo + (np.arange(nb) + 0.5) * bin_width
    keep = np.isfinite(top)
    return centres[keep], top[keep]


# ----------------------------------------------------------------------------------------
# The measurements, on arrays
# ----------------------------------------------------------------------------------------

def passed_mass(frames, axis, level):
    """Mass that has passed below `level` along `axis` (or vanished: removed by an outlet),
    per frame. `frames` is a list of dicts with id, position, mass (arrays) and time.
    A body counts once it has been seen and is now below the level or gone."""
    seen_mass = {}
    out = []
    for fr in frames:
        ids = np.asarray(fr["id"]).astype(np.int64)
        pos = np.asarray(fr["position"])[:, axis]
        m = np.asarray(fr["mass"])
        for i, mi in zip(ids.tolist(), m.tolist()):
            seen_mass.setdefault(i, mi)
        present = dict(zip(ids.tolist(), (pos < level).tolist()))
        total = 0.0
        for i, mi in seen_mass.items():
            below = present.get(i)
            if below is None or below:
                total += mi
        out.append(total)
    return np.array(out)


def steady_rate(times, mass, lo_frac=0.2, hi_frac=0.8):
    """Steady mass flow rate: slope of a line fitted to M(t) over the frames where the passed
    mass lies between lo_frac and hi_frac of its final value. Returns (W, t0, t1)."""
    t = np.asarray(times, dtype=float)
    M = np.asarray(mass, dtype=float)
    M = M - M[0]
    final = M[-1]
    if final <= 0:
        return 0.0, float(t[0]), float(t[-1])
    sel = (M >= lo_frac * final) & (M <= hi_frac * final)
    if sel.sum() < 2:
        sel = np.ones_like(M, dtype=bool)
    _, slope, _ = _line_fit(t[sel], M[sel])
    return slope, float(t[sel][0]), float(t[sel][-1])


def repose_angle(positions, radii, up="z", geometry="axisymmetric", centre=None,
                 bin_width=None, lo_frac=0.15, hi_frac=0.85):
    """Angle of repose [deg] of a heap resting on a floor: the free surface (highest particle
    top per bin of horizontal distance from the heap's axis) fitted by a straight line over the
    bins whose height lies between lo_frac and hi_frac of the heap's height above the floor
    (leaving out the rounded apex and the toe). geometry "axisymmetric" uses the radial
    distance from the vertical axis through `centre` (default: the centroid); "planar:x" or
    "planar:y" uses the distance along that horizontal axis (a 2-D heap or a ramp against a
    wall). Returns (angle_deg, details dict)."""
    p = np.asarray(positions, dtype=float)
    r = np.asarray(radii, dtype=float)
    u = AXES[up]
    hz = [a for a in range(3) if a != u]
    if centre is None:
        centre = p.mean(axis=0)
    centre = np.asarray(centre, dtype=float)
    if geometry == "axisymmetric":
        dist = np.hypot(p[:, hz[0]] - centre[hz[0]], p[:, hz[1]] - centre[hz[1]])
    elif geometry.startswith("planar:"):
        a = AXES[geometry.split(":", 1)[1]]
        dist = np.abs(p[:, a] - centre[a])
    else:
        raise ValueError(f"geometry must be axisymmetric or planar:x|y, not {geometry!r}")
    tops = p[:, u] + r
    floor = float((p[:, u] - r).min())
    if bin_width is None:
        bin_width = 2.0 * 2.0 * float(np.median(r))
    x, z = surface_profile(dist, tops, bin_width, lo=0.0)
    height = z.max() - floor
    sel = (z - floor >= lo_frac * height) & (z - floor <= hi_frac * height)
    # only the flank outside the apex: from the first bin at the top fraction outwards
    if sel.sum() < 2:
        raise ValueError("too few surface bins on the heap's flank to fit a line")
    a, s, rms = _line_fit(x[sel], z[sel])
    angle = math.degrees(math.atan(-s))
    return angle, {"x": x, "z": z, "fit": sel, "intercept": a, "slope": s, "rms": rms,
                   "floor": floor, "bin_width": bin_width}


def runout(initial_positions, initial_radii, positions, radii, along="x", up="z", wall=None,
           bin_width=None, gap_diameters=2.0, min_thickness=None):
    """Column collapse: initial length L0 and height H0 (from the first frame), the run-out
    L_inf (distance from the back wall to the deposit's front) and final height H_inf, with
    the final profile. The front is the farthest particle edge reached by a connected deposit:
    scanning outwards, a gap wider than gap_diameters particle diameters along `along` ends it,
    so a few grains thrown ahead do not count. With min_thickness (in particle diameters),
    the front is also no farther than the last profile bin at least that thick: a carpet of
    single grains that rolled on along a smooth floor (1 diameter thick) is not deposit.
    "L_grains" is the farthest grain edge. Returns a dict."""
    a = AXES[along]
    u = AXES[up]
    p0 = np.asarray(initial_positions, dtype=float)
    r0 = np.asarray(initial_radii, dtype=float)
    p = np.asarray(positions, dtype=float)
    r = np.asarray(radii, dtype=float)
    if wall is None:
        wall = float((p0[:, a] - r0).min())
    floor = float((p0[:, u] - r0).min())
    L0 = float((p0[:, a] + r0).max()) - wall
    H0 = float((p0[:, u] + r0).max()) - floor
    d = 2.0 * float(np.median(r))
    edges = np.sort(p[:, a] + r)
    front = edges[0]
    for e in edges[1:]:
        if e - front > gap_diameters * d:
            break
        front = e
    L = float(front) - wall
    if bin_width is None:
        bin_width = d
    x, h = surface_profile(p[:, a] - wall, p[:, u] + r - floor, bin_width, lo=0.0)
    if min_thickness is not None:
        thick = x[h >= min_thickness * d]
        if len(thick):
            L = min(L, float(thick.max()) + 0.5 * bin_width)
    return {"L0": L0, "H0": H0, "aspect": H0 / L0, "L_inf": L, "H_inf": float(h.max()),
            "L_grains": float(edges[-1]) - wall,
            "runout_norm": (L - L0) / L0, "profile_x": x, "profile_h": h, "wall": wall,
            "floor": floor}


def velocity_profile(frames, across, component, origin=None, width=None, bins=20, lo=None,
                     hi=None):
    """Mean velocity component (projection on unit vector `component`) in bins of the
    coordinate along the unit vector `across` through `origin`, over all the given frames;
    with `width`, only particles within that distance of the line are used (a drum's
    diameter). Returns (bin centres, mean, std, count)."""
    across = np.asarray(across, dtype=float)
    across = across / np.linalg.norm(across)
    comp = np.asarray(component, dtype=float)
    comp = comp / np.linalg.norm(comp)
    origin = np.zeros(3) if origin is None else np.asarray(origin, dtype=float)
    s_all, v_all = [], []
    for fr in frames:
        rel = np.asarray(fr["position"], dtype=float) - origin
        s = rel @ across
        if width is not None:
            off = rel - np.outer(s, across)
            keep = np.linalg.norm(off, axis=1) <= width
        else:
            keep = np.ones(len(s), dtype=bool)
        s_all.append(s[keep])
        v_all.append(np.asarray(fr["velocity"], dtype=float)[keep] @ comp)
    s = np.concatenate(s_all)
    v = np.concatenate(v_all)
    lo = s.min() if lo is None else lo
    hi = s.max() if hi is None else hi
    edges = np.linspace(lo, hi, bins + 1)
    k = np.clip(np.searchsorted(edges, s, side="right") - 1, 0, bins - 1)
    inside = (s >= lo) & (s <= hi)
    count = np.bincount(k[inside], minlength=bins)
    total = np.bincount(k[inside], weights=v[inside], minlength=bins)
    total2 = np.bincount(k[inside], weights=v[inside] ** 2, minlength=bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total / count
        std = np.sqrt(np.maximum(total2 / count - mean ** 2, 0.0))
    return 0.5 * (edges[1:] + edges[:-1]), mean, std, count


def bagnold_fit(s, mean, count, base, surface):
    """Fits the dense chute-flow (Bagnold) profile v(z) = v_b + c (H^1.5 - (H - z)^1.5), z = s
    - base, H = surface - base, to a binned profile (least squares weighted by the samples),
    and a straight line v_b + c z for comparison. Returns a dict: v_b, c, the rms misfit of
    each, and the measured shape (v(H/2) - v(0)) / (v(H) - v(0)) by linear interpolation,
    which is 1 - 2^-1.5 = 0.646 for Bagnold and 0.5 for a linear profile."""
    ok = (count > 0) & (s >= base) & (s <= surface)
    z, v, w = s[ok] - base, mean[ok], np.sqrt(count[ok].astype(float))
    H = surface - base
    out = {"H": H}
    for name, shape in (("bagnold", H ** 1.5 - (H - z) ** 1.5), ("linear", z)):
        A = np.column_stack([np.ones_like(z), shape])
        coef, *_ = np.linalg.lstsq(A * w[:, None], v * w, rcond=None)
        out[name] = {"v_b": float(coef[0]), "c": float(coef[1]),
                     "rms": float(np.sqrt(np.average((A @ coef - v) ** 2, weights=w ** 2)))}
    v0, vh, vm = np.interp([0.0, H, 0.5 * H], z, v)
    out["shape"] = float((vm - v0) / (vh - v0))
    return out


def drum_horizontal(axis="y", up="z"):
    """The unit vector h = up x axis: the horizontal direction, normal to the drum's axis,
    towards the side where the wall of a drum turning with positive omega about +axis moves
    up (the wall's velocity there is omega axis x h = omega up)."""
    a, u = np.eye(3)[AXES[axis]], np.eye(3)[AXES[up]]
    if AXES[axis] == AXES[up]:
        raise ValueError("the drum's axis cannot be the up direction")
    return np.cross(u, a)


def bed_spin(positions, velocities, masses, axis="y"):
    """The bed's mean angular velocity about the drum's axis direction [rad/s], signed by the
    right-hand rule about +axis: its angular momentum about its own centre of mass divided
    by its moment of inertia about that line (the rate of a rigid body with the same
    momentum). About its own centre, so that no drum centre is needed."""
    p = np.asarray(positions, dtype=float).reshape(-1, 3)
    v = np.asarray(velocities, dtype=float).reshape(-1, 3)
    m = np.asarray(masses, dtype=float).reshape(-1)
    if m.sum() <= 0:
        return 0.0
    a = np.eye(3)[AXES[axis]]
    d = p - (m[:, None] * p).sum(0) / m.sum()
    w = v - (m[:, None] * v).sum(0) / m.sum()
    d_perp = d - np.outer(d @ a, a)
    inertia = float((m * (d_perp * d_perp).sum(1)).sum())
    if inertia <= 0:
        return 0.0
    return float((m * (np.cross(d, w) @ a)).sum()) / inertia


def drum_angle(positions, radii, axis="y", up="z", bin_width=None, central=0.6, sense=1):
    """Dynamic angle of repose [deg] in a drum rotating about `axis`: the free surface (highest
    particle top per bin of the horizontal coordinate normal to the axis) fitted by a line
    over the central `central` fraction of the surface's horizontal extent (the ends curl
    along the wall).

    Sign: `sense` is +1 for a drum turning with positive omega about +axis (right-hand rule),
    -1 for the other way. The angle is positive when the surface rises towards the side
    where the drum's wall moves up: the side the bed is dragged up in the rolling regime,
    so a rolling bed gives a positive angle whichever way the drum turns. (For sense +1 that
    side is h = up x axis: -x for axis y and up z.) Returns (angle_deg, details); details
    "x" is the coordinate along h."""
    p = np.asarray(positions, dtype=float)
    r = np.asarray(radii, dtype=float)
    if sense not in (1, -1):
        raise ValueError(f"sense must be +1 or -1, not {sense!r}")
    h = drum_horizontal(axis, up)
    hcoord = p @ h
    tops = p[:, AXES[up]] + r
    if bin_width is None:
        bin_width = 2.0 * 2.0 * float(np.median(r))
    x, z = surface_profile(hcoord, tops, bin_width)
    lo, hi = x.min(), x.max()
    mid, half = 0.5 * (lo + hi), 0.5 * central * (hi - lo)
    sel = (x >= mid - half) & (x <= mid + half)
    if sel.sum() < 2:
        raise ValueError("too few surface bins to fit the drum's free surface")
    a, slope, rms = _line_fit(x[sel], z[sel])
    name = ("-" if h.min() < 0 else "+") + "xyz"[int(np.argmax(np.abs(h)))]
    return sense * math.degrees(math.atan(slope)), {
        "x": x, "z": z, "fit": sel, "intercept": a, "slope": slope, "rms": rms, "horizontal_axis": name}


def spin_up_end(spin):
    """Index of the first frame from which the bed's spin magnitude stays at or above 90 %
    of its final value (the median over the last quarter of the frames, at least one):
    before it, the drum is still spinning the bed up. 0 for a bed that does not turn."""
    s = np.abs(np.asarray(spin, dtype=float))
    if len(s) == 0:
        return 0
    final = float(np.median(s[-max(1, len(s) // 4):]))
    if final == 0.0:
        return 0
    low = np.flatnonzero(s < 0.9 * final)
    return int(low[-1]) + 1 if len(low) else 0


def packing_profile(centres, radii, lo, hi, axis="z", slices=20):
    """Solid volume fraction in `slices` equal slabs of the box [lo, hi] along `axis` (exact
    sphere-box volumes per slab). Returns (slab centres along the axis, fractions)."""
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    k = AXES[axis]
    edges = np.linspace(lo[k], hi[k], int(slices) + 1)
    phi = []
    for a, b in zip(edges[:-1], edges[1:]):
        l, h = lo.copy(), hi.copy()
        l[k], h[k] = a, b
        phi.append(packing_fraction(centres, radii, l, h))
    return 0.5 * (edges[:-1] + edges[1:]), np.array(phi)


# ----------------------------------------------------------------------------------------
# Command line
# ----------------------------------------------------------------------------------------
# Contacts (/contacts): coordination, stress, force distribution
# ----------------------------------------------------------------------------------------

def contact_forces(contacts):
    """The force of each contact on its body B [N], world frame, (K, 3): the impulses of the
    step over the step (on A, the opposite)."""
    return (contacts["normal_impulse"][:, None] * contacts["normal"]
            + contacts["tangential_impulse"]) / contacts["dt"]


def touching(contacts, by="force", gap_tolerance=0.0):
    """Which contacts count as touching: by="force", those that carried a normal impulse
    (> 0); by="gap", those whose gap is at most gap_tolerance [m], loaded or not."""
    if by == "force":
        return contacts["normal_impulse"] > 0.0
    if by == "gap":
        return contacts["gap"] <= gap_tolerance
    raise ValueError(f"touching: by must be 'force' or 'gap', not {by!r}")


def coordination(ids, contacts, keep, walls=False, rattler_below=2):
    """Contacts per grain among the grains `ids`, counting the contacts where `keep` is
    true (between two grains; and with walls or bodies outside `ids` too when `walls`).

    Returns (z, z_m, counts, rattlers): the mean over all the grains; the mean over the
    grains with at least `rattler_below` contacts (the mechanical coordination number, the
    others being rattlers that carry no load); each grain's count, in the order of `ids`;
    and the fraction of rattlers."""
    ids = np.asarray(ids, dtype=np.uint64)
    order = np.argsort(ids)
    sorted_ids = ids[order]

    def index_of(x):
        i = np.clip(np.searchsorted(sorted_ids, x), 0, max(len(ids) - 1, 0))
        found = (sorted_ids[i] == x) if len(ids) else np.zeros(len(x), bool)
        return order[i], found

    counts = np.zeros(len(ids), dtype=np.int64)
    a, b = np.asarray(contacts["a"], np.uint64), np.asarray(contacts["b"], np.uint64)
    ia, fa = index_of(a)
    ib, fb = index_of(b)
    keep = np.asarray(keep, bool)
    both = keep & fa & fb
    one_a = keep & fa & ~fb
    one_b = keep & fb & ~fa
    np.add.at(counts, ia[both], 1)
    np.add.at(counts, ib[both], 1)
    if walls:
        np.add.at(counts, ia[one_a], 1)
        np.add.at(counts, ib[one_b], 1)
    if len(ids) == 0:
        return 0.0, 0.0, counts, 0.0
    loaded = counts >= rattler_below
    z = float(counts.mean())
    z_m = float(counts[loaded].mean()) if loaded.any() else 0.0
    return z, z_m, counts, float(1.0 - loaded.mean())


def love_weber_stress(contacts, lo, hi, keep=None):
    """Mean stress tensor [Pa] of the grains whose centre lies in the box [lo, hi], by the
    Love-Weber sum over each grain's contacts,

        sigma = -(1/V) sum_{grains p in the box} sum_{contacts c of p} f_c (x_c - x_p)^T,

    f_c the force on p at the contact point x_c, V the box's volume; compression is
    positive. Between two grains both in the box the pair adds f (x_B - x_A)^T, the force on
    B times the branch vector. A wall, or a body that does not move, is no grain: its
    contacts enter only through the grain they touch. The grains' centres and the contact
    points are those of the step the forces come from (the segment ends in /contacts).
    Gravity's share, (1/V) sum m_p g x_p^T, is not added: this is the contact stress."""
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    f = contact_forces(contacts)
    seg = np.asarray(contacts["segment"]).reshape(-1, 2, 3)
    point = np.asarray(contacts["point"])
    if keep is not None:
        keep = np.asarray(keep, bool)
        f, seg, point = f[keep], seg[keep], point[keep]
        wall = np.asarray(contacts["wall"])[keep]
        a = np.asarray(contacts["a"])[keep]
    else:
        wall, a = np.asarray(contacts["wall"]), np.asarray(contacts["a"])
    xa, xb = seg[:, 0], seg[:, 1]

    def inside(x):
        return np.all((x >= lo) & (x <= hi), axis=1)

    # A is a grain unless it is a wall or does not move (then its end is the contact point)
    a_grain = (wall < 0) & ~np.all(xa == point, axis=1)
    s = np.zeros((3, 3))
    on_b = inside(xb)
    s -= np.einsum("ki,kj->ij", f[on_b], point[on_b] - xb[on_b])
    on_a = a_grain & inside(xa)
    s -= np.einsum("ki,kj->ij", -f[on_a], point[on_a] - xa[on_a])
    return s / float(np.prod(hi - lo))


def force_distribution(forces, bins=30):
    """P(f/<f>) of positive contact forces `forces` (normal force magnitudes): returns
    (centres, density, mean, beta, scale): the histogram's bin centres over f/<f> and its
    density (unit area), <f>, and the tail P ~ scale exp(-beta f/<f>) fitted to the bins
    beyond f/<f> = 1 (nan with fewer than three such bins)."""
    f = np.asarray(forces, float)
    f = f[f > 0.0]
    if len(f) == 0:
        raise ValueError("no contact carries a force")
    mean = float(f.mean())
    x = f / mean
    density, edges = np.histogram(x, bins=bins, range=(0.0, max(float(x.max()), 1.0) * 1.0001), density=True)
    centres = 0.5 * (edges[1:] + edges[:-1])
    tail = (centres > 1.0) & (density > 0.0)
    beta, scale = float("nan"), float("nan")
    if tail.sum() >= 3:
        slope, intercept = np.polyfit(centres[tail], np.log(density[tail]), 1)
        beta, scale = -float(slope), float(np.exp(intercept))
    return centres, density, mean, beta, scale


# ----------------------------------------------------------------------------------------

def _load(path):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import talus_h5
    return talus_h5.load(path)


def _frame_index(run, spec):
    """A frame named by its index (negative from the end) or by end:STAGE, the last frame at
    or before the end of the stage of that name or index (/diagnostics/stage): where a stage
    stops on its kinetic energy, that time moves with the physics, and a frame is written
    there."""
    n = len(run)
    if n == 0:
        raise SystemExit(f"talus_measure: {run.path} holds no complete frame")
    if str(spec).startswith("end:"):
        return _stage_end_frame(run, str(spec)[4:])
    k = int(spec)
    if not -n <= k < n:
        raise SystemExit(f"talus_measure: --frame {spec}: out of range ({n} frames)")
    return k


def _stage_end_frame(run, stage):
    names = list(np.atleast_1d(run.attrs.get("stage_names", [])))
    if stage in names:
        index = names.index(stage)
    elif stage.lstrip("-").isdigit() and -len(names) <= int(stage) < len(names):
        index = int(stage) % len(names)
    else:
        raise SystemExit(f"talus_measure: --frame end:{stage}: no such stage (the run has "
                         f"{', '.join(map(str, names)) or 'none'})")
    stages = np.asarray(run.diagnostics.get("stage", []))
    times = np.asarray(run.diagnostics.get("time", []), dtype=float)
    taken = np.flatnonzero(stages == index)
    if taken.size == 0:
        raise SystemExit(f"talus_measure: --frame end:{stage}: the run took no step in it")
    end = times[taken[-1]]
    ks = np.flatnonzero(np.asarray(run.frames.time, dtype=float) <= end * (1.0 + 1e-12))
    if ks.size == 0:
        raise SystemExit(f"talus_measure: --frame end:{stage}: no frame by t = {end:.6g} s")
    return int(ks[-1])


def _frames_in(run, t0, t1):
    times = run.frames.time
    if t0 is None:
        t0 = 0.5 * (times[0] + times[-1])
    if t1 is None:
        t1 = times[-1]
    ks = [k for k in range(len(run)) if t0 <= times[k] <= t1]
    if not ks:
        raise SystemExit(f"talus_measure: no frame with time in [{t0}, {t1}] s")
    return ks


def _png_path(args, tool):
    if args.png:
        return args.png
    stem, _ = os.path.splitext(args.trajectory)
    return f"{stem}_{tool}.png"


def _figure():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _vec(text, name):
    try:
        v = [float(t) for t in text.replace(",", " ").split()]
    except ValueError:
        raise SystemExit(f"talus_measure: {name}: expected numbers, got {text!r}")
    if len(v) != 3:
        raise SystemExit(f"talus_measure: {name}: expected 3 numbers, got {text!r}")
    return np.array(v)


def outlet_mass(run, outlet):
    """Mass removed by outlet `outlet` (its index in the scene) since the start, with the
    times: per step from /diagnostics/removed_total_mass when the file has it, else per frame
    from /flow/removed_total_mass."""
    for source, times in ((run.diagnostics, "time"), (run.flow, None)):
        if "removed_total_mass" not in source:
            continue
        m = np.asarray(source["removed_total_mass"], dtype=float)
        if outlet < 0 or outlet >= m.shape[1]:
            raise SystemExit(f"talus_measure: --outlet {outlet}: the run has {m.shape[1]} outlet(s)")
        t = source[times] if times else run.frames.time
        return np.asarray(t, dtype=float), m[:, outlet]
    raise SystemExit(f"talus_measure: {run.path} has no outlet ([[outlet]] in the scene); use --level")


def cmd_flow_rate(args):
    if (args.level is None) == (args.outlet is None):
        raise SystemExit("talus_measure: flow-rate: give --level (a plane the bodies pass) or --outlet "
                         "(an outlet's index), one of them")
    with _load(args.trajectory) as run:
        if args.outlet is not None:
            t, M = outlet_mass(run, args.outlet)
            t, M = np.concatenate(([0.0], t)), np.concatenate(([0.0], M))  # nothing before the run
        else:
            dens = run.attrs["material_density"]
            frames = []
            for k in range(len(run)):
                f = run.frame(k)
                f["mass"] = sphere_masses(f["radius"], f["material"], dens)
                frames.append(f)
            t = np.asarray(run.frames.time, dtype=float)
            M = passed_mass(frames, AXES[args.axis], args.level)
    W, t0, t1 = steady_rate(t, M, args.lo, args.hi)
    where = f"outlet {args.outlet}" if args.outlet is not None else f"below {args.axis} = {args.level} m"
    print(f"mass passed {where} by t = {t[-1]:.6g} s: {M[-1] - M[0]:.6g} kg")
    print(f"steady mass flow rate: {W:.6g} kg/s (line fit over t in [{t0:.6g}, {t1:.6g}] s)")
    plt = _figure()
    fig, ax = plt.subplots(2, 1, figsize=(6, 6), sharex=True)
    ax[0].plot(t, M - M[0], "k.-", ms=3)
    ax[0].plot([t0, t1], [np.interp(t0, t, M - M[0]), np.interp(t0, t, M - M[0]) + W * (t1 - t0)],
               "r-", label=f"W = {W:.4g} kg/s")
    ax[0].set_ylabel("mass passed [kg]")
    ax[0].legend()
    if len(t) > 1:
        # per-step totals: the rate over 100 equal intervals (one step moves a body or none)
        tc, Mc = (np.linspace(t[0], t[-1], 101), None) if len(t) > 200 else (t, M)
        Mc = np.interp(tc, t, M) if Mc is None else Mc
        ax[1].plot(0.5 * (tc[1:] + tc[:-1]), np.diff(Mc) / np.diff(tc), "b.-", ms=3)
    ax[1].axhline(W, color="r")
    ax[1].set_xlabel("time [s]")
    ax[1].set_ylabel("flow rate [kg/s]")
    fig.tight_layout()
    fig.savefig(_png_path(args, "flow_rate"), dpi=120)
    return 0


def cmd_packing(args):
    lo, hi = _vec(args.min, "--min"), _vec(args.max, "--max")
    if np.any(hi <= lo):
        raise SystemExit("talus_measure: --min must be below --max on every axis")
    if args.slices < 1:
        raise SystemExit("talus_measure: --slices must be at least 1")
    with _load(args.trajectory) as run:
        t = np.asarray(run.frames.time, dtype=float)
        ks = list(range(len(run))) if args.all_frames else [_frame_index(run, args.frame)]
        phi = []
        for k in ks:
            f = run.frame(k)
            phi.append(packing_fraction(f["position"], f["radius"], lo, hi))
        profile = None
        if len(ks) == 1:
            profile = packing_profile(f["position"], f["radius"], lo, hi, args.along, args.slices)
    ts = t[ks]
    print(f"packing fraction in [{lo.tolist()}, {hi.tolist()}] at t = {ts[-1]:.6g} s: {phi[-1]:.6f}")
    plt = _figure()
    fig, ax = plt.subplots(figsize=(6, 4))
    if profile is None:
        ax.plot(ts, phi, "k.-")
        ax.set_xlabel("time [s]")
        ax.set_ylabel("solid volume fraction [-]")
        ax.set_title("packing fraction in the region")
    else:
        # one frame: where in the region the solid is, slab by slab along --along
        mids, prof = profile
        print(f"profile along {args.along} in {args.slices} slabs of {(hi - lo)[AXES[args.along]] / args.slices:.6g} m:")
        print(f"{args.along} [m]      fraction")
        for m, v in zip(mids, prof):
            print(f"{m:<12.6g} {v:.6f}")
        ax.plot(prof, mids, "k.-", label="slab")
        ax.axvline(phi[-1], color="r", label=f"whole region {phi[-1]:.4f}")
        ax.set_xlabel("solid volume fraction [-]")
        ax.set_ylabel(f"{args.along} [m]")
        ax.set_title(f"packing fraction profile at t = {ts[-1]:.4g} s")
        ax.legend()
    fig.tight_layout()
    fig.savefig(_png_path(args, "packing"), dpi=120)
    return 0


def cmd_repose(args):
    with _load(args.trajectory) as run:
        f = run.frame(_frame_index(run, args.frame))
    centre = _vec(args.centre, "--centre") if args.centre else None
    angle, d = repose_angle(f["position"], f["radius"], args.up, args.geometry, centre,
                            args.bin_width)
    print(f"angle of repose: {angle:.2f} deg (surface fit rms {d['rms']:.3g} m over "
          f"{int(d['fit'].sum())} bins, t = {f['time']:.6g} s)")
    plt = _figure()
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(d["x"], d["z"], "k.", ms=4, label="surface (highest grain per bin)")
    xs = d["x"][d["fit"]]
    ax.plot(xs, d["intercept"] + d["slope"] * xs, "r-", label=f"fit: {angle:.1f}°")
    ax.set_xlabel("distance from the heap's axis [m]")
    ax.set_ylabel(f"{args.up} [m]")
    ax.set_aspect("equal", adjustable="datalim")
    ax.legend()
    fig.tight_layout()
    fig.savefig(_png_path(args, "repose"), dpi=120)
    return 0


def cmd_runout(args):
    with _load(args.trajectory) as run:
        k0 = 0
        if args.initial_time is not None:  # the frame nearest that time: the column at release
            k0 = int(np.argmin(np.abs(run.frames.time - args.initial_time)))
        f0 = run.frame(k0)
        f = run.frame(_frame_index(run, args.frame))
    res = runout(f0["position"], f0["radius"], f["position"], f["radius"], args.along, args.up,
                 args.wall, min_thickness=args.min_thickness)
    print(f"initial column (t = {f0['time']:.6g} s): L0 = {res['L0']:.6g} m, H0 = {res['H0']:.6g} m, a = H0/L0 = {res['aspect']:.4g}")
    print(f"run-out: L_inf = {res['L_inf']:.6g} m, (L_inf - L0)/L0 = {res['runout_norm']:.4g}; "
          f"final height H_inf = {res['H_inf']:.6g} m, H_inf/L0 = {res['H_inf'] / res['L0']:.4g}; "
          f"farthest grain at {res['L_grains']:.6g} m")
    plt = _figure()
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.plot([0, 0, res["L0"], res["L0"]], [0, res["H0"], res["H0"], 0], "b--", label="initial column")
    ax.plot(res["profile_x"], res["profile_h"], "k.-", ms=3, label=f"final profile, t = {f['time']:.3g} s")
    ax.axvline(res["L_inf"], color="r", label=f"run-out {res['L_inf']:.3g} m")
    ax.set_xlabel(f"distance from the wall along {args.along} [m]")
    ax.set_ylabel("height [m]")
    ax.set_aspect("equal", adjustable="datalim")
    ax.legend()
    fig.tight_layout()
    fig.savefig(_png_path(args, "runout"), dpi=120)
    return 0


def cmd_velocity_profile(args):
    across = _vec(args.across, "--across")
    comp = _vec(args.component, "--component")
    origin = _vec(args.origin, "--origin") if args.origin else None
    with _load(args.trajectory) as run:
        ks = _frames_in(run, args.t0, args.t1)
        frames = [run.frame(k) for k in ks]
        t = run.frames.time
        t0, t1 = float(t[ks[0]]), float(t[ks[-1]])
    s, mean, std, count = velocity_profile(frames, across, comp, origin, args.width, args.bins)
    print(f"velocity profile over {len(ks)} frames, t in [{t0:.6g}, {t1:.6g}] s")
    print("# position [m]  mean velocity [m/s]  std [m/s]  samples")
    for si, mi, di, ci in zip(s, mean, std, count):
        if ci:
            print(f"{si:.6g} {mi:.6g} {di:.6g} {int(ci)}")
    fit = None
    if args.bagnold is not None:
        unit = across / np.linalg.norm(across)
        o = origin if origin is not None else np.zeros(3)
        # the free surface: the highest grain top along the line, averaged over the frames
        surface = float(np.mean([np.max((np.asarray(f["position"]) - o) @ unit + f["radius"])
                                 for f in frames]))
        fit = bagnold_fit(s, mean, count, args.bagnold, surface)
        b, l = fit["bagnold"], fit["linear"]
        print(f"Bagnold fit over depth H = {fit['H']:.6g} m: v = {b['v_b']:.4g} + {b['c']:.4g} "
              f"(H^1.5 - (H - z)^1.5), rms {b['rms']:.3g} m/s (a straight line: rms {l['rms']:.3g} m/s); "
              f"measured (v(H/2) - v(0))/(v(H) - v(0)) = {fit['shape']:.3f} "
              f"(Bagnold 0.646, linear 0.5)")
    plt = _figure()
    fig, ax = plt.subplots(figsize=(5, 5))
    ok = count > 0
    ax.errorbar(mean[ok], s[ok], xerr=std[ok], fmt="k.-", ms=4, capsize=2)
    if fit is not None:
        zz = np.linspace(0.0, fit["H"], 50)
        b = fit["bagnold"]
        ax.plot(b["v_b"] + b["c"] * (fit["H"] ** 1.5 - (fit["H"] - zz) ** 1.5), args.bagnold + zz,
                "r-", label="Bagnold fit")
        ax.legend()
    ax.set_xlabel("mean velocity [m/s]")
    ax.set_ylabel("position along the profile line [m]")
    fig.tight_layout()
    fig.savefig(_png_path(args, "velocity_profile"), dpi=120)
    return 0


def cmd_drum_angle(args):
    with _load(args.trajectory) as run:
        if len(run) == 0:
            raise SystemExit(f"talus_measure: {run.path} holds no complete frame")
        dens = run.attrs["material_density"]
        times = np.asarray(run.frames.time, dtype=float)
        spin, frames = [], []
        for k in range(len(run)):
            f = run.frame(k)
            spin.append(bed_spin(f["position"], f["velocity"],
                                 sphere_masses(f["radius"], f["material"], dens), args.axis))
            frames.append(f)
    spin = np.array(spin)
    steady_from = spin_up_end(spin)
    if args.t0 is None:
        t0 = max(0.5 * (times[0] + times[-1]), times[min(steady_from, len(times) - 1)])
        how = "default: from half-way, or later once the bed's spin stays at 90 % of its final value or more"
    else:
        t0, how = args.t0, "--t0"
    t1 = times[-1] if args.t1 is None else args.t1
    ks = [k for k in range(len(times)) if t0 <= times[k] <= t1]
    if not ks:
        raise SystemExit(f"talus_measure: no frame with time in [{t0}, {t1}] s")
    print(f"window: t in [{times[ks[0]]:.6g}, {times[ks[-1]]:.6g}] s, {len(ks)} frame"
          f"{'s' if len(ks) != 1 else ''} ({how})")
    early = [k for k in ks if k < steady_from]
    if early:
        print(f"talus_measure: warning: {len(early)} frame{'s' if len(early) != 1 else ''} of the window "
              f"(to t = {times[early[-1]]:.6g} s) come before the bed's spin reaches 90 % of its final "
              f"value: the drum is still spinning it up; start later with --t0 {times[steady_from]:.6g}",
              file=sys.stderr)
    omega = float(spin[ks].mean())
    if args.sense != "auto":
        sense, why = (1, "--sense positive") if args.sense == "positive" else (-1, "--sense negative")
    elif abs(omega) > 1e-6:
        sense = 1 if omega > 0 else -1
        why = f"the bed turns at {omega:+.3g} rad/s about +{args.axis}"
    else:
        sense = 1
        why = (f"the bed does not turn ({omega:.1g} rad/s): taken as turning with positive omega "
               f"about +{args.axis}; say otherwise with --sense")
        print(f"talus_measure: warning: {why}", file=sys.stderr)
    angles, last = [], None
    for k in ks:
        a, d = drum_angle(frames[k]["position"], frames[k]["radius"], args.axis, args.up,
                          args.bin_width, args.central, sense)
        angles.append(a)
        last = (frames[k], d)
    angles = np.array(angles)
    print(f"dynamic angle of repose: {angles.mean():.2f} deg (mean over {len(angles)} frame"
          f"{'s' if len(angles) != 1 else ''}, std {angles.std():.2f} deg; {why}; positive: the "
          f"surface rises towards the side where the drum wall moves up)")
    plt = _figure()
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    f, d = last
    ax[0].plot(d["x"], d["z"], "k.", ms=4, label="free surface")
    xs = d["x"][d["fit"]]
    ax[0].plot(xs, d["intercept"] + d["slope"] * xs, "r-", label=f"fit {angles[-1]:.1f}°")
    ax[0].set_aspect("equal", adjustable="datalim")
    ax[0].set_xlabel(f"along {d['horizontal_axis']} [m]")
    ax[0].set_ylabel(f"{args.up} [m]")
    ax[0].legend()
    ax[1].plot(times, np.abs(spin), "b.-", label="|bed spin| [rad/s]")
    ax[1].plot(times[ks], angles, "k.-", label="angle [deg]")
    ax[1].axvspan(times[ks[0]], times[ks[-1]], color="0.9", label="window")
    ax[1].set_xlabel("time [s]")
    ax[1].legend()
    fig.tight_layout()
    fig.savefig(_png_path(args, "drum_angle"), dpi=120)
    return 0


def _contacts_of(run, k):
    c = run.contacts(k)
    if c is None:
        raise SystemExit(f"talus_measure: {run.path} holds no contacts: run the scene with "
                         "[output] contacts = true (or --set output.contacts=true)")
    return c


def _contact_frame(args):
    """The contacts of the frame --frame asks for, and its time."""
    with _load(args.trajectory) as run:
        k = _frame_index(run, args.frame)
        return _contacts_of(run, k), float(run.frames.time[k])


def _region(args):
    if args.min is None and args.max is None:
        return None, None
    if args.min is None or args.max is None:
        raise SystemExit("talus_measure: give both --min and --max, or neither")
    lo, hi = _vec(args.min, "--min"), _vec(args.max, "--max")
    if np.any(hi <= lo):
        raise SystemExit("talus_measure: --min must be below --max on every axis")
    return lo, hi


def cmd_coordination(args):
    lo, hi = _region(args)
    with _load(args.trajectory) as run:
        k = _frame_index(run, args.frame)
        c, f = _contacts_of(run, k), run.frame(k)
    ids = f["id"]
    if lo is not None:
        ids = ids[np.all((f["position"] >= lo) & (f["position"] <= hi), axis=1)]
    keep = touching(c, args.by, args.gap_tolerance)
    z, z_m, counts, rattlers = coordination(ids, c, keep, args.walls, args.rattler_below)
    where = "all grains" if lo is None else f"grains with centres in [{lo.tolist()}, {hi.tolist()}]"
    print(f"coordination number at t = {f['time']:.6g} s, {where} ({len(ids)}), contacts touching by "
          f"{args.by}{', walls included' if args.walls else ''}: Z = {z:.4f}")
    print(f"without rattlers (fewer than {args.rattler_below} contacts, {100 * rattlers:.1f} % of the "
          f"grains): Z_m = {z_m:.4f}")
    plt = _figure()
    fig, ax = plt.subplots(figsize=(6, 4))
    if len(counts):
        ax.hist(counts, bins=np.arange(counts.max() + 2) - 0.5, color="0.5", edgecolor="k")
    ax.axvline(z, color="r", label=f"Z = {z:.3f}")
    ax.axvline(z_m, color="b", ls="--", label=f"Z_m = {z_m:.3f}")
    ax.set_xlabel("contacts per grain")
    ax.set_ylabel("grains")
    ax.legend()
    fig.tight_layout()
    fig.savefig(_png_path(args, "coordination"), dpi=120)
    return 0


def cmd_stress(args):
    lo, hi = _region(args)
    if lo is None:
        raise SystemExit("talus_measure: stress needs the region: --min and --max")
    if args.slices < 1:
        raise SystemExit("talus_measure: --slices must be at least 1")
    c, t = _contact_frame(args)
    sigma = love_weber_stress(c, lo, hi)
    p = float(np.trace(sigma)) / 3.0
    dev = sigma - p * np.eye(3)
    q = math.sqrt(1.5 * float(np.sum(dev * dev)))
    print(f"Love-Weber contact stress of the grains in [{lo.tolist()}, {hi.tolist()}] at t = {t:.6g} s "
          "[Pa], compression positive:")
    for row in sigma:
        print("  " + "  ".join(f"{v:13.6g}" for v in row))
    print(f"mean stress p = {p:.6g} Pa, deviatoric stress q = {q:.6g} Pa")
    a = AXES[args.along]
    edges = np.linspace(lo[a], hi[a], args.slices + 1)
    mids, comp = 0.5 * (edges[1:] + edges[:-1]), []
    for j in range(args.slices):
        l2, h2 = lo.copy(), hi.copy()
        l2[a], h2[a] = edges[j], edges[j + 1]
        comp.append(love_weber_stress(c, l2, h2)[a, a])
    plt = _figure()
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.plot(comp, mids, "k.-", label=f"sigma_{args.along}{args.along} per slab")
    ax.axvline(sigma[a, a], color="r", label=f"whole region {sigma[a, a]:.4g} Pa")
    ax.set_xlabel("stress [Pa]")
    ax.set_ylabel(f"{args.along} [m]")
    ax.legend()
    fig.tight_layout()
    fig.savefig(_png_path(args, "stress"), dpi=120)
    return 0


def _normal_forces(c, walls, t):
    """The normal forces [N] of the loaded contacts (between grains, and with walls when
    `walls`), and which contacts they are; refuses a frame where none carries a force."""
    keep = c["normal_impulse"] > 0.0
    if not walls:
        keep &= c["wall"] < 0
    if not keep.any():
        raise SystemExit(f"talus_measure: no contact carries a force at t = {t:.6g} s")
    return c["normal_impulse"][keep] / c["dt"], keep


def cmd_force_distribution(args):
    c, t = _contact_frame(args)
    fn, _ = _normal_forces(c, args.walls, t)
    x, density, mean, beta, scale = force_distribution(fn, args.bins)
    print(f"normal contact forces at t = {t:.6g} s: {len(fn)} loaded contacts"
          f"{' (walls included)' if args.walls else ' between grains'}, <f> = {mean:.6g} N, "
          f"largest {fn.max() / mean:.3f} <f>")
    print(f"tail P(f/<f>) ~ exp(-beta f/<f>) for f > <f>: beta = {beta:.4g}")
    plt = _figure()
    fig, ax = plt.subplots(figsize=(6, 4))
    shown = density > 0
    ax.semilogy(x[shown], density[shown], "k.-", label="P(f/<f>)")
    if np.isfinite(beta):
        tail = x > 1.0
        ax.semilogy(x[tail], scale * np.exp(-beta * x[tail]), "r--", label=f"exp(-{beta:.3g} f/<f>)")
    ax.set_xlabel("f / <f>")
    ax.set_ylabel("probability density")
    ax.legend()
    fig.tight_layout()
    fig.savefig(_png_path(args, "force_distribution"), dpi=120)
    return 0


def cmd_force_chains(args):
    c, t = _contact_frame(args)
    fn, keep = _normal_forces(c, args.walls, t)
    mean = float(fn.mean())
    seg = np.asarray(c["segment"]).reshape(-1, 2, 3)[keep]
    h, v = [i for i in range(3) if i != AXES[args.view]]
    strong = fn > mean * (1.0 + 1e-9)  # equal forces are not above their mean by rounding
    print(f"force chains at t = {t:.6g} s: {len(fn)} loaded contacts drawn, <f> = {mean:.6g} N; "
          f"{int(strong.sum())} ({100 * strong.mean():.1f} %) carry more than <f>")
    from matplotlib.collections import LineCollection
    plt = _figure()
    fig, ax = plt.subplots(figsize=(6, 6))
    lines = LineCollection(seg[:, :, [h, v]], linewidths=0.3 + 2.0 * fn / mean,
                           colors=np.where(strong, "k", "0.6"))
    ax.add_collection(lines)
    ax.autoscale()
    ax.set_aspect("equal")
    ax.set_xlabel(f"{'xyz'[h]} [m]")
    ax.set_ylabel(f"{'xyz'[v]} [m]")
    ax.set_title(f"contact forces at t = {t:.4g} s (width ~ f/<f>; black: f > <f>)")
    fig.tight_layout()
    fig.savefig(_png_path(args, "force_chains"), dpi=150)
    return 0


def build_parser():
    p = argparse.ArgumentParser(prog="talus_measure.py", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="tool", required=True)

    def add(name, help_text):
        s = sub.add_parser(name, help=help_text, description=help_text)
        s.add_argument("trajectory", help="Talus trajectory OUT.h5")
        s.add_argument("--png", help="plot file (default OUT_<tool>.png beside the trajectory)")
        return s

    s = add("flow-rate", "mass passed below a level or through an outlet, and the steady rate")
    s.add_argument("--axis", choices="xyz", default="z", help="axis of the level (default z)")
    s.add_argument("--level", type=float, help="level [m]: the orifice plane (from the body frames)")
    s.add_argument("--outlet", type=int,
                   help="instead, the mass an [[outlet]] removed (its index in the scene, from 0): "
                        "every step's total, whatever the frame interval")
    s.add_argument("--lo", type=float, default=0.2, help="fit from this fraction of the final mass (0.2)")
    s.add_argument("--hi", type=float, default=0.8, help="fit up to this fraction of the final mass (0.8)")
    s.set_defaults(func=cmd_flow_rate)

    s = add("packing", "solid volume fraction in a box region")
    s.add_argument("--min", required=True, help="region corner 'x y z' [m]")
    s.add_argument("--max", required=True, help="region corner 'x y z' [m]")
    s.add_argument("--frame", default="-1", help="frame index (default -1, the last), or end:STAGE (the stage's last frame)")
    s.add_argument("--all-frames", action="store_true",
                   help="every frame: the fraction over time (plotted over time)")
    s.add_argument("--along", choices="xyz", default="z",
                   help="with one frame, the plot is the fraction profile in slabs along this "
                        "axis (default z)")
    s.add_argument("--slices", type=int, default=20, help="slabs of the profile (20)")
    s.set_defaults(func=cmd_packing)

    s = add("repose", "angle of repose of a heap (straight-line fit to the free surface)")
    s.add_argument("--frame", default="-1", help="frame index (default -1, the last), or end:STAGE (the stage's last frame)")
    s.add_argument("--up", choices="xyz", default="z")
    s.add_argument("--geometry", default="axisymmetric",
                   help="axisymmetric (conical heap) or planar:x / planar:y (2-D heap)")
    s.add_argument("--centre", help="heap axis point 'x y z' (default: centroid)")
    s.add_argument("--bin-width", type=float, help="surface bin width [m] (default 2 diameters)")
    s.set_defaults(func=cmd_repose)

    s = add("runout", "run-out and final profile of a column collapse")
    s.add_argument("--frame", default="-1", help="frame of the final deposit (default -1, the last, or end:STAGE)")
    s.add_argument("--initial-time", type=float,
                   help="time of the column at release [s]: the frame nearest it (default: frame 0)")
    s.add_argument("--along", choices="xyz", default="x", help="direction of the flow (x)")
    s.add_argument("--up", choices="xyz", default="z")
    s.add_argument("--wall", type=float, help="back wall position [m] (default: the column's back)")
    s.add_argument("--min-thickness", type=float,
                   help="the front is no farther than the deposit is this many grain diameters "
                        "thick (default: any thickness; grains beyond a 2-diameter gap never count)")
    s.set_defaults(func=cmd_runout)

    s = add("velocity-profile", "mean velocity binned along a line (chute depth, drum diameter)")
    s.add_argument("--across", default="0 0 1", help="direction of the profile line (default z)")
    s.add_argument("--component", default="1 0 0", help="velocity direction averaged (default x)")
    s.add_argument("--origin", help="a point of the line 'x y z' (default origin)")
    s.add_argument("--width", type=float, help="use only grains within this distance of the line [m]")
    s.add_argument("--bins", type=int, default=20)
    s.add_argument("--bagnold", type=float, metavar="BASE",
                   help="fit the dense chute-flow profile from this base position along the "
                        "line [m] to the free surface (the highest grain top)")
    s.add_argument("--t0", type=float, help="window start [s] (default: half-way)")
    s.add_argument("--t1", type=float, help="window end [s] (default: the last frame)")
    s.set_defaults(func=cmd_velocity_profile)

    s = add("drum-angle", "dynamic angle of repose in a rotating drum: positive when the free "
                          "surface rises towards the side where the drum's wall moves up (a bed "
                          "in the rolling regime, whichever way the drum turns)")
    s.add_argument("--axis", choices="xyz", default="y", help="drum axis (default y)")
    s.add_argument("--up", choices="xyz", default="z")
    s.add_argument("--central", type=float, default=0.6,
                   help="fraction of the surface's width used in the fit (0.6)")
    s.add_argument("--bin-width", type=float)
    s.add_argument("--sense", choices=("auto", "positive", "negative"), default="auto",
                   help="which way the drum turns about +axis (right-hand rule); auto (default): "
                        "the sense of the bed's mean angular velocity over the window")
    s.add_argument("--t0", type=float,
                   help="window start [s]; default: half-way through the run, or later if the "
                        "bed is still spinning up then: from the first frame after which the "
                        "bed's mean angular speed stays at or above 90 %% of its final value "
                        "(the median over the last quarter of the frames). The window used is "
                        "printed, with a warning if it holds frames of the spin-up")
    s.add_argument("--t1", type=float, help="window end [s] (default: the last frame)")
    s.set_defaults(func=cmd_drum_angle)

    s = add("coordination", "mean coordination number (contacts per grain) of a frame, from "
                            "/contacts ([output] contacts = true)")
    s.add_argument("--frame", default="-1", help="frame index (default -1, the last), or end:STAGE (the stage's last frame)")
    s.add_argument("--by", choices=("force", "gap"), default="force",
                   help="a contact counts when it carried a normal force (default), or when its "
                        "gap is at most --gap-tolerance")
    s.add_argument("--gap-tolerance", type=float, default=0.0, help="with --by gap [m] (0)")
    s.add_argument("--walls", action="store_true",
                   help="count contacts with walls and with bodies outside the region too")
    s.add_argument("--rattler-below", type=int, default=2,
                   help="grains with fewer contacts are rattlers, left out of Z_m (2)")
    s.add_argument("--min", help="only grains with centres in this box: corner 'x y z' [m]")
    s.add_argument("--max", help="the box's other corner 'x y z' [m]")
    s.set_defaults(func=cmd_coordination)

    s = add("stress", "Love-Weber mean contact stress tensor of the grains in a box region")
    s.add_argument("--min", required=True, help="region corner 'x y z' [m]")
    s.add_argument("--max", required=True, help="region corner 'x y z' [m]")
    s.add_argument("--frame", default="-1", help="frame index (default -1, the last), or end:STAGE (the stage's last frame)")
    s.add_argument("--along", choices="xyz", default="z",
                   help="the plot: this normal stress in slabs along this axis (default z)")
    s.add_argument("--slices", type=int, default=10, help="slabs of the profile (10)")
    s.set_defaults(func=cmd_stress)

    s = add("force-distribution", "P(f/<f>) of the normal contact forces and its tail's decay")
    s.add_argument("--frame", default="-1", help="frame index (default -1, the last), or end:STAGE (the stage's last frame)")
    s.add_argument("--bins", type=int, default=30)
    s.add_argument("--walls", action="store_true", help="include the contacts with walls")
    s.set_defaults(func=cmd_force_distribution)

    s = add("force-chains", "picture of the contact forces: a line from centre to centre per "
                            "loaded contact, as wide as its force")
    s.add_argument("--frame", default="-1", help="frame index (default -1, the last), or end:STAGE (the stage's last frame)")
    s.add_argument("--view", choices="xyz", default="y",
                   help="look along this axis (default y: the x-z plane)")
    s.add_argument("--walls", action="store_true", help="include the contacts with walls")
    s.set_defaults(func=cmd_force_chains)
    return p


def main(argv):
    args = build_parser().parse_args(argv[1:])
    try:
        return args.func(args)
    except (OSError, ValueError) as e:
        print(f"talus_measure: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
