// Emitters: bodies appear between steps at random centres in a box, at a rate.
//
// Why a cumulative target: the step h rarely divides 1/rate, and a body may find no room
// (the region is still full of the previous ones). Keeping Σ emitted ≤ rate (t − start) and
// adding while the next body fits under it makes the error at any time less than one body
// (or one body's mass), with no drift, and a deferred body is simply emitted later.
// The next radius is drawn once and kept until its body is placed: redrawing after a
// failure would favour small grains and bias the size distribution.
// Room for a body: engine/flow/free_space.hpp (bodies by bounding sphere, every wall kind
// at its pose at time t).
#include <algorithm>
#include <cmath>

#include "core/random.hpp"
#include "engine/flow/flow.hpp"
#include "engine/flow/free_space.hpp"

namespace talus {
namespace {

constexpr double kFourThirdsPi = 4.0 / 3.0 * 3.14159265358979323846;

}  // namespace

FlowTally emit(Emitter& e, BodyStore& bodies, const std::vector<Wall>& walls,
               const MaterialTable& materials, double t, uint64_t& next_id, const PeriodicBox& periodic) {
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

    // (FreeSpace keeps the bodies near_box names: over MPI ranks, those are gathered)
    FreeSpace space(walls, t, e.min, e.max, e.size.max, bodies.position, bodies.radius, periodic);

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
            if (!space.free(x, r)) continue;
            space.add(x, r);
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
