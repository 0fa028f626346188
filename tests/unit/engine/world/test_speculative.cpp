// Speculative contacts (docs/design.md §3, "Speculative contacts"): a pair that cannot
// close within the step is set aside before the colouring and the solve, and one that the
// solve makes close after all is taken back and solved again, so no pair set aside ends
// the step overlapping.
#include <gtest/gtest.h>

#include <vector>

#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

// Two grains at rest on a floor, 0.4 mm apart, with a 1 mm envelope: the pair is a
// candidate only through the envelope's floor and cannot close in a 1 ms step, so it is
// set aside; the floor contacts are solved. Then the same pair closing at 1 m/s (0.4 mm
// < 1.25 h v) is solved, and stops without overlap.
TEST(Speculative, PairThatCannotCloseIsSetAsideAndOneThatCanIsSolved) {
    const double h = 1e-3, r = 2e-3, gap = 4e-4;
    for (const double speed : {0.0, 1.0}) {
        World w = make_world(h, Vec3(0, 0, -9.81), 1e-10, 500);
        w.solver.envelope = 1e-3;
        const uint32_t m = add_material(w, 2500.0, 0.5);
        add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
        add_sphere(w, Vec3(0, 0, r), r, m);
        add_sphere(w, Vec3(2 * r + gap, 0, r), r, m, Vec3(-speed, 0, 0));
        ASSERT_TRUE(w.step().ok);
        std::size_t between = 0;
        for (std::size_t k = 0; k < w.contacts().size(); ++k) between += w.contacts().a[k] >= 0;
        if (speed == 0.0) {
            EXPECT_EQ(between, 0u) << "the pair at rest must not enter the solve";
            EXPECT_EQ(w.diagnostics().set_aside, 1u);
            EXPECT_EQ(w.diagnostics().contacts, 2u);  // the two floor contacts
        } else {
            EXPECT_EQ(between, 1u) << "the closing pair must be solved";
            EXPECT_EQ(w.diagnostics().set_aside, 0u);
        }
        const double distance = (w.bodies.position[1] - w.bodies.position[0]).norm();
        EXPECT_GT(distance, 2 * r - 1e-9);
    }
}

// A row of grains of radius r on the x axis in free flight (no gravity, no restitution,
// h = 1 ms, a 1 mm envelope): the first at 1 m/s, the others at rest, `gaps[k]` between
// grain k and k + 1. Steps once; then no two grains overlap, and momentum is kept (the
// impulses are internal).
World step_row(const std::vector<double>& gaps, double r) {
    World w = make_world(1e-3, Vec3::Zero(), 1e-12, 2000);
    w.solver.envelope = 1e-3;
    const uint32_t m = add_material(w, 2500.0, 0.0);
    double x = 0.0;
    add_sphere(w, Vec3(x, 0, 0), r, m, Vec3(1.0, 0, 0));
    for (const double gap : gaps) add_sphere(w, Vec3(x += 2 * r + gap, 0, 0), r, m);
    EXPECT_TRUE(w.step().ok);
    Vec3 p = w.bodies.velocity[0];
    for (std::size_t k = 0; k < gaps.size(); ++k) {
        EXPECT_GT((w.bodies.position[k + 1] - w.bodies.position[k]).norm(), 2 * r - 1e-9) << "pair " << k;
        p += w.bodies.velocity[k + 1];
    }
    EXPECT_NEAR(p.x(), 1.0, 1e-9);
    return w;
}

// Three grains: the left one 0.2 mm from the middle one, which rests 0.3 mm from the right
// one. Before the solve only the left pair can close (the middle grain is at rest, and
// 0.3 mm is more than h v_rec = 0.1 mm), so the right pair is set aside; the solve lets the
// left pair close its 0.2 mm and no more, which sends the middle grain off at 0.4 m/s,
// closing 0.4 mm on the right one: the right pair is taken back and solved again.
TEST(Speculative, PairClosedByTheSolveIsTakenBackAndSolved) {
    const World w = step_row({2e-4, 3e-4}, 2e-3);
    EXPECT_GE(w.diagnostics().resolves, 1u);
    EXPECT_EQ(w.diagnostics().set_aside, 0u);
    EXPECT_EQ(w.contacts().size(), 2u);
}

// Four grains: the second 0.11 mm from the third, the third 0.15 mm from the fourth, both
// pairs set aside (more than h v_rec = 0.1 mm apart, the three at rest). The first solve
// sends the second grain off at 0.4 m/s, which closes the pair of the second and third;
// solved again with it alone, the third grain would leave at 0.19 m/s and close 0.15 mm on
// the fourth, a third solve. The closing pair brings back the third grain's other pair
// with it, so one solve again settles the row.
TEST(Speculative, ClosingPairBringsItsGrainsOtherPairsBack) {
    const World w = step_row({2e-4, 1.1e-4, 1.5e-4}, 2e-3);
    EXPECT_EQ(w.diagnostics().resolves, 1u);
    EXPECT_EQ(w.diagnostics().set_aside, 0u);
    EXPECT_EQ(w.contacts().size(), 3u);
}

// Two grains falling side by side at 2 m/s, 0.4 mm apart, in a 1 ms step: each could move
// 2.5 mm, so the pair is within their margins, but nothing in the step changes either
// grain's speed (no other pair, no floor within reach) and their free velocities do not
// close it: it is set aside, and they end the step apart as they began. Then the same two
// grains one above the other, the lower one 0.5 mm above the floor: it lands in this step,
// so the pair above it may close (it does: the upper grain runs into the stopped one) and
// is solved from the start, without a second solve.
TEST(Speculative, PairOfGrainsThatMeetNothingIsSetAside) {
    const double h = 1e-3, r = 2e-3, gap = 4e-4, speed = 2.0;
    for (const bool landing : {false, true}) {
        World w = make_world(h, Vec3(0, 0, -9.81), 1e-10, 500);
        w.solver.envelope = 1e-3;
        const uint32_t m = add_material(w, 2500.0, 0.5);
        add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
        const Vec3 v(0, 0, -speed);
        const double z0 = landing ? r + 5e-4 : 0.1;
        add_sphere(w, Vec3(0, 0, z0), r, m, v);
        add_sphere(w, landing ? Vec3(0, 0, z0 + 2 * r + gap) : Vec3(2 * r + gap, 0, z0), r, m, v);
        ASSERT_TRUE(w.step().ok);
        std::size_t between = 0;
        for (std::size_t k = 0; k < w.contacts().size(); ++k) between += w.contacts().a[k] >= 0;
        if (!landing) {
            EXPECT_EQ(w.diagnostics().set_aside, 1u) << "two grains in free flight side by side";
            EXPECT_EQ(w.diagnostics().contacts, 0u);
            EXPECT_NEAR((w.bodies.position[1] - w.bodies.position[0]).norm(), 2 * r + gap, 1e-12);
        } else {
            EXPECT_EQ(between, 1u) << "the pair above a landing grain must be solved";
            EXPECT_EQ(w.diagnostics().resolves, 0u);
            EXPECT_GT(w.bodies.position[0].z(), r - 1e-9);
            EXPECT_GT((w.bodies.position[1] - w.bodies.position[0]).norm(), 2 * r - 1e-9);
        }
    }
}

}  // namespace
}  // namespace talus
