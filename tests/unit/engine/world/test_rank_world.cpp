// A World stepped over ranks, each rank holding only its own bodies, the ghosts around them
// and the kinematic bodies (issue 25; docs/mpi.md, "The step over ranks"): after every step,
// each rank holds exactly what the decomposition of the one-process run's bodies gives,
// every array bit for bit: the same positions, orientations and velocities as one process,
// whatever the number of ranks, along runs whose bodies cross from rank to rank; and the
// same diagnostics (counts, energies, residuals), wall loads and flow tallies.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <optional>
#include <string>

#include "engine/distributed/local_ranks.hpp"
#include "engine/distributed/rank_bodies.hpp"
#include "engine/distributed/rank_problem.hpp"
#include "engine/world/rank_world.hpp"
#include "io/scene.hpp"
#include "tests/support/instrumented.hpp"
#include "tests/support/squeezed_sphere.hpp"

namespace talus {
namespace {

// The first difference between two held stores ("" when none): every per-body array, the
// owners, and the clumps' spheres.
std::string first_difference(const HeldBodies& got, const HeldBodies& want) {
    if (got.bodies.size() != want.bodies.size())
        return std::to_string(got.bodies.size()) + " bodies held instead of " + std::to_string(want.bodies.size());
    if (got.owner != want.owner) return "other owners";
    std::vector<std::pair<const char*, std::string>> g, w;
    auto bytes_of = [](std::vector<std::pair<const char*, std::string>>& out) {
        return [&out](const char* name, const auto& v) {
            out.emplace_back(name, std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(v[0])));
        };
    };
    got.bodies.for_each_array(bytes_of(g));
    want.bodies.for_each_array(bytes_of(w));
    bytes_of(g)("clump centre", got.bodies.clumps.centre);
    bytes_of(w)("clump centre", want.bodies.clumps.centre);
    for (std::size_t k = 0; k < g.size(); ++k)
        if (g[k].second != w[k].second) return std::string(g[k].first) + " differs";
    return "";
}

// `bodies` in ascending stable id, as gather_whole brings them.
BodyStore by_stable_id(const BodyStore& bodies) {
    std::vector<uint32_t> order(bodies.size());
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return bodies.id[x] < bodies.id[y]; });
    BodyStore sorted = bodies;
    sorted.permute(order);
    return sorted;
}

// The first difference between two steps' diagnostics and wall loads ("" when none): every
// figure that does not time the step, bit for bit.
std::string diagnostics_difference(const StepDiagnostics& got, const StepDiagnostics& want, const WallLoads& got_loads,
                                   const WallLoads& want_loads) {
    const auto differs = [](double x, double y) { return std::memcmp(&x, &y, sizeof x) != 0; };
    const std::pair<const char*, bool> checks[] = {
        {"step", got.step != want.step},
        {"time", differs(got.time, want.time)},
        {"dt", differs(got.dt, want.dt)},
        {"contacts", got.contacts != want.contacts},
        {"iterations", got.iterations != want.iterations},
        {"colours", got.colours != want.colours},
        {"residual", differs(got.residual, want.residual)},
        {"kinetic energy", differs(got.kinetic_energy, want.kinetic_energy)},
        {"potential energy", differs(got.potential_energy, want.potential_energy)},
        {"envelope", differs(got.envelope, want.envelope)},
        {"set aside", got.set_aside != want.set_aside},
        {"bodies", got.bodies != want.bodies},
        {"resolves", got.resolves != want.resolves},
        {"margin retakes", got.margin_retakes != want.margin_retakes},
        {"contact infeasibility", differs(got.contact_infeasibility, want.contact_infeasibility)},
        {"converged", got.converged != want.converged},
        {"wall loads", got_loads.impulse != want_loads.impulse || got_loads.angular_impulse != want_loads.angular_impulse ||
                           got_loads.step_impulse != want_loads.step_impulse || differs(got_loads.time, want_loads.time)},
    };
    for (const auto& [what, bad] : checks)
        if (bad) return std::string("the diagnostics' ") + what + " differ";
    return "";
}

struct Counted {
    std::size_t crossed = 0;   ///< own bodies that went to another rank
    std::size_t contacts = 0;  ///< contacts over all ranks at the last step
    std::size_t resolves = 0;  ///< solves again after a take-back of set-aside contacts (one process)
    std::size_t margin_retakes = 0;  ///< steps taken again with wider margins (one process)
    double edge = 0.0;         ///< the block edge at the end [m] (step_on_ranks widens too narrow blocks)
    uint64_t decompositions = 0;  ///< times the bodies were decomposed again (rank 0's count)
    uint64_t entered = 0, left = 0;  ///< bodies emitted, and removed by outlets
};

// Why `d`, the decomposition a rank placed the bodies `at` by after a step, breaks the rule
// of rebalance ("" when it keeps it): a decomposition made again (`again`) is the fresh cut
// of the bodies where they are, and `cut` becomes its imbalance; one kept has not drifted
// (load_drifted) from the imbalance `cut` it had when it was made.
std::string decomposition_problem(const Decomposition& d, bool again, const BodyStore& at, double edge, int ranks,
                                  double& cut) {
    const auto imbalance_at = [&](const Decomposition& x) {
        return imbalance(rank_loads(x, at.position, std::vector<uint32_t>(at.size(), 1)));
    };
    if (again) {
        const Decomposition fresh = body_decomposition(at, edge, ranks);
        if (d.cut != fresh.cut || d.grid.origin != fresh.grid.origin || d.grid.edge != fresh.grid.edge)
            return "a decomposition made again other than the fresh cut";
        cut = imbalance_at(d);
        return "";
    }
    if (load_drifted(imbalance_at(d), cut)) return "a decomposition kept after its load drifted";
    return "";
}

// Counts the own bodies that change rank along the one-process run under `d`, for the
// report that the runs do move bodies between ranks.
std::size_t crossings(const std::vector<BodyStore>& whole, const std::vector<Decomposition>& d) {
    std::size_t n = 0;
    for (std::size_t s = 1; s < whole.size(); ++s) {
        std::map<uint64_t, int> before;
        for (std::size_t i = 0; i < whole[s - 1].size(); ++i) before[whole[s - 1].id[i]] = d[s - 1].owner_of(whole[s - 1].position[i]);
        for (std::size_t i = 0; i < whole[s].size(); ++i) {
            const auto it = before.find(whole[s].id[i]);  // not there: emitted in step s
            n += it != before.end() && it->second != d[s].owner_of(whole[s].position[i]);
        }
    }
    return n;
}

// `start` stepped `steps` steps in one process, and
// the same over `ranks` in-process ranks, each holding its part of the bodies decomposed into
// blocks `edge` wide (wider once step_on_ranks finds them too narrow), and compared with that
// decomposition of the one-process bodies after every step.
void expect_ranks_step_like_one_process(const World& start, const char* name, int steps, int ranks, double edge,
                                        Counted& counted) {
    World one = start;
    std::vector<World> parts(static_cast<std::size_t>(ranks), one);
    // the one-process run, and the decomposition each step's bodies went to
    std::vector<BodyStore> whole;
    std::vector<Decomposition> d;
    std::vector<double> time;
    std::vector<StepDiagnostics> diagnostics;
    std::vector<WallLoads> loads;
    for (int s = 0; s < steps; ++s) {
        const StepStatus st = one.step();
        ASSERT_TRUE(st.ok) << st.message;
        diagnostics.push_back(one.diagnostics());
        loads.push_back(one.wall_loads());
        whole.push_back(one.bodies);
        time.push_back(one.time);
        counted.resolves += one.diagnostics().resolves;
        counted.margin_retakes += one.diagnostics().margin_retakes;
    }
    d.resize(whole.size());  // rank 0's after each step
    std::vector<std::string> failure(static_cast<std::size_t>(ranks));
    std::vector<std::size_t> contacts(static_cast<std::size_t>(ranks), 0);
    std::optional<World> gathered;  // rank 0's gather_whole after the last step
    run_local_ranks(ranks, [&](Ranks& rk) {
        const std::size_t r = std::size_t(rk.rank());
        World& w = parts[r];
        hold_part(w, edge, rk);
        uint64_t decompositions = 0;
        double cut = w.on_ranks.cut_imbalance;
        for (int s = 0; s < steps; ++s) {
            const StepStatus st = step_on_ranks(w);
            const std::string at = std::string(name) + ", step " + std::to_string(s + 1) + ", rank " +
                                   std::to_string(r) + " of " + std::to_string(ranks) + ": ";
            if (!st.ok) {
                failure[r] = at + st.message;
                return;  // every rank fails alike (the step's errors are agreed)
            }
            contacts[r] = w.contacts().size();
            // the held bodies are what the rank's decomposition gives of one process's, and
            // that decomposition follows the rule of rebalance
            const Decomposition& now = w.on_ranks.decomposition;
            if (rk.root()) d[std::size_t(s)] = now;
            const HeldBodies want = hold_from_whole(whole[std::size_t(s)], now, rk.rank());
            const HeldBodies got{w.bodies, w.on_ranks.owner};
            std::string why = decomposition_problem(now, w.on_ranks.decompositions != decompositions,
                                                    whole[std::size_t(s)], w.on_ranks.block_edge, ranks, cut);
            if (why.empty() && cut != w.on_ranks.cut_imbalance) why = "another imbalance of the cut";
            decompositions = w.on_ranks.decompositions;
            if (why.empty()) why = first_difference(got, want);
            if (why.empty())
                why = diagnostics_difference(w.diagnostics(), diagnostics[std::size_t(s)], w.wall_loads(),
                                             loads[std::size_t(s)]);
            if (failure[r].empty() && (!why.empty() || w.time != time[std::size_t(s)])) {
                failure[r] = at + (why.empty() ? "another time" : why);
                // go on stepping: the other ranks wait in this step's collectives
            }
        }
        std::optional<World> whole = gather_whole(w);  // every rank takes part
        if (rk.root()) counted.decompositions = w.on_ranks.decompositions;
        if (rk.root()) gathered = std::move(whole);
        else if (whole) failure[r] = "gather_whole gave a World to rank " + std::to_string(r);
    });
    // what rank 0 gathers for the output is one process's state: every body by id (clumps
    // naming the run's templates), the warm start of every contact, nothing of the ranks
    ASSERT_TRUE(gathered.has_value());
    {
        EXPECT_EQ(first_difference({gathered->bodies, {}}, {by_stable_id(one.bodies), {}}), "")
            << name << ": gather_whole's bodies";
        EXPECT_FALSE(gathered->distributed());
        const auto& got = gathered->warm_start().entries();
        const auto& want = one.warm_start().entries();
        ASSERT_EQ(got.size(), want.size()) << name << ": gather_whole's warm start";
        std::size_t differ = 0;
        for (std::size_t k = 0; k < got.size(); ++k)
            differ += got[k].key_a != want[k].key_a || got[k].key_b != want[k].key_b ||
                      got[k].feature != want[k].feature || std::bit_cast<uint64_t>(got[k].normal) != std::bit_cast<uint64_t>(want[k].normal) ||
                      got[k].friction != want[k].friction || std::bit_cast<uint64_t>(got[k].h) != std::bit_cast<uint64_t>(want[k].h);
        EXPECT_EQ(differ, 0u) << name << ": warm-start entries differ from one process's";
    }
    for (const std::string& f : failure) EXPECT_EQ(f, "");
    // the emitters' and the outlets' tallies on every rank: one process's, bit for bit
    for (std::size_t k = 0; k < one.outlets.size(); ++k) {
        for (const World& w : parts) {
            EXPECT_EQ(w.outlets[k].removed.count, one.outlets[k].removed.count) << "outlet " << k;
            EXPECT_EQ(std::bit_cast<uint64_t>(w.outlets[k].removed.mass), std::bit_cast<uint64_t>(one.outlets[k].removed.mass));
        }
        counted.left += one.outlets[k].removed.count - start.outlets[k].removed.count;
    }
    for (std::size_t k = 0; k < one.emitters.size(); ++k) {
        for (const World& w : parts) {
            EXPECT_EQ(w.emitters[k].emitted.count, one.emitters[k].emitted.count);
            EXPECT_EQ(std::bit_cast<uint64_t>(w.emitters[k].emitted.mass), std::bit_cast<uint64_t>(one.emitters[k].emitted.mass));
        }
        counted.entered += one.emitters[k].emitted.count - start.emitters[k].emitted.count;
    }
    for (std::size_t n : contacts) counted.contacts += n;
    counted.edge = parts[0].on_ranks.block_edge;
    counted.crossed = crossings(whole, d);
}

// A scene run `warm_up` steps.
World warmed_up(const char* scene_file, int warm_up) {
    Scene scene = load_scene(std::string(TALUS_SOURCE_DIR "/tests/scenes/") + scene_file);
    World& w = scene.world;
    for (int s = 0; s < warm_up; ++s)
        if (!w.step().ok) ADD_FAILURE() << scene_file << ": step " << s + 1 << " failed";
    return std::move(w);
}

// The 3,000-grain pour with the defaults (bgs, the adaptive step, set-aside contacts taken
// back, the push-out pass where an overlap passes its slop): the emitter raining grains into
// the box, a bed forming on its floor and the outlet taking grains out, over 2 to 4 ranks.
TEST(RankWorld, ThePourStepsOverRanksWithTheOneProcessBits) {
    const World start = warmed_up("mpi_pour.toml", testing::steps_for_build(900));
    for (int ranks = 2; ranks <= 4; ++ranks) {
        Counted c;
        expect_ranks_step_like_one_process(start, "pour", testing::steps_for_build(150), ranks, 0.012, c);
        if (HasFailure()) return;
        std::printf("[ pour, %d ranks ] %zu bodies changed rank; %zu contacts held at the last step; "
                    "%zu solves again after a take-back; %zu steps taken again with wider margins; "
                    "%llu bodies emitted, %llu left through the outlet; decomposed again %llu times\n",
                    ranks, c.crossed, c.contacts, c.resolves, c.margin_retakes, (unsigned long long)c.entered,
                    (unsigned long long)c.left, (unsigned long long)c.decompositions);
        EXPECT_GT(c.crossed, 0u);
        EXPECT_GT(c.resolves, 0u);
        EXPECT_GT(c.margin_retakes, 0u);  // (bodies struck past their margins: World::outran over ranks)
        EXPECT_GT(c.entered, 0u);
        EXPECT_GT(c.left, 0u);
        EXPECT_EQ(c.edge, 0.012) << "the blocks were widened";
    }
    // blocks narrower than two reaches: widened, the step taken again, the same bits
    Counted c;
    expect_ranks_step_like_one_process(start, "pour", testing::steps_for_build(40), 3, 0.003, c);
    std::printf("[ pour, 3 ranks, blocks of 3 mm ] widened to %g m\n", c.edge);
    EXPECT_GT(c.edge, 0.003);
}

// A hopper discharging (300 grains, an emitter topping it up, the outlet below): the grains
// fall through the blocks, so the load of the decomposition made at the start drifts past
// kRebalanceAbove and the bodies are decomposed again, now and then, not every step.
TEST(RankWorld, ADischargingHopperIsDecomposedAgainWhenItsLoadDrifts) {
    Counted c;
    const int steps = testing::steps_for_build(150);
    expect_ranks_step_like_one_process(warmed_up("hopper.toml", 100), "hopper", steps, 3, 0.008, c);
    std::printf("[ hopper, 3 ranks ] %zu bodies changed rank; decomposed again %llu times in %d steps\n",
                c.crossed, (unsigned long long)c.decompositions, steps);
    EXPECT_GT(c.decompositions, 0u);
    EXPECT_LT(c.decompositions, uint64_t(steps) / 2);
}

// The resume test's pot: a kinematic clump stirring grains (pgs, a fixed step), which every
// rank places and none sends.
TEST(RankWorld, AKinematicClumpStirsGrainsOverRanks) {
    Counted c;
    expect_ranks_step_like_one_process(warmed_up("resume.toml", 100), "pot", testing::steps_for_build(100), 3, 0.02, c);
    std::printf("[ pot, 3 ranks ] %zu bodies changed rank; %zu contacts held at the last step\n", c.crossed, c.contacts);
    EXPECT_GT(c.crossed, 0u);
}

// Clumps of spheres settling in a box: each clump travels with its template.
TEST(RankWorld, ClumpsSettleOverRanks) {
    Counted c;
    expect_ranks_step_like_one_process(warmed_up("clumps.toml", 100), "clumps", testing::steps_for_build(100), 3, 0.05, c);
    std::printf("[ clumps, 3 ranks ] %zu bodies changed rank; %zu contacts held at the last step\n", c.crossed,
                c.contacts);
    EXPECT_GT(c.crossed, 0u);
}

// What does not run over ranks yet is refused on every rank before anything moves, and
// blocks far narrower than two reaches (more than kMaxWidenings doublings) fail the step on
// every rank, the state as before it.
TEST(RankWorld, RefusalsAndBlocksTooSmallAreEveryRanksAndChangeNothing) {
    Scene scene = load_scene(TALUS_SOURCE_DIR "/tests/scenes/resume.toml");
    const World whole = scene.world;
    for (const double edge : {0.02, 1e-7}) {
        std::vector<World> parts(2, whole);
        if (edge > 0.01)
            for (World& w : parts) w.record_contacts = true;  // not over ranks yet
        std::vector<StepStatus> got(2);
        std::vector<uint8_t> unchanged(2, 0);  // (not vector<bool>: its bits share a word between the threads)
        run_local_ranks(2, [&](Ranks& rk) {
            World& w = parts[std::size_t(rk.rank())];
            hold_part(w, edge, rk);
            got[std::size_t(rk.rank())] = step_on_ranks(w);
            // every body it holds (wherever the widenings sent them) in its state at the start
            std::map<uint64_t, std::size_t> at;
            for (std::size_t i = 0; i < whole.bodies.size(); ++i) at[whole.bodies.id[i]] = i;
            bool same = w.step_count == 0 && w.time == 0.0;
            for (std::size_t i = 0; i < w.bodies.size(); ++i) {
                const std::size_t k = at.at(w.bodies.id[i]);
                same = same && w.bodies.position[i] == whole.bodies.position[k] &&
                       w.bodies.velocity[i] == whole.bodies.velocity[k] &&
                       w.bodies.angular_velocity[i] == whole.bodies.angular_velocity[k] &&
                       w.bodies.orientation[i].coeffs() == whole.bodies.orientation[k].coeffs();
            }
            unchanged[std::size_t(rk.rank())] = same;
        });
        for (int r = 0; r < 2; ++r) {
            const StepStatus& s = got[std::size_t(r)];
            EXPECT_FALSE(s.ok) << "rank " << r;
            EXPECT_TRUE(unchanged[std::size_t(r)]) << "rank " << r;
            if (edge < 0.01) {
                EXPECT_TRUE(s.has(StepFault::BlocksTooSmall)) << s.message;
                EXPECT_NE(s.message.find("passed half a block"), std::string::npos) << s.message;
            } else {
                EXPECT_TRUE(s.has(StepFault::InvalidSettings)) << s.message;
                EXPECT_EQ(s.message, "over MPI ranks: contact recording does not run over ranks yet");
            }
        }
    }
}

// A sphere squeezed between the floor and a descending press is over-constrained. Held in
// parts, the ranks find a contact's impulse growing when the solve hits its cap, take the
// step again on the whole world with the whole check (StepFault::CheckWhole), and report it
// at the same step with the same message (impulses and gaps in it) as one process, with
// each solver.
TEST(RankWorld, AnOverConstrainedSphereIsReportedAsInOneProcess) {
    using namespace testing;
    for (SolverType t : {SolverType::PGS, SolverType::BGS, SolverType::PJ, SolverType::APGD}) {
        World serial = squeezed_sphere(t);
        StepStatus status;
        int steps = 0;
        for (; steps < 500 && status.ok; ++steps) status = serial.step();
        ASSERT_LT(steps, 500) << solver_name(t);
        ASSERT_TRUE(status.has(StepFault::OverConstrained)) << status.message;
        std::vector<std::pair<int, std::string>> got(2);
        std::vector<uint64_t> whole_steps(2), own(2);
        run_local_ranks(2, [&](Ranks& rk) {
            const std::size_t q = std::size_t(rk.rank());
            World w = squeezed_sphere(t);
            hold_part(w, first_block_edge(w), rk);
            StepStatus s;
            int k = 0;
            for (; k < 500 && s.ok; ++k) s = step_on_ranks(w);
            got[q] = {k, s.message};
            whole_steps[q] = w.on_ranks.whole_steps;
            for (std::size_t i = 0; i < w.bodies.size(); ++i) own[q] += w.on_ranks.owner[i] == rk.rank();
        });
        for (std::size_t q = 0; q < 2; ++q) {
            EXPECT_EQ(got[q], std::pair(steps, status.message)) << solver_name(t) << ", rank " << q;
            EXPECT_GE(whole_steps[q], 1u) << solver_name(t) << ": the step taken again on the whole world";
            EXPECT_GE(own[q], 1u) << solver_name(t) << ": each rank holds a part, " << q;
        }
    }
}

// The first 180 steps of the 1:5 bed (benchmarks/polydisperse_1to5.toml: 5 mm grains on 1 mm
// ones, solves at their cap, without the cluster sweeps, which run in one process only) over
// two ranks, every capped step whose impulses grow taken again on the whole world (the
// whole_on_candidates of before session 61, so that retakes are many): some of those steps
// had been halved for an unresolved solve first, and the whole world goes on from the halved
// step (World::StepResume), as one process does. Before it began again at the first h, and
// step 165 differed. Then the same with the default test (an absurd impulse asked for too):
// no step taken again whole, the same bits. (Under the sanitizers, 45 steps.)
TEST(RankWorld, AStepTakenAgainWholeGoesOnFromItsHalvings) {
    Scene scene = load_scene(TALUS_SOURCE_DIR "/benchmarks/polydisperse_1to5.toml");
    World& start = scene.world;
    start.solver.cluster_sweeps = false;
    const int steps = testing::steps_for_build(180);
    // the steps land on the scene's frames, every 0.05 s, as `talus run` takes them
    const auto next_frame = [](double t) { return 0.05 * (std::floor(t / 0.05) + 1.0); };
    World one = start;
    for (int s = 0; s < steps; ++s) ASSERT_TRUE(one.step(next_frame(one.time)).ok) << "step " << s + 1;
    const BodyStore sorted = by_stable_id(one.bodies);
    for (const bool every_candidate : {true, false}) {
        std::optional<World> gathered;
        uint64_t whole_steps = 0;
        run_local_ranks(2, [&](Ranks& rk) {
            World w = start;
            hold_part(w, first_block_edge(w), rk);
            w.on_ranks.whole_on_candidates = every_candidate;
            for (int s = 0; s < steps; ++s)
                if (!step_on_ranks(w, next_frame(w.time)).ok) ADD_FAILURE() << "step " << s + 1 << " failed over ranks";
            std::optional<World> whole = gather_whole(w);
            if (rk.root()) {
                gathered = std::move(whole);
                whole_steps = w.on_ranks.whole_steps;
            }
        });
        ASSERT_TRUE(gathered.has_value());
        EXPECT_EQ(gathered->step_count, one.step_count) << every_candidate;
        EXPECT_EQ(gathered->time, one.time) << every_candidate;
        EXPECT_EQ(first_difference({gathered->bodies, {}}, {sorted, {}}), "") << every_candidate;
        std::printf("[ 1:5 bed, 2 ranks, %s ] %llu of %d steps taken again on the whole world\n",
                    every_candidate ? "every growing impulse" : "the default test", (unsigned long long)whole_steps,
                    steps);
        if (every_candidate && !testing::kInstrumented) {  // (45 steps under the sanitizers)
            EXPECT_GT(whole_steps, 10u);
        } else if (!every_candidate) {
            EXPECT_LT(whole_steps, 5u);
        }
    }
}

}  // namespace
}  // namespace talus
