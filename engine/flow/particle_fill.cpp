// Why: a scene describes thousands of grains by a rule, not one by one, and a run must not
// start with bodies already interpenetrating (the solver would fling them apart with the
// recovery speed and the first frames would be garbage). This file turns the rules into
// centres and finds any overlap at t = 0.
//
// Lattice: points min + i∘s per axis while the point stays within max + 1e-9·s; the
// slack makes "max = min + k·s" include its last point despite round-off.
// Random fill: random sequential addition, to a count or to a solid volume fraction of the
// box, with one radius law (engine/flow/size_distribution.hpp). Candidates are uniform in
// the box and kept if they overlap nothing, as engine/flow/free_space.hpp finds (a hash
// grid with cells no smaller than the largest contact distance makes each test look at 27
// cells only). It saturates near 38 % solid fraction
// in 3D, hence the attempt budget and an error rather than an endless loop. Random bits
// come from std::mt19937_64, whose output sequence the standard fixes, and are turned into
// doubles by our own bits_to_unit, so a seed gives the same grains everywhere (the
// standard distributions are implementation-defined).
#include "engine/flow/particle_fill.hpp"

#include "engine/flow/free_space.hpp"
#include "core/sphere_grid.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace talus {
std::array<int64_t, 3> lattice_extent(const Vec3& min, const Vec3& max, const Vec3& spacing) {
    std::array<int64_t, 3> n{0, 0, 0};
    for (int a = 0; a < 3; ++a) {
        const double s = spacing[a];
        const double limit = max[a] + 1e-9 * s;
        if (!(min[a] <= limit) || !(s > 0.0)) continue;
        const double estimate = std::floor((max[a] - min[a]) / s);
        if (!(estimate < 0x1.0p62)) {
            n[a] = int64_t(1) << 62;
            continue;
        }
        // Settle the last index with the exact predicate used when generating points.
        int64_t k = std::max<int64_t>(0, static_cast<int64_t>(estimate));
        while (k > 0 && !(min[a] + double(k) * s <= limit)) --k;
        while (min[a] + double(k + 1) * s <= limit) ++k;
        n[a] = k + 1;
    }
    return n;
}

void lattice_points(const Vec3& min, const Vec3& max, const Vec3& spacing, std::vector<Vec3>& out) {
    const auto n = lattice_extent(min, max, spacing);
    out.reserve(out.size() + std::size_t(n[0] * n[1] * n[2]));
    for (int64_t k = 0; k < n[2]; ++k)
        for (int64_t j = 0; j < n[1]; ++j)
            for (int64_t i = 0; i < n[0]; ++i)
                out.emplace_back(min.x() + double(i) * spacing.x(),
                                 min.y() + double(j) * spacing.y(),
                                 min.z() + double(k) * spacing.z());
}

RandomFillResult random_fill_sized(const RandomFillSpec& spec,
                                   const std::vector<Vec3>& existing_position,
                                   const std::vector<double>& existing_radius,
                                   const std::vector<Wall>& walls, std::vector<Vec3>& out,
                                   std::vector<double>* out_radius) {
    const SizeDistribution law = spec.radii();
    const double r_max = law.max;  // no radius drawn exceeds it
    // every wall kind at its t = 0 pose; earlier spheres within reach of the region
    FreeSpace space(walls, 0.0, spec.min, spec.max, r_max, existing_position, existing_radius);

    std::mt19937_64 rng(spec.seed);
    std::mt19937_64 size_rng(spec.seed ^ kRadiusStream);
    const Vec3 extent = spec.max - spec.min;
    const bool by_volume = spec.volume_fraction > 0.0;
    const double target = spec.volume_fraction * extent.prod();
    const double four_thirds_pi = 4.0 / 3.0 * 3.14159265358979323846;
    RandomFillResult res;
    const auto done = [&] { return by_volume ? res.volume >= target : res.placed >= spec.count; };
    const auto budget = [&] { return random_fill_budget(by_volume ? res.placed + 1 : spec.count); };
    double r = law.sample(size_rng);
    while (!done() && res.attempts < budget()) {
        ++res.attempts;
        if (spec.progress && (res.attempts & 0xffff) == 0) spec.progress(res.placed, res.attempts);
        const double ux = bits_to_unit(rng());
        const double uy = bits_to_unit(rng());
        const double uz = bits_to_unit(rng());
        const Vec3 x(spec.min.x() + ux * extent.x(), spec.min.y() + uy * extent.y(),
                     spec.min.z() + uz * extent.z());
        if (!space.free(x, r)) continue;
        space.add(x, r);
        out.push_back(x);
        if (out_radius) out_radius->push_back(r);
        ++res.placed;
        res.volume += four_thirds_pi * r * r * r;
        if (!done()) r = law.sample(size_rng);
    }
    res.complete = done();
    return res;
}

std::size_t random_fill(const RandomFillSpec& spec, const std::vector<Vec3>& existing_position,
                        const std::vector<double>& existing_radius, const std::vector<Wall>& walls,
                        std::vector<Vec3>& out) {
    return random_fill_sized(spec, existing_position, existing_radius, walls, out, nullptr).placed;
}

std::vector<BodyOverlap> find_body_overlaps(const std::vector<Vec3>& position,
                                            const std::vector<double>& radius, double rel_tol) {
    std::vector<BodyOverlap> found;
    if (position.empty()) return found;
    const double r_max = *std::max_element(radius.begin(), radius.end());
    SphereGrid grid(r_max > 0.0 ? 2.0 * r_max : 1.0);
    // Visit b in order and look back at a < b already binned: each pair once, sorted by b.
    for (std::size_t b = 0; b < position.size(); ++b) {
        const std::size_t first = found.size();
        grid.any_near(position[b], [&](uint32_t a) {
            const double depth = radius[a] + radius[b] - (position[a] - position[b]).norm();
            if (depth > rel_tol * std::max(radius[a], radius[b])) found.push_back({a, b, depth});
            return false;
        });
        std::sort(found.begin() + std::ptrdiff_t(first), found.end(),
                  [](const BodyOverlap& p, const BodyOverlap& q) { return p.a < q.a; });
        grid.insert(uint32_t(b), position[b]);
    }
    return found;
}

}  // namespace talus
