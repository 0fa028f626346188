// Grain placement (engine/flow/particle_fill.hpp) as plain functions: the lattice's extent
// under round-off, the random draws, a random fill's first candidate, and the start-up
// overlap search against brute force. Fills reached through a scene are tested in
// tests/unit/io/scene/test_scene.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "engine/flow/particle_fill.hpp"

namespace talus {
namespace {

TEST(ParticleFill, LatticeExtentHandlesRoundOffAndEmptyAxes) {
    const auto n = lattice_extent(Vec3(0, 0, 0), Vec3(0.3, 0.7, 0), Vec3(0.1, 0.1, 0.1));
    EXPECT_EQ(n[0], 4);  // 0, …, 0.3
    EXPECT_EQ(n[1], 8);  // 0, …, 0.7 (0.1·7 = 0.7000000000000001)
    EXPECT_EQ(n[2], 1);
    EXPECT_EQ(lattice_extent(Vec3(0, 0, 0), Vec3(-1, 1, 1), Vec3(1, 1, 1))[0], 0);
    std::vector<Vec3> pts;
    lattice_points(Vec3(0, 0, 0), Vec3(0.3, 0.7, 0), Vec3(0.1, 0.1, 0.1), pts);
    EXPECT_EQ(pts.size(), 32u);
}

TEST(ParticleFill, BitsToUnitCoversZeroToBelowOne) {
    EXPECT_EQ(bits_to_unit(0), 0.0);
    EXPECT_LT(bits_to_unit(~uint64_t(0)), 1.0);
    EXPECT_EQ(bits_to_unit(uint64_t(1) << 63), 0.5);
}

TEST(ParticleFill, FirstCandidateOfASeedIsItsFirstThreeDraws) {
    // The first candidate of seed 42 is the first three draws of mt19937_64(42).
    std::mt19937_64 rng(42);
    const double fx = bits_to_unit(rng()), fy = bits_to_unit(rng()), fz = bits_to_unit(rng());
    const Vec3 first(fx, fy, fz);
    std::vector<Vec3> out;
    const std::size_t placed =
        random_fill({Vec3::Zero(), Vec3::Ones(), 0.01, 1, 42}, {}, {}, {}, out);
    ASSERT_EQ(placed, 1u);
    EXPECT_EQ(out[0], first);
}

TEST(ParticleFill, OverlapSearchMatchesBruteForceEvenWhenGridCellsAlias) {
    // Three clusters; the second sits exactly 2²¹ cells (cell = 2 r_max = 0.03) from the
    // first, so their cells share hash keys and only the distance test separates them.
    std::mt19937_64 rng(5);
    std::vector<Vec3> x;
    std::vector<double> r;
    const double offsets[3] = {0.0, 0x1.0p21 * 0.03, -3e5};
    for (int i = 0; i < 900; ++i) {
        const double u = bits_to_unit(rng()), v = bits_to_unit(rng()), w = bits_to_unit(rng());
        x.emplace_back(offsets[i % 3] + 0.2 * u, 0.2 * v, 0.2 * w);
        r.push_back(i == 0 ? 0.015 : 0.005 + 0.01 * bits_to_unit(rng()));
    }
    std::vector<std::pair<std::size_t, std::size_t>> expected;  // (b, a), sorted
    for (std::size_t b = 0; b < x.size(); ++b)
        for (std::size_t a = 0; a < b; ++a)
            if (r[a] + r[b] - (x[a] - x[b]).norm() > 1e-9 * std::max(r[a], r[b]))
                expected.push_back({b, a});
    ASSERT_GT(expected.size(), 100u);
    std::vector<std::pair<std::size_t, std::size_t>> got;
    for (const BodyOverlap& o : find_body_overlaps(x, r, 1e-9)) {
        EXPECT_LT(o.a, o.b);
        EXPECT_NEAR(o.depth, r[o.a] + r[o.b] - (x[o.a] - x[o.b]).norm(), 1e-15);
        got.push_back({o.b, o.a});
    }
    EXPECT_EQ(got, expected);
}

}  // namespace
}  // namespace talus
