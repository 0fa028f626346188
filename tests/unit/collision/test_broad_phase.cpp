// Broad phase against all pairs by brute force, on random sets that straddle zero and put
// bodies exactly on cell borders; the output must also not depend on the thread count.
#include <gtest/gtest.h>
#include <oneapi/tbb/global_control.h>

#include <algorithm>
#include <random>
#include <set>
#include <utility>

#include "collision/broad_phase.hpp"

namespace talus {
namespace {

std::set<std::pair<int, int>> as_set(const PairList& p) {
    std::set<std::pair<int, int>> s;
    for (std::size_t k = 0; k < p.size(); ++k) {
        EXPECT_LT(p.a[k], p.b[k]);
        s.insert({p.a[k], p.b[k]});
    }
    EXPECT_EQ(s.size(), p.size()) << "a pair was reported twice";
    return s;
}

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

}  // namespace
}  // namespace talus
