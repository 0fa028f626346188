#pragma once
/// Boundary geometry: infinite planes and closed boxes (six inner faces), each optionally
/// kinematic with a constant velocity, and static triangle meshes (collision/mesh.hpp).
/// Walls have infinite mass (DESIGN §2, §3).
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "math.hpp"

namespace talus {

class TriangleMesh;  // collision/mesh.hpp

enum class WallType : uint8_t { Plane, Box, Mesh };

struct Wall {
    WallType type = WallType::Plane;
    std::string name;              ///< optional, unique in a scene: stages refer to walls by it
    bool active = true;            ///< false: removed by a stage (collides with nothing)
    uint32_t material = 0;
    Vec3 velocity = Vec3::Zero();  ///< constant translation velocity [m/s]; zero = static
    // plane: a point at t = 0 and the unit normal pointing into the region bodies occupy
    Vec3 point = Vec3::Zero();     ///< [m]
    Vec3 normal = Vec3::UnitZ();
    // box: corners at t = 0; bodies live inside
    Vec3 min = Vec3::Zero();       ///< [m]
    Vec3 max = Vec3::Zero();       ///< [m]
    // mesh: the triangles in world coordinates, shared between copies of the wall; static
    // (velocity must stay zero: moving meshes are not implemented)
    std::shared_ptr<const TriangleMesh> mesh;

    bool kinematic() const { return velocity.squaredNorm() > 0.0; }
};

/// The point about which a wall's torque is reported (output /walls/torque): a plane's
/// point, a box's centre, the origin for a mesh; at t = 0 (it does not follow the wall).
inline Vec3 wall_reference_point(const Wall& wall) {
    switch (wall.type) {
        case WallType::Plane: return wall.point;
        case WallType::Box: return 0.5 * (wall.min + wall.max);
        case WallType::Mesh: return Vec3::Zero();
    }
    return Vec3::Zero();
}

/// One planar face of a wall at a given time: bodies live on the side n·(x − p) > 0.
struct WallFace {
    Vec3 point;
    Vec3 normal;
};

/// Faces of `wall` at time t (1 for a plane, 6 for a box, none for a mesh, whose triangles
/// are collided by collision/mesh.hpp, and none for a removed wall); returns their count.
inline int wall_faces(const Wall& wall, double t, std::array<WallFace, 6>& out) {
    if (wall.type == WallType::Mesh || !wall.active) return 0;
    const Vec3 shift = wall.velocity * t;
    if (wall.type == WallType::Plane) {
        out[0] = {wall.point + shift, wall.normal};
        return 1;
    }
    const Vec3 lo = wall.min + shift, hi = wall.max + shift;
    for (int axis = 0; axis < 3; ++axis) {
        Vec3 n = Vec3::Zero();
        n[axis] = 1.0;
        out[2 * axis] = {lo, n};       // lower face, normal pointing in (+axis)
        out[2 * axis + 1] = {hi, -n};  // upper face, normal pointing in (−axis)
    }
    return 6;
}

}  // namespace talus
