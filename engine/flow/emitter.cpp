// Emitters: bodies appear between steps at random centres in a box, at a rate.
//
// Why a cumulative target: the step h rarely divides 1/rate, and a body may find no room
// (the region is still full of the previous ones). Keeping Σ emitted ≤ rate (t − start) and
// adding while the next body fits under it makes the error at any time less than one body
// (or one body's mass), with no drift, and a deferred body is simply emitted later.
// The next radius is drawn once and kept until its body is placed: redrawing after a
// failure would favour small grains and bias the size distribution.
// Overlap test: bodies by bounding sphere (conservative for capsules and ellipsoids), every
// wall kind at its pose at time t by collision/wall_clearance.hpp.
#include <algorithm>
#include <cmath>

#include "collision/wall_clearance.hpp"
#include "core/random.hpp"
#include "core/sphere_grid.hpp"
#include "engine/flow/flow.hpp"

namespace talus {
namespace {

constexpr double kFourThirdsPi = 4.0 / 3.0 * 3.14159265358979323846;

}  // namespace

FlowTally emit(Emitter& e, BodyStore& bodies, const std::vector<Wall>& walls,
               const MaterialTable& materials, double t, uint64_t& next_id) {
    FlowTally out;
    if (t < e.start || !(e.rate > 0.0) || !(e.size.min > 0.0)) return out;  // nothing to emit
    const double density = materials.materials[e.material].density;
    if (!e.seeded) {
        e.rng.seed(e.seed);
        e.size_rng.seed(e.seed ^ kRadiusStream);
        e.next_radius = e.size.sample(e.size_rng);
        e.seeded = true;
    }
    const double target = e.rate * (std::min(t, e.stop) - e.start);
    const auto amount = [&](double r) { return e.per_mass ? density * kFourThirdsPi * r * r * r : 1.0; };
    const auto owed = [&](double r) {
        const double q = amount(r);
        const double done = e.per_mass ? e.emitted.mass : double(e.emitted.count);
        return done + q <= target + 1e-9 * q;  // round-off in rate × t must not lose a body
    };
    if (!owed(e.next_radius)) return out;

    // Bodies that could touch a new sphere: centre within r_max + r_i of the box.
    // The grid's cell covers the largest contact distance among these only, so one large
    // body elsewhere does not coarsen it.
    const double r_max = e.size.max;
    double r_big = r_max;
    std::vector<Vec3> pos;
    std::vector<double> rad;
    for (std::size_t i = 0; i < bodies.size(); ++i) {
        const double reach = bodies.radius[i] + r_max;
        const Vec3& x = bodies.position[i];
        if ((x.array() >= e.min.array() - reach).all() && (x.array() <= e.max.array() + reach).all()) {
            pos.push_back(x);
            rad.push_back(bodies.radius[i]);
            r_big = std::max(r_big, bodies.radius[i]);
        }
    }
    SphereGrid grid(r_max + r_big);
    for (std::size_t i = 0; i < pos.size(); ++i) grid.insert(uint32_t(i), pos[i]);
    const WallClearance wall_clear(walls, t);
    const auto free_at = [&](const Vec3& x, double r) {
        if (!wall_clear.clear(x, r)) return false;
        return !grid.any_near(x, [&](uint32_t j) {
            const double d = r + rad[j];
            return (x - pos[j]).squaredNorm() < d * d;
        });
    };

    const Vec3 extent = e.max - e.min;
    while (owed(e.next_radius)) {
        const double r = e.next_radius;
        bool placed = false;
        for (int attempt = 0; attempt < kEmitterAttempts && !placed; ++attempt) {
            const double ux = bits_to_unit(e.rng());
            const double uy = bits_to_unit(e.rng());
            const double uz = bits_to_unit(e.rng());
            const Vec3 x(e.min.x() + ux * extent.x(), e.min.y() + uy * extent.y(),
                         e.min.z() + uz * extent.z());
            if (!free_at(x, r)) continue;
            grid.insert(uint32_t(pos.size()), x);
            pos.push_back(x);
            rad.push_back(r);
            const std::size_t i = bodies.add_sphere(next_id++, x, r, density, e.material, e.velocity);
            const double m = bodies.mass(i);
            e.emitted.count += 1;
            e.emitted.mass += m;
            out.count += 1;
            out.mass += m;
            placed = true;
        }
        if (!placed) break;  // no room now: the deficit carries over to the next step
        e.next_radius = e.size.sample(e.size_rng);
    }
    return out;
}

}  // namespace talus
