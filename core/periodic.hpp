#pragma once
/// Periodic boundaries: along each periodic axis k the domain [lo_k, hi_k) repeats with
/// period L_k = hi_k − lo_k. A body leaving through hi_k re-enters at lo_k with its velocity,
/// and two bodies interact through their nearest images (the minimum-image convention).
/// The broad phase needs L_k ≥ 3 cells (3 × (largest diameter + envelope)) so that nearest
/// images are unique for every pair close enough to touch.
#include <array>
#include <cmath>

#include "math.hpp"

namespace talus {

struct PeriodicBox {
    std::array<bool, 3> on{false, false, false};  ///< periodic along x, y, z
    Vec3 lo = Vec3::Zero();                       ///< [m], used where `on`
    Vec3 hi = Vec3::Zero();                       ///< [m], used where `on`

    bool any() const { return on[0] || on[1] || on[2]; }
    double length(int k) const { return hi[k] - lo[k]; }

    /// x brought into [lo_k, hi_k) along every periodic axis (others unchanged).
    Vec3 wrap(Vec3 x) const {
        for (int k = 0; k < 3; ++k) {
            if (!on[k]) continue;
            const double L = length(k);
            if (x[k] >= lo[k] && x[k] < hi[k]) continue;
            x[k] -= L * std::floor((x[k] - lo[k]) / L);
            if (x[k] >= hi[k]) x[k] = lo[k];  // a rounding to exactly hi_k
        }
        return x;
    }

    /// The shift s (a whole number of periods along periodic axes, zero elsewhere) that
    /// makes xb + s the image of xb nearest to xa.
    Vec3 image_shift(const Vec3& xa, const Vec3& xb) const {
        Vec3 s = Vec3::Zero();
        for (int k = 0; k < 3; ++k) {
            if (!on[k]) continue;
            const double L = length(k);
            s[k] = -L * std::nearbyint((xb[k] - xa[k]) / L);
        }
        return s;
    }

    /// Calls f(s) for each shift s (whole periods along periodic axes, zero elsewhere) whose
    /// image x + s lies within `reach` of the periodic range: s = 0 first, then the images
    /// across the faces x is within `reach` of (up to 7, near a corner of three axes). What
    /// may touch x through a face is near one of these images. Stops early if f returns true;
    /// returns whether it did.
    template <class F>
    bool any_image(const Vec3& x, double reach, F&& f) const {
        std::array<double, 3> across{0.0, 0.0, 0.0};  // per axis: the one shift besides 0
        for (int k = 0; k < 3; ++k) {
            if (!on[std::size_t(k)]) continue;
            if (x[k] - lo[k] < reach) across[std::size_t(k)] = length(k);
            else if (hi[k] - x[k] < reach) across[std::size_t(k)] = -length(k);
        }
        for (int m = 0; m < 8; ++m) {
            Vec3 s = Vec3::Zero();
            bool skip = false;
            for (int k = 0; k < 3 && !skip; ++k) {
                if (!(m >> k & 1)) continue;
                if (across[std::size_t(k)] == 0.0) skip = true;
                else s[k] = across[std::size_t(k)];
            }
            if (!skip && f(s)) return true;
        }
        return false;
    }
};

}  // namespace talus
