#pragma once
/// The walls as triangles, for the output (/walls/surface) and its XDMF sidecar: what
/// ParaView draws, not what the bodies collide with. A plane is a square patch and an
/// unbounded cylinder a finite tube, both sized to the scene; a box its six faces; a mesh its
/// own triangles; a cone 64 quads between its rims; an orifice plate a square about its hole
/// (the plane's size, at least twice the hole's), the hole cut out. The triangles are fixed for the run; each frame stores the points at the
/// walls' pose of its time.
#include <array>
#include <cstdint>
#include <vector>

#include "core/math.hpp"
#include "core/walls.hpp"

namespace talus {

struct BodyStore;

struct WallSurface {
    std::vector<Vec3> points;                         ///< reference pose [m]
    std::vector<std::array<uint32_t, 3>> triangles;   ///< into `points`
    std::vector<uint32_t> triangle_wall;              ///< wall of each triangle
    std::vector<uint32_t> first_point;                ///< per wall, its points [first, next); W + 1 entries

    bool empty() const { return triangles.empty(); }
};

/// Segments around a cylinder's circumference in the drawing.
inline constexpr int kCylinderSegments = 64;

/// The scene's extent for sizing planes and unbounded cylinders: the bounding box of the
/// bodies (with their radii), the boxes, the meshes and the finite cylinders, grown by a
/// fifth of its diagonal; a cube of 1 m about the origin if there is nothing.
void scene_extent(const std::vector<Wall>& walls, const BodyStore& bodies, Vec3& lo, Vec3& hi);

/// The walls' triangles at their reference pose.
WallSurface wall_surface(const std::vector<Wall>& walls, const BodyStore& bodies);

/// The surface's points at time t: each wall's points moved by its motion's pose at t. A
/// removed wall's points are all put on its first one, so that its triangles have no area
/// and are not drawn.
void posed_wall_points(const WallSurface& surface, const std::vector<Wall>& walls, double t,
                       std::vector<Vec3>& out);

}  // namespace talus
