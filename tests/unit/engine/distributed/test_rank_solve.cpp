// One contact solve over P ranks gives the one-process impulses and velocities bit for bit
// (issue 25; docs/mpi.md, "Solvers across ranks"). The ranks are P threads
// (engine/distributed/local_ranks.hpp): each holds only its part of the problem
// (engine/distributed/rank_problem.hpp: its own bodies, ghosts, every contact of its own
// bodies) and learns the rest from messages, as under mpirun.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numbers>
#include <utility>

#include "engine/distributed/local_ranks.hpp"
#include "engine/distributed/rank_problem.hpp"
#include "engine/world/world.hpp"
#include "io/scene.hpp"
#include "solvers/colouring.hpp"
#include "solvers/rank_operator.hpp"
#include "tests/support/instrumented.hpp"
#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using testing::add_material;
using testing::ball_with_beads;
using testing::make_world;

bool same_bits(const Vec3& a, const Vec3& b) { return std::memcmp(a.data(), b.data(), sizeof(double) * 3) == 0; }
bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

struct RankOutcome {
    RankProblem part;
    SolverResult result;
    RankTraffic traffic;
};

struct Counts {
    std::size_t shared_contacts = 0;  ///< contacts held by two ranks
    uint64_t halos = 0, bytes = 0;
    int iterations = 0;
};

/// Solves the problem in one process and over `ranks` ranks with `settings`; every rank's
/// result, every impulse it holds and every own body's velocity must have the one-process bits.
Counts expect_ranks_solve_like_one_process(const World::Problem& problem, const SolverSettings& settings,
                                           int ranks, const std::string& what) {
    BodyStore bodies = problem.bodies;
    AssembledBatch batch = problem.batch;
    SolverWorkspace work;
    const SolverResult serial = solve_ccp(batch, bodies, settings, work);
    EXPECT_TRUE(serial.refused.empty()) << serial.refused;

    const std::vector<int32_t> owner = body_owners(problem.bodies, 1e-3, ranks);
    std::vector<RankOutcome> out(static_cast<std::size_t>(ranks));
    run_local_ranks(ranks, [&](Ranks& r) {
        RankOutcome& o = out[std::size_t(r.rank())];
        o.part = rank_problem(problem.bodies, problem.batch, owner, r.rank());
        SolverWorkspace w;
        o.result = solve_ccp_on_rank(o.part.batch, o.part.bodies, o.part.owner, settings, w, r, &o.traffic);
    });

    Counts counts;
    counts.iterations = serial.iterations;
    std::vector<int> holders(batch.size(), 0), owners_seen(bodies.size(), 0);
    for (int q = 0; q < ranks; ++q) {
        const RankOutcome& o = out[std::size_t(q)];
        const std::string at = what + ", rank " + std::to_string(q) + " of " + std::to_string(ranks);
        EXPECT_TRUE(o.result.refused.empty()) << at << ": " << o.result.refused;
        EXPECT_EQ(o.result.iterations, serial.iterations) << at;
        EXPECT_TRUE(same_bits(o.result.residual, serial.residual)) << at << ": residual " << o.result.residual
                                                                   << " against " << serial.residual;
        EXPECT_EQ(o.result.converged, serial.converged) << at;
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < o.part.global_contact.size(); ++i) {
            const uint32_t g = o.part.global_contact[i];
            ++holders[g];
            wrong += !same_bits(o.part.batch.gamma[i], batch.gamma[g]);
        }
        EXPECT_EQ(wrong, 0u) << at << ": impulses that differ from one process's";
        wrong = 0;
        for (std::size_t b = 0; b < o.part.global_body.size(); ++b) {
            if (o.part.owner[b] != q) continue;
            const uint32_t g = o.part.global_body[b];
            ++owners_seen[g];
            wrong += !same_bits(o.part.bodies.velocity[b], bodies.velocity[g]) ||
                     !same_bits(o.part.bodies.angular_velocity[b], bodies.angular_velocity[g]);
        }
        EXPECT_EQ(wrong, 0u) << at << ": velocities that differ from one process's";
        counts.halos = std::max(counts.halos, o.traffic.halos);
        counts.bytes += o.traffic.bytes;
    }
    for (std::size_t i = 0; i < holders.size(); ++i) {
        EXPECT_GE(holders[i], 1) << what << ": contact " << i << " held by no rank";
        counts.shared_contacts += holders[i] == 2;
    }
    for (std::size_t b = 0; b < owners_seen.size(); ++b) EXPECT_EQ(owners_seen[b], 1) << what << ": body " << b;
    return counts;
}

World::Problem cold(World::Problem p) {
    for (Vec3& g : p.batch.gamma) g = Vec3::Zero();
    p.batch.lipschitz = 0.0;
    return p;
}

/// The problem with a warm start of non-zero impulses: those of a short solve of it.
World::Problem warmed(const World::Problem& p, const SolverSettings& settings) {
    World::Problem out = p;
    World::Problem solved = p;
    SolverSettings s = settings;
    s.type = SolverType::PGS;
    s.friction = FrictionLaw::CCP;
    s.max_iterations = 5;
    SolverWorkspace work;
    solve_ccp(solved.batch, solved.bodies, s, work);
    out.batch.gamma = solved.batch.gamma;
    return out;
}

TEST(RankSolve, EverySolverGivesTheOneProcessBitsOnOneToFourRanks) {
    // the 3,000-grain pour of the MPI tests, with its defaults, part way: beads in flight,
    // a bed on the floor and its outlet
    Scene scene = load_scene(TALUS_SOURCE_DIR "/tests/scenes/mpi_pour.toml");
    World& w = scene.world;
    World::Problem next;
    for (int k = 0; k < 40 && next.batch.size() < 1000; ++k) {
        for (int s = 0; s < 50; ++s) ASSERT_TRUE(w.step().ok);
        next = w.next_problem();
    }
    ASSERT_GE(next.batch.size(), 1000u);
    const World::Problem warm = warmed(next, w.solver);
    std::size_t nonzero = 0;
    for (const Vec3& g : warm.batch.gamma) nonzero += g[0] > 0.0;
    EXPECT_GT(nonzero, 300u);
    std::size_t shared = 0;
    // every solver that runs over ranks, under each law it takes there (bgs: both)
    const std::pair<SolverType, FrictionLaw> runs[] = {
        {SolverType::PGS, FrictionLaw::CCP}, {SolverType::BGS, FrictionLaw::CCP},
        {SolverType::PJ, FrictionLaw::CCP}, {SolverType::APGD, FrictionLaw::CCP},
        {SolverType::BGS, FrictionLaw::Coulomb}};
    for (const auto& [type, law] : runs) {
        SolverSettings s = w.solver;
        s.type = type;
        s.friction = law;
        s.max_iterations = 60;
        ASSERT_TRUE(runs_on_ranks(s)) << solver_name(type) << " under " << friction_law_name(law);
        for (const bool warm_start : {true, false}) {
            const World::Problem& p = warm_start ? warm : cold(warm);
            for (int ranks = 1; ranks <= 4; ++ranks) {
                const std::string what = std::string(solver_name(type)) + " " + friction_law_name(law) +
                                         (warm_start ? " warm" : " cold");
                const Counts c = expect_ranks_solve_like_one_process(p, s, ranks, what);
                if (ranks > 1) {
                    EXPECT_GT(c.shared_contacts, 0u) << what << ": the ranks must share contacts";
                    shared += c.shared_contacts;
                }
                if (!warm_start) {
                    EXPECT_GT(c.iterations, 3) << what << ": the check is not vacuous";
                }
                if (ranks == 4)
                    std::printf("%s, %d ranks: %d iterations, %zu contacts on two ranks, %llu halos, %llu bytes\n",
                                what.c_str(), ranks, c.iterations, c.shared_contacts,
                                (unsigned long long)c.halos, (unsigned long long)c.bytes);
            }
        }
    }
    EXPECT_GT(shared, 100u);  // contacts computed on two ranks, over the runs at 2–4 ranks
}

TEST(RankSolve, TheOverflowColourCutIntoLevelsGivesTheOneProcessBits) {
    // A ball with 200 beads resting on it (more contacts on one body than 63 colours):
    // the overflow colour, swept in order by one process, runs level by level on the ranks.
    World w = ball_with_beads();
    const World::Problem p = w.next_problem();
    ASSERT_TRUE(p.batch.overflow_colour);
    const SweepColours levels = sweep_colours_of(p.batch);
    EXPECT_GT(levels.count, 64u);
    for (SolverType type : {SolverType::PGS, SolverType::BGS, SolverType::PJ, SolverType::APGD}) {
        SolverSettings s = w.solver;
        s.type = type;
        s.max_iterations = 30;
        for (int ranks = 1; ranks <= 4; ++ranks) {
            const Counts c = expect_ranks_solve_like_one_process(p, s, ranks, std::string(solver_name(type)) + " overflow");
            if (ranks > 1) {
                EXPECT_GT(c.shared_contacts, 10u);
            }
        }
    }
}

TEST(RankSolve, WhatIsNotDistributedIsRefusedByName) {
    World w = make_world(1e-3, Vec3(0, 0, -9.81));
    const uint32_t m = add_material(w, 1000.0, 0.4);
    w.bodies.add_sphere(1, Vec3::Zero(), 0.01, 1000.0, m);
    w.bodies.add_sphere(2, Vec3(0, 0, 0.0199), 0.01, 1000.0, m);
    const World::Problem p = w.next_problem();
    const std::vector<int32_t> owner = {0, 1};
    for (SolverType type : {SolverType::MaxDiss, SolverType::NSGS}) {
        SolverSettings s = w.solver;
        s.type = type;
        run_local_ranks(2, [&](Ranks& r) {
            RankProblem part = rank_problem(p.bodies, p.batch, owner, r.rank());
            SolverWorkspace work;
            const SolverResult res = solve_ccp_on_rank(part.batch, part.bodies, part.owner, s, work, r);
            EXPECT_NE(res.refused.find(solver_name(type)), std::string::npos) << res.refused;
        });
    }
    AssembledBatch with_rolling = p.batch;
    with_rolling.rolling.contact.push_back(0);
    EXPECT_THROW(rank_problem(p.bodies, with_rolling, owner, 0), std::invalid_argument);
}

/// Jones–Plassmann's rounds run by `ranks` ranks on the contacts each holds give each
/// contact its one-process colour, in as many rounds; returns the contacts held twice.
std::size_t expect_ranks_colour_like_one_process(const World& w, int ranks, const std::string& what) {
    const ContactList& c = w.contacts();
    const JonesPlassmann serial = jones_plassmann(w.bodies.size(), c);
    const std::vector<int32_t> owner = body_owners(w.bodies, 1e-3, ranks);
    std::vector<std::vector<uint32_t>> colour(static_cast<std::size_t>(ranks)), contact(colour.size());
    std::vector<std::size_t> rounds(colour.size());
    run_local_ranks(ranks, [&](Ranks& r) {
        const std::size_t me = std::size_t(r.rank());
        std::vector<uint32_t> global_body;
        const ContactList held = rank_contacts(c, owner, r.rank(), global_body, contact[me]);
        std::vector<int32_t> local_owner(global_body.size());
        for (std::size_t b = 0; b < global_body.size(); ++b) local_owner[b] = owner[global_body[b]];
        const JonesPlassmann jp = jones_plassmann_on_rank(global_body.size(), held, local_owner, r);
        colour[me] = jp.colour;
        rounds[me] = jp.rounds;
    });
    std::vector<int> holders(c.size(), 0);
    for (std::size_t q = 0; q < colour.size(); ++q) {
        EXPECT_EQ(rounds[q], serial.rounds) << what << ", rank " << q << " of " << ranks;
        std::size_t wrong = 0;
        for (std::size_t k = 0; k < contact[q].size(); ++k) {
            wrong += colour[q][k] != serial.colour[contact[q][k]];
            ++holders[contact[q][k]];
        }
        EXPECT_EQ(wrong, 0u) << what << ", rank " << q << " of " << ranks << ": colours not the serial ones";
    }
    std::size_t shared = 0;
    for (int h : holders) {
        EXPECT_GE(h, 1) << what;
        shared += h == 2;
    }
    return shared;
}

TEST(RankColouring, JonesPlassmannOnRanksGivesTheOneProcessColours) {
    Scene scene = load_scene(TALUS_SOURCE_DIR "/tests/scenes/mpi_pour.toml");
    World& w = scene.world;
    std::size_t shared = 0, most = 0;
    const int every = testing::steps_for_build(300);  // (a quarter under the sanitizers)
    for (int k = 1; k <= 4; ++k) {
        for (int s = 0; s < every; ++s) ASSERT_TRUE(w.step().ok);
        most = std::max(most, w.contacts().size());
        for (int ranks = 1; ranks <= 4; ++ranks)
            shared += expect_ranks_colour_like_one_process(w, ranks, "pour, step " + std::to_string(every * k));
    }
    if (!testing::kInstrumented) {
        EXPECT_GT(most, 1500u);
        EXPECT_GT(shared, 100u);  // boundary contacts, coloured by two ranks together
    }
    // a ball with 200 beads on it: the overflow colour
    World ball = ball_with_beads();
    ASSERT_TRUE(ball.step().ok);
    ASSERT_TRUE(ball.contacts().overflow_colour);
    for (int ranks = 1; ranks <= 4; ++ranks) expect_ranks_colour_like_one_process(ball, ranks, "ball");
}

TEST(LocalRanks, CollectivesAndAFailingRank) {
    std::vector<std::string> got(3);
    run_local_ranks(3, [&](Ranks& r) {
        std::vector<std::string> out(3), in;
        for (int q = 0; q < 3; ++q) out[std::size_t(q)] = std::to_string(r.rank()) + ">" + std::to_string(q);
        r.exchange(out, in);
        std::vector<std::string> all;
        r.all_gather(in[0] + in[1] + in[2], all);
        int64_t v[1] = {r.rank() * 10};
        r.max(v);
        if (r.rank() == 1) got = all;
        EXPECT_EQ(v[0], 20);
    });
    EXPECT_EQ(got[2], "0>21>22>2");
    // a rank that throws ends the others' next collective, and its error comes back
    EXPECT_THROW(run_local_ranks(3, [](Ranks& r) {
        if (r.rank() == 2) throw std::domain_error("rank 2 failed");
        std::vector<std::string> all;
        for (int k = 0; k < 5; ++k) r.all_gather("x", all);
    }), std::domain_error);
}

}  // namespace
}  // namespace talus
