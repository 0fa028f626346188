"""Render one frame of a Talus run to a PNG with ParaView (run by tools/render under pvpython).

    pvpython tools/lib/render.py h5=RUN.h5 xmf=RUN.xmf png=PICTURE.png frame=N width=W height=H \
        colour=C view=V labels=0|1 work=WORKDIR

All paths absolute. (key=value because pvpython rewrites a script argument like -100, an
option to it, into --100.) tools/render checks the arguments and that the files exist, finds
pvpython and provides a display (its own Xvfb when there is none); this script:

- reads the scene text the run stored (root attribute `scene`, for the walls and the
  direction of gravity) with h5py in SWMR read mode, which works on any run;
- when the file still carries HDF5's "being written" mark (a run going on, or killed:
  docs/output-format.md), which ParaView's reader refuses (it then draws no bodies and only
  prints HDF5 errors), copies the sidecar and then the file into WORKDIR and clears the copy's
  mark with `h5clear -s --increment=0`; the run's own file is never modified. (`-s` alone
  is not enough: a killed file's superblock may record an end of file short of the last
  frame's rows, and `h5clear -s` then cuts them off; `--increment=0` sets it to the real end);
- draws the bodies through the XDMF sidecar with ParaView's legacy "XDMF Reader" (the Xdmf3
  readers return no points for the sidecar's hyperslabs);
- every body as a sphere of its radius: Glyph, glyph type Sphere, scale array radius, scale
  factor 2 (the unit sphere glyph has a diameter of 1) and glyph mode "All Points" (the
  default, "Uniform Spatial Distribution", draws at most 5,000 points: about 3,800 of 10,000);
  a clump as its spheres (read with tools/talus_h5.py) instead of its bounding sphere;
  capsules and ellipsoids as their bounding spheres;
- the box walls as outlines, the cylinder walls as a faint shell, the mesh walls as a
  translucent surface when their STL file is found; planes (unbounded) are left out, and
  moving walls are drawn at their starting place;
- with a camera fitted to the bodies (oblique, or from above / the side).

Exit 0 with the PNG written; 1 when ParaView fails; 2 for a file that is not a Talus run or
a frame out of range; 3 when h5clear is needed and missing.
"""
import math
import os
import shutil
import subprocess
import sys
import traceback

import h5py

# tomllib is Python 3.11's; pvpython runs Debian 12's python3.11
try:
    import tomllib
except ImportError:  # pragma: no cover - older Pythons: no walls
    tomllib = None

from paraview.simple import (  # noqa: E402
    XDMFReader, Glyph, Box, Cylinder, Show, ColorBy, STLReader, IDSelectionSource,
    ExtractSelection, PVTrivialProducer, GetColorTransferFunction,
    CreateView, Render, SaveScreenshot, Text, GetScalarBar, Transform,
)

BACKGROUND = (0.32, 0.34, 0.43)  # ParaView's own default background (tests rely on it)
GRAIN_COLOUR = (0.85, 0.75, 0.55)  # sand, for --colour-by none
WALL_COLOUR = (0.85, 0.85, 0.85)
CATEGORY_COLOURS = [(0.89, 0.10, 0.11), (0.22, 0.49, 0.72), (0.30, 0.69, 0.29), (0.60, 0.31, 0.64),
                    (1.00, 0.50, 0.00), (1.00, 1.00, 0.20), (0.65, 0.34, 0.16), (0.97, 0.51, 0.75)]


class Failure(Exception):
    def __init__(self, message, code=1):
        super().__init__(message)
        self.code = code


def fail(message, code=1):
    raise Failure(message, code)


def normalised(v):
    n = math.sqrt(sum(c * c for c in v))
    return [c / n for c in v] if n > 0 else None


def cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def clump_spheres(h5, t):
    """(row indices of the frame's clumps, a source of their spheres or None) for the frame at
    time t: each sphere a point with its radius and its clump's velocity, id and material."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    import numpy as np
    import talus_h5
    with talus_h5.load(h5) as run:
        if "shape" not in run._file["bodies"]:
            return [], None
        match = np.flatnonzero(run.frames.time == t)
        if len(match) == 0:
            return [], None
        frame = run.frame(int(match[-1]))
        clumps = np.flatnonzero(frame["shape"] == 3)
        if len(clumps) == 0:
            return [], None
        rows, owner = run.spheres(frame)
    keep = np.isin(owner, clumps)
    rows, owner = rows[keep], owner[keep]
    from vtkmodules.vtkCommonCore import vtkPoints
    from vtkmodules.vtkCommonDataModel import vtkPolyData, vtkCellArray
    from vtkmodules.util.numpy_support import numpy_to_vtk
    poly = vtkPolyData()
    points = vtkPoints()
    points.SetData(numpy_to_vtk(np.ascontiguousarray(rows[:, :3]), deep=1))
    poly.SetPoints(points)
    verts = vtkCellArray()
    for i in range(len(rows)):
        verts.InsertNextCell(1)
        verts.InsertCellPoint(i)
    poly.SetVerts(verts)
    for name, values in (("radius", rows[:, 3]), ("velocity", frame["velocity"][owner]),
                         ("id", frame["id"][owner].astype(np.int64)),
                         ("material", frame["material"][owner])):
        array = numpy_to_vtk(np.ascontiguousarray(values), deep=1)
        array.SetName(name)
        poly.GetPointData().AddArray(array)
    source = PVTrivialProducer()
    source.GetClientSideObject().SetOutput(poly)
    return [int(i) for i in clumps], source


def glyph_spheres(source, n, t):
    """Every point of SOURCE as a sphere of its radius."""
    glyph = Glyph(Input=source, GlyphType="Sphere")
    glyph.ScaleArray = ["POINTS", "radius"]
    glyph.ScaleFactor = 2.0  # the sphere glyph has a diameter of 1: radius x 2 = diameter
    glyph.GlyphMode = "All Points"  # the default draws at most 5,000 (MaximumNumberOfSamplePoints)
    glyph.OrientationArray = ["POINTS", "No orientation array"]
    glyph.GlyphType.ThetaResolution = 16 if n <= 20000 else 8
    glyph.GlyphType.PhiResolution = 12 if n <= 20000 else 6
    glyph.UpdatePipeline(t)
    return glyph


def inspect_run(h5):
    """(scene dict, material names, whether the file carries the "being written" mark)."""
    try:
        f = h5py.File(h5, "r", swmr=True)
    except OSError:
        try:  # a file written without the latest format cannot be opened in SWMR mode
            f = h5py.File(h5, "r")
        except OSError as e:
            fail(f"{h5}: not an HDF5 file HDF5 can open ({e})", 2)
    with f:
        if f.attrs.get("format") not in ("talus-trajectory", b"talus-trajectory"):
            fail(f"{h5}: not a Talus trajectory (no root attribute format = \"talus-trajectory\")", 2)
        text = f.attrs.get("scene", "")
        scene_path = f.attrs.get("scene_path", "")
        if isinstance(scene_path, bytes):
            scene_path = scene_path.decode("utf-8", "replace")
        names = [m.decode("utf-8", "replace") if isinstance(m, bytes) else str(m)
                 for m in f.attrs.get("material_names", [])]
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    scene = {}
    if tomllib is not None and text:
        try:
            scene = tomllib.loads(text)
        except ValueError as e:
            print(f"tools/render: note: the stored scene does not parse ({e}); no walls drawn",
                  file=sys.stderr)
    scene["__dir__"] = os.path.dirname(os.path.abspath(scene_path)) if scene_path else ""
    try:  # an ordinary open, as ParaView's reader does it, is refused while the mark is set
        h5py.File(h5, "r").close()
        marked = False
    except OSError:
        marked = True
    return scene, names, marked


def cleared_copy(h5, xmf, work):
    """Copy the sidecar, then the file (it only grows, so every frame the copied sidecar names
    is in the copied file), into WORK under their own names (the sidecar names the file by
    its bare name) and clear the copy's "being written" mark."""
    h5clear = shutil.which("h5clear")
    if h5clear is None:
        fail(f"{h5} carries HDF5's \"being written\" mark (a run going on, or killed), which "
             "ParaView refuses; clearing it on a copy needs h5clear: install the Debian package "
             "hdf5-tools", 3)
    size = os.path.getsize(h5)
    print(f"tools/render: note: {h5} is still being written or was left by a killed run; "
          f"rendering from a copy ({size / 1e6:.1f} MB) cleared with h5clear", file=sys.stderr)
    xmf_copy = os.path.join(work, os.path.basename(xmf))
    h5_copy = os.path.join(work, os.path.basename(h5))
    shutil.copyfile(xmf, xmf_copy)
    shutil.copyfile(h5, h5_copy)
    # --increment=0: the end of file the superblock records (EOA) becomes the real one; a
    # killed run's may be short of its last rows, which -s alone would then cut off
    done = subprocess.run([h5clear, "-s", "--increment=0", h5_copy], capture_output=True, text=True)
    if done.returncode != 0:
        fail(f"h5clear -s --increment=0 on the copy of {h5} failed: "
             f"{done.stderr.strip() or done.stdout.strip()}")
    return h5_copy, xmf_copy


def up_direction(scene):
    """Against gravity, or +z without gravity: the picture's 'up'."""
    g = scene.get("simulation", {}).get("gravity", [0.0, 0.0, -9.81])
    try:
        up = normalised([-float(c) for c in g])
    except (TypeError, ValueError):
        up = None
    return up or [0.0, 0.0, 1.0]


def show_walls(scene, view, bounds):
    """Box walls as outlines, cylinder walls as a faint shell (the length of the bodies' extent
    along the axis when the cylinder is unbounded), mesh walls as a translucent surface when
    their STL file is still where the run found it (relative to the scene file, whose path the
    run stored as given: from the directory the run was started in). Walls that move are
    drawn at rest; planes are not drawn. Returns the bounds of the walls drawn."""
    shown = []
    for wall in scene.get("wall", []):
        kind = wall.get("type")
        try:
            if kind == "box":
                lo, hi = [float(c) for c in wall["min"]], [float(c) for c in wall["max"]]
                box = Box(XLength=hi[0] - lo[0], YLength=hi[1] - lo[1], ZLength=hi[2] - lo[2],
                          Center=[(a + b) / 2 for a, b in zip(lo, hi)])
                d = Show(box, view)
                d.SetRepresentationType("Outline")
                d.AmbientColor = d.DiffuseColor = WALL_COLOUR
                d.LineWidth = 1.5
                shown.append(box)
            elif kind == "cylinder":
                point = [float(c) for c in wall["point"]]
                axis = normalised([float(c) for c in wall["axis"]])
                radius = float(wall["radius"])
                if "length" in wall:
                    length = float(wall["length"])
                else:  # unbounded: as long as the bodies reach along the axis, plus a little
                    corners = [[bounds[i], bounds[j], bounds[k]] for i in (0, 1)
                               for j in (2, 3) for k in (4, 5)]
                    s = [sum((c[m] - point[m]) * axis[m] for m in range(3)) for c in corners]
                    lo, hi = min(s), max(s)
                    pad = 0.05 * (hi - lo) + 1e-9
                    centre = (lo + hi) / 2
                    point = [point[m] + centre * axis[m] for m in range(3)]
                    length = hi - lo + 2 * pad
                # vtkCylinderSource: axis y, centred at the origin; turn y onto the axis
                cyl = Cylinder(Radius=radius, Height=length, Resolution=64, Capping=0)
                y = [0.0, 1.0, 0.0]
                rot_axis = cross(y, axis)
                angle = math.degrees(math.acos(max(-1.0, min(1.0, sum(a * b for a, b in zip(y, axis))))))
                tf = Transform(Input=cyl)
                tf.Transform = "Transform"
                tf.Transform.Translate = point
                if normalised(rot_axis) is not None:
                    # ParaView's transform rotates by x, y, z Euler angles; a rotation about
                    # an arbitrary axis is not one of those, so use the two that suffice for
                    # axis-aligned cylinders (the usual case) and the general formula otherwise
                    tf.Transform.Rotate = euler_xyz_from_axis_angle(normalised(rot_axis), angle)
                elif angle > 90:
                    tf.Transform.Rotate = [180.0, 0.0, 0.0]
                d = Show(tf, view)
                d.AmbientColor = d.DiffuseColor = WALL_COLOUR
                d.Opacity = 0.15
                shown.append(tf)
            elif kind == "mesh":
                path = os.path.join(scene.get("__dir__", ""), wall["file"])
                if not os.path.isfile(path):
                    print(f"tools/render: note: mesh wall {wall.get('name', wall['file'])} not drawn "
                          f"({path} not found)", file=sys.stderr)
                    continue
                mesh = Transform(Input=STLReader(FileNames=[path]))
                mesh.Transform = "Transform"
                mesh.Transform.Scale = [float(wall.get("scale", 1.0))] * 3
                mesh.Transform.Translate = [float(c) for c in wall.get("translate", [0.0, 0.0, 0.0])]
                d = Show(mesh, view)
                d.ColorArrayName = ["POINTS", ""]  # not by the STL's solid labels
                d.AmbientColor = d.DiffuseColor = WALL_COLOUR
                d.Opacity = 0.35
                shown.append(mesh)
        except Exception as e:  # noqa: BLE001 - walls are extras: a wall that fails is left out
            print(f"tools/render: note: wall {wall.get('name', kind)} not drawn ({e})", file=sys.stderr)
    return [w.GetDataInformation().GetBounds() for w in shown]


def euler_xyz_from_axis_angle(axis, degrees):
    """ParaView's Transform.Rotate [rx, ry, rz] (VTK applies RotateZ, then RotateX, then
    RotateY to the points: R = Ry Rx Rz) equal to the rotation by `degrees` about `axis`."""
    a = math.radians(degrees)
    x, y, z = axis
    c, s, t = math.cos(a), math.sin(a), 1 - math.cos(a)
    r = [[t * x * x + c, t * x * y - s * z, t * x * z + s * y],
         [t * x * y + s * z, t * y * y + c, t * y * z - s * x],
         [t * x * z - s * y, t * y * z + s * x, t * z * z + c]]
    # R = Ry(b) Rx(a) Rz(g): r[1][2] = -sin(a)
    ax = math.asin(max(-1.0, min(1.0, -r[1][2])))
    if abs(math.cos(ax)) > 1e-9:
        ay = math.atan2(r[0][2], r[2][2])
        az = math.atan2(r[1][0], r[1][1])
    else:  # gimbal lock
        ay = math.atan2(-r[2][0], r[0][0])
        az = 0.0
    return [math.degrees(ax), math.degrees(ay), math.degrees(az)]


def fit_bounds(bodies, walls):
    """The box the camera frames: the bodies', grown to take in the walls drawn unless that
    more than doubles its diagonal (a bed at the bottom of a tall box keeps its size)."""
    def diagonal(b):
        return math.sqrt(sum((b[2 * m + 1] - b[2 * m]) ** 2 for m in range(3)))
    union = list(bodies)
    for w in walls:
        for m in range(3):
            union[2 * m] = min(union[2 * m], w[2 * m])
            union[2 * m + 1] = max(union[2 * m + 1], w[2 * m + 1])
    return union if diagonal(union) <= 2 * diagonal(bodies) else list(bodies)


def place_camera(view, bounds, up, kind, width, height, legend, labels):
    """Camera looking at the centre of BOUNDS from the direction KIND, as close as it can be
    with every corner of BOUNDS inside the picture (a 5 % margin, 12 % with the time label),
    and left of the colour legend (the right 18 % of the picture) when there is one."""
    centre = [(bounds[0] + bounds[1]) / 2, (bounds[2] + bounds[3]) / 2, (bounds[4] + bounds[5]) / 2]
    # two horizontal directions: x projected off 'up' (or y when up is along x)
    ref = [1.0, 0.0, 0.0] if abs(up[0]) < 0.9 else [0.0, 1.0, 0.0]
    e1 = normalised([ref[m] - sum(ref[k] * up[k] for k in range(3)) * up[m] for m in range(3)])
    e2 = cross(up, e1)
    if kind == "top":
        direction, view_up = up, e2
    elif kind == "side":  # looking along +e2, i.e. at the x-z plane for z up
        direction, view_up = [-c for c in e2], up
    else:  # oblique: from the front-left, about 35 degrees above the horizon
        direction = normalised([0.45 * e1[m] - 0.75 * e2[m] + 0.6 * up[m] for m in range(3)])
        view_up = up
    right = normalised(cross(view_up, direction))
    screen_up = cross(direction, right)
    corners = [[bounds[i], bounds[2 + j], bounds[4 + k]] for i in (0, 1) for j in (0, 1) for k in (0, 1)]
    local = [[sum((c[m] - centre[m]) * axis[m] for m in range(3)) for axis in (right, screen_up, direction)]
             for c in corners]  # (x right, y up, z toward the camera)
    aspect = width / height
    margin = 0.88 if legend or labels else 0.95  # room for the time label at the top
    f = 0.18 if legend else 0.0  # of the picture's half-width, kept free on the right
    view.CameraFocalPoint = centre
    view.CameraViewUp = screen_up
    if kind == "top":
        view.CameraParallelProjection = 1
        half_height = max(max(abs(x) for x, _, _ in local) / (aspect * (1 - f)),
                          max(abs(y) for _, y, _ in local))
        view.CameraParallelScale = half_height / margin
        distance = 2 * max(max(abs(z) for _, _, z in local), half_height) + 1e-6
        shift = f * half_height / margin * aspect
    else:
        view.CameraParallelProjection = 0
        angle = 30.0  # vertical view angle [deg]
        view.CameraViewAngle = angle
        tan_v = math.tan(math.radians(angle / 2)) * margin
        tan_h = tan_v * aspect
        distance = max(max(z + abs(x) / (tan_h * (1 - f)), z + abs(y) / tan_v) for x, y, z in local)
        shift = f * distance * tan_h / margin
    # move the camera right of the bodies' centre: they appear left of the legend
    centre = [centre[m] + shift * right[m] for m in range(3)]
    view.CameraFocalPoint = centre
    view.CameraPosition = [centre[m] + distance * direction[m] for m in range(3)]


def main(argv):
    keys = ("h5", "xmf", "png", "frame", "width", "height", "colour", "view", "labels", "work")
    args = dict(a.split("=", 1) for a in argv[1:] if "=" in a)
    if sorted(args) != sorted(keys):
        fail("usage: render.py " + " ".join(f"{k}=..." for k in keys), 2)
    h5, xmf, png, frame = args["h5"], args["xmf"], args["png"], int(args["frame"])
    width, height, colour, kind = int(args["width"]), int(args["height"]), args["colour"], args["view"]
    labels, work = args["labels"] == "1", args["work"]
    scene, material_names, marked = inspect_run(h5)
    if marked:
        h5, xmf = cleared_copy(h5, xmf, work)

    reader = XDMFReader(FileNames=[xmf])
    reader.PointArrayStatus = ["radius", "velocity", "id", "material"]
    reader.UpdatePipelineInformation()
    # only the bodies' grids ("frame K"): a sidecar may also list contacts and walls, whose
    # points are no bodies (the walls are drawn from the scene below)
    grids = [g for g in reader.GetProperty("GridInfo")[::2] if str(g).startswith("frame ")]
    if grids:
        reader.GridStatus = grids
    times = list(reader.TimestepValues) if reader.TimestepValues is not None else []
    if isinstance(reader.TimestepValues, float):
        times = [reader.TimestepValues]
    if not times:
        fail(f"{xmf}: no frame in the run", 2)
    k = frame if frame >= 0 else len(times) + frame
    if not 0 <= k < len(times):
        fail(f"{xmf}: --frame {frame} is out of range: the run has {len(times)} frames "
             f"(0 to {len(times) - 1}, or -1 to -{len(times)})", 2)
    t = times[k]
    reader.UpdatePipeline(t)
    info = reader.GetDataInformation()
    n = info.GetNumberOfPoints()
    if n == 0:
        print(f"tools/render: note: frame {k} (t = {t:g} s) holds no bodies", file=sys.stderr)
    elif (info.GetPointDataInformation().GetArrayInformation("radius") is None or
          not info.GetPointDataInformation().GetArrayInformation("radius").GetComponentRange(0)[0] > 0):
        # the reader has the sidecar's point count but could not read the HDF5 file (every
        # radius is > 0 in a run); it leaves the arrays unset
        fail(f"ParaView's XDMF Reader could not read the bodies of frame {k} from {h5} "
             "(see its messages above)")

    view = CreateView("RenderView")
    view.ViewSize = [width, height]
    view.ViewTime = t
    view.OrientationAxesVisibility = 0
    view.UseColorPaletteForBackground = 0
    view.Background = list(BACKGROUND)
    view.EnableRenderOnInteraction = 0

    # Clumps: the sidecar has one point per body, a clump's at its centre of mass with its
    # bounding radius (a paddle would be one big ball). Their points are left out of the
    # reader's output and their spheres, read from the file, are glyphed instead.
    # (The reader's points are the frame's rows in file order, so a clump's row index in the
    # frame is its point index.)
    clump_rows, spheres = clump_spheres(h5, t)
    bodies = reader
    if clump_rows:
        selection = IDSelectionSource(FieldType="POINT", IDs=[v for i in clump_rows for v in (0, i)])
        selection.InsideOut = 1  # everything but the clumps
        bodies = ExtractSelection(Input=reader, Selection=selection)
    glyphs = [glyph_spheres(bodies, n, t)] if len(clump_rows) < n else []
    if spheres is not None:
        glyphs.append(glyph_spheres(spheres, n, t))
    displays = [Show(g, view) for g in glyphs]
    shown = displays[0]
    if colour == "none" or n == 0:
        for d in displays:
            ColorBy(d, None)
            d.AmbientColor = d.DiffuseColor = GRAIN_COLOUR
    else:
        array = {"velocity": "velocity", "radius": "radius", "material": "material"}[colour]
        for d in displays:
            if colour == "velocity":
                ColorBy(d, ("POINTS", array, "Magnitude"))
            else:
                ColorBy(d, ("POINTS", array))
        lut = GetColorTransferFunction(array)
        if colour == "material":
            lut.InterpretValuesAsCategories = 1
            count = max(len(material_names), int(info.GetPointDataInformation()
                        .GetArrayInformation("material").GetComponentRange(0)[1]) + 1)
            names = material_names + [f"material {m}" for m in range(len(material_names), count)]
            lut.Annotations = sum(([str(m), names[m]] for m in range(count)), [])
            lut.IndexedColors = [c for m in range(count) for c in CATEGORY_COLOURS[m % len(CATEGORY_COLOURS)]]
        elif colour == "velocity":  # speeds from 0: a bed at rest stays blue
            top = info.GetPointDataInformation().GetArrayInformation("velocity").GetComponentRange(-1)[1]
            lut.RescaleTransferFunction(0.0, top if top > 0 else 1.0)
        else:  # radius: over the spheres drawn (a clump's, not its bounding radius)
            ranges = [g.GetDataInformation().GetPointDataInformation().GetArrayInformation("radius")
                      .GetComponentRange(0) for g in glyphs]
            lo, hi = min(r[0] for r in ranges), max(r[1] for r in ranges)
            lut.RescaleTransferFunction(lo, hi if hi > lo else lo * 1.001 + 1e-12)
        if labels:
            bar = GetScalarBar(lut, view)
            bar.Title = {"velocity": "speed [m/s]", "radius": "radius [m]",
                         "material": "material"}[colour]
            bar.ComponentTitle = ""
            bar.TitleFontSize = bar.LabelFontSize = 12
            bar.ScalarBarLength = 0.4
            bar.WindowLocation = "Any Location"
            bar.Position = [0.83, 0.05]
            bar.RangeLabelFormat = "%-#.2g"
            shown.SetScalarBarVisibility(view, True)
    bounds = [-1.0, 1.0, -1.0, 1.0, -1.0, 1.0]
    if n:
        parts = [g.GetDataInformation().GetBounds() for g in glyphs]
        parts = [b for b in parts if b[0] <= b[1]]
        if parts:
            bounds = [min(b[m] for b in parts) if m % 2 == 0 else max(b[m] for b in parts)
                      for m in range(6)]
    walls = show_walls(scene, view, bounds)
    if labels:
        text = Text(Text=f"t = {t:.3f} s   {n} bodies")
        td = Show(text, view)
        td.WindowLocation = "Upper Left Corner"
        td.FontSize = 12
    Render(view)  # paraview.simple resets the camera on a view's first render: get that done
    place_camera(view, fit_bounds(bounds, walls), up_direction(scene), kind, width, height,
                 legend=labels and colour != "none" and n > 0, labels=labels)
    Render(view)
    if not SaveScreenshot(png, view, ImageResolution=[width, height],
                          OverrideColorPalette="", TransparentBackground=0, CompressionLevel="9"):
        fail(f"ParaView could not write {png}")
    print(f"tools/render: {png}: frame {k} of {len(times)} (t = {t:g} s), {n} bodies, {width}x{height}")
    return 0


if __name__ == "__main__":
    # pvpython crashes in its teardown (X error, SIGSEGV) when the script ends by sys.exit,
    # even sys.exit(0); so success falls off the end, and a failure leaves by os._exit.
    try:
        status = main(sys.argv)
    except Failure as e:
        print(f"tools/render: {e}", file=sys.stderr)
        status = e.code
    except Exception:  # noqa: BLE001 - a ParaView failure: say what, exit 1
        traceback.print_exc()
        status = 1
    if status != 0:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
