#pragma once
/// Where a new sphere may go: the one free-space query of grain placement. Random fills
/// (particle_fill.cpp) and emitters (emitter.cpp) ask it for each candidate: clear of every
/// wall kind at its pose at time t (collision/wall_clearance.hpp) and of every sphere
/// already there, bodies by bounding sphere (conservative for capsules and ellipsoids),
/// including those placed since. The start-up overlap check (start_overlaps.cpp) measures
/// the same two things for bodies that are already placed.
#include <cstdint>
#include <vector>

#include "collision/wall_clearance.hpp"
#include "core/math.hpp"
#include "core/periodic.hpp"
#include "core/sphere_grid.hpp"
#include "core/walls.hpp"

namespace talus {

/// Whether a body at x of bounding radius `radius` could touch a sphere of radius up to
/// r_max centred in [lo, hi]: its centre lies within r_max + radius of that box.
inline bool near_box(const Vec3& lo, const Vec3& hi, double r_max, const Vec3& x, double radius) {
    const double reach = radius + r_max;
    return (x.array() >= lo.array() - reach).all() && (x.array() <= hi.array() + reach).all();
}

class FreeSpace {
public:
    /// Candidates will be centred in [lo, hi] with radii up to r_max. Of the spheres given
    /// (position, radius), those whose centre lies within r_max + their radius of that box
    /// could touch one and are kept; the grid's cell covers the largest contact distance
    /// among them only, so one large body elsewhere does not coarsen it.
    /// With periodic axes (`periodic`), a candidate must also miss the spheres it would
    /// touch through a face (the minimum image, as the step sees them), and along those
    /// axes every sphere given is kept.
    FreeSpace(const std::vector<Wall>& walls, double t, const Vec3& lo, const Vec3& hi, double r_max,
              const std::vector<Vec3>& position, const std::vector<double>& radius,
              const PeriodicBox& periodic = {});

    /// Whether a sphere of radius r at x touches no wall and no sphere (touching at exactly
    /// the contact distance is free).
    bool free(const Vec3& x, double r) const {
        if (!walls_.clear(x, r)) return false;
        const auto touches = [&](const Vec3& at) {
            return grid_.any_near(at, [&](uint32_t j) {
                const double d = r + radius_[j];
                return (at - position_[j]).squaredNorm() < d * d;
            });
        };
        if (!periodic_.any()) return !touches(x);
        return !periodic_.any_image(x, reach_, [&](const Vec3& s) { return touches(x + s); });
    }
    /// A sphere placed: later candidates must keep clear of it too.
    void add(const Vec3& x, double r) {
        grid_.insert(uint32_t(position_.size()), x);
        position_.push_back(x);
        radius_.push_back(r);
    }

private:
    PeriodicBox periodic_;
    double reach_ = 0.0;  ///< the largest contact distance, the grid's cell [m]
    WallClearance walls_;
    std::vector<Vec3> position_;
    std::vector<double> radius_;
    SphereGrid grid_;
};

}  // namespace talus
