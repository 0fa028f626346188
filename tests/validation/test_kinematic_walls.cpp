// Kinematic walls impose their velocity through friction (issue 5). A sphere at rest on a
// plane that moves sideways at V (a conveyor belt) is dragged until it rolls without
// slipping on the belt. Angular momentum about the contact point is conserved (gravity and
// the normal force pass through it, friction acts at it), so starting from rest,
// I ω = m r v with I = 2/5 m r², and rolling on the belt, v + ω r = V, give
//     v = 2/7 V,   ω r = 5/7 V.
// While it slides, friction μ m g accelerates it: v(t) = μ g t until t = 2V / (7 μ g).
// maxdiss (no lift-off) follows v(t) exactly; the CCP solvers hop once at the start
// (lift-off of a sliding contact, docs/design.md §4) but conserve the same angular momentum, so
// they reach the same final state.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

TEST(KinematicWalls, BeltDragsARestingSphereToTwoSeventhsOfItsSpeed) {
    const double r = 0.05, V = 1.0, mu = 0.5, g = 9.81, h = 1e-3;
    const double t_roll = 2.0 * V / (7.0 * mu * g);  // ≈ 0.058 s
    for (SolverType type : {SolverType::MaxDiss, SolverType::PGS, SolverType::APGD}) {
        World w = make_world(h, Vec3(0, 0, -g), 1e-12, 500);
        w.solver.type = type;
        const uint32_t m = add_material(w, 2500.0, mu);
        add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m, Vec3(V, 0, 0));
        add_sphere(w, Vec3(0, 0, r), r, m);
        for (int k = 1; k * h <= 0.5 + 1e-12; ++k) {
            ASSERT_TRUE(w.step().ok) << solver_name(type);
            if (type == SolverType::MaxDiss && k * h < t_roll - 2 * h) {
                EXPECT_NEAR(w.bodies.velocity[0].x(), mu * g * k * h, 1e-9) << "step " << k;
                EXPECT_LE(std::abs(w.bodies.velocity[0].z()), 1e-12) << "step " << k;
            }
        }
        const double v = w.bodies.velocity[0].x();
        const double wr = -w.bodies.angular_velocity[0].y() * r;  // spin that rolls it backwards
        std::printf("[ belt ] %-7s v = %.9f m/s (2/7 V = %.9f), ω r = %.9f m/s (5/7 V = %.9f)\n",
                    solver_name(type), v, 2.0 / 7.0 * V, wr, 5.0 / 7.0 * V);
        EXPECT_NEAR(v, 2.0 / 7.0 * V, 1e-6) << solver_name(type);
        EXPECT_NEAR(wr, 5.0 / 7.0 * V, 1e-6) << solver_name(type);
        EXPECT_NEAR(v + wr, V, 1e-6) << solver_name(type) << ": rolling on the belt";
        EXPECT_NEAR(w.bodies.position[0].z(), r, 1e-6) << solver_name(type);
    }
}

}  // namespace
}  // namespace talus
