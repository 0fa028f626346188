// The bodies a rank holds between steps (issue 25; docs/mpi.md, "The bodies a rank holds"):
// along a run, ranks that each update only their own bodies and then redistribute hold
// exactly what the decomposition of the new positions gives, bit for bit: bodies that
// crossed into another rank's blocks moved there, ghosts are fresh copies from their
// owners, bodies that entered on one rank went to their block's rank, and every body is
// owned once; and the decomposition the ranks compute from what they hold is the whole
// store's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "engine/distributed/local_ranks.hpp"
#include "engine/distributed/rank_bodies.hpp"
#include "engine/distributed/rank_problem.hpp"
#include "engine/world/world.hpp"
#include "io/scene.hpp"

namespace talus {
namespace {

// Every per-body array of a store as (name, bytes), then its clump templates' spheres.
std::vector<std::pair<std::string, std::string>> arrays_of(const BodyStore& s) {
    std::vector<std::pair<std::string, std::string>> out;
    auto add = [&](const char* name, const auto& v) {
        out.emplace_back(name, std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(v[0])));
    };
    s.for_each_array(add);
    add("clump first", s.clumps.first);
    add("clump centre", s.clumps.centre);
    add("clump radius", s.clumps.radius);
    return out;
}

void expect_same_store(const HeldBodies& got, const HeldBodies& want, const std::string& at) {
    ASSERT_EQ(got.bodies.size(), want.bodies.size()) << at;
    EXPECT_EQ(got.owner, want.owner) << at;
    const auto g = arrays_of(got.bodies), w = arrays_of(want.bodies);
    for (std::size_t k = 0; k < g.size(); ++k) EXPECT_TRUE(g[k].second == w[k].second) << at << ": " << g[k].first << " differs";
    EXPECT_EQ(got.bodies.motions.size(), want.bodies.motions.size()) << at;
}

// What each rank's own step would leave: its own bodies (and every kinematic body, which
// every rank places) at the whole run's new state, those the outlet removed gone; the
// ghosts left stale (a NaN velocity: redistribute must replace them); the bodies the
// emitter added enter on rank 0 as its own.
void step_own_bodies(std::vector<HeldBodies>& held, const BodyStore& whole, uint64_t& known_below) {
    std::map<uint64_t, uint32_t> at;
    for (std::size_t i = 0; i < whole.size(); ++i) at[whole.id[i]] = uint32_t(i);
    for (std::size_t r = 0; r < held.size(); ++r) {
        BodyStore& b = held[r].bodies;
        std::vector<uint8_t> gone(b.size(), 0);
        for (std::size_t i = 0; i < b.size(); ++i) {
            const bool updated = held[r].owner[i] == int32_t(r) || b.kinematic(i);
            const auto it = at.find(b.id[i]);
            if (!updated) {
                b.velocity[i] = Vec3::Constant(std::numeric_limits<double>::quiet_NaN());
                continue;
            }
            if (it == at.end()) {
                gone[i] = 1;
                continue;
            }
            b.position[i] = whole.position[it->second];
            b.orientation[i] = whole.orientation[it->second];
            b.velocity[i] = whole.velocity[it->second];
            b.angular_velocity[i] = whole.angular_velocity[it->second];
        }
        b.erase_marked(gone);
        talus::erase_marked(gone, held[r].owner);
    }
    uint64_t most = known_below;
    for (std::size_t i = 0; i < whole.size(); ++i) {
        if (whole.id[i] < known_below) continue;
        held[0].bodies.append_from(whole, i);
        held[0].owner.push_back(0);
        most = std::max(most, whole.id[i] + 1);
    }
    known_below = most;
}

void expect_redistribution_along(const char* scene_file, int steps, int ranks, double edge) {
    Scene scene = load_scene(std::string(TALUS_SOURCE_DIR "/tests/scenes/") + scene_file);
    World& w = scene.world;
    for (int s = 0; s < 50; ++s) ASSERT_TRUE(w.step().ok);
    Decomposition d = body_decomposition(w.bodies, edge, ranks);
    std::vector<HeldBodies> held;
    for (int r = 0; r < ranks; ++r) held.push_back(hold_from_whole(w.bodies, d, r));
    uint64_t known_below = 0;
    for (uint64_t id : w.bodies.id) known_below = std::max(known_below, id + 1);
    std::size_t moved = 0, entered = 0;
    uint64_t bytes = 0;
    for (int s = 1; s <= steps; ++s) {
        ASSERT_TRUE(w.step().ok);
        const uint64_t before = known_below;
        step_own_bodies(held, w.bodies, known_below);
        entered += known_below - before;
        d = body_decomposition(w.bodies, edge, ranks);
        for (int r = 0; r < ranks; ++r) {  // own bodies now in another rank's blocks
            const HeldBodies& h = held[std::size_t(r)];
            for (std::size_t i = 0; i < h.bodies.size(); ++i)
                moved += h.owner[i] == r && !h.bodies.kinematic(i) && d.owner_of(h.bodies.position[i]) != r;
        }
        std::vector<Decomposition> again(static_cast<std::size_t>(ranks));
        run_local_ranks(ranks, [&](Ranks& rk) {
            const uint64_t sent = redistribute(held[std::size_t(rk.rank())], d, rk);
            if (rk.rank() == 0) bytes += sent;
            again[std::size_t(rk.rank())] = decompose_held(held[std::size_t(rk.rank())], edge, rk);
        });
        for (const Decomposition& e : again) {  // from what the ranks hold: the whole store's
            ASSERT_EQ(e.cut, d.cut) << "step " << s;
            ASSERT_EQ(e.grid.origin, d.grid.origin) << "step " << s;
        }
        std::vector<int> owned(w.bodies.size(), 0);
        std::map<uint64_t, uint32_t> at;
        for (std::size_t i = 0; i < w.bodies.size(); ++i) at[w.bodies.id[i]] = uint32_t(i);
        for (int r = 0; r < ranks; ++r) {
            const std::string where = std::string(scene_file) + ", step " + std::to_string(s) + ", rank " +
                                      std::to_string(r) + " of " + std::to_string(ranks);
            expect_same_store(held[std::size_t(r)], hold_from_whole(w.bodies, d, r), where);
            if (::testing::Test::HasFatalFailure()) return;
            const HeldBodies& h = held[std::size_t(r)];
            for (std::size_t i = 0; i < h.bodies.size(); ++i)
                if (h.owner[i] == r) ++owned[at.at(h.bodies.id[i])];
        }
        for (std::size_t i = 0; i < w.bodies.size(); ++i) ASSERT_EQ(owned[i], 1) << "body " << w.bodies.id[i];
    }
    std::printf("[ %s, %d ranks ] %d steps: %zu bodies moved to another rank, %zu entered on rank 0; "
                "rank 0 sent %.1f kB a step\n",
                scene_file, ranks, steps, moved, entered, double(bytes) / 1e3 / steps);
    EXPECT_GT(moved, 0u) << "no body crossed into another rank's blocks";
    EXPECT_GT(entered, 0u) << "no body entered";
}

// The 3,000-grain pour: grains raining through the blocks of 3 and 4 ranks, an emitter and an
// outlet.
TEST(RankBodies, AlongThePourEveryRankHoldsWhatTheDecompositionGives) {
    for (int ranks : {3, 4}) {
        expect_redistribution_along("mpi_pour.toml", 300, ranks, 0.008);
        if (HasFatalFailure()) return;
    }
}

// The resume test's pot: a kinematic clump (held by every rank, never sent), an emitter and an
// outlet, over 2 ranks.
TEST(RankBodies, AKinematicClumpStaysOnEveryRank) {
    expect_redistribution_along("resume.toml", 100, 2, 0.02);
}

}  // namespace
}  // namespace talus
