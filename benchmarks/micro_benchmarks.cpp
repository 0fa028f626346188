// Micro-benchmarks of the step's stages on a settled-like random bed (figures, not tests):
//   build/bin/talus_micro_benchmarks
// broad phase (bodies/s; one size, and two sizes 5× apart), one PGS solve of a packed bed (contact-iterations/s), the colouring
// and assembly stage (ns per contact), and the PGS
// kernel alone on one colour that fits in cache (scalar vs four-lane AVX; contacts/s), and a
// whole bgs solve of a bed of touching grains on 1 and 2 threads (contact-iterations/s), and
// the per-body sums of a solve's start and end, gathered body by body or scattered colour
// by colour (ms a pass).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

#include <oneapi/tbb/global_control.h>

#include "collision/broad_phase.hpp"
#include "engine/world/world.hpp"
#include "solvers/contact_ops.hpp"
#include "solvers/contact_kernels.hpp"
#include "solvers/contact_operator.hpp"
#include "solvers/body_contacts.hpp"
#include "solvers/solver.hpp"

namespace {

using namespace talus;

void fill(World& w, int per_axis, double r) {
    const uint32_t m = w.materials.add(Material{"glass", 2500.0, 0.5});
    const double a = 2.0 * r * 1.02;
    Wall box;
    box.type = WallType::Box;
    box.min = Vec3::Zero();
    box.max = Vec3(per_axis * a, per_axis * a, 4.0 * per_axis * a);
    box.material = m;
    w.walls.push_back(box);
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> jitter(-0.005 * r, 0.005 * r);
    for (int k = 0; k < per_axis; ++k)
        for (int j = 0; j < per_axis; ++j)
            for (int i = 0; i < per_axis; ++i)
                w.bodies.add_sphere(w.bodies.size(),
                                    Vec3((i + 0.5) * a + jitter(rng), (j + 0.5) * a + jitter(rng),
                                         (k + 0.5) * a),
                                    r, 2500.0, m);
}

void BM_BroadPhase(benchmark::State& state) {
    World w;
    fill(w, int(state.range(0)), 0.005);
    PairList pairs;
    BroadPhaseScratch scratch;
    for (auto _ : state) {
        broad_phase(w.bodies.position, w.bodies.radius, 5e-4, pairs, scratch);
        benchmark::DoNotOptimize(pairs.a.data());
    }
    state.counters["bodies/s"] = benchmark::Counter(double(w.bodies.size()) * state.iterations(),
                                                    benchmark::Counter::kIsRate);
    state.counters["pairs"] = double(pairs.size());
}
BENCHMARK(BM_BroadPhase)->Arg(20)->Arg(40)->Unit(benchmark::kMillisecond);

void BM_BroadPhaseTwoSizes(benchmark::State& state) {
    // The 1:5 bed's mix (benchmarks/polydisperse_1to5.toml): grains of 1 mm radius at about
    // 60 % of space, and one in 80 of 5 mm among them, in a random cloud (overlaps do not
    // matter to the broad phase). With one grid, its cells are sized by the 5 mm grains and
    // hold about 190 small ones; with the size classes, the small grains have their own.
    const int n = int(state.range(0));
    const double r = 1e-3, side = std::cbrt(double(n) * 4.19 * r * r * r / 0.6);
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> u(0.0, side);
    std::vector<Vec3> x;
    std::vector<double> radius;
    for (int i = 0; i < n; ++i) {
        x.emplace_back(u(rng), u(rng), u(rng));
        radius.push_back(i % 80 == 0 ? 5.0 * r : r);
    }
    PairList pairs;
    BroadPhaseScratch scratch;
    for (auto _ : state) {
        broad_phase(x, radius, 5e-4, pairs, scratch);
        benchmark::DoNotOptimize(pairs.a.data());
    }
    state.counters["bodies/s"] = benchmark::Counter(double(n) * state.iterations(), benchmark::Counter::kIsRate);
    state.counters["pairs"] = double(pairs.size());
}
BENCHMARK(BM_BroadPhaseTwoSizes)->Arg(12000)->Unit(benchmark::kMillisecond);

void BM_PgsStep(benchmark::State& state) {
    // One whole step of a resting column bed; solver capped at 50 iterations.
    World w;
    fill(w, int(state.range(0)), 0.005);
    w.simulation.dt = 1e-3;
    w.solver.max_iterations = 50;
    w.solver.tolerance = 1e-9;  // never reached: every step runs the full 50 sweeps
    w.step();
    double contact_iterations = 0.0, solver_time = 0.0;
    for (auto _ : state) {
        w.step();
        contact_iterations += double(w.diagnostics().contacts) * w.diagnostics().iterations;
        solver_time += w.diagnostics().solver_wall_time;
    }
    state.counters["contacts"] = double(w.diagnostics().contacts);
    state.counters["contact-it/s (solver)"] = contact_iterations / solver_time;
}
BENCHMARK(BM_PgsStep)->Arg(20)->Unit(benchmark::kMillisecond);

void BM_AssemblyStage(benchmark::State& state) {
    // The colouring and assembly of a resting bed's step, warm start included (the stage
    // the step's breakdown calls "colouring and assembly"), per contact: the solve is cut to
    // 5 sweeps so that the steps are quick, and the stage's own clock is read.
    World w;
    fill(w, int(state.range(0)), 0.005);
    w.simulation.dt = 1e-3;
    w.solver.max_iterations = 5;
    w.step();
    double seconds = 0.0, contacts = 0.0;
    for (auto _ : state) {
        w.step();
        seconds += w.diagnostics().time_assemble;
        contacts += double(w.diagnostics().contacts);
    }
    state.counters["contacts"] = double(w.diagnostics().contacts);
    state.counters["ns per contact"] = 1e9 * seconds / contacts;
}
BENCHMARK(BM_AssemblyStage)->Arg(30)->Unit(benchmark::kMillisecond);

/// One colour of `contacts` sphere–sphere contacts over distinct bodies. Arg 0: the
/// contacts (1,024 stay in L2: the kernel's arithmetic cost without the memory system;
/// 65,536 take 13 MB of batch, in L3 like a 24k-grain bed's; 1M, in memory like the 10⁶
/// pour's). Arg 1: lanes (0 scalar, 1 four AVX lanes, 2 eight AVX-512 lanes). Arg 2: 1
/// scatters the bodies over their array (a random permutation), as a colour of a real bed
/// reaches them, 0 keeps them in contact order.
/// Arg 3: 1 stores the tangent u, 0 leaves it out as assemble() does (the kernel then
/// computes it from n). Arg 4 (optional): 1 makes every body anisotropic (a clump's or an
/// ellipsoid's world I⁻¹, a turned diagonal tensor), 0 (the default) isotropic.
void kernel_benchmark(benchmark::State& state, bool bgs) {
    const std::size_t contacts = std::size_t(state.range(0));
    const bool lanes = state.range(1) != 0, eight = state.range(1) == 2;
    const int width = eight ? 8 : 4;
    const bool scattered = state.range(2) != 0;
    const bool stored_tangent = state.range(3) != 0;
    const bool anisotropic = state.range(4) != 0;
    if (lanes && !pgs_lanes_available()) {
        state.SkipWithError("no AVX");
        return;
    }
    if (eight && !lanes8_available()) {
        state.SkipWithError("no AVX-512");
        return;
    }
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> U(-1.0, 1.0), P(0.0, 1.0);
    SolverBodies sb;
    sb.body.resize(2 * contacts);
    for (SolverBody& b : sb.body) b = {Vec3(U(rng), U(rng), U(rng)), 1.0, Vec3(U(rng), U(rng), U(rng)), 1e3};
    if (anisotropic) {
        sb.inv_inertia_world.resize(sb.body.size());
        for (std::size_t k = 0; k < sb.body.size(); ++k) {
            const Mat3 R = Quat(U(rng), U(rng), U(rng), U(rng)).normalized().toRotationMatrix();
            sb.inv_inertia_world[k] = R * Vec3(1e3, 2e3, 3e3).asDiagonal() * R.transpose();
            sb.body[k].inv_inertia = -1.0;
        }
    }
    std::vector<int32_t> slot(2 * contacts);
    std::iota(slot.begin(), slot.end(), 0);
    if (scattered) std::shuffle(slot.begin(), slot.end(), rng);
    AssembledBatch B;
    for (std::size_t i = 0; i < contacts; ++i) {
        const Vec3 n = Vec3(U(rng), U(rng), U(rng)).normalized();
        B.a.push_back(slot[2 * i]);
        B.b.push_back(slot[2 * i + 1]);
        B.normal.push_back(n);
        if (stored_tangent) B.tangent.push_back(first_tangent(n));
        B.lever_a.push_back(-0.005 * n);
        B.lever_b.push_back(0.005 * n);
        B.rhs.push_back(Vec3(-0.01 * P(rng), 0.0, 0.0));
        B.stab.push_back(B.rhs.back()[0]);
        B.mu.push_back(0.5);
        B.gamma.push_back(Vec3::Zero());
        B.eta.push_back(0.0);
    }
    B.colour_start = {0, uint32_t(contacts)};
    for (std::size_t i = 0; i < contacts; ++i) {
        B.eta[i] = 3.0 / delassus_block(B, sb, i).trace();
        const BlockMetric m = block_metric(delassus_block(B, sb, i));
        B.eta_n.push_back(m.n);
        B.eta_t.push_back(m.t);
    }
    for (auto _ : state) {
        const double e = bgs ? (lanes ? bgs_range_lanes(B, sb, 0, contacts, 1.0, 0.0, FrictionLaw::CCP, width)
                                      : bgs_range_scalar(B, sb, 0, contacts, 1.0, 0.0))
                             : (lanes ? pgs_range_lanes(B, sb, 0, contacts, 1.0, 0.0, width)
                                      : pgs_range_scalar(B, sb, 0, contacts, 1.0, 0.0));
        benchmark::DoNotOptimize(e);
    }
    state.counters["contacts/s"] = benchmark::Counter(double(contacts) * state.iterations(),
                                                      benchmark::Counter::kIsRate);
}
void BM_PgsKernel(benchmark::State& state) { kernel_benchmark(state, false); }
void BM_BgsKernel(benchmark::State& state) { kernel_benchmark(state, true); }
BENCHMARK(BM_PgsKernel)->ArgsProduct({{1024}, {0, 1, 2}, {0}, {0, 1}, {0}})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_BgsKernel)
    ->ArgsProduct({{1024}, {0}, {0}, {0, 1}, {0}})
    ->ArgsProduct({{1024, 65536, 1 << 20}, {1, 2}, {0, 1}, {0, 1}, {0}})
    ->ArgsProduct({{1024, 65536}, {0, 1, 2}, {0}, {0}, {1}})  // anisotropic bodies
    ->Unit(benchmark::kMicrosecond);

/// The next problem of a bed of per_axis³ touching grains in a box (a cubic lattice of
/// spacing 0.999 d, columns offset at random by up to 2 % of r sideways: every grain has
/// its six neighbours, three contacts a grain), made once per size: a 10⁶-grain bed takes
/// some seconds to build and step.
const World::Problem& lattice_problem(int per_axis) {
    static std::map<int, World::Problem> made;
    auto it = made.find(per_axis);
    if (it != made.end()) return it->second;
    World w;
    const double r = 0.005, a = 2.0 * r * 0.999;
    const uint32_t m = w.materials.add(Material{"glass", 2500.0, 0.5});
    Wall box;
    box.type = WallType::Box;
    box.min = Vec3(-a, -a, 0.0);
    box.max = Vec3((per_axis + 1) * a, (per_axis + 1) * a, 4.0 * per_axis * a);
    box.material = m;
    w.walls.push_back(box);
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> jitter(-0.02 * r, 0.02 * r);
    for (int j = 0; j < per_axis; ++j)
        for (int i = 0; i < per_axis; ++i) {
            const double x = (i + 0.5) * a + jitter(rng), y = (j + 0.5) * a + jitter(rng);
            for (int k = 0; k < per_axis; ++k)
                w.bodies.add_sphere(w.bodies.size(), Vec3(x, y, r + k * a), r, 2500.0, m);
        }
    w.simulation.dt = 1e-3;
    w.solver.type = SolverType::BGS;
    w.solver.max_iterations = 5;
    w.step();
    return made.emplace(per_axis, w.next_problem()).first->second;
}

void BM_BgsSolve(benchmark::State& state) {
    // The bgs solve of a resting bed's problem, 50 sweeps (the tolerance is never reached),
    // on Arg 1 threads. Arg 0: grains per axis (15 and 20: 9,600 and 23,000 contacts, the
    // size of a pour's early solves, where each colour is a few hundred contacts; 30:
    // 27,000 grains, 79,000 contacts, a 16 MB batch; 100: 10⁶ grains, 3 M contacts, in
    // memory like the 10⁶ pour's). Against BM_BgsKernel's rate in L2 it shows what the
    // memory system costs a whole sweep, and against one thread whether two share a limit
    // or what the colours' synchronisation costs (benchmarks/README.md).
    const World::Problem& p = lattice_problem(int(state.range(0)));
    tbb::global_control threads(tbb::global_control::max_allowed_parallelism, std::size_t(state.range(1)));
    SolverSettings s;
    s.type = SolverType::BGS;
    s.max_iterations = 50;
    s.tolerance = 0.0;
    double contact_iterations = 0.0;
    for (auto _ : state) {
        state.PauseTiming();
        AssembledBatch batch = p.batch;
        BodyStore bodies = p.bodies;
        SolverWorkspace work;
        state.ResumeTiming();
        const SolverResult r = solve_ccp(batch, bodies, s, work);
        contact_iterations += double(batch.size()) * r.iterations;
    }
    state.counters["contacts"] = double(p.batch.size());
    state.counters["contact-it/s"] = benchmark::Counter(contact_iterations, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_BgsSolve)->ArgsProduct({{15, 20, 30, 100}, {1, 2}})->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_WarmStartStore(benchmark::State& state) {
    // What a step's end costs to remember its impulses for the next (WarmStartCache::store),
    // per contact, on a resting bed's problem (Arg 0: grains per axis, as BM_BgsSolve) after
    // 50 bgs sweeps, on 2 threads. Arg 1: 0 the parallel way, 1 in place (a large run's, and
    // every run's before): the same entries, so the two rows compare the ways in one binary.
    const World::Problem& p = lattice_problem(int(state.range(0)));
    tbb::global_control threads(tbb::global_control::max_allowed_parallelism, 2);
    AssembledBatch batch = p.batch;
    BodyStore bodies = p.bodies;
    SolverSettings s;
    s.type = SolverType::BGS;
    s.max_iterations = 50;
    s.tolerance = 0.0;
    SolverWorkspace work;
    solve_ccp(batch, bodies, s, work);
    const bool in_place = state.range(1) != 0;
    WarmStartCache cache;
    for (auto _ : state) cache.store(p.contacts, batch, p.h, in_place);
    state.counters["entries"] = double(cache.size());
    state.counters["ns per contact"] = benchmark::Counter(double(p.contacts.size()) * state.iterations(),
                                                          benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_WarmStartStore)->ArgsProduct({{30}, {0, 1}})->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_BodyGather(benchmark::State& state) {
    // The per-body sums of contact impulses a solve takes at its start (the warm start's
    // ν* + M⁻¹ D γ) and at its end (finish_solve), over the same lattice beds as BM_BgsSolve
    // with impulses from 5 bgs sweeps, on Arg 1 threads. Arg 2: 0, the gather body by body
    // (for_each_body_impulse, each body reading its contacts where they lie); 1, the scatter
    // colour by colour (scatter_body_impulses, contacts read in order), which the solves use
    // below kScatterBodies bodies (sum_body_impulses). The same bits either way
    // (test BodyContacts.ScatterSumsAsTheGather).
    const World::Problem& p = lattice_problem(int(state.range(0)));
    tbb::global_control threads(tbb::global_control::max_allowed_parallelism, std::size_t(state.range(1)));
    BodyContacts bc;
    bc.build(p.batch, p.bodies.size());
    SolverBodies sb(p.bodies);
    if (!scatters(p.batch, bc, sb)) {
        state.SkipWithError("the batch is not coloured whole");
        return;
    }
    for (auto _ : state) {
        if (state.range(2) == 0)
            for_each_body_impulse(p.batch, bc, p.batch.gamma, [&](std::size_t b, const Vec3& f, const Vec3& t) {
                sb.body[b].v = f;
                sb.body[b].w = t;
            });
        else
            scatter_body_impulses(p.batch, p.batch.gamma, sb);
        benchmark::DoNotOptimize(sb.body.data());
    }
    state.counters["contacts/s"] = benchmark::Counter(double(p.batch.size()) * double(state.iterations()),
                                                      benchmark::Counter::kIsRate);
}
BENCHMARK(BM_BodyGather)->ArgsProduct({{30, 46, 64, 100}, {1, 2}, {0, 1}})->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
