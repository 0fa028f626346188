// The decomposition of bodies among ranks (engine/distributed/decomposition.hpp), checked by
// brute force: every body owned once, ranges contiguous along the Morton curve and balanced
// to the greedy bound, and the contacts the ranks find among their own bodies and ghosts,
// each kept by its one owner, are exactly the serial contact set; on random clouds and
// along a run with an emitter and an outlet.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <utility>

#include "collision/broad_phase.hpp"
#include "core/morton.hpp"
#include "engine/distributed/decomposition.hpp"
#include "io/scene.hpp"

namespace talus {
namespace {

using PairSet = std::set<std::pair<uint32_t, uint32_t>>;

PairSet serial_pairs(const std::vector<Vec3>& x, const std::vector<double>& r, double envelope) {
    PairList all;
    all_pairs(x, r, envelope, all);
    PairSet s;
    for (std::size_t k = 0; k < all.size(); ++k) s.insert({uint32_t(all.a[k]), uint32_t(all.b[k])});
    return s;
}

/// What the ranks find together: each rank takes the pairs among its owned bodies and
/// ghosts (by brute force on that subset) and keeps those it owns. Fails the test when a
/// pair is kept twice.
PairSet ranks_pairs(const BodySplit& split, const std::vector<Vec3>& x, const std::vector<double>& r,
                    const std::vector<uint64_t>& id, double envelope) {
    PairSet found;
    for (std::size_t rank = 0; rank < split.owned.size(); ++rank) {
        std::vector<uint32_t> local = split.owned[rank];
        local.insert(local.end(), split.ghosts[rank].begin(), split.ghosts[rank].end());
        std::sort(local.begin(), local.end());
        for (std::size_t p = 0; p < local.size(); ++p)
            for (std::size_t q = p + 1; q < local.size(); ++q) {
                const uint32_t a = local[p], b = local[q];
                if ((x[a] - x[b]).norm() > r[a] + r[b] + envelope) continue;
                if (contact_owner(split, id, a, b) != int(rank)) continue;
                EXPECT_TRUE(found.insert({a, b}).second) << "pair " << a << "-" << b << " kept twice";
            }
    }
    return found;
}

/// Every body owned by exactly one rank, and never a ghost on its own rank.
void expect_owned_once(const BodySplit& split, std::size_t n) {
    std::vector<int> owners(n, 0);
    for (std::size_t rank = 0; rank < split.owned.size(); ++rank) {
        for (uint32_t i : split.owned[rank]) {
            ++owners[i];
            EXPECT_EQ(split.owner[i], int(rank));
        }
        for (uint32_t i : split.ghosts[rank]) EXPECT_NE(split.owner[i], int(rank)) << "body " << i;
    }
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(owners[i], 1) << "body " << i;
}

TEST(Morton, CompactInvertsSpreadAndKeysInterleave) {
    std::mt19937_64 rng(7);
    for (int t = 0; t < 1000; ++t) {
        const uint64_t v = rng() & 0x1fffff;
        EXPECT_EQ(morton_compact(morton_spread(v)), v);
    }
    EXPECT_EQ(morton_key(1, 0, 0), 1u);
    EXPECT_EQ(morton_key(0, 1, 0), 2u);
    EXPECT_EQ(morton_key(0, 0, 1), 4u);
    EXPECT_EQ(morton_key(0x1fffff, 0x1fffff, 0x1fffff), (uint64_t(1) << 63) - 1);
}

TEST(Decomposition, RandomCloudsOwnedOnceBalancedAndTheContactsAreTheSerialOnes) {
    for (uint64_t seed : {1u, 2u, 3u}) {
        std::mt19937_64 rng(seed);
        std::uniform_real_distribution<double> pos(-0.05, 0.05), rad(0.001, 0.003);
        const std::size_t n = 2500;
        std::vector<Vec3> x(n);
        std::vector<double> r(n);
        std::vector<uint64_t> id(n);
        std::vector<uint32_t> weight(n);
        for (std::size_t i = 0; i < n; ++i) {
            x[i] = Vec3(pos(rng), pos(rng), 0.3 * pos(rng));  // a flat slab: blocks of varied load
            r[i] = rad(rng);
            id[i] = 1000 + (i * 7919) % n;  // ids in another order than the indices
            weight[i] = 1 + uint32_t(rng() % 6);
        }
        const double envelope = 0.0005, reach = 2 * 0.003 + envelope;
        const PairSet serial = serial_pairs(x, r, envelope);
        ASSERT_GT(serial.size(), 500u);
        for (uint32_t cells : {1u, 2u}) {
            const BlockGrid grid = block_grid(Vec3::Constant(-0.06), reach, cells);
            ASSERT_EQ(check_block_size(grid, reach), "");
            for (int p : {1, 2, 3, 4, 7}) {
                SCOPED_TRACE(testing::Message() << "seed " << seed << ", " << cells << " cells a block, P = " << p);
                const Decomposition d = decompose(grid, x, weight, p);
                ASSERT_EQ(d.ranks(), p);
                const BodySplit split = split_bodies(d, x);
                expect_owned_once(split, n);
                // contiguous along the curve: the owner never decreases with the key
                std::vector<std::pair<uint64_t, int>> by_key;
                for (std::size_t i = 0; i < n; ++i) by_key.push_back({grid.key(x[i]), split.owner[i]});
                std::sort(by_key.begin(), by_key.end());
                for (std::size_t k = 1; k < n; ++k) EXPECT_LE(by_key[k - 1].second, by_key[k].second);
                // balanced to the greedy bound: total/P + the heaviest block
                std::map<uint64_t, uint64_t> block_load;
                uint64_t total = 0;
                for (std::size_t i = 0; i < n; ++i) block_load[grid.key(x[i])] += weight[i], total += weight[i];
                uint64_t heaviest = 0;
                for (const auto& [key, w] : block_load) heaviest = std::max(heaviest, w);
                const std::vector<uint64_t> loads = rank_loads(d, x, weight);
                EXPECT_EQ(std::accumulate(loads.begin(), loads.end(), uint64_t(0)), total);
                for (uint64_t l : loads) EXPECT_LE(l, total / uint64_t(p) + heaviest + 1);
                if (p > 1) { EXPECT_LT(imbalance(loads), 1.0 + double(p) * double(heaviest) / double(total) + 1e-9); }
                EXPECT_EQ(ranks_pairs(split, x, r, id, envelope), serial);
                // the same decomposition whatever the order of the bodies
                std::vector<std::size_t> perm(n);
                std::iota(perm.begin(), perm.end(), 0);
                std::shuffle(perm.begin(), perm.end(), rng);
                std::vector<Vec3> xs(n);
                std::vector<uint32_t> ws(n);
                for (std::size_t i = 0; i < n; ++i) xs[i] = x[perm[i]], ws[i] = weight[perm[i]];
                EXPECT_EQ(decompose(grid, xs, ws, p).cut, d.cut);
            }
        }
    }
}

TEST(Decomposition, GhostsAreTheOtherRanksOfTheNeighbouringBlocks) {
    // two ranks cut between blocks: a body next to the cut is a ghost on the other side,
    // one deep inside is not
    const BlockGrid grid{Vec3::Zero(), 1.0};
    Decomposition d{grid, {0, morton_key(1, 0, 0), std::numeric_limits<uint64_t>::max()}};
    EXPECT_EQ(d.owner_of(Vec3(0.5, 0.5, 0.5)), 0);
    EXPECT_EQ(d.owner_of(Vec3(1.5, 0.5, 0.5)), 1);
    std::vector<int> others;
    d.ghost_ranks(Vec3(0.5, 0.5, 0.5), 0, others);
    EXPECT_EQ(others, std::vector<int>{1});
    d.ghost_ranks(Vec3(1.5, 0.5, 0.5), 1, others);
    EXPECT_EQ(others, std::vector<int>{0});
    // morton_key(3, 3, 3) = 63 > the cut: rank 1, whose neighbours are all rank 1's
    d.ghost_ranks(Vec3(3.5, 3.5, 3.5), 1, others);
    EXPECT_TRUE(others.empty());
    // far outside the grid: clamped to the border blocks, still owned
    EXPECT_EQ(d.owner_of(Vec3(-1e9, -1e9, -1e9)), 0);
    EXPECT_EQ(d.owner_of(Vec3(1e30, 1e30, 1e30)), 1);
}

TEST(Decomposition, BodiesLargerThanABlockAreRefused) {
    const BlockGrid grid = block_grid(Vec3::Zero(), 0.01, 1);
    EXPECT_EQ(check_block_size(grid, 0.01), "");
    const std::string why = check_block_size(grid, 0.02);
    EXPECT_NE(why.find("larger than a block"), std::string::npos) << why;
}

TEST(Decomposition, MoreRanksThanBlocksLeavesEmptyRanges) {
    const BlockGrid grid{Vec3::Zero(), 1.0};
    const std::vector<Vec3> x{Vec3(0.5, 0.5, 0.5), Vec3(0.6, 0.5, 0.5), Vec3(1.5, 0.5, 0.5)};
    const std::vector<uint32_t> w{1, 1, 1};
    const Decomposition d = decompose(grid, x, w, 5);
    const BodySplit split = split_bodies(d, x);
    expect_owned_once(split, x.size());
    // the first block is rank 0's; the second goes where the prefix rule puts it (its
    // preceding weight 2 of 3 is 3.3 fifths: rank 3); the ranks between hold nothing
    const std::vector<uint64_t> loads = rank_loads(d, x, w);
    EXPECT_EQ(loads, (std::vector<uint64_t>{2, 0, 0, 1, 0}));
}

TEST(Decomposition, AlongARunWithAnEmitterAndAnOutletEveryBodyIsOwnedOnceAndNoContactIsLost) {
    // tests/scenes/resume.toml: beads fall from an emitter into a pot with an outlet;
    // decomposed afresh at every step over 3 ranks, with the run's own contact reach
    Scene scene = load_scene(TALUS_SOURCE_DIR "/tests/scenes/resume.toml");
    World& w = scene.world;
    std::size_t checked = 0, contacts = 0;
    for (int step = 0; step < 100; ++step) {
        ASSERT_TRUE(w.step().ok);
        const std::size_t n = w.bodies.size();
        std::vector<Vec3> x(w.bodies.position.begin(), w.bodies.position.end());
        std::vector<double> r(n);
        double r_max = 0.0;
        Vec3 lo = x.empty() ? Vec3::Zero() : x[0];
        for (std::size_t i = 0; i < n; ++i) {
            r[i] = w.bodies.radius[i];
            r_max = std::max(r_max, r[i]);
            lo = lo.cwiseMin(x[i]);
        }
        const double envelope = 0.001, reach = 2 * r_max + envelope;
        const BlockGrid grid = block_grid(lo, reach, 1);
        ASSERT_EQ(check_block_size(grid, reach), "");
        const std::vector<uint32_t> weight(n, 1);
        const Decomposition d = decompose(grid, x, weight, 3);
        const BodySplit split = split_bodies(d, x);
        expect_owned_once(split, n);
        const std::vector<uint64_t> id(w.bodies.id.begin(), w.bodies.id.end());
        const PairSet serial = serial_pairs(x, r, envelope);
        ASSERT_EQ(ranks_pairs(split, x, r, id, envelope), serial) << "step " << step;
        ++checked;
        contacts += serial.size();
    }
    EXPECT_EQ(checked, 100u);
    EXPECT_GT(contacts, 1000u);  // the pot fills: the check is not vacuous
}

}  // namespace
}  // namespace talus
