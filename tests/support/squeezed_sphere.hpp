#pragma once
/// A sphere squeezed between the floor and a descending press (over-constrained: the step
/// that closes the gap reports it), beside three free spheres resting on the floor, stepped
/// with solver `t`: the scene of the over-constrained tests over ranks (test_rank_step.cpp
/// with every rank stepping the whole world, test_rank_world.cpp with ranks holding parts).
#include "tests/support/world_builder.hpp"

namespace talus::testing {

inline World squeezed_sphere(SolverType t) {
    const double r = 0.01;
    World w = make_world(1e-3, Vec3(0, 0, -9.81), 1e-6, 100);
    w.solver.type = t;
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
    add_plane(w, Vec3(0, 0, 2 * r + 0.002), -Vec3::UnitZ(), m, Vec3(0, 0, -0.1));
    add_sphere(w, Vec3(0, 0, r), r, m);
    for (int k = 0; k < 3; ++k) add_sphere(w, Vec3(0.1 + 0.05 * k, 0, r), r, m);  // free, resting
    return w;
}

}  // namespace talus::testing
