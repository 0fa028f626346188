"""Draw a run's true shapes in ParaView as docs/rendering.md says, and check that every
glyph lies on the surface of the body it stands for.

    pvpython check_shapes_pvpython.py RUN.h5

RUN.h5 is tests/scenes/shapes.toml run to its end (a capsule, an ellipsoid, clumps). At every
time step, a Threshold of the bodies on `shape` from 0 to 0 must keep the sphere bodies; the
sidecar's "ellipsoids" and "cylinders" blocks (Extract Block, Merge Blocks)
must hold the frame's rows of /shapes; then Tensor Glyph with the recipe's settings (tensor
`axes`, Extract Eigenvalues off, Scale Factor 2; glyph type Sphere, or Cylinder) must put
every point of glyph j on the j-th row's surface: with A the row's three axis vectors as
columns and q = A^-1 (p - centre), |q| = 1 on an ellipsoid (a clump's sphere, a capsule's end
sphere, an ellipsoid), and q_x^2 + q_z^2 = 1 with |q_y| = 1 on a capsule's middle (the rims of
a cylinder of the capsule's radius, as long as its segment). Tolerance 1e-4 in q (ParaView's
points are float32). Exit 0 if all hold, 1 otherwise.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import talus_h5  # noqa: E402

from paraview import servermanager  # noqa: E402
from paraview.simple import ExtractBlock, MergeBlocks, TensorGlyph, Threshold, XDMFReader  # noqa: E402
from vtk.numpy_interface import dataset_adapter as dsa  # noqa: E402

TOL = 1e-4


def glyphs(reader, block, glyph_type, t):
    extract = ExtractBlock(Input=reader)
    extract.Selectors = [f"/Root/{block}"]
    merged = MergeBlocks(Input=extract)
    merged.UpdatePipeline(t)
    rows = servermanager.Fetch(merged).GetNumberOfPoints()
    g = TensorGlyph(Input=merged, GlyphType=glyph_type)
    g.Tensors = ["POINTS", "axes"]
    g.ExtractEigenvalues = 0
    g.ScaleFactor = 2.0
    g.UpdatePipeline(t)
    out = servermanager.Fetch(g)
    points = dsa.WrapDataObject(out).Points if out.GetNumberOfPoints() else np.zeros((0, 3))
    return rows, np.asarray(points, dtype=float)


def main(argv):
    h5 = os.path.abspath(argv[1])
    problems = []
    drawn = 0
    with talus_h5.load(h5) as run:
        reader = XDMFReader(FileNames=[os.path.splitext(h5)[0] + ".xmf"])
        reader.UpdatePipelineInformation()
        times = list(reader.TimestepValues)
        if len(times) != len(run):
            problems.append(f"{len(times)} time steps for {len(run)} frames")
        for k, t in enumerate(times[:len(run)]):
            # the recipe's sphere bodies: bodies, Threshold on shape from 0 to 0
            extract = ExtractBlock(Input=reader)
            extract.Selectors = ["/Root/bodies"]
            spheres = Threshold(Input=extract, Scalars=["POINTS", "shape"], LowerThreshold=0, UpperThreshold=0)
            spheres.UpdatePipeline(t)
            kept = servermanager.Fetch(spheres).GetNumberOfPoints()
            want = int(np.sum(run.frame(k)["shape"] == 0))
            if kept != want:
                problems.append(f"frame {k}: the Threshold on shape keeps {kept} bodies, {want} are spheres")
            s = run.shapes(k)
            n_cyl = s["cylinders"]
            n_ell = len(s["body"]) - n_cyl
            for block, glyph_type, first, count in (("ellipsoids", "Sphere", 0, n_ell),
                                                    ("cylinders", "Cylinder", n_ell, n_cyl)):
                rows, points = glyphs(reader, block, glyph_type, t)
                if rows != count:
                    problems.append(f"frame {k}: {block} block has {rows} points, /shapes {count} rows")
                    continue
                if count == 0:
                    continue
                per = len(points) // count
                if per * count != len(points) or per == 0:
                    problems.append(f"frame {k}: {len(points)} {block} glyph points for {count} rows")
                    continue
                for j in range(count):
                    A = s["axes"][first + j].T  # columns: the three vectors
                    q = np.linalg.solve(A, (points[j * per:(j + 1) * per] - s["position"][first + j]).T).T
                    if glyph_type == "Sphere":
                        err = np.abs(np.linalg.norm(q, axis=1) - 1.0).max()
                    else:
                        err = max(np.abs(np.hypot(q[:, 0], q[:, 2]) - 1.0).max(),
                                  np.abs(np.abs(q[:, 1]) - 1.0).max())
                    drawn += 1
                    if err > TOL:
                        problems.append(f"frame {k}: {block} glyph {j} (body {s['body'][first + j]}) "
                                        f"off its surface by {err:.3g}")
    for p in problems[:20]:
        print("FAIL:", p)
    if not problems:
        print(f"OK: {drawn} glyphs over {len(times)} frames on their bodies' surfaces")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
