// Broad phase against all pairs by brute force, on random sets that straddle zero and put
// bodies exactly on cell borders; the output must also not depend on the thread count.
#include <gtest/gtest.h>
#include <oneapi/tbb/global_control.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <random>
#include <set>
#include <utility>

#include "collision/broad_phase.hpp"
#include "tests/support/pair_sets.hpp"

namespace talus {
namespace {

using testing::as_set;

struct Cloud { std::vector<Vec3> x; std::vector<double> r; };

Cloud random_cloud(int n, double half_width, double rmin, double rmax, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> pos(-half_width, half_width), rad(rmin, rmax);
    Cloud c;
    for (int i = 0; i < n; ++i) {
        c.x.emplace_back(pos(rng), pos(rng), pos(rng));
        c.r.push_back(rad(rng));
    }
    return c;
}

TEST(BroadPhase, EqualsAllPairsOnRandomSets) {
    for (uint64_t seed : {1u, 2u, 3u}) {
        for (double env : {0.0, 0.01, 0.1}) {
            Cloud c = random_cloud(3000, 1.5, 0.02, 0.06, seed);
            PairList fast, slow;
            BroadPhaseScratch s;
            broad_phase(c.x, c.r, env, fast, s);
            all_pairs(c.x, c.r, env, slow);
            EXPECT_EQ(as_set(fast), as_set(slow)) << "seed " << seed << " envelope " << env;
            EXPECT_GT(slow.size(), 100u);
        }
    }
}

TEST(BroadPhase, BodiesOnCellBordersAndNegativeCoordinates) {
    // Equal spheres on an exact lattice whose spacing equals the cell size (2r + δ):
    // every neighbour pair sits exactly at the reach, on a cell border.
    Cloud c;
    const double r = 0.5, env = 0.0, a = 2 * r + env;
    for (int i = -4; i < 4; ++i)
        for (int j = -4; j < 4; ++j)
            for (int k = -4; k < 4; ++k) {
                c.x.emplace_back(i * a, j * a, k * a);
                c.r.push_back(r);
            }
    PairList fast, slow;
    BroadPhaseScratch s;
    broad_phase(c.x, c.r, env, fast, s);
    all_pairs(c.x, c.r, env, slow);
    EXPECT_EQ(as_set(fast), as_set(slow));
    EXPECT_EQ(slow.size(), 3u * 8 * 8 * 7);  // touching face neighbours only
}

TEST(BroadPhase, SparseGridFallsBackToSearchingTheOccupiedCells) {
    // Two clusters 200 m apart: their grid has far more cells than the dense lookup may
    // hold (4 per body + 65536), so neighbours are found by binary search instead. Both
    // ways must find the same pairs, and a cluster alone (dense) the same ones as it has
    // inside the sparse pair.
    Cloud a = random_cloud(1500, 0.8, 0.02, 0.06, 5), b = random_cloud(1500, 0.8, 0.02, 0.06, 6);
    Cloud both = a;
    for (std::size_t i = 0; i < b.x.size(); ++i) {
        both.x.push_back(b.x[i] + Vec3(200.0, 150.0, 100.0));
        both.r.push_back(b.r[i]);
    }
    PairList fast, slow, alone;
    BroadPhaseScratch s, s_alone;
    broad_phase(both.x, both.r, 0.01, fast, s);
    EXPECT_TRUE(s.levels.at(0).dense.empty()) << "expected the sparse path";
    all_pairs(both.x, both.r, 0.01, slow);
    EXPECT_EQ(as_set(fast), as_set(slow));
    EXPECT_GT(slow.size(), 100u);
    broad_phase(a.x, a.r, 0.01, alone, s_alone);
    EXPECT_FALSE(s_alone.levels.at(0).dense.empty()) << "expected the dense path";
    EXPECT_EQ(as_set(alone), as_set([&] {
                  PairList first;  // the pairs of cluster a within the sparse run
                  for (std::size_t k = 0; k < fast.size(); ++k)
                      if (fast.b[k] < int32_t(a.x.size())) {
                          first.a.push_back(fast.a[k]);
                          first.b.push_back(fast.b[k]);
                      }
                  return first;
              }()));
}

// Sizes 20× apart (a few large bodies among many small, and a continuous spread), open
// and periodic: the size classes' grids find every brute-force pair exactly once, a small
// body's pairs with the large ones included, and one size class keeps a single grid.
TEST(BroadPhase, SizeClassesFindEveryPairOnce) {
    PeriodicBox box;
    box.on = {true, false, false};
    box.lo = Vec3(-1.0, 0.0, 0.0);
    box.hi = Vec3(1.0, 0.0, 0.0);
    for (const bool wrap : {false, true}) {
        for (uint64_t seed : {21u, 22u}) {
            Cloud c = random_cloud(6000, 1.0, 0.004, 0.006, seed);  // small grains
            Cloud big = random_cloud(60, 1.0, 0.05, 0.1, seed + 100);  // a few 10–20× larger
            Cloud mid = random_cloud(300, 1.0, 0.004, 0.08, seed + 200);  // every size between
            for (const Cloud* o : {&big, &mid}) {
                c.x.insert(c.x.end(), o->x.begin(), o->x.end());
                c.r.insert(c.r.end(), o->r.begin(), o->r.end());
            }
            for (double env : {0.0, 0.003}) {
                PairList fast, slow;
                BroadPhaseScratch s;
                ASSERT_EQ(broad_phase(c.x, c.r, env, fast, s, wrap ? box : PeriodicBox{}), "");
                all_pairs(c.x, c.r, env, slow, wrap ? box : PeriodicBox{});
                EXPECT_GE(s.levels.size(), 4u) << "radii 0.004–0.1 m span five size classes";
                EXPECT_EQ(fast.size(), slow.size()) << "a pair found twice, or missed";
                EXPECT_EQ(as_set(fast), as_set(slow)) << "seed " << seed << " envelope " << env;
                std::size_t small_big = 0;
                for (std::size_t k = 0; k < fast.size(); ++k)
                    small_big += (fast.a[k] < 6000) != (fast.b[k] < 6000) ? 1 : 0;
                EXPECT_GT(small_big, 100u) << "pairs across size classes must be found";
            }
        }
    }
    Cloud even = random_cloud(3000, 1.0, 0.01, 0.02, 7);  // at most 2× apart: one grid
    PairList pairs;
    BroadPhaseScratch s;
    broad_phase(even.x, even.r, 0.002, pairs, s);
    EXPECT_EQ(s.levels.size(), 1u);
}

TEST(BroadPhase, IndependentOfThreadCount) {
    Cloud c = random_cloud(20000, 2.0, 0.02, 0.05, 11);
    PairList one, two;
    BroadPhaseScratch s1, s2;
    {
        tbb::global_control g(tbb::global_control::max_allowed_parallelism, 1);
        broad_phase(c.x, c.r, 0.01, one, s1);
    }
    {
        tbb::global_control g(tbb::global_control::max_allowed_parallelism, 2);
        broad_phase(c.x, c.r, 0.01, two, s2);
    }
    EXPECT_EQ(one.a, two.a);
    EXPECT_EQ(one.b, two.b);
}

// Periodic along x and z ([0, 1) and [−0.5, 0.7)), open along y: the pairs and their image
// shifts equal the brute-force minimum-image pairs, including pairs that wrap around.
TEST(BroadPhase, PeriodicEqualsMinimumImageBruteForce) {
    PeriodicBox box;
    box.on = {true, false, true};
    box.lo = Vec3(0.0, 0.0, -0.5);
    box.hi = Vec3(1.0, 0.0, 0.7);
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> u(0.0, 1.0), rad(0.01, 0.04);
    Cloud c;
    for (int i = 0; i < 4000; ++i) {
        c.x.emplace_back(u(rng), 2.0 * u(rng) - 1.0, -0.5 + 1.2 * u(rng));
        c.r.push_back(rad(rng));
    }
    // bodies exactly on the periodic faces' lower side
    c.x.emplace_back(0.0, 0.1, -0.5);
    c.r.push_back(0.03);
    c.x.emplace_back(0.99, 0.1, 0.69);
    c.r.push_back(0.03);
    PairList fast, slow;
    BroadPhaseScratch s;
    broad_phase(c.x, c.r, 0.005, fast, s, box);
    all_pairs(c.x, c.r, 0.005, slow, box);
    ASSERT_EQ(as_set(fast), as_set(slow));
    ASSERT_EQ(fast.shift.size(), fast.size());
    std::map<std::pair<int, int>, Vec3> expected;
    for (std::size_t k = 0; k < slow.size(); ++k) expected[{slow.a[k], slow.b[k]}] = slow.shift[k];
    std::size_t wrapped = 0;
    for (std::size_t k = 0; k < fast.size(); ++k) {
        EXPECT_EQ(fast.shift[k], (expected[{fast.a[k], fast.b[k]}])) << "pair " << k;
        if (!fast.shift[k].isZero(0.0)) ++wrapped;
    }
    EXPECT_GT(wrapped, 20u) << "pairs across the periodic faces must be found";
    EXPECT_TRUE(as_set(fast).count({int(c.x.size() - 2), int(c.x.size() - 1)}))
        << "the two bodies at opposite corners touch through x and z";
}

TEST(BroadPhase, PeriodicLengthBelowThreeCellsIsRefused) {
    PeriodicBox box;
    box.on = {true, false, false};
    box.lo = Vec3(0.0, 0.0, 0.0);
    box.hi = Vec3(0.25, 0.0, 0.0);
    Cloud c;
    c.x = {Vec3(0.1, 0, 0), Vec3(0.2, 0, 0)};
    c.r = {0.05, 0.05};
    PairList out;
    BroadPhaseScratch s;
    // 0.25 < 3 × 0.1: refused with a reason, no pairs, and no exception (it runs in a step)
    std::string error;
    EXPECT_NO_THROW(error = broad_phase(c.x, c.r, 0.0, out, s, box));
    EXPECT_NE(error.find("broad phase: the periodic length along x (0.250000 m) must be at least "
                         "3 × (largest diameter + envelope) = 0.300000 m"),
              std::string::npos)
        << error;
    EXPECT_EQ(out.size(), 0u);
}

// Bodies spread over more than 2^21 cells (one escaped far away) are refused with a reason.
TEST(BroadPhase, BodiesSpreadTooFarAreRefused) {
    Cloud c;
    c.x = {Vec3(0, 0, 0), Vec3(0.1, 0, 0), Vec3(1e6, 0, 0)};
    c.r = {0.05, 0.05, 0.05};
    PairList out;
    BroadPhaseScratch s;
    const std::string error = broad_phase(c.x, c.r, 0.0, out, s);
    EXPECT_NE(error.find("broad phase: bodies spread over more than 2^21 cells"), std::string::npos)
        << error;
    EXPECT_EQ(out.size(), 0u);
}

}  // namespace
}  // namespace talus
