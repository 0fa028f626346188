// The separate push-out pass (engine/world/push_out.cpp; docs/design.md §4, "Push-out"):
// with split_push_out an overlap is taken back by moving positions, and leaves no velocity
// behind; with the velocity-level term the same correction stays in ν⁺.
#include <gtest/gtest.h>
#include <oneapi/tbb/global_control.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

/// The push-out's slop for spheres of radius r: overlaps shallower than it are left alone.
constexpr double slop_of(double r) { return World::kPushOutSlop * World::kPenetrationTarget * r; }

/// A column of n spheres on a floor, each overlapping the one below (and the lowest the
/// floor) by `overlap`, at rest, no gravity: only the push-out moves anything.
World overlapped_column(int n, double overlap, bool split) {
    const double r = 5e-3;
    World w = make_world(1e-3, Vec3::Zero(), 1e-10, 2000);
    w.solver.split_push_out = split;
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
    for (int k = 0; k < n; ++k) add_sphere(w, Vec3(0, 0, r - overlap + k * (2 * r - overlap)), r, m);
    return w;
}

/// A column's overlaps, contact by contact from the floor up (a gap is negative).
std::vector<double> column_overlaps(const World& w) {
    std::vector<double> o{w.bodies.radius[0] - w.bodies.position[0].z()};
    for (std::size_t k = 1; k < w.bodies.size(); ++k) {
        const double d = (w.bodies.position[k] - w.bodies.position[k - 1]).norm();
        o.push_back(w.bodies.radius[k] + w.bodies.radius[k - 1] - d);
    }
    return o;
}

double deepest_overlap(const World& w) {
    const std::vector<double> o = column_overlaps(w);
    return std::max(0.0, *std::max_element(o.begin(), o.end()));
}

// Ten spheres overlapping by 20 µm each (0.4 % of r; the pass's slop is 0.25 % of r): the
// velocity-level term pushes each contact apart at γ_s Φ / h = 4 mm/s, which adds up to
// 40 mm/s at the top and stays there; the pass takes the overlaps back by the same share
// per step and leaves every velocity zero.
TEST(PushOut, SeparatePassMovesPositionsAndLeavesNoVelocity) {
    const int n = 10;
    const double overlap = 2e-5;
    World velocity = overlapped_column(n, overlap, false);
    World position = overlapped_column(n, overlap, true);
    run_steps(velocity, 1);
    run_steps(position, 1);
    const double push = 0.2 * overlap / 1e-3;  // γ_s Φ / h per contact [m/s]
    EXPECT_NEAR(velocity.bodies.velocity[n - 1].z(), n * push, 1e-4 * n * push);
    double fastest = 0.0;
    for (const Vec3& v : position.bodies.velocity) fastest = std::max(fastest, v.norm());
    EXPECT_EQ(fastest, 0.0);
    // ... and the positions moved: the pass removed a share of the overlaps
    EXPECT_LT(deepest_overlap(position), 0.95 * overlap);
    EXPECT_GT(position.bodies.position[n - 1].z(), overlapped_column(n, overlap, true).bodies.position[n - 1].z());
    // over more steps the column comes apart to the slop and stays at rest
    run_steps(position, 60);
    EXPECT_LE(deepest_overlap(position), slop_of(5e-3) * 1.0001);
    for (const Vec3& v : position.bodies.velocity) EXPECT_EQ(v.norm(), 0.0);
}

// A column of 40, each overlap 0.4 % of r (within the penetration target, 1 % of r): its
// passes stop after World::kPushOutSweeps sweeps, far short of what the column's deep mode
// needs, and a pass stopped there would push the lower grains into the upper ones before
// their contacts are swept again. So each step no overlap deepens (and none appears where
// there was a gap), no velocity is left, and over the steps the column comes apart to the
// slop as an uncapped pass brings it.
void expect_short_passes_never_deepen(int n) {
    const double overlap = 2e-5;
    World w = overlapped_column(n, overlap, true);
    double before = deepest_overlap(w);
    for (int step = 0; step < 150; ++step) {
        run_steps(w, 1);
        const double now = deepest_overlap(w);
        ASSERT_LE(now, before * (1.0 + 1e-9)) << n << " spheres, step " << step + 1;
        before = now;
        for (const Vec3& v : w.bodies.velocity) ASSERT_EQ(v.norm(), 0.0);
    }
    EXPECT_LE(deepest_overlap(w), slop_of(5e-3) * 1.0001) << n << " spheres";
}

TEST(PushOut, ShortPassesNeverDeepenAnOverlap) { expect_short_passes_never_deepen(40); }

// The same with at most World::kPushOutFewContacts overlaps past the slop (a column of 12
// or 16: as many contacts), whose passes stop after kPushOutFewSweeps: 4 sweeps from zero
// reach the fifth grain of the column, so each pass that would push the lower grains into
// the upper ones must go on, and the column still comes apart to the slop.
TEST(PushOut, PassesSetOffByAFewOverlapsNeverDeepenOne) {
    static_assert(World::kPushOutFewContacts >= 16 && World::kPushOutFewSweeps < World::kPushOutSweeps);
    expect_short_passes_never_deepen(12);
    expect_short_passes_never_deepen(16);
}

// What a capped pass may leave: no contact deeper than both its overlap before the step and
// the slop. A column of 40 whose lower 20 contacts overlap by 0.4 % of r and whose upper 20
// stand 0.02 % of r apart: the passes push the lower grains up into the upper ones before
// those contacts are swept, and may close those gaps into overlaps up to the slop (which no
// pass would take back), not past it; no overlap past the slop deepens.
TEST(PushOut, CappedPassesCloseGapsOnlyUpToTheSlop) {
    const double r = 5e-3, overlap = 2e-5, gap = 1e-6;
    const double slop = slop_of(r);
    World w = make_world(1e-3, Vec3::Zero(), 1e-10, 2000);
    w.solver.split_push_out = true;
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
    double z = r - overlap;
    for (int k = 0; k < 40; ++k) {
        add_sphere(w, Vec3(0, 0, z), r, m);
        z += 2 * r + (k < 19 ? -overlap : gap);
    }
    std::vector<double> before = column_overlaps(w);
    double closed_to = 0.0;  // the deepest overlap where there had been a gap
    for (int step = 0; step < 60; ++step) {
        run_steps(w, 1);
        const std::vector<double> now = column_overlaps(w);
        for (std::size_t k = 0; k < now.size(); ++k) {
            ASSERT_LE(now[k], std::max(before[k], slop) + 1e-12) << "step " << step + 1 << ", contact " << k;
            if (k >= 20) closed_to = std::max(closed_to, now[k]);
        }
        before = now;
    }
    // the bound was put to the test: the pushes closed some gap into an overlap of more than
    // a tenth of the slop (3.8 µm here). The old rule, which let a capped pass close nothing
    // beyond its tolerance, also passes this test: what the new one saves is counted in
    // benchmarks/README.md (session 46), not asserted here.
    EXPECT_GT(closed_to, 0.1 * slop);
    EXPECT_LE(*std::max_element(before.begin(), before.end()), slop * 1.0001);
}

// Overlaps shallower than the slop are left alone: no pass, positions unchanged.
TEST(PushOut, OverlapsBelowTheSlopAreLeftAlone) {
    World w = overlapped_column(5, 5e-6, true);  // 0.1 % of r < 0.25 %
    const std::vector<Vec3> before = w.bodies.position;
    run_steps(w, 3);
    for (std::size_t k = 0; k < before.size(); ++k) EXPECT_EQ(w.bodies.position[k], before[k]);
}

// The pass is a parallel solve over the step's colours: the same bits on 1, 2 and 3 threads.
TEST(PushOut, SameBitsOnAnyThreadCount) {
    std::vector<std::vector<double>> runs;
    for (int threads : {1, 2, 3}) {
        tbb::global_control limit(tbb::global_control::max_allowed_parallelism, std::size_t(threads));
        World w = settled_pile(40);
        w.solver.split_push_out = true;
        w.solver.type = SolverType::BGS;
        run_steps(w, 40);
        runs.push_back(state_vector(w));
    }
    for (std::size_t k = 1; k < runs.size(); ++k) {
        ASSERT_EQ(runs[k].size(), runs[0].size());
        EXPECT_EQ(0, std::memcmp(runs[k].data(), runs[0].data(), runs[0].size() * sizeof(double)));
    }
}

}  // namespace
}  // namespace talus
