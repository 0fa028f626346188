// FreeSpace: the spheres within reach of the placement box, gridded, and the walls.
#include "engine/flow/free_space.hpp"

#include <algorithm>

namespace talus {
namespace {

/// The largest contact distance a candidate can have: r_max + the largest radius of the
/// spheres within reach of [lo, hi] (at least 2 r_max, for the candidates among themselves).
double cell_for(const Vec3& lo, const Vec3& hi, double r_max, const std::vector<Vec3>& position,
                const std::vector<double>& radius) {
    double r_big = r_max;
    for (std::size_t i = 0; i < position.size(); ++i)
        if (near_box(lo, hi, r_max, position[i], radius[i])) r_big = std::max(r_big, radius[i]);
    return r_max + r_big;
}

}  // namespace

FreeSpace::FreeSpace(const std::vector<Wall>& walls, double t, const Vec3& lo, const Vec3& hi, double r_max,
                     const std::vector<Vec3>& position, const std::vector<double>& radius)
    : walls_(walls, t), grid_(cell_for(lo, hi, r_max, position, radius)) {
    for (std::size_t i = 0; i < position.size(); ++i)
        if (near_box(lo, hi, r_max, position[i], radius[i])) add(position[i], radius[i]);
}

}  // namespace talus
