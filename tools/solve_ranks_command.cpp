// `talus solve-ranks` (tools/solve_ranks_command.hpp): solve_ccp_on_rank under mpirun,
// against one process. Every rank steps the whole scene to the same state, takes the next
// step's problem, keeps its part of it (engine/distributed/rank_problem.hpp, cut by the
// decomposition of docs/mpi.md over the job's ranks) and solves it with the others; the
// results come to rank 0, which compares them with its own one-process solve.
#include "tools/solve_ranks_command.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "core/bytes.hpp"
#include "engine/distributed/rank_problem.hpp"
#include "solvers/rank_operator.hpp"
#include "tools/exit_codes.hpp"

namespace talus {
namespace {

bool same(const void* a, const void* b, std::size_t n) { return std::memcmp(a, b, n) == 0; }

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int cmd_solve_ranks(Scene& scene, const SolveRanksOptions& o, Ranks& ranks) {
    World& w = scene.world;
    for (int s = 0; s < o.steps; ++s) {
        const StepStatus st = w.step();
        if (!st.ok) {
            if (ranks.root()) std::fprintf(stderr, "talus solve-ranks: step %d failed: %s\n", s + 1, st.message.c_str());
            return kExitSimulation;
        }
    }
    const World::Problem problem = w.next_problem();
    const int p = ranks.size();
    const std::vector<int32_t> owner = body_owners(problem.bodies, w.solver.envelope, p);
    std::vector<std::string> names = o.solvers;
    if (names.empty()) names = {"pgs", "bgs", "pj", "apgd"};
    // each solver under each friction law it runs over ranks (bgs: "ccp" and "coulomb"),
    // whatever the scene's
    std::vector<SolverSettings> runs;
    for (const std::string& name : names)
        for (FrictionLaw law : {FrictionLaw::CCP, FrictionLaw::Coulomb}) {
            SolverSettings s = w.solver;
            s.type = *solver_from_name(name);
            s.friction = law;
            if (runs_on_ranks(s)) runs.push_back(s);
        }
    if (ranks.root())
        std::printf("%s after %d steps: %zu bodies, %zu contacts, over %d rank%s\n", o.scene.c_str(),
                    o.steps, problem.bodies.size(), problem.batch.size(), p, p == 1 ? "" : "s");
    int code = 0;
    for (const SolverSettings& settings : runs) {
        const std::string name = fmt::format("{} {}", solver_name(settings.type), friction_law_name(settings.friction));
        // one process, on rank 0
        BodyStore bodies = problem.bodies;
        AssembledBatch batch = problem.batch;
        double serial_seconds = 0.0;
        SolverResult serial;
        if (ranks.root()) {
            SolverWorkspace work;
            const auto t0 = std::chrono::steady_clock::now();
            serial = solve_ccp(batch, bodies, settings, work);
            serial_seconds = seconds_since(t0);
        }
        // over the ranks
        RankProblem part;
        try {
            part = rank_problem(problem.bodies, problem.batch, owner, ranks.rank());
        } catch (const std::invalid_argument& e) {  // the same on every rank: all stop here
            if (ranks.root()) std::fprintf(stderr, "talus solve-ranks: %s\n", e.what());
            return kExitInvalid;
        }
        SolverWorkspace work;
        RankTraffic traffic;
        std::vector<std::string> all;
        ranks.all_gather(std::string(), all);  // start together
        const auto t0 = std::chrono::steady_clock::now();
        const SolverResult r = solve_ccp_on_rank(part.batch, part.bodies, part.owner, settings, work, ranks, &traffic);
        const double rank_seconds = seconds_since(t0);
        if (!r.refused.empty()) {
            if (ranks.root()) std::fprintf(stderr, "talus solve-ranks: %s\n", r.refused.c_str());
            return kExitInvalid;
        }
        // every rank's results to rank 0
        std::string mine;
        put_bytes(mine, r.iterations);
        put_bytes(mine, r.residual);
        put_bytes(mine, rank_seconds);
        put_bytes(mine, traffic);
        uint64_t own = 0;
        for (std::size_t b = 0; b < part.owner.size(); ++b) own += part.owner[b] == ranks.rank();
        put_bytes(mine, own);
        for (std::size_t b = 0; b < part.owner.size(); ++b) {
            if (part.owner[b] != ranks.rank()) continue;
            put_bytes(mine, part.global_body[b]);
            put_vec(mine, part.bodies.velocity[b]);
            put_vec(mine, part.bodies.angular_velocity[b]);
        }
        put_bytes(mine, uint64_t(part.global_contact.size()));
        for (std::size_t i = 0; i < part.global_contact.size(); ++i) {
            put_bytes(mine, part.global_contact[i]);
            put_vec(mine, part.batch.gamma[i]);
        }
        ranks.all_gather(mine, all);
        if (!ranks.root()) continue;
        std::size_t wrong_bodies = 0, wrong_contacts = 0, bodies_seen = 0, wrong_results = 0;
        std::vector<uint8_t> held(batch.size(), 0);
        RankTraffic most;
        double slowest = 0.0;
        for (const std::string& s : all) {
            std::size_t at = 0;
            const int iterations = take_bytes<int>(s, at);
            const double residual = take_bytes<double>(s, at);
            slowest = std::max(slowest, take_bytes<double>(s, at));
            const RankTraffic t = take_bytes<RankTraffic>(s, at);
            most.halos = std::max(most.halos, t.halos);
            most.messages = std::max(most.messages, t.messages);
            most.bytes = std::max(most.bytes, t.bytes);
            most.reductions = std::max(most.reductions, t.reductions);
            wrong_results += iterations != serial.iterations || !same(&residual, &serial.residual, sizeof residual);
            const uint64_t n_own = take_bytes<uint64_t>(s, at);
            for (uint64_t k = 0; k < n_own; ++k) {
                const uint32_t g = take_bytes<uint32_t>(s, at);
                const Vec3 v = take_vec(s, at), om = take_vec(s, at);
                ++bodies_seen;
                wrong_bodies += !same(v.data(), bodies.velocity[g].data(), sizeof(Vec3)) ||
                                !same(om.data(), bodies.angular_velocity[g].data(), sizeof(Vec3));
            }
            const uint64_t n_held = take_bytes<uint64_t>(s, at);
            for (uint64_t k = 0; k < n_held; ++k) {
                const uint32_t g = take_bytes<uint32_t>(s, at);
                const Vec3 gamma = take_vec(s, at);
                held[g] = 1;
                wrong_contacts += !same(gamma.data(), batch.gamma[g].data(), sizeof(Vec3));
            }
        }
        std::size_t unheld = 0;
        for (uint8_t h : held) unheld += !h;
        const bool ok = wrong_bodies == 0 && wrong_contacts == 0 && wrong_results == 0 && unheld == 0 &&
                        bodies_seen == bodies.size();
        const double per = std::max(1, serial.iterations);
        std::printf("%-12s %s: %d iterations, residual %.3g m/s; %.3f s (one process %.3f s); a rank sends at "
                    "most %.1f halos, %.1f messages, %.1f kB and %.1f scalar collectives an iteration\n",
                    name.c_str(), ok ? "same bits" : "DIFFERENT", serial.iterations, serial.residual, slowest,
                    serial_seconds, double(most.halos) / per, double(most.messages) / per,
                    double(most.bytes) / per / 1e3, double(most.reductions) / per);
        if (!ok) {
            std::printf("      %zu of %zu bodies' velocities, %zu of %zu contacts' impulses and %zu ranks' results "
                        "differ; %zu contacts held by no rank\n",
                        wrong_bodies, bodies.size(), wrong_contacts, batch.size(), wrong_results, unheld);
            code = kExitSimulation;
        }
    }
    std::fflush(stdout);
    return code;
}

}  // namespace talus
