#pragma once
// Cone and orifice walls (core/thin_walls.hpp) built in code, for the geometry and physics
// tests, in the terms of the scene keys.
#include <array>

#include "core/walls.hpp"

namespace talus::testing {

/// A cone from `start` (radius r0) to `end` (radius r1).
inline Wall cone_wall(const Vec3& start, const Vec3& end, double r0, double r1, uint32_t material = 0) {
    Wall w;
    w.type = WallType::Cone;
    w.point = start;
    w.length = (end - start).norm();
    w.axis = (end - start) / w.length;
    w.radius = r0;
    w.end_radius = r1;
    w.material = material;
    return w;
}

/// A plate through `centre` with a round hole of `radius` centred there.
inline Wall round_orifice_wall(const Vec3& centre, const Vec3& normal, double radius, uint32_t material = 0) {
    Wall w;
    w.type = WallType::Orifice;
    w.point = centre;
    w.normal = normal.normalized();
    w.hole_radius = radius;
    w.material = material;
    return w;
}

/// A plate through `centre` with a rectangular hole, `width` along `direction` (in the plate).
inline Wall slot_wall(const Vec3& centre, const Vec3& normal, const Vec3& direction, double width, double length,
                      uint32_t material = 0) {
    Wall w;
    w.type = WallType::Orifice;
    w.point = centre;
    w.normal = normal.normalized();
    w.hole_direction = direction.normalized();
    w.hole_size = {width, length};
    w.material = material;
    return w;
}

}  // namespace talus::testing
