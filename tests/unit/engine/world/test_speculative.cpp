// Speculative contacts (docs/design.md §3, "Speculative contacts"): a pair that cannot
// close within the step is set aside before the colouring and the solve, and one that the
// solve makes close after all is taken back and solved again, so no pair set aside ends
// the step overlapping.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "engine/world/pipeline.hpp"
#include "solvers/colouring.hpp"
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

// The contacts set aside and taken back move between the lists in parallel through the
// colouring's spare arrays, or serially in place (a large run): 40,000 contacts of random
// gaps between 20,000 grains of random speeds, over several chunks, some pairs on a wall,
// split both ways. Every field of both lists is the same, entry for entry.
TEST(Speculative, SetAsideInParallelMovesTheSameContactsAsInPlace) {
    BodyStore bodies;
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const std::size_t n_bodies = 20000, n = 40000;
    for (std::size_t i = 0; i < n_bodies; ++i) {
        bodies.add_sphere(i, Vec3(u(rng), u(rng), u(rng)), 1e-3, 2500.0, 0);
        bodies.velocity[i] = Vec3(u(rng), u(rng), u(rng));
    }
    ContactList c;
    c.resize(n, false, true);
    for (std::size_t i = 0; i < n; ++i) {
        const bool wall = i % 7 == 0;
        c.a[i] = wall ? kNoBody : int32_t(rng() % n_bodies);
        c.b[i] = int32_t(rng() % n_bodies);
        c.key_a[i] = wall ? (kWallKeyBit | 1) : uint64_t(c.a[i]);
        c.key_b[i] = uint64_t(c.b[i]);
        c.feature[i] = uint32_t(i);
        c.point[i] = Vec3(u(rng), u(rng), u(rng));
        c.normal[i] = Vec3(u(rng), u(rng), u(rng)).normalized();
        c.gap[i] = 2e-3 * (u(rng) + 0.5);  // from −1 mm (overlapping) to 3 mm
        c.velocity_a[i] = wall ? Vec3(0.1 * u(rng), 0, 0) : Vec3::Zero();
        c.material_a[i] = uint32_t(i % 3);
    }
    ContactList in_place = c, parallel = c, aside_in_place, aside_parallel;
    ColouringScratch spare;
    const double h = 1e-3;
    const std::size_t k1 = set_aside_distant(bodies, Vec3(0, 0, -9.81), h, 0.1, in_place, aside_in_place);
    const std::size_t k2 =
        set_aside_distant(bodies, Vec3(0, 0, -9.81), h, 0.1, parallel, aside_parallel, {}, {}, nullptr, &spare);
    ASSERT_EQ(k1, k2);
    ASSERT_GT(k1, n / 10) << "the test should move contacts";
    ASSERT_LT(k1, n - n / 10) << "the test should keep contacts";
    // and back: those the current speeds close over a longer step, with their grains' other pairs
    ContactList back_in_place, back_parallel;
    const double longer = 5 * h;
    const std::size_t b1 = take_back_closing(bodies, longer, 0.0, false, aside_in_place, back_in_place);
    const std::size_t b2 =
        take_back_closing(bodies, longer, 0.0, false, aside_parallel, back_parallel, nullptr, &spare);
    ASSERT_EQ(b1, b2);
    ASSERT_GT(b1, 0u);
    ASSERT_GT(aside_in_place.size(), 0u);
    const auto same = [](ContactList& x, ContactList& y, const char* which) {
        ASSERT_EQ(x.size(), y.size()) << which;
        x.for_each_array([&](auto& v, auto& w) { EXPECT_TRUE(v == w) << which; }, y);
    };
    same(in_place, parallel, "kept");
    same(aside_in_place, aside_parallel, "aside");
    same(back_in_place, back_parallel, "back");
}

}  // namespace
}  // namespace talus
