// Forces and torques on walls: a sphere at rest presses on its floor with its weight at its
// contact point; a bed at rest in a container loads the walls with its whole weight; and
// the impulse a wall takes equals, with opposite sign, the momentum it gives the bodies.
#include <gtest/gtest.h>

#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using testing::add_material;
using testing::add_plane;
using testing::add_sphere;
using testing::fill_lattice;
using testing::make_world;
using testing::run_steps;

TEST(WallLoads, RestingSpherePressesWithItsWeight) {
    const double g = 9.81, r = 0.02;
    World w = make_world(1e-3, Vec3(0.0, 0.0, -g));
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_plane(w, Vec3(0.1, -0.2, 0.0), Vec3::UnitZ(), m);  // reference point (0.1, −0.2, 0)
    const Vec3 x0(0.3, 0.05, r);
    add_sphere(w, x0, r, m);
    run_steps(w, 10);
    w.reset_wall_loads();
    run_steps(w, 200);
    const WallLoads& L = w.wall_loads();
    ASSERT_EQ(L.impulse.size(), 1u);
    EXPECT_NEAR(L.time, 0.2, 1e-12);
    const Vec3 F = L.impulse[0] / L.time, T = L.angular_impulse[0] / L.time;
    const double weight = w.bodies.mass(0) * g;
    EXPECT_NEAR(F.z(), -weight, 1e-9 * weight);
    EXPECT_NEAR(F.x(), 0.0, 1e-12 * weight);
    EXPECT_NEAR(F.y(), 0.0, 1e-12 * weight);
    // the weight acts at the contact point (0.3, 0.05, 0): lever (0.2, 0.25, 0) from the reference
    const Vec3 expected = Vec3(0.2, 0.25, 0.0).cross(Vec3(0.0, 0.0, -weight));
    EXPECT_LT((T - expected).norm(), 1e-6 * weight);
}

TEST(WallLoads, BedAtRestLoadsTheContainerWithItsWeight) {
    const double g = 9.81;
    World w = make_world(1e-3, Vec3(0.0, 0.0, -g), 1e-6, 100);
    const uint32_t m = add_material(w, 2500.0, 0.5);
    // floor and four side walls as separate planes
    add_plane(w, Vec3(0, 0, 0), Vec3::UnitZ(), m);
    add_plane(w, Vec3(0, 0, 0), Vec3::UnitX(), m);
    add_plane(w, Vec3(0.06, 0, 0), -Vec3::UnitX(), m);
    add_plane(w, Vec3(0, 0, 0), Vec3::UnitY(), m);
    add_plane(w, Vec3(0, 0.06, 0), -Vec3::UnitY(), m);
    fill_lattice(w, Vec3(0, 0, 0), Vec3(0.06, 0.06, 0.06), 0.005, m);
    double M = 0.0;
    for (std::size_t i = 0; i < w.bodies.size(); ++i) M += w.bodies.mass(i);
    run_steps(w, 400);  // settle
    auto momentum = [&]() {
        Vec3 P = Vec3::Zero();
        for (std::size_t i = 0; i < w.bodies.size(); ++i) P += w.bodies.mass(i) * w.bodies.velocity[i];
        return P;
    };
    const Vec3 P0 = momentum();
    w.reset_wall_loads();
    run_steps(w, 100);
    const WallLoads& L = w.wall_loads();
    Vec3 total = Vec3::Zero();
    for (const Vec3& p : L.impulse) total += p;
    // Momentum balance of the bed, exact in the scheme: ΔP = M g T − Σ (impulse on walls).
    const Vec3 gravity_impulse = M * w.simulation.gravity * L.time;
    EXPECT_LT((total - (gravity_impulse - (momentum() - P0))).norm(), 1e-9 * M * g * L.time);
    // Nearly at rest, so the walls carry its weight (mean force over 0.1 s)
    const Vec3 F = total / L.time;
    EXPECT_NEAR(F.z(), -M * g, 1e-2 * M * g);
    EXPECT_NEAR(F.x(), 0.0, 1e-2 * M * g);
    EXPECT_NEAR(F.y(), 0.0, 1e-2 * M * g);
    // and most of it rests on the floor
    EXPECT_GT(-L.impulse[0].z() / L.time, 0.5 * M * g);
}

TEST(WallLoads, WallImpulseBalancesTheMomentumItGives) {
    // A conveyor plane at 1 m/s under a resting sphere: friction accelerates the sphere until
    // it rolls; the horizontal impulse on the wall is minus the sphere's momentum gain.
    World w = make_world(1e-3, Vec3(0.0, 0.0, -9.81));
    const uint32_t m = add_material(w, 2500.0, 0.3);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m, Vec3(1.0, 0.0, 0.0));
    add_sphere(w, Vec3(0.0, 0.0, 0.01), 0.01, m);
    w.reset_wall_loads();
    run_steps(w, 300);
    const double p = w.bodies.mass(0) * w.bodies.velocity[0].x();
    EXPECT_GT(p, 0.0);
    EXPECT_NEAR(w.wall_loads().impulse[0].x(), -p, 1e-12 * std::abs(p) + 1e-15);
}

TEST(WallLoads, RollingResistanceCoupleReachesTheWall) {
    // A sphere rolling on a floor with rolling resistance μ_r: the floor's angular impulse
    // about its reference point (the origin) must balance the sphere's angular momentum
    // about that point, L = x × m v + J ω. In the scheme (x_{k+1} = x_k + h v_{k+1}) the
    // exact discrete balance over a step is ΔL = x_k × m g h + (p × P + C), with P the
    // contact impulse at point p and C the resistance couple; the wall takes −(p × P + C).
    // Without C the balance is off by μ_r γ_n per step.
    const double g = 9.81, r = 0.05, h = 1e-3, mu_r = 0.002;
    World w = make_world(h, Vec3(0.0, 0.0, -g), 1e-12, 500);
    Material mat{"rubber", 2500.0, 0.5};
    mat.rolling_friction = mu_r;
    const uint32_t m = w.materials.add(mat);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
    add_sphere(w, Vec3(0.0, 0.0, r), r, m, Vec3(0.5, 0.0, 0.0), Vec3(0.0, 0.5 / r, 0.0));
    run_steps(w, 5);
    const double mass = w.bodies.mass(0), J = 0.4 * mass * r * r;
    auto angular_momentum = [&]() {
        const Vec3 omega = w.bodies.orientation[0] * w.bodies.angular_velocity[0];
        return Vec3(w.bodies.position[0].cross(mass * w.bodies.velocity[0]) + J * omega);
    };
    w.reset_wall_loads();
    const Vec3 L0 = angular_momentum();
    Vec3 gravity = Vec3::Zero();
    for (int k = 0; k < 400; ++k) {
        gravity += w.bodies.position[0].cross(mass * h * w.simulation.gravity);
        ASSERT_TRUE(w.step().ok);
    }
    EXPECT_GT(w.bodies.velocity[0].x(), 0.1);  // still rolling
    const Vec3 on_wall = w.wall_loads().angular_impulse[0];
    const Vec3 expected = -(angular_momentum() - L0 - gravity);
    // the couple alone over 0.4 s: μ_r m g t = 9.9e-4 N m s
    const double couple = mu_r * mass * g * 0.4;
    EXPECT_LT((on_wall - expected).norm(), 1e-6 * couple);
}

}  // namespace
}  // namespace talus
