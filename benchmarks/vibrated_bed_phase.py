#!/usr/bin/python3
"""The load a vibrated bed puts on its shaking box, folded over the driving cycle, against
the completely inelastic bouncing ball (the model Pak & Behringer 1994 compare deep beds
with).

    vibrated_bed_phase.py VIBRATED.h5 [--png PLOT] [--from T]

Reads /walls/force of a run of scenes/vibrated_bed.toml (a floor and side walls with one
sine motion) written with frames much shorter than the period (e.g. --set
output.interval=0.001): each frame's force is the mean over its interval. Prints
- the bed's momentum balance over whole cycles: the walls' vertical impulse on the bed
  minus M g T must be the change of its momentum M Δv_z (to round-off);
- the floor's mean load against M g (the side walls carry the rest by friction);
- the fraction of the cycle in which the floor carries (almost) nothing: the bed in flight;
- the phases of lift-off and landing of the inelastic ball: it leaves when the plate's
  acceleration reaches -g, at sin(phi) = 1/Gamma, and lands where its parabola meets the
  plate again.
"""
import argparse
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import talus_h5  # noqa: E402

try:
    import tomllib  # Python 3.11+
except ImportError:  # pragma: no cover
    tomllib = None


def inelastic_ball(gamma, f, g):
    """Lift-off phase, landing phase (may exceed 2 pi) [rad] and flight time [s] of a
    completely inelastic ball on a plate z = A sin(2 pi f t) with A (2 pi f)^2 = gamma g."""
    w = 2.0 * math.pi * f
    A = gamma * g / w ** 2
    p0 = math.asin(1.0 / gamma)
    t0 = p0 / w
    z0, v0 = A * math.sin(p0), A * w * math.cos(p0)
    # march, then bisect, the first time after t0 the ball meets the plate
    gap = lambda t: z0 + v0 * (t - t0) - 0.5 * g * (t - t0) ** 2 - A * math.sin(w * t)
    dt = 1e-3 / f
    t = t0 + dt
    while gap(t) > 0.0:
        t += dt
    lo, hi = t - dt, t
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if gap(mid) > 0.0 else (lo, mid)
    return p0, w * hi, hi - t0


def com_vz(run, k, m):
    """The bed's centre-of-mass velocity along z in frame k (m: the bodies' masses; the same
    bodies in every frame)."""
    return float(np.sum(m * run.frame(k)["velocity"][:, 2]) / np.sum(m))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trajectory")
    ap.add_argument("--png", help="plot file (default beside the trajectory)")
    ap.add_argument("--from", dest="t_from", type=float, default=0.3,
                    help="skip the start-up before this time [s] (default 0.3)")
    ap.add_argument("--wall", default="floor", help="the floor's wall name (default floor)")
    args = ap.parse_args(argv)
    with talus_h5.load(args.trajectory) as run:
        scene = run.attrs["scene"]
        scene = scene.decode() if isinstance(scene, bytes) else scene
        walls = run.walls
        if not walls:
            raise SystemExit("vibrated_bed_phase: the trajectory has no /walls")
        if args.wall not in walls["names"]:
            raise SystemExit(f"vibrated_bed_phase: no wall named {args.wall!r} "
                             f"(walls: {', '.join(walls['names'])})")
        floor = walls["names"].index(args.wall)
        t = run.frames.time
        fz = walls["force"][:, floor, 2]
        fz_all = walls["force"][:, :, 2].sum(axis=1)
        last = run.frame(-1)
        rho = np.asarray(run.attrs["material_density"])[last["material"]]
        m = rho * 4.0 / 3.0 * math.pi * last["radius"] ** 3
        mass = float(np.sum(m))
        first = int(np.searchsorted(t, args.t_from))

        if tomllib is None:
            raise SystemExit("vibrated_bed_phase: needs Python 3.11 (tomllib) to read the scene")
        cfg = tomllib.loads(scene)
        g = -float(cfg["simulation"]["gravity"][2])
        motion = cfg["wall"][floor]["motion"]
        f, A = float(motion["frequency"]), float(motion["amplitude"])
        gamma = A * (2.0 * math.pi * f) ** 2 / g
        weight = mass * g

        dt_frame = float(np.median(np.diff(t)))
        per_cycle = int(round(1.0 / (f * dt_frame)))
        if abs(per_cycle * dt_frame * f - 1.0) > 1e-6:
            raise SystemExit("vibrated_bed_phase: the frame interval must divide the period")
        first += (-first) % per_cycle  # start at a whole cycle (t = k / f)
        cycles = (len(t) - 1 - first) // per_cycle
        if cycles < 2:
            raise SystemExit("vibrated_bed_phase: fewer than two whole cycles after --from")
        end = first + cycles * per_cycle
        dv = com_vz(run, end, m) - com_vz(run, first, m)
    impulse = -float(np.sum(fz_all[first + 1:end + 1] * np.diff(t)[first:end]))
    residual = impulse - weight * (t[end] - t[first]) - mass * dv
    # row k covers (t[k-1], t[k]]: the cycle starting at frame `first` is rows first+1 ...
    rows = fz[first + 1:first + 1 + cycles * per_cycle].reshape(cycles, per_cycle)
    mean_load = -rows.mean()
    folded = -rows.mean(axis=0)                      # load on the floor [N], per phase bin
    phase_hi = 360.0 * np.arange(1, per_cycle + 1) / per_cycle
    free = folded < 0.02 * weight                    # (almost) nothing on the floor
    p0, p1, flight = inelastic_ball(gamma, f, g)

    print(f"vibrated bed: Gamma = {gamma:.3f} at {f:g} Hz, bed mass {mass:.5g} kg, "
          f"{cycles} cycles from t = {t[first]:.4g} s, {per_cycle} frames per cycle")
    print(f"momentum balance over the cycles: walls' impulse {impulse:.9g} N s - M g T "
          f"{weight * (t[end] - t[first]):.9g} N s - M dv {mass * dv:.6g} N s = {residual:.2g} N s")
    print(f"floor's mean load: {mean_load:.6g} N = {mean_load / weight:.4f} M g (M g = {weight:.6g} N)")
    print(f"floor unloaded (< 2 % of M g) during {free.mean():.3f} of the cycle; "
          f"inelastic ball in flight {flight * f:.3f} of the cycle "
          f"(lift-off at {math.degrees(p0):.1f} deg, landing at {math.degrees(p1) % 360:.1f} deg"
          f"{' of the next cycle' if p1 > 2 * math.pi else ''})")
    loaded = np.flatnonzero(~free)
    if len(loaded):
        print("loaded phase bins [deg]: " +
              ", ".join(f"{phase_hi[k] - 360.0 / per_cycle:.0f}-{phase_hi[k]:.0f}" for k in loaded))

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.step(np.concatenate([[0.0], phase_hi]), np.concatenate([[folded[0]], folded]) / weight,
            where="pre", color="k", label="floor: mean load per frame interval / M g")
    ax.axvline(math.degrees(p0), color="r", ls="--", label="inelastic ball: lift-off")
    ax.axvline(math.degrees(p1) % 360, color="b", ls="--", label="inelastic ball: landing")
    ax.set_xlabel("phase of the plate, 360 f t mod 360 [deg]")
    ax.set_ylabel("load / weight")
    ax.set_xlim(0, 360)
    ax.legend(fontsize=8)
    fig.tight_layout()
    png = args.png or os.path.splitext(args.trajectory)[0] + "_phase.png"
    fig.savefig(png, dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
