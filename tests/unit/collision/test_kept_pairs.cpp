// Kept pairs (collision/kept_pairs.hpp): while every body stays within its skin, the kept
// search's pairs filtered at the new positions are exactly the broad phase's pairs there;
// once one body leaves its skin (or its reach grows past it) they no longer claim to be.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <utility>

#include "collision/kept_pairs.hpp"
#include "tests/support/pair_sets.hpp"

namespace talus {
namespace {

using testing::as_set;

// A loose random bed of n spheres of radius r in [0.8, 1.2] mm with reaches r + 0.5 mm.
struct Bed {
    std::vector<Vec3> x;
    std::vector<double> radius, reach;
};

Bed random_bed(int n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> pos(0.0, 0.03), rad(0.8e-3, 1.2e-3);
    Bed b;
    for (int i = 0; i < n; ++i) {
        b.x.emplace_back(pos(rng), pos(rng), pos(rng));
        b.radius.push_back(rad(rng));
        b.reach.push_back(b.radius.back() + 0.5e-3);
    }
    return b;
}

TEST(KeptPairs, FilteredPairsAreTheBroadPhasesWhileBodiesStayWithinTheirSkin) {
    for (uint64_t seed : {1u, 2u, 3u}) {
        Bed bed = random_bed(4000, seed);
        KeptPairs kept;
        BroadPhaseScratch scratch;
        ASSERT_EQ(search_kept_pairs(bed.x, bed.radius, bed.reach, kept, scratch), "");
        std::mt19937_64 rng(seed + 100);
        std::uniform_real_distribution<double> unit(-1.0, 1.0);
        // Twenty steps of random moves, each body's total kept under 0.9 of its skin
        // (0.1 r): pairs appear and vanish at the reach as the bodies move.
        std::vector<Vec3> start = bed.x;
        for (int step = 0; step < 20; ++step) {
            for (std::size_t i = 0; i < bed.x.size(); ++i) {
                Vec3 d(unit(rng), unit(rng), unit(rng));
                Vec3 next = bed.x[i] + 0.02 * kSkinShare * bed.radius[i] * d;
                if ((next - start[i]).norm() < 0.9 * kSkinShare * bed.radius[i]) bed.x[i] = next;
            }
            ASSERT_TRUE(kept.cover(bed.x, bed.reach)) << "step " << step;
            PairList filtered, fresh;
            filter_kept_pairs(kept, bed.x, bed.reach, filtered);
            ASSERT_EQ(broad_phase(bed.x, bed.reach, 0.0, fresh, scratch), "");
            EXPECT_EQ(as_set(filtered), as_set(fresh)) << "seed " << seed << ", step " << step;
            EXPECT_GT(fresh.size(), 1000u);
        }
    }
}

TEST(KeptPairs, PairsExactlyAtTheReachAreFoundAsTheBroadPhaseFindsThem) {
    // A simple cubic lattice whose spacing is exactly twice the reach: every neighbour pair
    // sits on the broad phase's boundary, where the filter's test must agree with its own.
    Bed bed;
    const double r = 1e-3, reach = 1.25e-3, a = 2.0 * reach;
    for (int i = 0; i < 12; ++i)
        for (int j = 0; j < 12; ++j)
            for (int k = 0; k < 12; ++k) {
                bed.x.emplace_back(0.1 + i * a, -0.05 + j * a, 0.3 * a + k * a);
                bed.radius.push_back(r);
                bed.reach.push_back(reach);
            }
    KeptPairs kept;
    BroadPhaseScratch scratch;
    ASSERT_EQ(search_kept_pairs(bed.x, bed.radius, bed.reach, kept, scratch), "");
    ASSERT_TRUE(kept.cover(bed.x, bed.reach));
    PairList filtered, fresh;
    filter_kept_pairs(kept, bed.x, bed.reach, filtered);
    ASSERT_EQ(broad_phase(bed.x, bed.reach, 0.0, fresh, scratch), "");
    EXPECT_EQ(as_set(filtered), as_set(fresh));
    EXPECT_GT(kept.pairs.size(), fresh.size());  // the skin reaches the diagonal neighbours
}

TEST(KeptPairs, ABodyOutsideItsSkinOrAGrownReachEndsTheCover) {
    Bed bed = random_bed(500, 7);
    KeptPairs kept;
    BroadPhaseScratch scratch;
    ASSERT_EQ(search_kept_pairs(bed.x, bed.radius, bed.reach, kept, scratch), "");
    EXPECT_TRUE(kept.cover(bed.x, bed.reach));

    std::vector<Vec3> moved = bed.x;
    moved[123].x() += 1.01 * kSkinShare * bed.radius[123];
    EXPECT_FALSE(kept.cover(moved, bed.reach));
    moved[123].x() -= 0.02 * kSkinShare * bed.radius[123];
    EXPECT_TRUE(kept.cover(moved, bed.reach));

    std::vector<double> grown = bed.reach;
    grown[45] += 1.01 * kSkinShare * bed.radius[45];
    EXPECT_FALSE(kept.cover(bed.x, grown));

    std::vector<Vec3> fewer(bed.x.begin(), bed.x.end() - 1);
    std::vector<double> fewer_reach(bed.reach.begin(), bed.reach.end() - 1);
    EXPECT_FALSE(kept.cover(fewer, fewer_reach));  // a body gone: the indices moved

    kept.clear();
    EXPECT_TRUE(kept.empty());
    EXPECT_FALSE(kept.cover(bed.x, bed.reach));
}

}  // namespace
}  // namespace talus
