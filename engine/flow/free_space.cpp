// FreeSpace: the spheres within reach of the placement box, gridded, and the walls.
#include "engine/flow/free_space.hpp"

#include <algorithm>
#include <limits>
#include <utility>

namespace talus {
namespace {

/// [lo, hi] opened along the periodic axes: there a sphere anywhere may touch a candidate
/// through a face.
std::pair<Vec3, Vec3> reach_box(const Vec3& lo, const Vec3& hi, const PeriodicBox& periodic) {
    Vec3 a = lo, b = hi;
    for (int k = 0; k < 3; ++k)
        if (periodic.on[std::size_t(k)]) {
            a[k] = -std::numeric_limits<double>::infinity();
            b[k] = std::numeric_limits<double>::infinity();
        }
    return {a, b};
}

/// The largest contact distance a candidate can have: r_max + the largest radius of the
/// spheres within reach of `box` (at least 2 r_max, for the candidates among themselves).
double cell_for(const std::pair<Vec3, Vec3>& box, double r_max, const std::vector<Vec3>& position,
                const std::vector<double>& radius) {
    double r_big = r_max;
    for (std::size_t i = 0; i < position.size(); ++i)
        if (near_box(box.first, box.second, r_max, position[i], radius[i])) r_big = std::max(r_big, radius[i]);
    return r_max + r_big;
}

}  // namespace

FreeSpace::FreeSpace(const std::vector<Wall>& walls, double t, const Vec3& lo, const Vec3& hi, double r_max,
                     const std::vector<Vec3>& position, const std::vector<double>& radius,
                     const PeriodicBox& periodic)
    : periodic_(periodic),
      reach_(cell_for(reach_box(lo, hi, periodic), r_max, position, radius)),
      walls_(walls, t),
      grid_(reach_) {
    const auto [a, b] = reach_box(lo, hi, periodic);
    for (std::size_t i = 0; i < position.size(); ++i)
        if (near_box(a, b, r_max, position[i], radius[i])) add(position[i], radius[i]);
}

}  // namespace talus
