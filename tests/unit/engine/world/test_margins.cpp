// The collision margins (choose_margins in engine/world/pipeline.cpp, docs/design.md §3):
// every pair that can close in one step is a contact before the step, and gravity, which
// moves every grain alike, does not make resting grains see their neighbours across gaps
// they cannot close.
#include <gtest/gtest.h>

#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

// A grain released from rest just above a supported one closes ‖g‖ h² in its first step
// (semi-implicit Euler: v⁺ = h g, x⁺ = x + h v⁺). With a gap of 0.8 ‖g‖ h² and an envelope
// far smaller, the pair must already be a contact in that step, so the upper grain lands
// on the lower one without sinking into it.
TEST(Margins, GrainReleasedFromRestIsCaughtInItsFirstStep) {
    const double h = 5e-3, g = 9.81, r = 1.5e-3;
    const double gap = 0.8 * g * h * h;  // 0.196 mm
    World w = make_world(h, Vec3(0, 0, -g), 1e-9, 500);
    w.solver.envelope = 1e-6;
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
    add_sphere(w, Vec3(0, 0, r), r, m);
    add_sphere(w, Vec3(0, 0, 3 * r + gap), r, m);
    ASSERT_TRUE(w.step().ok);
    EXPECT_EQ(w.batch().size(), 2u);  // floor–lower and lower–upper
    const double distance = (w.bodies.position[1] - w.bodies.position[0]).norm();
    EXPECT_GT(distance, 2 * r - 1e-9);  // no overlap after the step (residual ≤ 1e-9 m/s)
    EXPECT_LT(distance, 2 * r + 1e-9);  // and in touch: the gap closed exactly
    // the contact let it close exactly the gap: it arrives at gap / h, the lower one stays
    EXPECT_NEAR(w.bodies.velocity[1].z(), -gap / h, 1e-8);
    EXPECT_NEAR(w.bodies.velocity[0].z(), 0.0, 1e-8);
}

// A row of grains resting on a floor 0.3 mm apart: with h = 5 ms gravity alone gave each a
// margin 1.25 ‖g‖ h² = 0.31 mm, so every neighbour pair became a (never active) contact and
// the solver worked on three times the contacts. Resting grains share gravity's motion:
// only the floor contacts remain.
TEST(Margins, RestingGrainsDoNotSeeNeighboursAcrossGapsGravityCannotClose) {
    const double h = 5e-3, g = 9.81, r = 1.5e-3, spacing = 3.3e-3;
    World w = make_world(h, Vec3(0, 0, -g), 1e-9, 500);
    w.solver.envelope = 1e-4;
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
    for (int i = 0; i < 5; ++i) add_sphere(w, Vec3(i * spacing, 0, r), r, m);
    for (int k = 0; k < 10; ++k) ASSERT_TRUE(w.step().ok);
    EXPECT_EQ(w.batch().size(), 5u);
    for (std::size_t i = 0; i < 5; ++i) EXPECT_LT(w.bodies.velocity[i].norm(), 1e-8);
    // ...while a grain moving towards its neighbour still sees it a step ahead.
    w.bodies.velocity[0] = Vec3(0.1, 0, 0);  // closes 0.5 mm per step: more than the gap
    ASSERT_TRUE(w.step().ok);
    EXPECT_EQ(w.batch().size(), 6u);
    EXPECT_GT((w.bodies.position[1] - w.bodies.position[0]).norm(), 2 * r - 1e-9);
}

// A light grain 0.5 mm above the floor, struck from above by one eight times its mass at
// 2 m/s (e = 0): the solve sends it down at about 0.9 m/s, 0.9 mm in the step, through a
// floor that was not a candidate (its margins came from its speed before the solve: 50 µm).
// The step is taken again with its margin widened, and it lands on the floor; both grains
// end the step without an overlap, and the step was taken again once.
TEST(Margins, AStruckGrainDoesNotGoThroughAFloorItsMarginMissed) {
    const double h = 1e-3, g = 9.81, r = 1e-3, big = 2e-3;
    for (const bool adaptive : {false, true}) {
        World w = make_world(h, Vec3(0, 0, -g), 1e-9, 500);
        w.solver.envelope = 1e-4;
        w.simulation.adaptive = adaptive;
        w.simulation.max_dt = h;
        const uint32_t m = add_material(w, 2500.0, 0.5);
        add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
        const double z = r + 0.5e-3;
        add_sphere(w, Vec3(0, 0, z), r, m);
        add_sphere(w, Vec3(0, 0, z + r + big + 1e-3), big, m, Vec3(0, 0, -2.0));
        double lowest = 1.0, closest = 1.0;
        int retaken = 0;
        while (w.time < 5e-3) {
            ASSERT_TRUE(w.step().ok);
            retaken += int(w.diagnostics().margin_retakes);
            lowest = std::min(lowest, w.bodies.position[0].z() - r);
            closest = std::min(closest, (w.bodies.position[1] - w.bodies.position[0]).norm() - r - big);
        }
        EXPECT_GT(lowest, -0.01 * r) << "adaptive " << adaptive;    // not into the floor
        EXPECT_GT(closest, -0.01 * r) << "adaptive " << adaptive;   // nor into each other
        EXPECT_GE(retaken, 1) << "adaptive " << adaptive;
        EXPECT_LT(std::abs(w.bodies.velocity[0].z()), 0.05) << "adaptive " << adaptive;  // landed
    }
}

// A time step far too long for the speeds: 1000 grains 0.2 mm apart, each at 5 m/s in its
// own direction, with dt = 20 ms get margins of 0.125 m, so each sees every other grain.
// The step must stop with a message naming dt, before the narrow phase builds half a
// million contacts, and leave the state as it was.
TEST(Margins, AStepFarTooLongForTheSpeedsStopsWithAMessage) {
    const double r = 1e-3;
    World w = make_world(0.02, Vec3(0, 0, -9.81), 1e-4, 50);
    const uint32_t m = add_material(w, 2500.0, 0.5);
    uint64_t state = 7;
    auto next = [&]() {  // deterministic directions
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return double(state >> 11) * 0x1.0p-53 * 2.0 - 1.0;
    };
    for (int i = 0; i < 10; ++i)
        for (int j = 0; j < 10; ++j)
            for (int k = 0; k < 10; ++k)
                add_sphere(w, Vec3(i, j, k) * 2.2 * r, r, m,
                           5.0 * Vec3(next(), next(), next()).normalized());
    const std::vector<Vec3> before = w.bodies.velocity;
    const StepStatus s = w.step();
    ASSERT_FALSE(s.ok);
    EXPECT_NE(s.message.find("candidate pairs for 1000 bodies"), std::string::npos) << s.message;
    EXPECT_NE(s.message.find("the step of 0.02 s is too long"), std::string::npos) << s.message;
    EXPECT_EQ(w.batch().size(), 0u);
    EXPECT_EQ(w.bodies.velocity, before);
    EXPECT_EQ(w.step_count, 0u);
    // the same grains at dt = 0.1 ms (margins 0.6 mm) step normally
    w.simulation.dt = 1e-4;
    EXPECT_TRUE(w.step().ok);
}

}  // namespace
}  // namespace talus
