// The warm-start cache's lookup (solvers/warm_start.hpp): entries are found by (key of A,
// key of B, feature) whether the ids are dense (the index by B's id) or sparse (bisection),
// whatever order they were given in, and keys it does not hold are not found.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "core/contacts.hpp"
#include "solvers/warm_start.hpp"

namespace talus {
namespace {

/// Entries for bodies B with ids `stride` apart: each has a body neighbour, a wall contact
/// on two features and (every third) a second feature with the same neighbour.
std::vector<WarmStartCache::Entry> entries_for(uint64_t bodies, uint64_t stride) {
    std::vector<WarmStartCache::Entry> out;
    for (uint64_t k = 0; k < bodies; ++k) {
        const uint64_t b = 1 + k * stride;
        const double base = double(k);
        out.push_back({b - 1, b, 0u, base + 0.1, Vec3(base, 0, 0), 1e-3});
        out.push_back({kWallKeyBit | 2, b, 4u, base + 0.2, Vec3(0, base, 0), 1e-3});
        out.push_back({kWallKeyBit | 2, b, 5u, base + 0.3, Vec3(0, 0, base), 1e-3});
        if (k % 3 == 0) out.push_back({b - 1, b, 7u, base + 0.4, Vec3(base, base, 0), 2e-3});
    }
    return out;
}

void expect_every_entry_found(uint64_t stride) {
    const std::vector<WarmStartCache::Entry> given = entries_for(500, stride);
    std::vector<WarmStartCache::Entry> shuffled = given;
    std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937_64(7));
    WarmStartCache cache;
    cache.restore(shuffled, {}, 0.0);
    ASSERT_EQ(cache.size(), given.size());
    for (const WarmStartCache::Entry& e : given) {
        const WarmStartCache::Entry* f = cache.find(e.key_a, e.key_b, e.feature);
        ASSERT_NE(f, nullptr) << e.key_a << ' ' << e.key_b << ' ' << e.feature;
        EXPECT_EQ(f->normal, e.normal);
        EXPECT_EQ(f->friction, e.friction);
        EXPECT_EQ(f->h, e.h);
    }
    // keys it does not hold: another feature, another A, a B without entries, a B past all
    EXPECT_EQ(cache.find(0, 1, 1u), nullptr);
    EXPECT_EQ(cache.find(kWallKeyBit | 3, 1, 4u), nullptr);
    if (stride > 1) EXPECT_EQ(cache.find(1, 2, 0u), nullptr);
    EXPECT_EQ(cache.find(0, 1 + 500 * stride + 12345, 0u), nullptr);
    EXPECT_EQ(cache.find(0, ~uint64_t(0) >> 1, 0u), nullptr);
}

TEST(WarmStart, FindsEveryEntryWithDenseIds) { expect_every_entry_found(1); }
TEST(WarmStart, FindsEveryEntryWithGapsBetweenIds) { expect_every_entry_found(3); }
// ids a billion apart: far too sparse for an index, so the lookup bisects
TEST(WarmStart, FindsEveryEntryWithSparseIds) { expect_every_entry_found(1000000000); }

}  // namespace
}  // namespace talus
