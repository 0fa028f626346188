#pragma once
/// Boundary geometry: infinite planes, closed boxes (six inner faces), cylinders (bodies
/// inside, a drum, or outside, a shaft), triangle meshes (collision/mesh.hpp), and two thin
/// walls with bodies on both sides, cones (hoppers) and orifice plates (core/thin_walls.hpp). Every
/// wall may move by a prescribed rigid motion (wall_motion.hpp). Walls have infinite mass
/// (docs/design.md §2, §3).
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "math.hpp"
#include "wall_motion.hpp"
#include "core/enum_names.hpp"

namespace talus {

class TriangleMesh;  // collision/mesh.hpp

enum class WallType : uint8_t { Plane, Box, Cylinder, Mesh, Cone, Orifice };
template <>
struct EnumNames<WallType> {
    static constexpr NamedValue<WallType> table[] = {
        {WallType::Plane, "plane"},       {WallType::Box, "box"},   {WallType::Cylinder, "cylinder"},
        {WallType::Mesh, "mesh"},         {WallType::Cone, "cone"}, {WallType::Orifice, "orifice"}};
};

struct Wall {
    WallType type = WallType::Plane;
    std::string name;              ///< optional, unique in a scene: stages refer to walls by it
    bool active = true;            ///< false: removed by a stage (collides with nothing)
    uint32_t material = 0;
    WallMotion motion;             ///< prescribed motion; the geometry below is its t-reference pose
    // plane: a point and the unit normal pointing into the region bodies occupy
    // cylinder: a point on the axis (the middle of a finite cylinder)
    // cone: the centre of its start; orifice: the hole's centre and the plate's unit normal
    Vec3 point = Vec3::Zero();     ///< [m]
    Vec3 normal = Vec3::UnitZ();
    // box: corners; bodies live inside
    Vec3 min = Vec3::Zero();       ///< [m]
    Vec3 max = Vec3::Zero();       ///< [m]
    // cylinder: unit axis, radius, length along the axis (∞: unbounded), side bodies live on
    Vec3 axis = Vec3::UnitZ();
    double radius = 0.0;           ///< [m]
    double length = std::numeric_limits<double>::infinity();  ///< [m]
    bool inside = true;            ///< true: bodies inside (drum); false: outside (pillar)
    // cone: `axis` from start to end, `length` between them, `radius` at the start and
    // end_radius at the end (either may be 0, not both)
    double end_radius = 0.0;       ///< [m]
    // orifice: a round hole (hole_radius > 0) or a rectangle of hole_size (width along the
    // unit hole_direction, in the plate; length across it)
    double hole_radius = 0.0;      ///< [m]
    std::array<double, 2> hole_size{0.0, 0.0};  ///< [m]
    Vec3 hole_direction = Vec3::UnitX();
    // mesh: the triangles at the reference pose, shared between copies of the wall; the
    // AABB tree stays in this frame and queries are moved into it (collision/mesh.hpp)
    std::shared_ptr<const TriangleMesh> mesh;

    bool kinematic() const { return motion.moving(); }
};

/// The point about which a wall's torque is reported (output /walls/torque): the centre
/// of a rotating wall's rotation; otherwise a plane's point, a box's centre, a point on a
/// cylinder's axis, the origin for a mesh, a cone's start centre, an orifice's hole centre. Taken at the reference pose: it does not follow a
/// translating or vibrating wall.
inline Vec3 wall_reference_point(const Wall& wall) {
    if (wall.motion.kind == MotionKind::Rotation) return wall.motion.centre;
    switch (wall.type) {
        case WallType::Plane: return wall.point;
        case WallType::Box: return 0.5 * (wall.min + wall.max);
        case WallType::Cylinder: return wall.point;
        case WallType::Mesh: return Vec3::Zero();
        case WallType::Cone:
        case WallType::Orifice: return wall.point;
    }
    return Vec3::Zero();
}

/// Pose of each wall at t_pose with its mean velocity over [t0, t0 + h] (wall_motion.hpp).
inline std::vector<WallState> wall_states(const std::vector<Wall>& walls, double t_pose, double t0,
                                          double h) {
    std::vector<WallState> s(walls.size());
    for (std::size_t w = 0; w < walls.size(); ++w) s[w] = wall_state(walls[w].motion, t_pose, t0, h);
    return s;
}

/// One planar face of a wall at a given time: bodies live on the side n·(x − p) > 0.
struct WallFace {
    Vec3 point;
    Vec3 normal;
};

/// Faces of `wall` at pose `state` (1 for a plane, 6 for a box, none for a cylinder, a
/// mesh, a cone or an orifice, collided by their own routines, and none for a removed wall);
/// returns their count.
inline int wall_faces(const Wall& wall, const WallState& state, std::array<WallFace, 6>& out) {
    if ((wall.type != WallType::Plane && wall.type != WallType::Box) || !wall.active) return 0;
    if (wall.type == WallType::Plane) {
        out[0] = {state.to_world(wall.point), state.dir_to_world(wall.normal)};
        return 1;
    }
    const Vec3 lo = state.to_world(wall.min), hi = state.to_world(wall.max);
    for (int axis = 0; axis < 3; ++axis) {
        Vec3 n = Vec3::Zero();
        n[axis] = 1.0;
        n = state.dir_to_world(n);
        out[2 * axis] = {lo, n};       // lower face, normal pointing in (+axis)
        out[2 * axis + 1] = {hi, -n};  // upper face, normal pointing in (−axis)
    }
    return 6;
}

/// Faces of `wall` at time t (the pose of its motion at t).
inline int wall_faces(const Wall& wall, double t, std::array<WallFace, 6>& out) {
    return wall_faces(wall, wall_state(wall.motion, t, t, 1.0), out);
}

/// A cylinder wall at one pose, and where a point is relative to it.
struct CylinderAt {
    Vec3 point, axis;  ///< world axis point (middle) and unit axis
    double radius, half_length;
    bool inside;

    CylinderAt(const Wall& w, const WallState& s)
        : point(s.to_world(w.point)), axis(s.dir_to_world(w.axis)), radius(w.radius),
          half_length(0.5 * w.length), inside(w.inside) {}

    /// Distance from x to the cylinder surface, positive on the bodies' side, and the unit
    /// normal from the surface towards x's side (radial). False when x lies beyond an end
    /// (|axial coordinate| > half length), where the cylinder is not seen.
    bool distance(const Vec3& x, double& dist, Vec3& normal) const {
        const Vec3 rel = x - point;
        const double s = rel.dot(axis);
        if (std::abs(s) > half_length) return false;
        const Vec3 radial = rel - s * axis;
        const double rho = radial.norm();
        Vec3 out;  // radial unit vector (any perpendicular on the axis itself)
        if (rho > 0.0) {
            out = radial / rho;
        } else {
            Vec3 u, v;
            orthonormal_basis(axis, u, v);
            out = u;
        }
        dist = inside ? radius - rho : rho - radius;
        normal = inside ? Vec3(-out) : out;
        return true;
    }
};

}  // namespace talus
