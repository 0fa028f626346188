// scenes/million.toml at reduced size: the scene file itself, loaded through the same
// --set overrides `talus run` takes, shrunk from a 100³ to a 12³ lattice (and its box to
// match). The generation and the first 40 steps are checked against what a lattice
// released from rest must do; the full million-sphere run is a benchmark
// (benchmarks/scaling.py).
//
// Analytic facts used (h = 5e-4 s, g = 9.81 m/s², r = 1.5 mm, lattice spacing s = 3.3 mm
// across and s_z = 3.03 mm up, first layer at z₀ = 1.53 mm):
// - A lattice with n points per axis holds n³ spheres; the nearest neighbours are the
//   column's, s_z apart (gap 0.03 mm), the bottom layer's gap to the floor is
//   z₀ − r = 0.03 mm.
// - Until the bottom layer reaches the floor every sphere falls freely; Talus integrates
//   velocity first, then position (semi-implicit Euler), so after k steps every sphere
//   has fallen exactly ½ g h² k (k + 1) — ½ g t² plus ½ g h t, the scheme's O(h) lead —
//   and relative positions are unchanged. That drop passes 0.03 mm between k = 4
//   (0.0245 mm) and k = 5 (0.0368 mm): the first 4 steps are free fall, although the
//   0.03 mm gaps are within the collision margins from the start (the contacts are there,
//   with zero impulse).
// - Afterwards, the only impulses besides gravity come from the walls, so the bodies'
//   momentum changes by M g t minus the impulse they gave the walls (World::wall_loads):
//   linear momentum balance, to round-off. By t = 20 ms every layer has landed (the top
//   one after 12 gaps of 0.03 mm, ½ g t² = 0.36 mm: t ≈ 8.6 ms).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

#include "io/scene.hpp"

namespace talus {
namespace {

constexpr int kPerAxis = 12;          // lattice points per axis in the test (100 in the scene)
constexpr double kSpacing = 0.0033;   // [m] across, as in the scene
constexpr double kSpacingZ = 0.00303; // [m] up
constexpr double kMin = 0.0033;       // [m] first lattice point across
constexpr double kMinZ = 0.00153;     // [m] and up
constexpr double kRadius = 0.0015;    // [m]

Scene load_reduced() {
    const double last = kMin + (kPerAxis - 1) * kSpacing;  // last lattice point across
    const double top = kMinZ + (kPerAxis - 1) * kSpacingZ + 1e-5;  // above the last layer
    const double side = last + kSpacing;                   // box side: same clearance as the scene
    const std::string corner = "[" + std::to_string(last) + ", " + std::to_string(last) + ", " +
                               std::to_string(top) + "]";
    const std::string box = "[" + std::to_string(side) + ", " + std::to_string(side) + ", 0.4]";
    return load_scene(std::string(TALUS_SOURCE_DIR) + "/scenes/million.toml",
                      {"particles.0.lattice.max=" + corner, "wall.0.max=" + box});
}

TEST(MillionSetup, ReducedLatticeIsGeneratedInsideTheBoxWithoutOverlap) {
    const Scene scene = load_reduced();
    const BodyStore& b = scene.world.bodies;
    ASSERT_EQ(b.size(), std::size_t(kPerAxis) * kPerAxis * kPerAxis);
    EXPECT_EQ(scene.world.solver.type, SolverType::APGD);
    EXPECT_EQ(scene.output.precision, OutputPrecision::Float32);
    EXPECT_GT(scene.output.compression, 0);

    const double side = kMin + kPerAxis * kSpacing;
    double min_distance = INFINITY;
    for (std::size_t i = 0; i < b.size(); ++i) {
        EXPECT_EQ(b.radius[i], kRadius);
        for (int a = 0; a < 3; ++a) {
            EXPECT_GE(b.position[i][a], kRadius) << "body " << i;
            EXPECT_LE(b.position[i][a], (a == 2 ? 0.4 : side) - kRadius) << "body " << i;
        }
        for (std::size_t j = i + 1; j < b.size(); ++j)  // brute force: 1.5 million pairs
            min_distance = std::min(min_distance, (b.position[i] - b.position[j]).norm());
    }
    // nearest neighbours are a column's, one vertical spacing apart: 0.03 mm clear of touching
    EXPECT_NEAR(min_distance, kSpacingZ, 1e-12);
    EXPECT_GT(min_distance, 2 * kRadius);
}

TEST(MillionSetup, FirstStepsAreFreeFallThenMomentumBalancesTheWallImpulses) {
    Scene scene = load_reduced();
    World& w = scene.world;
    const std::size_t n = w.bodies.size();
    const double h = w.simulation.dt, g = -w.simulation.gravity.z();
    ASSERT_EQ(h, 5e-4);
    ASSERT_EQ(g, 9.81);
    std::unordered_map<uint64_t, Vec3> start_of;  // by stable id: renumbering may reorder
    for (std::size_t i = 0; i < n; ++i) start_of[w.bodies.id[i]] = w.bodies.position[i];
    double mass = 0.0;
    for (std::size_t i = 0; i < n; ++i) mass += 1.0 / w.bodies.inv_mass[i];
    const double energy0 = w.kinetic_energy() + w.potential_energy();

    // Free fall: every sphere moves down by the same drop, keeping its place in the lattice.
    for (int k = 1; k <= 4; ++k) {
        ASSERT_TRUE(w.step().ok) << "step " << k;
        const double drop = 0.5 * g * h * h * k * (k + 1);
        double worst = 0.0;
        Vec3 com = Vec3::Zero(), com0 = Vec3::Zero();
        for (std::size_t i = 0; i < n; ++i) {
            com += w.bodies.position[i] / w.bodies.inv_mass[i];
            com0 += start_of.at(w.bodies.id[i]) / w.bodies.inv_mass[i];
        }
        com /= mass;
        com0 /= mass;
        const double t = k * h;
        // ½ g t² with the scheme's lead ½ g h t; exact up to round-off of 12³ positions
        EXPECT_NEAR(com0.z() - com.z(), 0.5 * g * t * t + 0.5 * g * h * t, 1e-12) << "step " << k;
        EXPECT_NEAR(com0.z() - com.z(), drop, 1e-12) << "step " << k;
        EXPECT_NEAR(com.x(), com0.x(), 1e-15);
        EXPECT_NEAR(com.y(), com0.y(), 1e-15);
        for (std::size_t i = 0; i < n; ++i)
            worst = std::max(worst, (w.bodies.position[i] - start_of.at(w.bodies.id[i]) +
                                     Vec3(0, 0, drop)).norm());
        EXPECT_LT(worst, 1e-12) << "step " << k << ": a sphere left its place in the falling lattice";
    }

    // Steps 5..40: layers land one on another. Momentum: M v_com = -M g t + (impulse from
    // the walls) = -M g t - Σ impulse on the walls.
    for (int k = 5; k <= 40; ++k) ASSERT_TRUE(w.step().ok) << "step " << k;
    const double t = 40 * h;
    Vec3 momentum = Vec3::Zero();
    for (std::size_t i = 0; i < n; ++i) momentum += w.bodies.velocity[i] / w.bodies.inv_mass[i];
    Vec3 on_walls = Vec3::Zero();
    for (const Vec3& j : w.wall_loads().impulse) on_walls += j;
    // the bodies push the floor down: a negative impulse on the walls
    ASSERT_LT(on_walls.z(), 0.0) << "the bottom layer should have landed";
    EXPECT_NEAR(momentum.z(), -mass * g * t - on_walls.z(), 1e-9 * mass * g * t);
    EXPECT_NEAR(momentum.x(), -on_walls.x(), 1e-9 * mass * g * t);
    EXPECT_NEAR(momentum.y(), -on_walls.y(), 1e-9 * mass * g * t);

    // The bottom layer rests on the floor, no sphere went through a wall or far into
    // another, and the inelastic landing lost energy.
    const double side = kMin + kPerAxis * kSpacing;
    double lowest = INFINITY;
    for (std::size_t i = 0; i < n; ++i) {
        lowest = std::min(lowest, w.bodies.position[i].z());
        for (int a = 0; a < 2; ++a) {
            EXPECT_GE(w.bodies.position[i][a], kRadius - 1e-6);
            EXPECT_LE(w.bodies.position[i][a], side - kRadius + 1e-6);
        }
    }
    EXPECT_NEAR(lowest, kRadius, 1e-4);  // within the solver's penetration tolerance
    EXPECT_LT(w.kinetic_energy() + w.potential_energy(), energy0);
    EXPECT_LE(w.diagnostics().contact_infeasibility, 1e-4);
    std::printf("[ figures  ] %zu spheres, t = %g s: momentum balance error %.3g of M g t; lowest "
                "centre %.6g m (r = %g m); energy %.6g J -> %.6g J; floor impulse %.6g N s\n",
                n, t, std::abs(momentum.z() + mass * g * t + on_walls.z()) / (mass * g * t), lowest,
                kRadius, energy0, w.kinetic_energy() + w.potential_energy(), -on_walls.z());
}

}  // namespace
}  // namespace talus
