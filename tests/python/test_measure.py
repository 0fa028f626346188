#!/usr/bin/python3
"""tools/talus_measure.py on synthetic data whose answer is known.

    test_measure.py SCRATCH_DIR

Geometry against closed forms (disc segments, spherical caps, the packing fraction of
lattices), each measurement against a constructed heap, collapse deposit, shear profile,
drum surface and discharge, and every command line on a synthetic trajectory (its printed
figure and its PNG). Exit 0 if all hold.
"""
import math
import os
import subprocess
import sys
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.join(HERE, "..", "..", "tools")
sys.path.insert(0, TOOLS)
sys.path.insert(0, HERE)
import synthetic_trajectory  # noqa: E402
import talus_measure as tm  # noqa: E402

SCRATCH = None


def lattice_in(lo, hi, spacing):
    """Simple-cubic lattice points (spacing apart, first at lo + spacing/2) within [lo, hi]."""
    axes = [np.arange(lo[i] + 0.5 * spacing, hi[i] - 0.5 * spacing + 1e-12, spacing) for i in range(3)]
    g = np.meshgrid(*axes, indexing="ij")
    return np.stack([a.ravel() for a in g], axis=1)


class Geometry(unittest.TestCase):
    def test_disc_rectangle_closed_forms(self):
        R = 0.3
        big = 10.0
        # whole disc, half, quarter
        self.assertAlmostEqual(float(tm.disc_rectangle_area(0, 0, R, -big, big, -big, big)), math.pi * R * R, places=13)
        self.assertAlmostEqual(float(tm.disc_rectangle_area(0, 0, R, -big, big, 0, big)), math.pi * R * R / 2, places=13)
        self.assertAlmostEqual(float(tm.disc_rectangle_area(0, 0, R, 0, big, 0, big)), math.pi * R * R / 4, places=13)
        # circular segment beyond y = d (both signs of d), and beyond x = d
        for d in (-0.25, -0.1, 0.0, 0.07, 0.2, 0.29):
            seg = R * R * math.acos(d / R) - d * math.sqrt(R * R - d * d)
            self.assertAlmostEqual(float(tm.disc_rectangle_area(1, 2, R, -big, big, 2 + d, big)), seg, places=12)
            self.assertAlmostEqual(float(tm.disc_rectangle_area(1, 2, R, 1 + d, big, -big, big)), seg, places=12)
            self.assertAlmostEqual(float(tm.disc_rectangle_area(1, 2, R, -big, big, -big, 2 - d)), seg, places=12)
        # a rectangle inside the disc is its own area; one outside is zero
        self.assertAlmostEqual(float(tm.disc_rectangle_area(0, 0, R, -0.1, 0.1, -0.05, 0.15)), 0.2 * 0.2, places=13)
        self.assertEqual(float(tm.disc_rectangle_area(0, 0, R, 0.4, 1, 0.4, 1)), 0.0)

    def test_disc_rectangle_against_brute_force(self):
        rng = np.random.default_rng(3)
        R = 1.0
        n = 1500
        xs = (np.arange(n) + 0.5) / n * 2 * R - R
        X, Y = np.meshgrid(xs, xs, indexing="ij")
        inside = X * X + Y * Y <= R * R
        cell = (2 * R / n) ** 2
        for _ in range(5):
            x0, x1 = np.sort(rng.uniform(-1.2, 1.2, 2))
            y0, y1 = np.sort(rng.uniform(-1.2, 1.2, 2))
            brute = cell * np.count_nonzero(inside & (X >= x0) & (X <= x1) & (Y >= y0) & (Y <= y1))
            exact = float(tm.disc_rectangle_area(0, 0, R, x0, x1, y0, y1))
            self.assertAlmostEqual(exact, brute, delta=4e-3)  # grid error ~ perimeter x cell size

    def test_sphere_box_caps_and_octant(self):
        r = 0.01
        c = np.array([[0.5, 0.5, 0.5]])
        full = 4 / 3 * math.pi * r ** 3
        for d in (-0.008, -0.003, 0.0, 0.004, 0.0095):
            h = r - d  # cap height beyond the plane z = c + d
            cap = math.pi * h * h * (3 * r - h) / 3
            v = tm.sphere_box_volume(c, [r], [0, 0, 0.5 + d], [1, 1, 1])[0]
            self.assertAlmostEqual(v / full, cap / full, delta=1e-6)
            v = tm.sphere_box_volume(c, [r], [0.5 + d, 0, 0], [1, 1, 1])[0]  # cut along x
            self.assertAlmostEqual(v / full, cap / full, delta=1e-6)
        v = tm.sphere_box_volume(c, [r], [0.5, 0.5, 0.5], [1, 1, 1])[0]
        self.assertAlmostEqual(v / full, 1 / 8, delta=1e-6)
        self.assertEqual(tm.sphere_box_volume(c, [r], [0.6, 0, 0], [1, 1, 1])[0], 0.0)
        # wholly inside: the closed form, not the quadrature (whose error is ~1e-7 here);
        # to an ulp, since numpy's vectorised pow (SIMD, as on AVX-512 machines) may round
        # r³ differently from Python's float power
        self.assertAlmostEqual(tm.sphere_box_volume(c, [r], [0, 0, 0], [1, 1, 1])[0] / full, 1.0,
                               delta=4e-16)

    def test_packing_fraction_of_lattices(self):
        # simple cubic, touching spheres: pi/6, for a region of whole cells placed anywhere
        r = 0.001
        a = 2 * r
        p = lattice_in([0, 0, 0], [0.04, 0.04, 0.04], a)
        for shift in (0.0, 0.3 * a, 0.77 * a):
            lo = np.array([0.01, 0.01, 0.01]) + shift
            hi = lo + 7 * a
            self.assertAlmostEqual(tm.packing_fraction(p, np.full(len(p), r), lo, hi), math.pi / 6, delta=2e-6)
        # face-centred cubic: pi / (3 sqrt 2) = 0.7405
        cube = 2 * math.sqrt(2) * r
        base = lattice_in([0, 0, 0], [0.03, 0.03, 0.03], cube) - 0.5 * cube
        offs = np.array([[0, 0, 0], [0, 0.5, 0.5], [0.5, 0, 0.5], [0.5, 0.5, 0]]) * cube
        fcc = np.concatenate([base + o for o in offs])
        lo = np.array([0.007, 0.0061, 0.0093])
        hi = lo + 5 * cube
        self.assertAlmostEqual(tm.packing_fraction(fcc, np.full(len(fcc), r), lo, hi),
                               math.pi / (3 * math.sqrt(2)), delta=2e-6)


def cone_heap(angle_deg, r=0.001, H=0.04):
    """Grains on a simple-cubic lattice filling the cone z <= H - rho tan(angle) above z = 0."""
    t = math.tan(math.radians(angle_deg))
    R = H / t
    p = lattice_in([-R, -R, 0], [R, R, H], 2 * r)
    rho = np.hypot(p[:, 0], p[:, 1])
    keep = p[:, 2] + r <= H - rho * t + 1e-12
    return p[keep]


class Measurements(unittest.TestCase):
    def test_repose_angle_of_cones(self):
        for angle in (22.0, 30.0, 38.0):
            p = cone_heap(angle)
            got, d = tm.repose_angle(p, np.full(len(p), 0.001))
            self.assertAlmostEqual(got, angle, delta=1.0, msg=f"cone of {angle} deg")

    def test_repose_angle_planar(self):
        r, angle = 0.001, 33.0
        t = math.tan(math.radians(angle))
        p = lattice_in([0, 0, 0], [0.08, 0.01, 0.05], 2 * r)
        p = p[p[:, 2] + r <= 0.05 - p[:, 0] * t]
        got, _ = tm.repose_angle(p, np.full(len(p), r), geometry="planar:x", centre=[0, 0, 0])
        self.assertAlmostEqual(got, angle, delta=1.0)

    def test_runout_of_a_wedge_deposit(self):
        r = 0.001
        L0, H0 = 0.02, 0.04
        p0 = lattice_in([0, 0, 0], [L0, 0.01, H0], 2 * r)
        L, H = 0.09, 0.016   # final wedge: h(x) = H (1 - x / L)
        p = lattice_in([0, 0, 0], [L, 0.01, H], 2 * r)
        p = p[p[:, 2] + r <= H * (1 - (p[:, 0] + r) / L) + 1e-12]
        stray = np.array([[L + 0.03, 0.005, r]])  # a grain thrown far ahead
        p = np.concatenate([p, stray])
        res = tm.runout(p0, np.full(len(p0), r), p, np.full(len(p), r))
        self.assertAlmostEqual(res["L0"], L0, delta=1e-12)
        self.assertAlmostEqual(res["H0"], H0, delta=1e-12)
        # grains (diameter 2r) reach as far as the wedge is one grain thick: L (1 - 2r/H)
        self.assertAlmostEqual(res["L_inf"], L * (1 - 2 * r / H), delta=2 * r)
        self.assertLess(res["L_inf"], L + 0.01)  # the stray grain is not the front
        self.assertAlmostEqual(res["H_inf"], H, delta=2 * r)
        # the profile follows the wedge to within a grain
        x, h = res["profile_x"], res["profile_h"]
        inner = x < 0.8 * L
        self.assertLess(np.max(np.abs(h[inner] - H * (1 - x[inner] / L))), 3 * r)

    def test_runout_ignores_a_carpet_of_single_grains_with_min_thickness(self):
        r = 0.001
        p0 = lattice_in([0, 0, 0], [0.02, 0.01, 0.04], 2 * r)
        L, H = 0.09, 0.016
        p = lattice_in([0, 0, 0], [L, 0.01, H], 2 * r)
        p = p[p[:, 2] + r <= H * (1 - (p[:, 0] + r) / L) + 1e-12]
        # grains that rolled on: a monolayer, touching, from the wedge's toe to 0.2 m
        carpet = np.array([[x, 0.005, r] for x in np.arange(0.07, 0.2, 2 * r)])
        p = np.concatenate([p, carpet])
        radii = np.full(len(p), r)
        plain = tm.runout(p0, np.full(len(p0), r), p, radii)
        self.assertGreater(plain["L_inf"], 0.19)  # no gap: the carpet counts
        thick = tm.runout(p0, np.full(len(p0), r), p, radii, min_thickness=1.5)
        # at least 1.5 diameters thick = two lattice layers (top at 4r), which the wedge
        # h(x) = H (1 - x/L) holds up to x = L (1 - 4r/H)
        self.assertAlmostEqual(thick["L_inf"], L * (1 - 4 * r / H), delta=2 * r)
        self.assertAlmostEqual(thick["L_grains"], 0.2, delta=2 * r)

    def test_bagnold_fit_recovers_a_bagnold_profile(self):
        H, vb, c = 0.03, 0.1, 150.0
        s = np.linspace(0.0005, 0.0295, 30)  # bin centres from the base at 0
        v = vb + c * (H ** 1.5 - (H - s) ** 1.5)
        fit = tm.bagnold_fit(s, v, np.full(len(s), 100), 0.0, H)
        self.assertAlmostEqual(fit["bagnold"]["v_b"], vb, delta=1e-9)
        self.assertAlmostEqual(fit["bagnold"]["c"], c, delta=1e-6)
        self.assertLess(fit["bagnold"]["rms"], 1e-9)
        self.assertGreater(fit["linear"]["rms"], 1e-3)
        # interpolation between bins 1 mm apart: the shape to within 1 %
        self.assertAlmostEqual(fit["shape"], 1 - 2 ** -1.5, delta=0.01)
        lin = tm.bagnold_fit(s, 0.2 + 10.0 * s, np.full(len(s), 100), 0.0, H)
        self.assertAlmostEqual(lin["shape"], 0.5, delta=0.01)
        self.assertLess(lin["linear"]["rms"], 1e-12)

    def test_velocity_profile_of_a_shear_flow(self):
        rng = np.random.default_rng(7)
        rate = 12.0  # 1/s
        frames = []
        for _ in range(3):
            p = rng.uniform([0, 0, 0], [0.1, 0.05, 0.02], size=(4000, 3))
            v = np.zeros_like(p)
            v[:, 0] = rate * p[:, 2] + 0.3
            frames.append({"position": p, "velocity": v})
        s, mean, std, count = tm.velocity_profile(frames, [0, 0, 1], [1, 0, 0], bins=10, lo=0.0, hi=0.02)
        self.assertEqual(int(count.sum()), 12000)
        # the bin mean is the rate times the mean height of the bin's grains: within a quarter bin
        self.assertLess(np.max(np.abs(mean - (rate * s + 0.3))), rate * 0.002 * 0.25)
        # the spread is that of a uniform height in the bin: rate * width / sqrt(12)
        self.assertLess(np.max(np.abs(std - rate * 0.002 / math.sqrt(12))), 0.1 * rate * 0.002)

    def test_drum_surface_angle(self):
        # A drum turning with positive omega about +y drags the bed up its -x side (the wall
        # velocity omega y x (-R x) = +omega R z): a rolling bed's surface rises towards -x,
        # and the angle reported is positive. Turning the other way, it rises towards +x and
        # is positive too. A surface leaning against the rotation gives a negative angle.
        r, R = 0.001, 0.05
        for sense in (1, -1):
            for angle in (35.0, 28.0, -10.0):
                t = math.tan(math.radians(angle))
                p = lattice_in([-R, 0, -R], [R, 0.02, R], 2 * r)
                keep = (np.hypot(p[:, 0], p[:, 2]) + r <= R) & (p[:, 2] + r <= -sense * t * p[:, 0] + 0.005)
                got, d = tm.drum_angle(p[keep], np.full(int(keep.sum()), r), sense=sense)
                self.assertAlmostEqual(got, angle, delta=1.0, msg=f"sense {sense}")
                self.assertEqual(d["horizontal_axis"], "-x")

    def test_bed_spin_and_spin_up(self):
        rng = np.random.default_rng(5)
        p = rng.uniform([-0.04, -0.01, -0.04], [0.04, 0.01, 0.0], size=(500, 3))
        m = rng.uniform(1e-5, 2e-5, size=500)
        for omega in (2.0, -3.0):
            # rigid rotation about the drum's axis (through the origin, not the bed's centre)
            v = omega * np.cross([0.0, 1.0, 0.0], p)
            self.assertAlmostEqual(tm.bed_spin(p, v, m, "y"), omega, places=12)
            self.assertAlmostEqual(tm.bed_spin(p, v + [0.3, 0.0, -0.1], m, "y"), omega, places=12)
        self.assertEqual(tm.bed_spin(p, np.zeros_like(p), m, "y"), 0.0)
        # spin ramps up over 5 frames, then steady (with noise): steady from frame 5
        spin = np.concatenate([np.linspace(0.0, 1.5, 5), 2.0 + 0.05 * np.sin(np.arange(15))])
        self.assertEqual(tm.spin_up_end(spin), 5)
        self.assertEqual(tm.spin_up_end(-spin), 5)
        self.assertEqual(tm.spin_up_end(np.zeros(6)), 0)

    def test_packing_profile_finds_where_the_solid_is(self):
        r = 0.001
        lat = lattice_in([0, 0, 0], [0.02, 0.02, 0.01], 2 * r)  # the lower half of a 2 cm box
        z, phi = tm.packing_profile(lat, np.full(len(lat), r), [0, 0, 0], [0.02, 0.02, 0.02], "z", 4)
        self.assertTrue(np.allclose(z, [0.0025, 0.0075, 0.0125, 0.0175]))
        # slabs of 5 mm cut the spheres of the lattice (period 2 mm): the lower two hold half
        # the solid each, the upper two none
        self.assertAlmostEqual(phi[0] + phi[1], 2 * math.pi / 6, delta=2e-5)
        self.assertLess(phi[2], 1e-12)
        self.assertLess(phi[3], 1e-12)

    def test_steady_discharge_rate(self):
        # grains of equal mass cross z = 0 one after another at 250 per second, the first half
        # falling below the level, the second half vanishing (taken by an outlet)
        n, rate, m = 400, 250.0, 2e-4
        cross = 0.1 + np.arange(n) / rate
        times = np.linspace(0, 2.0, 81)
        frames = []
        for t in times:
            z = np.where(cross <= t, -0.01, 0.05)
            gone = (np.arange(n) >= n // 2) & (cross <= t)
            keep = ~gone
            frames.append({"id": np.arange(n)[keep], "position": np.column_stack([np.zeros(n), np.zeros(n), z])[keep],
                           "mass": np.full(int(keep.sum()), m), "time": t})
        M = tm.passed_mass(frames, 2, 0.0)
        expected = m * np.array([np.count_nonzero(cross <= t) for t in times])
        self.assertTrue(np.allclose(M, expected, rtol=0, atol=1e-15))
        W, t0, t1 = tm.steady_rate(times, M)
        self.assertAlmostEqual(W, rate * m, delta=0.02 * rate * m)


class CommandLine(unittest.TestCase):
    def run_tool(self, *args):
        out = subprocess.run([sys.executable, os.path.join(TOOLS, "talus_measure.py"), *args],
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        return out.stdout

    def assert_png(self, path):
        with open(path, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def number_after(self, text, label):
        tail = text.split(label, 1)[1].strip()
        return float(tail.split()[0])

    def test_every_tool_prints_its_figure_and_writes_a_png(self):
        r = 0.001
        # heap
        p = cone_heap(30.0)
        h5 = os.path.join(SCRATCH, "heap.h5")
        synthetic_trajectory.write(h5, [{"time": 0.0, "position": p, "radius": r}])
        out = self.run_tool("repose", h5)
        self.assertAlmostEqual(self.number_after(out, "angle of repose:"), 30.0, delta=1.0)
        self.assert_png(os.path.join(SCRATCH, "heap_repose.png"))
        # packing of a simple-cubic block, over two frames
        lat = lattice_in([0, 0, 0], [0.03, 0.03, 0.03], 2 * r)
        h5 = os.path.join(SCRATCH, "block.h5")
        synthetic_trajectory.write(h5, [{"time": 0.0, "position": lat, "radius": r},
                                        {"time": 0.1, "position": lat, "radius": r}])
        out = self.run_tool("packing", h5, "--min", "0.005 0.005 0.005", "--max", "0.025 0.025 0.025",
                            "--all-frames", "--png", os.path.join(SCRATCH, "p.png"))
        self.assertAlmostEqual(self.number_after(out, "s:"), math.pi / 6, delta=1e-5)
        self.assert_png(os.path.join(SCRATCH, "p.png"))
        # one frame: the figure and its profile in slabs (here 4 slabs of whole lattice cells)
        out = self.run_tool("packing", h5, "--min", "0.006 0.006 0.006", "--max", "0.022 0.022 0.022",
                            "--slices", "4", "--png", os.path.join(SCRATCH, "p1.png"))
        self.assertAlmostEqual(self.number_after(out, "s:"), math.pi / 6, delta=1e-5)
        rows = [list(map(float, line.split())) for line in out.splitlines() if line and line[0].isdigit()]
        self.assertEqual([round(z, 6) for z, _ in rows], [0.008, 0.012, 0.016, 0.02])
        for _, phi in rows:
            self.assertAlmostEqual(phi, math.pi / 6, delta=1e-5)
        self.assert_png(os.path.join(SCRATCH, "p1.png"))
        # collapse: column in frame 0, wedge in frame 1
        p0 = lattice_in([0, 0, 0], [0.02, 0.01, 0.04], 2 * r)
        p1 = lattice_in([0, 0, 0], [0.09, 0.01, 0.016], 2 * r)
        p1 = p1[p1[:, 2] + r <= 0.016 * (1 - (p1[:, 0] + r) / 0.09) + 1e-12]
        h5 = os.path.join(SCRATCH, "collapse.h5")
        synthetic_trajectory.write(h5, [{"time": 0.0, "position": p0, "radius": r},
                                        {"time": 1.0, "position": p1, "radius": r, "id": np.arange(len(p1))}])
        out = self.run_tool("runout", h5)
        self.assertAlmostEqual(self.number_after(out, "L_inf ="), 0.09 * (1 - 2 * r / 0.016), delta=2 * r)
        self.assert_png(os.path.join(SCRATCH, "collapse_runout.png"))
        # shear profile
        rng = np.random.default_rng(1)
        frames = []
        for k in range(4):
            q = rng.uniform([0, 0, 0], [0.1, 0.05, 0.02], size=(2000, 3))
            v = np.zeros_like(q)
            v[:, 0] = 10.0 * q[:, 2]
            frames.append({"time": 0.1 * k, "position": q, "velocity": v, "radius": r})
        h5 = os.path.join(SCRATCH, "chute.h5")
        synthetic_trajectory.write(h5, frames)
        out = self.run_tool("velocity-profile", h5, "--bins", "4")
        rows = [list(map(float, line.split())) for line in out.splitlines()
                if line and line[0].isdigit()]
        self.assertEqual(len(rows), 4)
        for s, mean, _, _ in rows:
            self.assertAlmostEqual(mean, 10.0 * s, delta=0.01)
        self.assert_png(os.path.join(SCRATCH, "chute_velocity_profile.png"))
        # drum: a bed spun up over 4 frames, then turning steadily; both senses. The
        # surface rises towards the side where the wall moves up, at 40 degrees.
        R, t = 0.05, math.tan(math.radians(40.0))
        q = lattice_in([-R, 0, -R], [R, 0.02, R], 2 * r)
        for sense, name in ((1, "drum"), (-1, "drum_reverse")):
            bed = q[(np.hypot(q[:, 0], q[:, 2]) + r <= R) & (q[:, 2] + r <= -sense * t * q[:, 0])]
            frames = []
            for k in range(12):
                omega = sense * 2.0 * min(1.0, k / 4)
                frames.append({"time": 0.1 * k, "position": bed, "radius": r,
                               "velocity": omega * np.cross([0.0, 1.0, 0.0], bed)})
            h5 = os.path.join(SCRATCH, name + ".h5")
            synthetic_trajectory.write(h5, frames)
            out = self.run_tool("drum-angle", h5)
            self.assertAlmostEqual(self.number_after(out, "dynamic angle of repose:"), 40.0, delta=1.0)
            self.assertIn(f"the bed turns at {2.0 * sense:+.3g} rad/s about +y", out)
            # the default window: from half-way (0.6 s), past the spin-up (frames 0 to 3)
            self.assertIn("window: t in [0.6, 1.1] s, 6 frames (default", out)
            self.assert_png(os.path.join(SCRATCH, name + "_drum_angle.png"))
            # a window that holds the spin-up says so
            run = subprocess.run([sys.executable, os.path.join(TOOLS, "talus_measure.py"), "drum-angle", h5,
                                  "--t0", "0.1"], capture_output=True, text=True)
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertIn("window: t in [0.1, 1.1] s, 11 frames (--t0)", run.stdout)
            self.assertIn("warning: 3 frames of the window (to t = 0.3 s) come before the bed's spin "
                          "reaches 90 % of its final value", run.stderr)
            self.assertIn("--t0 0.4", run.stderr)
        # discharge: 300 grains cross z = 0 at 200 per second
        n = 300
        cross = 0.05 + np.arange(n) / 200.0
        frames = []
        for tt in np.linspace(0, 1.8, 37):
            z = np.where(cross <= tt, -0.01, 0.05)
            frames.append({"time": tt, "position": np.column_stack([np.zeros(n), np.zeros(n), z]), "radius": r})
        h5 = os.path.join(SCRATCH, "silo.h5")
        synthetic_trajectory.write(h5, frames, densities=(2500.0,))
        out = self.run_tool("flow-rate", h5, "--level", "0")
        m = 2500.0 * 4 / 3 * math.pi * r ** 3
        self.assertAlmostEqual(self.number_after(out, "steady mass flow rate:"), 200 * m, delta=0.02 * 200 * m)
        self.assert_png(os.path.join(SCRATCH, "silo_flow_rate.png"))

    def test_runs_as_a_command(self):
        # executable, with Debian's interpreter in its shebang, as the README writes it
        script = os.path.join(TOOLS, "talus_measure.py")
        self.assertTrue(os.access(script, os.X_OK), "tools/talus_measure.py is not executable")
        with open(script) as f:
            self.assertEqual(f.readline(), "#!/usr/bin/python3\n")
        out = subprocess.run([script, "--help"], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("drum-angle", out.stdout)

    def test_bad_arguments_fail_cleanly(self):
        out = subprocess.run([sys.executable, os.path.join(TOOLS, "talus_measure.py"), "packing",
                              os.path.join(SCRATCH, "missing.h5"), "--min", "0 0 0", "--max", "1 1 1"],
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 1)
        self.assertIn("missing.h5", out.stderr)
        out = subprocess.run([sys.executable, os.path.join(TOOLS, "talus_measure.py"), "packing",
                              "x.h5", "--min", "0 0", "--max", "1 1 1"], capture_output=True, text=True)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("--min", out.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: test_measure.py SCRATCH_DIR", file=sys.stderr)
        sys.exit(2)
    SCRATCH = sys.argv.pop(1)
    os.makedirs(SCRATCH, exist_ok=True)
    unittest.main(verbosity=1)
