// Restitution (Newton's law on the normal velocity, per material pair; solvers/assemble.cpp):
//  - a sphere dropped on a plane rebounds to e² of its drop height (±2 %) for several e;
//  - e = 0 (the default) does not bounce;
//  - a head-on collision of two equal spheres reverses their relative velocity times e and
//    conserves momentum;
//  - a sphere resting on a plane with e = 0.9 stays at rest (no jitter below bounce_speed),
//    also at steps so long that gravity adds more than bounce_speed in one (coarse grains
//    at their adaptive rest step), and a pile of such grains comes to rest;
//  - the scene keys: per material, per pair (overriding the smaller-of-two rule).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <utility>

#include "io/scene.hpp"
#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

/// Apex height of the lowest point above the plane after the first impact [m].
double rebound_height(double e, double drop) {
    const double r = 0.05;
    World w = make_world(1e-4, Vec3(0, 0, -9.81), 1e-12, 200);
    Material m{"ball", 2500.0, 0.3};
    m.restitution = e;
    const uint32_t mat = w.materials.add(m);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), mat);
    add_sphere(w, Vec3(0, 0, r + drop), r, mat);
    bool hit = false;
    double apex = 0.0;
    for (int k = 0; k < 40000; ++k) {
        EXPECT_TRUE(w.step().ok);
        const double vz = w.bodies.velocity[0].z();
        if (!hit && w.diagnostics().contacts > 0 && vz >= 0.0 && w.batch().gamma.size() > 0 &&
            w.batch().gamma[0][0] > 0.0)
            hit = true;
        if (hit) {
            apex = std::max(apex, w.bodies.position[0].z() - r);
            if (vz < 0.0) break;  // past the apex of the first rebound
        }
    }
    EXPECT_TRUE(hit);
    return apex;
}

TEST(Restitution, SphereReboundsToESquaredOfItsDropHeight) {
    const double drop = 0.5;
    for (double e : {0.3, 0.5, 0.8, 1.0}) {
        const double apex = rebound_height(e, drop);
        std::printf("[ restitution ] e = %.1f: rebound %.5f m, e² H = %.5f m, ratio %.4f\n", e, apex,
                    e * e * drop, apex / (e * e * drop));
        EXPECT_NEAR(apex, e * e * drop, 0.02 * e * e * drop) << "e = " << e;
    }
    EXPECT_LT(rebound_height(0.0, drop), 1e-6) << "e = 0 must not bounce";
}

TEST(Restitution, HeadOnCollisionReversesRelativeVelocityTimesE) {
    const double e = 0.6, r = 0.05, v = 1.0;
    World w = make_world(1e-3, Vec3::Zero(), 1e-14, 200);
    Material m{"ball", 2500.0, 0.0};
    m.restitution = e;
    const uint32_t mat = w.materials.add(m);
    add_sphere(w, Vec3(-0.1, 0, 0), r, mat, Vec3(v, 0, 0));
    add_sphere(w, Vec3(0.1, 0, 0), r, mat, Vec3(-v, 0, 0));
    for (int k = 0; k < 200; ++k) ASSERT_TRUE(w.step().ok);
    const double va = w.bodies.velocity[0].x(), vb = w.bodies.velocity[1].x();
    EXPECT_NEAR(va, -e * v, 1e-12);
    EXPECT_NEAR(vb, e * v, 1e-12);
    EXPECT_NEAR(va + vb, 0.0, 1e-14) << "momentum";
    EXPECT_GT(w.bodies.position[1].x() - w.bodies.position[0].x(), 2 * r) << "separating";
}

/// A sphere of e = 0.9 resting on a plane for `steps` fixed steps of h: the largest vertical
/// speed it reaches and its final height above its resting height.
std::pair<double, double> resting_sphere(double h, int steps) {
    const double r = 0.05;
    World w = make_world(h, Vec3(0, 0, -9.81), 1e-12, 200);
    Material m{"ball", 2500.0, 0.3};
    m.restitution = 0.9;
    const uint32_t mat = w.materials.add(m);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), mat);
    add_sphere(w, Vec3(0, 0, r), r, mat);
    double worst = 0.0;
    for (int k = 0; k < steps; ++k) {
        EXPECT_TRUE(w.step().ok);
        worst = std::max(worst, std::abs(w.bodies.velocity[0].z()));
    }
    return {worst, w.bodies.position[0].z() - r};
}

TEST(Restitution, RestingSphereStaysAtRest) {
    const auto [worst, lift] = resting_sphere(1e-3, 500);
    EXPECT_LT(worst, 1e-12);
    EXPECT_NEAR(lift, 0.0, 1e-12);
}

TEST(Restitution, RestingSphereStaysAtRestWhenGravityAddsMoreThanTheBounceSpeedInAStep) {
    // h = 10 ms: ‖g‖ h = 0.098 m/s, twice bounce_speed (0.05). Without the threshold's floor
    // (kBounceGravitySteps ‖g‖ h) the sphere would leave the plane at e ‖g‖ h every step.
    ASSERT_GT(9.81 * 1e-2, SolverSettings{}.bounce_speed);
    const auto [worst, lift] = resting_sphere(1e-2, 200);
    EXPECT_LT(worst, 1e-12);
    EXPECT_NEAR(lift, 0.0, 1e-12);
}

TEST(Restitution, PileOfCoarseGrainsComesToRestWithTheDefaults) {
    // 300 grains of 3 cm radius, e = 0.5, dropped at random from up to 1.5 m with only their
    // physics: the adaptive step at rest is √(0.01 r/g) = 5.5 ms, at which gravity adds
    // 0.054 m/s a step, more than bounce_speed. With restitution applied to those resting
    // contacts the pile kept a kinetic energy of 0.04-0.06 J for good (the same pile at
    // 1 ms steps: 8.6e-4 J); it must settle as that one does.
    Scene s = parse_scene(R"(
[simulation]
duration = 3.0
[[material]]
name = "rock"
density = 2700.0
friction = 0.6
restitution = 0.5
[[wall]]
type = "box"
min = [0.0, 0.0, 0.0]
max = [0.6, 0.6, 2.0]
material = "rock"
[[particles]]
shape = "sphere"
material = "rock"
radius = 0.03
random = { min = [0.03, 0.03, 0.03], max = [0.57, 0.57, 1.5], count = 300, seed = 2 }
)",
                          "rocks.toml", {});
    World& w = s.world;
    ASSERT_TRUE(w.simulation.adaptive);
    double h_max = 0.0, ke_late = 0.0;
    while (w.time < 3.0 - 1e-9) {
        ASSERT_TRUE(w.step(3.0).ok);
        h_max = std::max(h_max, w.diagnostics().dt);
        if (w.time > 2.5) ke_late = std::max(ke_late, w.diagnostics().kinetic_energy);
    }
    EXPECT_GT(9.81 * h_max, w.solver.bounce_speed) << "the steps this test is about";
    // a 3 cm grain at 1 cm/s has 7e-5 J: the whole pile below a few grains' worth of that
    EXPECT_LT(ke_late, 2e-3) << "largest kinetic energy over the last 0.5 s";
}

TEST(Restitution, SceneKeysPerMaterialAndPair) {
    const char* text = R"(
[[material]]
name = "steel"
restitution = 0.9
[[material]]
name = "rubber"
restitution = 0.7
[[material]]
name = "clay"
[[friction_pair]]
materials = ["steel", "clay"]
friction = 0.4
restitution = 0.2
[[body]]
shape = "sphere"
radius = 0.01
material = "steel"
position = [0, 0, 0]
)";
    const Scene s = parse_scene(text, "mem/e.toml");
    const MaterialTable& t = s.world.materials;
    EXPECT_EQ(t.restitution(0, 1), 0.7);  // the smaller of the two
    EXPECT_EQ(t.restitution(0, 2), 0.2);  // the pair's own
    EXPECT_EQ(t.restitution(1, 2), 0.0);  // clay's default
    EXPECT_EQ(t.friction(0, 2), 0.4);
}

}  // namespace
}  // namespace talus
