// A rank finds its contacts from the bodies it holds alone (issue 25; docs/mpi.md, "Contacts
// found by each rank"): on P in-process ranks, each holding its own bodies and the ghosts
// of the blocks around them, collide_on_rank gives every contact of an own body with the
// one-process geometry, rows, warm start and colour, bit for bit, and the solve over the
// ranks from those rows gives the one-process velocities and impulses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <random>
#include <tuple>

#include "core/walls.hpp"
#include "engine/distributed/local_ranks.hpp"
#include "engine/distributed/rank_problem.hpp"
#include "engine/world/collide_on_rank.hpp"
#include "engine/world/world.hpp"
#include "io/scene.hpp"
#include "solvers/rank_operator.hpp"
#include "tests/support/instrumented.hpp"
#include "solvers/contact_ops.hpp"
#include "tests/support/thin_wall_builder.hpp"
#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

bool same_bits(const Vec3& a, const Vec3& b) { return std::memcmp(a.data(), b.data(), sizeof(double) * 3) == 0; }
bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

using Key = std::tuple<uint64_t, uint64_t, uint32_t>;

// The colour of contact i of a list coloured by colour_start.
uint32_t colour_of(const std::vector<uint32_t>& start, std::size_t i) {
    return uint32_t(std::upper_bound(start.begin(), start.end(), uint32_t(i)) - start.begin()) - 1;
}

struct Held {
    BodyStore bodies;
    std::vector<int32_t> owner;
    std::vector<uint32_t> whole;  ///< per held body: its index in the whole store
};

// Rank r's own bodies and the ghosts around them, in a shuffled order (a rank's order is
// its own).
Held held_by(const BodyStore& whole, const BodySplit& split, int r, uint64_t seed) {
    Held h;
    h.whole = split.owned[std::size_t(r)];
    h.whole.insert(h.whole.end(), split.ghosts[std::size_t(r)].begin(), split.ghosts[std::size_t(r)].end());
    std::mt19937_64 rng(seed);
    std::shuffle(h.whole.begin(), h.whole.end(), rng);
    for (uint32_t i : h.whole) {
        h.bodies.append_from(whole, i);
        h.owner.push_back(split.owner[i]);
    }
    return h;
}

struct Checked {
    std::size_t contacts = 0, ghosts = 0, shared = 0, colours = 0;
};

// The next step of `w` found over `ranks` ranks against one process.
void expect_ranks_collide_like_one_process(const World& w, int ranks, Checked& out) {
    const World::Problem p = w.next_problem();  // bodies at ν*, the coloured contacts and rows
    const double h = p.h;
    const std::vector<WallState> states = wall_states(w.walls, w.time, w.time, h);
    std::vector<double> reach;
    const Margins whole_margins = choose_margins(p.bodies, states, w.simulation.gravity, w.solver.envelope, h, reach);
    const double edge = 2.0 * *std::max_element(reach.begin(), reach.end());
    const BodySplit split = split_bodies(body_decomposition(p.bodies, edge, ranks), p.bodies.position);

    std::map<Key, uint32_t> whole_contact;
    for (std::size_t i = 0; i < p.contacts.size(); ++i)
        whole_contact[{p.contacts.key_a[i], p.contacts.key_b[i], p.contacts.feature[i]}] = uint32_t(i);
    // the colours a sweep over ranks visits: the overflow colour cut into levels
    const SweepColours sweep = sweep_colours_of(p.batch);
    const std::size_t whole_colours = sweep.count;

    // the one-process solve of the same rows
    BodyStore solved = p.bodies;
    AssembledBatch batch = p.batch;
    SolverWorkspace work;
    const SolverResult serial = solve_ccp(batch, solved, w.solver, work);

    out = Checked{};
    std::vector<std::size_t> held_count(p.contacts.size(), 0);
    std::vector<Held> held(static_cast<std::size_t>(ranks));
    std::vector<RankCollided> found(static_cast<std::size_t>(ranks));
    std::vector<SolverResult> result(static_cast<std::size_t>(ranks));
    std::vector<std::vector<Vec3>> warm(static_cast<std::size_t>(ranks));  // the warm start each rank assembled
    for (int r = 0; r < ranks; ++r) held[std::size_t(r)] = held_by(p.bodies, split, r, 7 + uint64_t(r));
    run_local_ranks(ranks, [&](Ranks& rk) {
        Held& mine = held[std::size_t(rk.rank())];
        const RankCollideInput in{.bodies = mine.bodies,
                                  .owner = mine.owner,
                                  .walls = w.walls,
                                  .states = states,
                                  .periodic = w.simulation.periodic,
                                  .materials = w.materials,
                                  .solver = w.solver,
                                  .h = h,
                                  .warm = w.warm_start(),
                                  .set_aside = true,
                                  .gravity = w.simulation.gravity,
                                  .at = {w.time, w.step_count + 1}};
        RankCollided& f = found[std::size_t(rk.rank())];
        f = collide_on_rank(in, rk);
        if (!f.error.ok) return;
        warm[std::size_t(rk.rank())] = f.batch.gamma;
        SolverWorkspace wk;
        result[std::size_t(rk.rank())] = solve_ccp_on_rank(f.batch, mine.bodies, mine.owner, w.solver, wk, rk);
    });

    for (int r = 0; r < ranks; ++r) {
        const Held& mine = held[std::size_t(r)];
        const RankCollided& f = found[std::size_t(r)];
        const std::string at = "rank " + std::to_string(r) + " of " + std::to_string(ranks);
        EXPECT_TRUE(f.error.ok) << at << ": " << f.error.message;
        if (!f.error.ok) continue;
        EXPECT_TRUE(same_bits(f.margins.envelope, whole_margins.envelope)) << at;
        EXPECT_TRUE(same_bits(f.margins.wall, whole_margins.wall)) << at;
        EXPECT_EQ(f.colours, whole_colours) << at;
        EXPECT_EQ(f.contacts.colour_start.size(), whole_colours + 1) << at;
        out.ghosts += split.ghosts[std::size_t(r)].size();
        const ContactList& c = f.contacts;
        ASSERT_EQ(f.batch.size(), c.size()) << at;
        for (std::size_t i = 0; i < c.size(); ++i) {
            const auto it = whole_contact.find({c.key_a[i], c.key_b[i], c.feature[i]});
            ASSERT_NE(it, whole_contact.end()) << at << ": a contact one process does not have";
            const uint32_t k = it->second;
            ++held_count[k];
            // the same bodies, the same geometry, rows, warm start and colour
            for (auto [local, global] : {std::pair{c.a[i], p.contacts.a[k]}, std::pair{c.b[i], p.contacts.b[k]}}) {
                ASSERT_EQ(local == kNoBody, global == kNoBody) << at;
                if (local != kNoBody) { ASSERT_EQ(mine.whole[std::size_t(local)], uint32_t(global)) << at; }
            }
            const bool same = same_bits(c.point[i], p.contacts.point[k]) && same_bits(c.normal[i], p.contacts.normal[k]) &&
                              same_bits(c.gap[i], p.contacts.gap[k]) &&
                              same_bits(contact_frame(f.batch, i).u, contact_frame(p.batch, k).u) &&
                              same_bits(f.batch.lever_a[i], p.batch.lever_a[k]) &&
                              same_bits(f.batch.lever_b[i], p.batch.lever_b[k]) &&
                              same_bits(f.batch.rhs[i], p.batch.rhs[k]) && same_bits(f.batch.stab[i], p.batch.stab[k]) &&
                              same_bits(f.batch.mu[i], p.batch.mu[k]) && same_bits(f.batch.eta[i], p.batch.eta[k]);
            ASSERT_TRUE(same) << at << ": contact " << c.key_a[i] << "–" << c.key_b[i] << " differs";
            ASSERT_EQ(colour_of(c.colour_start, i), sweep.colour[k]) << at;
            ASSERT_TRUE(same_bits(warm[std::size_t(r)][i], p.batch.gamma[k])) << at << ": warm start differs";
            // the solve from those rows: the one-process impulses
            ASSERT_TRUE(same_bits(f.batch.gamma[i], batch.gamma[k])) << at << ": impulse differs";
        }
        out.contacts += c.size();
        EXPECT_EQ(result[std::size_t(r)].iterations, serial.iterations) << at;
        EXPECT_TRUE(same_bits(result[std::size_t(r)].residual, serial.residual)) << at;
        for (std::size_t b = 0; b < mine.bodies.size(); ++b) {
            if (mine.owner[b] != r) continue;
            const uint32_t g = mine.whole[b];
            EXPECT_TRUE(same_bits(mine.bodies.velocity[b], solved.velocity[g]) &&
                        same_bits(mine.bodies.angular_velocity[b], solved.angular_velocity[g]))
                << at << ": body " << mine.bodies.id[b];
        }
    }
    // every contact found, by one rank, or by two when its bodies have two owners
    for (std::size_t k = 0; k < p.contacts.size(); ++k) {
        const int32_t a = p.contacts.a[k], b = p.contacts.b[k];
        const bool two = a != kNoBody && b != kNoBody && split.owner[std::size_t(a)] != split.owner[std::size_t(b)];
        EXPECT_EQ(held_count[k], two ? 2u : 1u) << "contact " << k;
        out.shared += two;
    }
    out.colours = whole_colours;
}

// Steps `w` and checks its next step over `first_ranks` to 4 ranks every `every` steps,
// `steps` in all; `shared`: contacts held by two of 4 ranks at the last check.
void expect_along_run(World& w, int steps, int every, int first_ranks, std::size_t& shared) {
    for (int s = 1; s <= steps; ++s) {
        ASSERT_TRUE(w.step().ok);
        if (s % every != 0) continue;
        for (int ranks = first_ranks; ranks <= 4; ++ranks) {
            Checked c;
            expect_ranks_collide_like_one_process(w, ranks, c);
            if (::testing::Test::HasFatalFailure()) return;
            std::printf("[ step %d, %d ranks ] %zu contacts held, %zu of them by two ranks; %zu ghosts; %zu colours\n",
                        s, ranks, c.contacts, c.shared, c.ghosts, c.colours);
            shared = c.shared;
        }
    }
}

// The 3,000-grain pour with its defaults (bgs, the adaptive step, set-aside contacts, an
// emitter and an outlet) at four moments, over 1 to 4 ranks.
TEST(CollideOnRank, EveryRankFindsItsContactsWithTheOneProcessBits) {
    Scene scene = load_scene(TALUS_SOURCE_DIR "/tests/scenes/mpi_pour.toml");
    std::size_t shared = 0;
    expect_along_run(scene.world, testing::kInstrumented ? 400 : 800, 200, 1, shared);
    EXPECT_GT(shared, 0u) << "no contact across ranks";
}

// A ball with 200 beads on it: more than 63 colours, so an overflow colour, which the ranks
// cut into levels together.
TEST(CollideOnRank, TheOverflowColourIsCutIntoTheOneProcessLevels) {
    World w = testing::ball_with_beads();
    ASSERT_TRUE(w.step().ok);
    ASSERT_TRUE(w.contacts().overflow_colour);
    for (int ranks = 1; ranks <= 4; ++ranks) {
        Checked c;
        expect_ranks_collide_like_one_process(w, ranks, c);
        if (HasFatalFailure()) return;
        std::printf("[ ball, %d ranks ] %zu contacts held, %zu of them by two ranks; %zu sweep colours\n", ranks,
                    c.contacts, c.shared, c.colours);
        EXPECT_GT(c.colours, 64u);
    }
}

// An ellipsoid against a cone wall (cones collide with spheres, clumps and capsules) fails the
// step on the rank that holds it: every rank returns that rank's error, the one-process
// message, and none is left waiting in a collective.
TEST(CollideOnRank, AFailureOnOneRankIsEveryRanksError) {
    World w = testing::make_world(1e-3, Vec3(0, 0, -9.81));
    const uint32_t m = testing::add_material(w, 2500.0, 0.5);
    // a short conical shell of one radius around the bodies: a drum's wall, but a cone
    w.walls.push_back(testing::cone_wall(Vec3(0, 0, -0.01), Vec3(0, 0, 0.01), 0.05, 0.05, m));
    uint64_t id = 1;
    for (int i = -3; i <= 3; ++i)
        for (int j = -3; j <= 3; ++j) w.bodies.add_sphere(id++, Vec3(0.011 * i, 0.011 * j, 0.0), 0.005, 2500.0, m);
    const uint64_t ellipsoid = id;
    w.bodies.add_ellipsoid(ellipsoid, Vec3(0.0, 0.0465, 0.0), Vec3(0.005, 0.004, 0.003), 2500.0, m);

    World one = w;
    const StepStatus whole = one.step();
    ASSERT_FALSE(whole.ok);
    ASSERT_TRUE(whole.has(StepFault::UnsupportedWall)) << whole.message;

    const double h = w.simulation.dt;
    BodyStore star = w.bodies;
    apply_forces(star, w.simulation.gravity, h);
    const std::vector<WallState> states = wall_states(w.walls, w.time, w.time, h);
    std::vector<double> reach;
    choose_margins(star, states, w.simulation.gravity, w.solver.envelope, h, reach);
    const double edge = 2.0 * *std::max_element(reach.begin(), reach.end());
    for (int ranks = 2; ranks <= 4; ++ranks) {
        const BodySplit split = split_bodies(body_decomposition(star, edge, ranks), star.position);
        std::vector<StepError> errors(static_cast<std::size_t>(ranks));
        run_local_ranks(ranks, [&](Ranks& rk) {
            const Held mine = held_by(star, split, rk.rank(), 3);
            const RankCollideInput in{.bodies = mine.bodies, .owner = mine.owner, .walls = w.walls,
                                      .states = states, .periodic = w.simulation.periodic,
                                      .materials = w.materials, .solver = w.solver, .h = h,
                                      .warm = w.warm_start(), .set_aside = true,
                                      .gravity = w.simulation.gravity, .at = {w.time, 1}};
            errors[std::size_t(rk.rank())] = collide_on_rank(in, rk).error;
        });
        const int holder = split.owner[star.size() - 1];
        for (int r = 0; r < ranks; ++r) {
            const StepError& e = errors[std::size_t(r)];
            EXPECT_EQ(e.faults, whole.faults) << ranks << " ranks, rank " << r;
            EXPECT_EQ(e.message, "rank " + std::to_string(holder) + ": " + whole.message) << ranks << " ranks, rank " << r;
            EXPECT_EQ(e.bad_bodies, std::vector<uint64_t>{ellipsoid});
        }
    }
}

// The resume test's pot: an emitter, an outlet, and a kinematic clump stirring the grains
// (its contacts become moving-wall contacts on the rank of each grain), with pgs.
TEST(CollideOnRank, AKinematicClumpAndItsGrainsOverRanks) {
    Scene scene = load_scene(TALUS_SOURCE_DIR "/tests/scenes/resume.toml");
    std::size_t shared = 0;
    expect_along_run(scene.world, 200, 100, 2, shared);
    EXPECT_GT(shared, 0u) << "no contact across ranks";
}

}  // namespace
}  // namespace talus
