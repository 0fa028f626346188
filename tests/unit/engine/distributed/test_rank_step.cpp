// A whole run whose contact solves go over P ranks (engine/distributed/solve_over_ranks.hpp,
// what `talus run` under mpirun does; docs/mpi.md) is the one-process run bit for bit:
// after every step, every body's state, the solve's iterations and residual; at the end,
// every value of the state. The ranks are P threads (engine/distributed/local_ranks.hpp),
// each stepping its own copy of the world.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "engine/distributed/local_ranks.hpp"
#include "engine/distributed/solve_over_ranks.hpp"
#include "engine/world/world.hpp"
#include "io/scene.hpp"
#include "tests/support/instrumented.hpp"
#include "tests/support/squeezed_sphere.hpp"
#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

/// FNV-1a over bytes.
void mix(uint64_t& h, const void* data, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t k = 0; k < n; ++k) h = (h ^ p[k]) * 1099511628211ull;
}

/// The state a step leaves, every value (bodies in the world's order, with their ids), and
/// what its solve reported.
std::vector<double> state_of(const World& w) {
    std::vector<double> s;
    const BodyStore& b = w.bodies;
    for (std::size_t i = 0; i < b.size(); ++i) {
        s.push_back(double(b.id[i]));
        for (int k = 0; k < 3; ++k) s.push_back(b.position[i][k]);
        for (int k = 0; k < 3; ++k) s.push_back(b.velocity[i][k]);
        for (int k = 0; k < 3; ++k) s.push_back(b.angular_velocity[i][k]);
        const Quat& q = b.orientation[i];
        s.insert(s.end(), {q.w(), q.x(), q.y(), q.z()});
    }
    const StepDiagnostics& d = w.diagnostics();
    s.insert(s.end(), {w.time, double(d.iterations), d.residual, double(d.contacts), d.kinetic_energy,
                       double(d.resolves), double(w.step_count)});
    for (const Vec3& g : w.batch().gamma) s.insert(s.end(), {g[0], g[1], g[2]});
    return s;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

uint64_t hash_of(const std::vector<double>& s) {
    uint64_t h = 1469598103934665603ull;
    mix(h, s.data(), s.size() * sizeof(double));
    return h;
}

struct Recorded {
    std::vector<uint64_t> step_hash;  ///< per step
    std::vector<double> last;         ///< the state after the last step
    std::size_t most_contacts = 0;
    RanksSolveCount count;            ///< rank 0's, over ranks
};

/// `steps` steps of `scene` (with `solver`, or the scene's when empty), in one process
/// (ranks = 0) or with the solves over `ranks` local ranks (rank 0's run returned; every
/// rank's must equal it, checked here).
Recorded run_scene(const std::string& scene_file, const std::string& solver, int steps, int ranks,
                   std::size_t min_contacts_a_rank = 0) {
    auto one = [&](Ranks* r) {
        Scene scene = load_scene(scene_file);
        World& w = scene.world;
        if (!solver.empty()) w.solver.type = *solver_from_name(solver);
        Recorded run;
        if (r)
            w.contact_solve = [r, &run, min_contacts_a_rank](AssembledBatch& batch, BodyStore& bodies, const SolverSettings& settings,
                                        SolverWorkspace& work) {
                return solve_over_ranks(batch, bodies, settings, work, *r, min_contacts_a_rank, &run.count);
            };
        for (int s = 0; s < steps; ++s) {
            const StepStatus st = w.step();
            if (!st.ok) throw std::runtime_error("step " + std::to_string(s + 1) + ": " + st.message);
            run.step_hash.push_back(hash_of(state_of(w)));
            run.most_contacts = std::max(run.most_contacts, w.contacts().size());
        }
        run.last = state_of(w);
        return run;
    };
    if (ranks == 0) return one(nullptr);
    std::vector<Recorded> runs(static_cast<std::size_t>(ranks));
    run_local_ranks(ranks, [&](Ranks& r) { runs[std::size_t(r.rank())] = one(&r); });
    for (int q = 1; q < ranks; ++q) {
        EXPECT_EQ(runs[std::size_t(q)].step_hash, runs[0].step_hash) << "rank " << q << " of " << ranks;
        EXPECT_TRUE(same_bits(runs[std::size_t(q)].last, runs[0].last)) << "rank " << q << " of " << ranks;
    }
    return runs[0];
}

/// The step at which two runs first differ (0: none).
std::size_t first_difference(const Recorded& a, const Recorded& b) {
    for (std::size_t s = 0; s < std::min(a.step_hash.size(), b.step_hash.size()); ++s)
        if (a.step_hash[s] != b.step_hash[s]) return s + 1;
    return 0;
}

void expect_same_run(const std::string& scene, const std::string& solver, int steps, int ranks) {
    const std::string what = scene + (solver.empty() ? "" : ", " + solver) + ", " + std::to_string(ranks) + " ranks";
    const Recorded serial = run_scene(scene, solver, steps, 0);
    const Recorded over = run_scene(scene, solver, steps, ranks);
    ASSERT_EQ(over.step_hash.size(), serial.step_hash.size()) << what;
    EXPECT_EQ(first_difference(serial, over), 0u) << what << ": the first step that differs";
    EXPECT_TRUE(same_bits(over.last, serial.last)) << what;
    // not vacuous: contacts, and solves that went over the ranks
    EXPECT_GT(serial.most_contacts, 100u) << what;
    EXPECT_GT(over.count.distributed, uint64_t(steps / 2)) << what;
    EXPECT_GT(over.count.traffic.messages, 0u) << what;
    std::printf("[ %s ] %d steps, up to %zu contacts: %llu solves over the ranks, %llu whole; rank 0 sent "
                "%llu messages, %llu kB\n",
                what.c_str(), steps, serial.most_contacts, (unsigned long long)over.count.distributed,
                (unsigned long long)over.count.whole, (unsigned long long)over.count.traffic.messages,
                (unsigned long long)(over.count.traffic.bytes / 1000));
}

// The 3,000-grain pour of the MPI tests with its defaults (bgs, the adaptive step, the
// take-back of set-aside contacts): an emitter, an outlet, bodies arriving and leaving.
// All 700 steps in every build: under a sanitizer's 175 the solves held at most 96
// contacts (the grains still falling side by side are set aside), too few to mean much.
TEST(RankStep, ThePourWithItsSolvesOverRanksIsTheOneProcessRun) {
    const int steps = 700;
    for (int ranks : {2, 3})
        expect_same_run(TALUS_SOURCE_DIR "/tests/scenes/mpi_pour.toml", "", steps, ranks);
}

// Every solver that runs over ranks, on the resume test's pot (an emitter, an outlet, a
// kinematic clump).
TEST(RankStep, EverySolverOverRanksGivesTheOneProcessRun) {
    const int steps = testing::steps_for_build(200);
    for (const char* solver : {"pgs", "pj", "apgd", "bgs"})
        expect_same_run(TALUS_SOURCE_DIR "/tests/scenes/resume.toml", solver, steps, 4);
}

// What does not run over ranks yet, and a problem of fewer contacts a rank than asked
// for, are solved whole on every rank: the same run, and no solve over the ranks.
TEST(RankStep, WhatIsNotDistributedIsSolvedWholeOnEveryRank) {
    const std::string scene = TALUS_SOURCE_DIR "/tests/scenes/resume.toml";
    const int steps = testing::steps_for_build(60);
    const Recorded serial = run_scene(scene, "maxdiss", steps, 0);
    const Recorded over = run_scene(scene, "maxdiss", steps, 2);
    EXPECT_EQ(first_difference(serial, over), 0u);
    EXPECT_TRUE(same_bits(over.last, serial.last));
    EXPECT_EQ(over.count.distributed, 0u);
    EXPECT_GT(over.count.whole, 0u);
    // problems under the contacts a rank asked for, solved whole too
    const Recorded pgs = run_scene(scene, "pgs", steps, 0);
    const Recorded few = run_scene(scene, "pgs", steps, 2, std::size_t(1) << 30);
    EXPECT_EQ(first_difference(pgs, few), 0u);
    EXPECT_TRUE(same_bits(few.last, pgs.last));
    EXPECT_EQ(few.count.distributed, 0u);
    EXPECT_GT(few.count.small, 0u);
    AssembledBatch b;
    SolverSettings s;
    s.type = SolverType::MaxDiss;
    EXPECT_NE(not_over_ranks(b, s).find("maxdiss"), std::string::npos);
    s.type = SolverType::PGS;
    s.friction = FrictionLaw::Coulomb;
    EXPECT_NE(not_over_ranks(b, s).find("coulomb"), std::string::npos);
    s.friction = FrictionLaw::CCP;
    EXPECT_EQ(not_over_ranks(b, s), "");
}

// A sphere squeezed between the floor and a descending press is over-constrained, which
// the step reports (the check follows clusters of contacts across ranks: a solve that
// hits its cap sends its growth snapshots, and when a contact grew, every rank runs the
// whole check on the whole problem): at the same step and with the same message over ranks
// as in one process.
TEST(RankStep, AnOverConstrainedSphereIsReportedAsInOneProcess) {
    using namespace testing;
    for (SolverType t : {SolverType::PGS, SolverType::BGS, SolverType::PJ, SolverType::APGD}) {
        auto squeeze = [t](Ranks* ranks, RanksSolveCount* count) {
            World w = squeezed_sphere(t);
            if (ranks)
                w.contact_solve = [ranks, count](AssembledBatch& batch, BodyStore& bodies, const SolverSettings& s,
                                                 SolverWorkspace& work) {
                    return solve_over_ranks(batch, bodies, s, work, *ranks, 0, count);
                };
            StepStatus status;
            int k = 0;
            for (; k < 500 && status.ok; ++k) status = w.step();
            return std::pair{k, status.message};
        };
        const auto serial = squeeze(nullptr, nullptr);
        ASSERT_LT(serial.first, 500) << solver_name(t);
        std::vector<std::pair<int, std::string>> got(2);
        std::vector<RanksSolveCount> counts(2);
        run_local_ranks(2, [&](Ranks& r) {
            const std::size_t q = std::size_t(r.rank());
            got[q] = squeeze(&r, &counts[q]);
        });
        for (std::size_t q = 0; q < 2; ++q) {
            EXPECT_EQ(got[q], serial) << solver_name(t) << ", rank " << q;
            EXPECT_GT(counts[q].distributed, 10u) << solver_name(t);
            EXPECT_GE(counts[q].unbounded_checks, 1u) << solver_name(t) << ": the check on the whole problem";
        }
    }
}

}  // namespace
}  // namespace talus
