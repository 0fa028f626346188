// StepError (engine/world/step_error.hpp): every way a step can fail comes back as one
// value with its cause bits, a message and the bodies involved, never as an exception, and
// the failed step leaves the velocities as they were.
#include <gtest/gtest.h>

#include <string>

#include "engine/world/pipeline.hpp"
#include "engine/world/step_error.hpp"
#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using testing::add_material;
using testing::add_plane;
using testing::add_sphere;
using testing::make_world;

TEST(StepError, RaiseCollectsCausesMessagesAndBodies) {
    StepError e;
    EXPECT_TRUE(e.ok);
    EXPECT_EQ(e.faults, 0u);
    e.raise(StepFault::Joint, "first", {1, 2});
    e.raise(StepFault::UnsupportedWall, "second", {3});
    EXPECT_FALSE(e.ok);
    EXPECT_TRUE(e.has(StepFault::Joint));
    EXPECT_TRUE(e.has(StepFault::UnsupportedWall));
    EXPECT_FALSE(e.has(StepFault::Crowded));
    EXPECT_EQ(e.message, "first\nsecond");
    EXPECT_EQ(e.bad_bodies, (std::vector<uint64_t>{1, 2, 3}));
}

// A grain so fast that its margin makes the broad phase's cells longer than a third of the
// periodic length: the broad phase cannot grid the bodies. That used to be an exception
// thrown out of World::step; it is now the step's StepError, and the state is kept.
TEST(StepError, BroadPhaseFailureIsAStepErrorNotAnException) {
    World w = make_world(1e-3, Vec3::Zero());
    w.simulation.periodic.on[0] = true;
    w.simulation.periodic.lo = Vec3(0.0, -1.0, -1.0);
    w.simulation.periodic.hi = Vec3(0.25, 1.0, 1.0);
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_sphere(w, Vec3(0.05, 0, 0), 0.01, m);
    add_sphere(w, Vec3(0.15, 0, 0), 0.01, m);
    w.bodies.velocity[0] = Vec3(0, 50.0, 0);  // margin 1.25 h v = 6.25 cm: cells of 14.5 cm
    StepStatus s;
    ASSERT_NO_THROW(s = w.step());
    ASSERT_FALSE(s.ok);
    EXPECT_EQ(s.faults, uint32_t(StepFault::BroadPhase));
    EXPECT_NE(s.message.find("at t = 0 s (step 1): broad phase: the periodic length along x"),
              std::string::npos)
        << s.message;
    EXPECT_EQ(w.step_count, 0u);
    EXPECT_EQ(w.bodies.velocity[0], Vec3(0, 50.0, 0));
}

// The crowding check names the step and says to reduce dt; its cause bit is Crowded.
TEST(StepError, TooManyPairsPerBodyIsCrowded) {
    BodyStore bodies;
    PairList pairs;
    for (int i = 0; i < 2; ++i) bodies.add_sphere(uint64_t(i), Vec3(double(i), 0, 0), 0.1, 1000.0, 0);
    for (std::size_t k = 0; k < kMaxPairsPerBody * 2 + 100001; ++k) {
        pairs.a.push_back(0);
        pairs.b.push_back(1);
    }
    const StepError e = check_crowding(pairs, bodies, 0.5, 0.01, {1.5, 7});
    ASSERT_FALSE(e.ok);
    EXPECT_TRUE(e.has(StepFault::Crowded));
    EXPECT_NE(e.message.find("at t = 1.5 s (step 7): 100129 candidate pairs for 2 bodies"),
              std::string::npos)
        << e.message;
    EXPECT_NE(e.message.find("the step of 0.01 s is too long for these speeds: lower [simulation] dt"),
              std::string::npos)
        << e.message;
    pairs.a.pop_back();
    pairs.b.pop_back();
    EXPECT_TRUE(check_crowding(pairs, bodies, 0.5, 0.01, {1.5, 7}).ok);
}

// Absurd forces are caught after the forces, naming the bodies (cause NonFinite), before
// the broad phase is asked to grid margins it cannot.
TEST(StepError, AbsurdForcesAreNonFiniteWithBodies) {
    World w = make_world(1e-3, Vec3(0, 0, -1e300));
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
    add_sphere(w, Vec3(0, 0, 0.02), 0.01, m);
    StepStatus s;
    ASSERT_NO_THROW(s = w.step());
    ASSERT_FALSE(s.ok);
    EXPECT_EQ(s.faults, uint32_t(StepFault::NonFinite));
    EXPECT_NE(s.message.find("after the forces at t = 0 s (step 1), bodies with id 0"),
              std::string::npos)
        << s.message;
    EXPECT_EQ(s.bad_bodies, std::vector<uint64_t>{0});
    EXPECT_EQ(w.bodies.velocity[0], Vec3::Zero());
}

/// A World built in C++ is held to the ranges a scene is (core/settings.hpp's Accepted,
/// which the scene schema's rows use): a setting out of range refuses the step, naming the
/// setting, its rule and its value, and leaves the state untouched.
TEST(StepError, SettingsOutOfRangeRefuseTheStep) {
    World w = make_world(1e-3, Vec3(0, 0, -9.81));
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_sphere(w, Vec3(0, 0, 1), 0.01, m);
    EXPECT_TRUE(w.settings_problems().empty());
    w.solver.relaxation = 0.0;  // C++'s "the solver's default" is allowed
    w.solver.relaxation = 2.5;
    w.simulation.step_fraction = 0.0;
    w.materials.materials[0].restitution = 1.5;
    const std::vector<std::string> problems = w.settings_problems();
    ASSERT_EQ(problems.size(), 3u);
    EXPECT_EQ(problems[0], "simulation.step_fraction: must be in (0, 1] (got 0)");
    EXPECT_EQ(problems[1], "solver.relaxation: must be in (0, 2) (got 2.5)");
    EXPECT_EQ(problems[2], "material.0.restitution: must be in [0, 1] (got 1.5)");
    const StepStatus s = w.step();
    EXPECT_FALSE(s.ok);
    EXPECT_TRUE(s.has(StepFault::InvalidSettings));
    EXPECT_NE(s.message.find("solver.relaxation: must be in (0, 2) (got 2.5)"), std::string::npos) << s.message;
    EXPECT_EQ(w.step_count, 0u);
    EXPECT_EQ(w.time, 0.0);
    EXPECT_EQ(w.bodies.position[0], Vec3(0, 0, 1));
    w.solver.relaxation = 1.0;
    w.simulation.step_fraction = 0.2;
    w.materials.materials[0].restitution = 0.5;
    EXPECT_TRUE(w.step().ok);
}

}  // namespace
}  // namespace talus
