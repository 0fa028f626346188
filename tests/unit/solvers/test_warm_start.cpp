// The warm-start cache's lookup (solvers/warm_start.hpp): entries are found by (key of A,
// key of B, feature) whether the ids are dense (the index by B's id) or sparse (bisection),
// whatever order they were given in, and keys it does not hold are not found. A step's
// store gives the same entries in parallel as in place.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "core/contacts.hpp"
#include "solvers/assemble.hpp"
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
    if (stride > 1) { EXPECT_EQ(cache.find(1, 2, 0u), nullptr); }
    EXPECT_EQ(cache.find(0, 1 + 500 * stride + 12345, 0u), nullptr);
    EXPECT_EQ(cache.find(0, ~uint64_t(0) >> 1, 0u), nullptr);
}

TEST(WarmStart, FindsEveryEntryWithDenseIds) { expect_every_entry_found(1); }
TEST(WarmStart, FindsEveryEntryWithGapsBetweenIds) { expect_every_entry_found(3); }
// ids a billion apart: far too sparse for an index, so the lookup bisects
TEST(WarmStart, FindsEveryEntryWithSparseIds) { expect_every_entry_found(1000000000); }

// store() writes each contact's entry to its place in parallel, or (a large run, or ids too
// sparse for the index) serially and sorts in place: 30,000 contacts in a shuffled order
// (as the colouring leaves them), a sixth with no impulse (not kept), walls among the A
// sides, several features of one pair; ids dense, then a billion apart. Every field of
// every entry is the same both ways, and each kept contact is found with its impulse.
TEST(WarmStart, StoresTheSameEntriesInParallelAsInPlace) {
    for (uint64_t stride : {uint64_t(1), uint64_t(1000000000)}) {
        std::mt19937_64 rng(11);
        std::uniform_real_distribution<double> u(-1.0, 1.0);
        const std::size_t n = 30000, n_bodies = 8000;
        ContactList c;
        c.resize(n, false, false);
        AssembledBatch batch;
        batch.normal.resize(n);
        batch.gamma.resize(n);
        std::vector<std::size_t> order(n);
        for (std::size_t i = 0; i < n; ++i) order[i] = i;
        std::shuffle(order.begin(), order.end(), rng);
        for (std::size_t k = 0; k < n; ++k) {
            const std::size_t i = order[k];  // distinct keys: B = i / 4, A below it or a wall
            const uint64_t b = uint64_t(i / 4 % n_bodies) * stride + 1;
            const bool wall = i % 5 == 0;
            c.key_b[k] = b;
            c.key_a[k] = wall ? (kWallKeyBit | uint64_t(i % 3)) : b - 1 - uint64_t(i % 4 / 2);
            c.feature[k] = uint32_t(i / (4 * n_bodies)) * 4 + uint32_t(i % 2);
            batch.normal[k] = Vec3(u(rng), u(rng), u(rng)).normalized();
            batch.gamma[k] = i % 6 == 1 ? Vec3::Zero() : Vec3(0.5 + u(rng), u(rng), u(rng));
        }
        WarmStartCache in_place, parallel;
        in_place.store(c, batch, 1e-3, true);
        parallel.store(c, batch, 1e-3, false);
        ASSERT_EQ(in_place.size(), parallel.size());
        ASSERT_GT(in_place.size(), n / 2);
        ASSERT_LT(in_place.size(), n);
        for (std::size_t k = 0; k < in_place.size(); ++k) {
            const WarmStartCache::Entry& x = in_place.entries()[k];
            const WarmStartCache::Entry& y = parallel.entries()[k];
            ASSERT_EQ(x.key_a, y.key_a) << k;
            ASSERT_EQ(x.key_b, y.key_b) << k;
            ASSERT_EQ(x.feature, y.feature) << k;
            ASSERT_EQ(x.normal, y.normal) << k;
            ASSERT_EQ(x.friction, y.friction) << k;
            ASSERT_EQ(x.h, y.h) << k;
        }
        for (std::size_t k = 0; k < n; ++k) {
            const WarmStartCache::Entry* e = parallel.find(c.key_a[k], c.key_b[k], c.feature[k]);
            if (batch.gamma[k] == Vec3::Zero()) {
                EXPECT_EQ(e, nullptr) << k;
                continue;
            }
            ASSERT_NE(e, nullptr) << k;
            EXPECT_EQ(e->normal, batch.gamma[k][0]) << k;
        }
    }
}

}  // namespace
}  // namespace talus
