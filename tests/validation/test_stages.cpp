// Multi-stage runs: a stage that ends when the kinetic energy has stayed below a threshold
// for its hold time, then a stage that removes the wall the grain rests on. Compared with
// the exact landing time of a dropped sphere and with the exact discrete free fall of the
// semi-implicit Euler scheme after the wall vanishes.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/world/stages.hpp"
#include "io/scene.hpp"
#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using testing::add_material;
using testing::add_plane;
using testing::add_sphere;
using testing::make_world;

/// Runs one stage the way the talus command does; returns the steps taken.
uint64_t run_stage(const Stage& stage, World& w) {
    begin_stage(stage, w);
    StageMonitor m(stage, w);
    uint64_t steps = 0;
    do {
        const StepStatus s = w.step();
        if (!s.ok) throw std::runtime_error(s.message);
        ++steps;
    } while (!m.done(w));
    return steps;
}

TEST(Stages, SettleUntilStillThenRemoveTheGate) {
    const double h = 1e-3, g = 9.81, r = 0.01, drop = 0.05;
    World w = make_world(h, Vec3(0.0, 0.0, -g), 1e-12, 200);
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);  // the gate, at z = 0
    w.walls.back().name = "gate";
    add_sphere(w, Vec3(0.0, 0.0, r + drop), r, m);

    Stage settle;
    settle.name = "settle";
    settle.duration = 2.0;
    settle.kinetic_energy_below = 1e-12;  // [J]: still
    settle.hold = 0.05;
    run_stage(settle, w);
    // Free fall through the 5 cm gap takes sqrt(2 drop / g) = 0.1010 s; the inelastic landing
    // stops the sphere within a step or two, and the stage then holds 0.05 s.
    const double landing = std::sqrt(2.0 * drop / g);
    EXPECT_NEAR(w.time, landing + settle.hold, 3 * h);
    EXPECT_NEAR(w.bodies.position[0].z(), r, 1e-4);

    Stage open;
    open.name = "open";
    open.duration = 0.1;
    open.remove_walls = {0};
    const double z0 = w.bodies.position[0].z(), vz0 = w.bodies.velocity[0].z();
    const uint64_t steps = run_stage(open, w);
    EXPECT_EQ(steps, 100u);          // no stop condition: the full duration
    EXPECT_FALSE(w.walls[0].active);
    EXPECT_EQ(w.contacts().size(), 0u);
    // Semi-implicit Euler from (z0, vz0): v_k = vz0 − k g h, z_k = z0 + h Σ v_j
    // = z0 + k h vz0 − g h² k (k + 1) / 2, exactly what free fall gives in this scheme.
    const double k = double(steps);
    EXPECT_NEAR(w.bodies.position[0].z(), z0 + k * h * vz0 - g * h * h * k * (k + 1) / 2, 1e-12);
}

TEST(Stages, EnergyRisingAboveTheThresholdRestartsTheHold) {
    // A sphere tossed up from the plane at v0 = 5 g h is exactly at rest at the apex (step 5,
    // kinetic energy ~0: below the threshold), moves again, lands at t = 2 v0 / g = 10 h and
    // stays. The hold must count from the landing: the stage ends near 10 h + hold, not at
    // 5 h + hold (which a hold that did not restart would give).
    const double h = 1e-3, g = 9.81, r = 0.01;
    World w = make_world(h, Vec3(0.0, 0.0, -g), 1e-12, 200);
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
    add_sphere(w, Vec3(0.0, 0.0, r), r, m, Vec3(0.0, 0.0, 5.0 * g * h));
    Stage s;
    s.duration = 1.0;
    s.kinetic_energy_below = 1e-12;
    s.hold = 0.02;
    begin_stage(s, w);
    StageMonitor monitor(s, w);
    bool below_at_apex = false;
    do {
        ASSERT_TRUE(w.step().ok);
        if (w.step_count == 5) below_at_apex = w.diagnostics().kinetic_energy < s.kinetic_energy_below;
    } while (!monitor.done(w));
    EXPECT_TRUE(below_at_apex);
    EXPECT_NEAR(w.time, 10 * h + s.hold, 2 * h);
}

TEST(Stages, AStageStartsAConveyor) {
    // A sphere rests on a belt (a plane translating at V along x) whose motion the second
    // stage starts. During the first stage the belt is held: the sphere must not move. Once
    // the belt runs, friction drags the sphere until it rolls without slipping on the belt:
    // the contact point moves with the belt, v − ω r = V, while the angular momentum about
    // the contact point, m v + J ω = 0 from rest, gives v = (2/7) V (J = 2/5 m r²).
    const Scene scene = parse_scene(R"(
[simulation]
dt = 1e-3
gravity = [0, 0, -9.81]
[solver]
max_iterations = 200
tolerance = 1e-12
[[material]]
name = "rubber"
friction = 0.8
[[wall]]
type = "plane"
name = "belt"
material = "rubber"
point = [0, 0, 0]
normal = [0, 0, 1]
motion = { type = "translation", velocity = [0.5, 0, 0] }
[[body]]
shape = "sphere"
radius = 0.01
material = "rubber"
position = [0, 0, 0.01]
[[stage]]
name = "fill"
duration = 0.2
[[stage]]
name = "run"
duration = 0.3
start_motion = ["belt"]
)", "belt.toml");
    ASSERT_EQ(scene.stages.size(), 2u);
    EXPECT_EQ(scene.stages[1].start_motion, std::vector<uint32_t>{0});
    World w = scene.world;
    EXPECT_TRUE(std::isinf(w.walls[0].motion.start));  // held until its stage

    run_stage(scene.stages[0], w);
    EXPECT_EQ(w.bodies.velocity[0].x(), 0.0);
    EXPECT_EQ(w.bodies.position[0].x(), 0.0);
    const double started = w.time;
    EXPECT_NEAR(started, 0.2, 1e-12);

    run_stage(scene.stages[1], w);
    EXPECT_EQ(w.walls[0].motion.start, started);
    const double V = 0.5, r = 0.01;
    // slipping ends after (2/7) V / (μ g) = 0.0182 s, well within the 0.3 s stage
    EXPECT_NEAR(w.bodies.velocity[0].x(), 2.0 / 7.0 * V, 1e-6);
    const double omega_y = (w.bodies.orientation[0] * w.bodies.angular_velocity[0]).y();
    // the bottom point moves at v + ω × (−r ẑ) = v − ω_y r along x: with the belt
    EXPECT_NEAR(w.bodies.velocity[0].x() - omega_y * r, V, 1e-6);
}

TEST(Stages, SceneWithStagesAndNamedWalls) {
    const std::string text = R"(
[simulation]
dt = 1e-3
[[material]]
name = "glass"
[[wall]]
type = "plane"
name = "floor"
material = "glass"
point = [0, 0, 0]
normal = [0, 0, 1]
[[wall]]
type = "plane"
name = "gate"
material = "glass"
point = [0, 0, 0.1]
normal = [0, 0, 1]
[[body]]
shape = "sphere"
radius = 0.01
material = "glass"
position = [0, 0, 0.2]
[[stage]]
name = "settle"
duration = 1.5
stop = { kinetic_energy_below = 1e-9, hold = 0.1 }
[[stage]]
duration = 0.5
remove_walls = ["gate"]
)";
    const Scene scene = parse_scene(text, "stages.toml");
    ASSERT_EQ(scene.stages.size(), 2u);
    EXPECT_EQ(scene.stages[0].name, "settle");
    EXPECT_EQ(scene.stages[0].duration, 1.5);
    EXPECT_EQ(scene.stages[0].kinetic_energy_below, 1e-9);
    EXPECT_EQ(scene.stages[0].hold, 0.1);
    EXPECT_EQ(scene.stages[1].name, "stage.1");
    EXPECT_EQ(scene.stages[1].remove_walls, std::vector<uint32_t>{1});
    EXPECT_EQ(scene.world.walls[1].name, "gate");

    // without [[stage]]: one stage from [simulation]
    const Scene one = parse_scene(R"(
[simulation]
duration = 0.25
stop = { kinetic_energy_below = 2e-6 }
[[material]]
name = "glass"
[[body]]
shape = "sphere"
radius = 0.01
material = "glass"
position = [0, 0, 0.2]
)", "one.toml");
    ASSERT_EQ(one.stages.size(), 1u);
    EXPECT_EQ(one.stages[0].duration, 0.25);
    EXPECT_EQ(one.stages[0].kinetic_energy_below, 2e-6);
    EXPECT_EQ(one.stages[0].hold, 0.0);
}

}  // namespace
}  // namespace talus
