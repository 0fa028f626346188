// SolverBodies::load (solvers/solver_bodies.hpp): the bodies as the solvers iterate on them.
#include "solvers/solver_bodies.hpp"

#include <algorithm>

#include "core/parallel.hpp"

namespace talus {

void SolverBodies::load(const BodyStore& bodies) {
    // Each body's line from its own store entries alone, in parallel (every solve, and the
    // push-out's, starts here: 0.8 % of a random-pack run when it was serial).
    const std::size_t n = bodies.size();
    body.resize(n);
    v_free.resize(n);
    w_free.resize(n);
    const bool all_isotropic = std::all_of(bodies.inv_inertia.begin(), bodies.inv_inertia.end(),
                                           [](const Vec3& j) { return isotropic(j); });
    if (all_isotropic) inv_inertia_world.clear(); else inv_inertia_world.resize(n);
    parallel_each(n, [&](std::size_t i) {
        const Mat3 rot = bodies.orientation[i].toRotationMatrix();
        const Vec3& j = bodies.inv_inertia[i];
        const bool iso = isotropic(j);
        v_free[i] = bodies.velocity[i];
        w_free[i] = rot * bodies.angular_velocity[i];
        body[i] = {v_free[i], bodies.inv_mass[i], w_free[i], iso ? j[0] : -1.0};
        if (!all_isotropic) inv_inertia_world[i] = rot * j.asDiagonal() * rot.transpose();
    }, grain::kBodies);
}

}  // namespace talus
