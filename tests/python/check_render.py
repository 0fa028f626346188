#!/usr/bin/python3
"""tools/render draws every grain, where it is, and copes with a killed run.

    check_render.py TALUS SCENES_DIR OUTDIR

SCENES_DIR is tests/scenes. Four checks, each a tools/render call on a run made here:

1. Every grain drawn, where it is: tests/scenes/render_lattice.toml (6,084 beads in one
   78 x 78 layer, 15 mm apart, radius 5 mm) rendered from above at 800x800 without colours or
   labels. The picture must be 800x800 and hold exactly 6,084 separate blobs of
   non-background pixels, and the pixel at each bead's position (read from the file, mapped
   to the picture through the extent of the drawn pixels) must be one of them. ParaView's
   default glyph mode (uniform spatial distribution, at most 5,000 points) draws about
   half of them: a renderer left at that default fails here.
2. The default picture of a small run (tests/scenes/small_box.toml, 200 beads, 0.1 s):
   480x360 as asked, and more than 3 % of its pixels differ from the background.
3. A killed run (small_box, SIGKILL after a few frames): its file keeps HDF5's "being
   written" mark, which ParaView refuses; tools/render still draws the grains (from a
   cleared copy), without a read error from ParaView, and leaves the file byte for byte as
   it was.
4. Errors: a missing file, a missing sidecar and a frame out of range each exit 2 naming
   the file or the frame; without pvpython (TALUS_PVPYTHON pointing at nothing), exit 3
   naming the Debian package.
Exit 0 when all hold.
"""
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time

import matplotlib.image
import numpy as np

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "tools"))
import talus_h5  # noqa: E402

RENDER = os.path.join(TOP, "tools", "render")
BACKGROUND = np.array([0.32, 0.34, 0.43])  # tools/lib/render.py's background
LATTICE_SIDE = 78


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def render(args):
    started = time.monotonic()
    done = subprocess.run([RENDER, *args], capture_output=True, text=True)
    print(f"tools/render {' '.join(args)}: exit {done.returncode} after "
          f"{time.monotonic() - started:.1f} s\n  {done.stdout.strip()} {done.stderr.strip()}")
    if done.returncode == 0 and ("XDMF Error" in done.stderr or "HDF5-DIAG" in done.stderr):
        fail("ParaView's reader failed on part of the file (its messages above)")
    return done


def talus_run(talus, scene, out, *extra):
    done = subprocess.run([talus, "run", scene, "-o", out, "--force", "--quiet", "--threads", "1",
                           *extra], capture_output=True, text=True)
    if done.returncode != 0:
        fail(f"talus run {scene} exited {done.returncode}: {done.stderr}")


def picture(path, width, height):
    if not os.path.isfile(path):
        fail(f"{path} was not written")
    image = matplotlib.image.imread(path)[:, :, :3]
    if image.shape[:2] != (height, width):
        fail(f"{path} is {image.shape[1]}x{image.shape[0]}, asked for {width}x{height}")
    return image


def foreground(image):
    """Pixels that differ from the background colour (8-bit rounding aside)."""
    return np.abs(image - BACKGROUND).max(axis=2) > 0.03


def label_blobs(mask):
    """Connected components (4-neighbours) of a boolean picture: (labels, count); 0 = none."""
    h, w = mask.shape
    big = h * w + 1
    labels = np.where(mask, np.arange(1, h * w + 1).reshape(h, w), big)
    while True:  # each pixel takes the smallest label around it, until nothing changes
        padded = np.pad(labels, 1, constant_values=big)
        smallest = np.minimum.reduce([labels, padded[:-2, 1:-1], padded[2:, 1:-1],
                                      padded[1:-1, :-2], padded[1:-1, 2:]])
        smallest = np.where(mask, smallest, big)
        if np.array_equal(smallest, labels):
            break
        labels = smallest
    labels = np.where(mask, labels, 0)
    return labels, len(np.unique(labels[mask]))


def check_lattice(talus, scenes, outdir):
    out = os.path.join(outdir, "lattice.h5")
    talus_run(talus, os.path.join(scenes, "render_lattice.toml"), out)
    png = os.path.join(outdir, "lattice.png")
    done = render([out, "-o", png, "--view", "top", "--size", "800x800", "--colour-by", "none",
                   "--no-labels"])
    if done.returncode != 0:
        fail(f"tools/render on the lattice exited {done.returncode}")
    mask = foreground(picture(png, 800, 800))
    with talus_h5.load(out) as run:
        last = run.frame(-1)
    n = len(last["id"])
    if n != LATTICE_SIDE ** 2:
        fail(f"the lattice run has {n} beads, expected {LATTICE_SIDE ** 2}")
    share = mask.mean()
    labels, blobs = label_blobs(mask)
    print(f"lattice: {blobs} blobs for {n} beads, {100 * share:.1f} % of the pixels drawn")
    if blobs != n:
        fail(f"the picture from above shows {blobs} separate grains, the frame holds {n} "
             "(every grain must be drawn: glyph mode 'All Points')")
    # From above, x to the right and y up, parallel projection: the drawn pixels span the
    # beads' extent [min - r, max + r] on both axes.
    rows, cols = np.nonzero(mask)
    r = last["radius"].max()
    x, y = last["position"][:, 0], last["position"][:, 1]
    x0, x1, y0, y1 = x.min() - r, x.max() + r, y.min() - r, y.max() + r
    col = cols.min() + (x - x0) / (x1 - x0) * (cols.max() + 1 - cols.min()) - 0.5
    row = rows.min() + (y1 - y) / (y1 - y0) * (rows.max() + 1 - rows.min()) - 0.5
    hit = labels[np.clip(np.round(row).astype(int), 0, 799), np.clip(np.round(col).astype(int), 0, 799)]
    if (hit == 0).any():
        fail(f"{int((hit == 0).sum())} beads have no drawn pixel at their position")
    if len(np.unique(hit)) != n:
        fail(f"the {n} beads' positions fall on {len(np.unique(hit))} distinct blobs, not one each")


def check_small_run(talus, scenes, outdir):
    out = os.path.join(outdir, "small_box.h5")
    talus_run(talus, os.path.join(scenes, "small_box.toml"), out, "--set", "simulation.duration=0.1")
    png = os.path.join(outdir, "small_box.png")
    done = render([out, "-o", png, "--size", "480x360"])
    if done.returncode != 0:
        fail(f"tools/render on small_box exited {done.returncode}")
    share = foreground(picture(png, 480, 360)).mean()
    print(f"small_box: {100 * share:.1f} % of the pixels differ from the background")
    if share < 0.03:
        fail(f"only {100 * share:.1f} % of the small_box picture differs from the background")


def check_killed_run(talus, scenes, outdir):
    out = os.path.join(outdir, "killed.h5")
    child = subprocess.Popen([talus, "run", os.path.join(scenes, "small_box.toml"), "-o", out,
                              "--force", "--threads", "1", "--set", "simulation.duration=1000.0"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    frames = 0
    while time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.2)
        try:
            with talus_h5.load(out) as run:
                frames = len(run)
        except (OSError, KeyError):
            continue
        if frames >= 3:
            break
    child.send_signal(signal.SIGKILL)
    child.wait()
    if frames < 3:
        fail(f"the run to be killed wrote {frames} frames in 60 s")
    import h5py
    try:
        h5py.File(out, "r").close()
        fail(f"{out} opens without SWMR: the kill left no 'being written' mark to test with")
    except OSError:
        pass
    before = hashlib.sha256(open(out, "rb").read()).hexdigest()
    png = os.path.join(outdir, "killed.png")
    done = render([out, "-o", png, "--size", "320x240", "--colour-by", "radius"])
    if done.returncode != 0:
        fail(f"tools/render on the killed run exited {done.returncode}")
    if "h5clear" not in done.stderr:
        fail("tools/render did not say it renders the killed run from a cleared copy")
    if hashlib.sha256(open(out, "rb").read()).hexdigest() != before:
        fail(f"tools/render changed {out}")
    share = foreground(picture(png, 320, 240)).mean()
    print(f"killed run: {100 * share:.1f} % of the pixels differ from the background")
    if share < 0.03:
        fail(f"the killed run's picture shows no grains ({100 * share:.1f} % drawn)")


def check_errors(outdir):
    missing = os.path.join(outdir, "no_such_run.h5")
    done = render([missing])
    if done.returncode != 2 or missing not in done.stderr:
        fail(f"a missing file: exit {done.returncode} (expected 2), stderr {done.stderr!r}")
    lone = os.path.join(outdir, "lone", "small_box.h5")
    os.makedirs(os.path.dirname(lone), exist_ok=True)
    shutil.copyfile(os.path.join(outdir, "small_box.h5"), lone)
    done = render([lone])
    sidecar = lone[:-3] + ".xmf"
    if done.returncode != 2 or sidecar not in done.stderr:
        fail(f"a missing sidecar: exit {done.returncode} (expected 2), stderr {done.stderr!r}")
    os.environ["TALUS_PVPYTHON"] = os.path.join(outdir, "no_pvpython")
    done = render([os.path.join(outdir, "small_box.h5")])
    del os.environ["TALUS_PVPYTHON"]
    if done.returncode != 3 or "python3-paraview" not in done.stderr:
        fail(f"no pvpython: exit {done.returncode} (expected 3), stderr {done.stderr!r}")
    done = render([os.path.join(outdir, "small_box.h5"), "-o", os.path.join(outdir, "x.png"),
                   "--frame", "-100"])
    if done.returncode != 2 or "-100" not in done.stderr:
        fail(f"a frame out of range: exit {done.returncode} (expected 2), stderr {done.stderr!r}")


def main():
    if len(sys.argv) != 4:
        print("usage: check_render.py TALUS SCENES_DIR OUTDIR", file=sys.stderr)
        return 2
    talus, scenes, outdir = sys.argv[1:4]
    os.makedirs(outdir, exist_ok=True)
    check_lattice(talus, scenes, outdir)
    check_small_run(talus, scenes, outdir)
    check_killed_run(talus, scenes, outdir)
    check_errors(outdir)
    print("tools/render: every grain drawn where it is; default picture, killed run and errors as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
