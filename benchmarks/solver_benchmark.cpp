// talus_solver_benchmark: the solver suite measured on one large, realistic contact problem.
//
// Why a cached state: the solvers must be compared on exactly the same problem, and a
// settled pile of 100,000 grains takes minutes to make. `generate` runs
// scenes/pile100k.toml to its end and stores the bodies' state in
// benchmarks/data/pile100k_state.h5 (plain HDF5, checked to read back bit for bit). Every
// other mode loads the scene, puts the stored state in place of its bodies (matched by
// stable id, so a renumbered store reloads too) and asks World::next_problem() for the
// problem the next step would solve. The state holds no warm-start impulses, so those
// modes first advance the pile a few steps with the scene's own settings ("priming"); the
// next step's problem then comes warm (γ⁰ from the previous step, as in a running
// simulation) or cold (solver.warm_start = false: γ⁰ = 0), with the same contacts.
//
// Modes (CSV into benchmarks/results/, each naming the machine):
//   generate     settle the pile; save the state; verify the reload
//   convergence  residual (docs/design.md §6) per iteration and second for PGS, PJ and APGD, cold
//                and warm, to 1e-6 m/s or a wall-time budget; the table of when each
//                solver reaches 1e-3, 1e-4, 1e-5 m/s
//   throughput   one PGS sweep, one PJ iteration (and one APGD iteration) in
//                contact-iterations/s on 1 and 2 threads; the bytes they move per contact
//                (from the sizes of the arrays they read and write) against a measured
//                copy bandwidth
//   breakdown    mean seconds per stage of a whole step, and of one trajectory frame write
//   ranks        pgs, bgs, pj and apgd on P in-process ranks of 1 thread (solvers/rank_operator.hpp)
//                against one process on P threads: seconds, same bits, messages an iteration
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fmt/core.h>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/distributed/local_ranks.hpp"
#include "engine/distributed/rank_problem.hpp"
#include "engine/world/world.hpp"
#include "io/hdf5_handles.hpp"
#include "io/scene.hpp"
#include "io/trajectory_writer.hpp"
#include "solvers/cone_projection.hpp"
#include "solvers/contact_ops.hpp"
#include "solvers/rank_operator.hpp"
#include "solvers/solver.hpp"

namespace fs = std::filesystem;
using namespace talus;

namespace {

// Exit codes: 0 success, 1 failure, 2 bad command line, 3 state file missing or stale
// (the driver then runs `generate`).
constexpr int kExitFailure = 1;
constexpr int kExitStale = 3;

struct StaleState : std::runtime_error {
    using std::runtime_error::runtime_error;
};

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// ---------------------------------------------------------------------------------------
// The machine, named in every CSV

std::string machine_name() {
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "unknown-host");
    std::string cpu = "unknown CPU";
    std::ifstream info("/proc/cpuinfo");
    for (std::string line; std::getline(info, line);) {
        if (line.rfind("model name", 0) != 0) continue;
        const auto colon = line.find(':');
        if (colon == std::string::npos) break;
        cpu = line.substr(colon + 1);
        cpu.erase(0, cpu.find_first_not_of(" \t"));
        break;
    }
    return fmt::format("{} ({}, {} cores)", host, cpu, std::thread::hardware_concurrency());
}

/// A CSV field, quoted when it holds a comma or a quote.
std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

std::ofstream open_csv(const fs::path& path) {
    fs::create_directories(path.parent_path());
    std::ofstream f(path);
    if (!f) throw std::runtime_error("cannot write " + path.string());
    return f;
}

// ---------------------------------------------------------------------------------------
// The cached state: one HDF5 file, datasets in native layout, so it reloads bit for bit

constexpr const char* kStateFormat = "talus-solver-benchmark-state 1";

struct SavedState {
    std::vector<uint64_t> id;
    std::vector<Vec3> position, velocity, angular_velocity;
    std::vector<Quat> orientation;
    std::vector<double> radius;
    std::vector<uint32_t> material;
    double time = 0.0;
    uint64_t step = 0;
    std::string scene_text;  ///< the scene file it was generated from, verbatim
};

static_assert(sizeof(Vec3) == 3 * sizeof(double), "Vec3 arrays are stored as N x 3 doubles");

/// The per-body datasets of the cached state, one list for writing and reading: calls
/// f(name, HDF5 type, data, columns) for each; `wxyz` holds the orientations as 4 doubles.
template <class State, class F>
void for_each_state_dataset(State& s, std::vector<double>& wxyz, F&& f) {
    f("id", H5T_NATIVE_UINT64, s.id.data(), 1);
    f("position", H5T_NATIVE_DOUBLE, s.position.data(), 3);
    f("orientation", H5T_NATIVE_DOUBLE, wxyz.data(), 4);
    f("velocity", H5T_NATIVE_DOUBLE, s.velocity.data(), 3);
    f("angular_velocity", H5T_NATIVE_DOUBLE, s.angular_velocity.data(), 3);
    f("radius", H5T_NATIVE_DOUBLE, s.radius.data(), 1);
    f("material", H5T_NATIVE_UINT32, s.material.data(), 1);
}

std::vector<double> quats_wxyz(const std::vector<Quat>& q) {
    std::vector<double> out(4 * q.size());
    for (std::size_t i = 0; i < q.size(); ++i) {
        out[4 * i] = q[i].w();
        out[4 * i + 1] = q[i].x();
        out[4 * i + 2] = q[i].y();
        out[4 * i + 3] = q[i].z();
    }
    return out;
}

void save_state(const fs::path& path, const World& w, const std::string& scene_text) {
    using hdf5::Hid;
    fs::create_directories(path.parent_path());
    const fs::path partial = path.string() + ".partial";
    auto fail = [&](const std::string& what) {
        throw std::runtime_error("cannot write " + partial.string() + ": " + what);
    };
    {
        Hid file(H5Fcreate(partial.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
        if (!file.valid()) fail("H5Fcreate failed");
        const hsize_t n = w.bodies.size();
        auto dataset = [&](const char* name, hid_t type, const void* data, hsize_t cols) {
            const hsize_t dims[2] = {n, cols};
            Hid space(H5Screate_simple(cols == 1 ? 1 : 2, dims, nullptr), H5Sclose);
            Hid set(H5Dcreate2(file.get(), name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT,
                               H5P_DEFAULT), H5Dclose);
            if (!set.valid() || H5Dwrite(set.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
                fail(std::string("dataset ") + name);
        };
        std::vector<double> q = quats_wxyz(w.bodies.orientation);
        for_each_state_dataset(w.bodies, q, dataset);

        auto attribute = [&](const char* name, hid_t type, const void* data) {
            Hid space(H5Screate(H5S_SCALAR), H5Sclose);
            Hid attr(H5Acreate2(file.get(), name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                     H5Aclose);
            if (!attr.valid() || H5Awrite(attr.get(), type, data) < 0)
                fail(std::string("attribute ") + name);
        };
        auto text_attribute = [&](const char* name, const std::string& text) {
            Hid type(H5Tcopy(H5T_C_S1), H5Tclose);
            H5Tset_size(type.get(), std::max<std::size_t>(1, text.size()));
            std::string padded = text.empty() ? std::string(1, '\0') : text;
            attribute(name, type.get(), padded.data());
        };
        attribute("time", H5T_NATIVE_DOUBLE, &w.time);
        attribute("step", H5T_NATIVE_UINT64, &w.step_count);
        text_attribute("format", kStateFormat);
        text_attribute("scene_text", scene_text);
        text_attribute("orientation_convention", "Hamilton, body to world, scalar first (w, x, y, z)");
        if (!file.reset()) fail("H5Fclose failed");
    }
    fs::rename(partial, path);  // a killed generate never leaves a half-written cache
}

SavedState read_state(const fs::path& path) {
    using hdf5::Hid;
    if (!fs::exists(path))
        throw StaleState(path.string() + " does not exist: run `talus_solver_benchmark generate`");
    hdf5::QuietHdf5 quiet;
    auto fail = [&](const std::string& what) {
        throw StaleState("cannot read " + path.string() + " (" + what +
                         "): run `talus_solver_benchmark generate` again");
    };
    Hid file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
    if (!file.valid()) fail("not an HDF5 file");
    auto text_attribute = [&](const char* name) {
        Hid attr(H5Aopen(file.get(), name, H5P_DEFAULT), H5Aclose);
        if (!attr.valid()) fail(std::string("no attribute ") + name);
        Hid type(H5Aget_type(attr.get()), H5Tclose);
        std::string s(H5Tget_size(type.get()), '\0');
        if (H5Aread(attr.get(), type.get(), s.data()) < 0) fail(name);
        if (!s.empty() && s.back() == '\0') s.resize(std::strlen(s.c_str()));
        return s;
    };
    auto attribute = [&](const char* name, hid_t type, void* data) {
        Hid attr(H5Aopen(file.get(), name, H5P_DEFAULT), H5Aclose);
        if (!attr.valid() || H5Aread(attr.get(), type, data) < 0) fail(name);
    };
    SavedState s;
    if (text_attribute("format") != kStateFormat) fail("unknown format");
    s.scene_text = text_attribute("scene_text");
    attribute("time", H5T_NATIVE_DOUBLE, &s.time);
    attribute("step", H5T_NATIVE_UINT64, &s.step);

    hsize_t n = 0;
    auto dataset = [&](const char* name, hid_t type, void* data, hsize_t cols) {
        Hid set(H5Dopen2(file.get(), name, H5P_DEFAULT), H5Dclose);
        if (!set.valid()) fail(std::string("no dataset ") + name);
        Hid space(H5Dget_space(set.get()), H5Sclose);
        if (hsize_t(H5Sget_simple_extent_npoints(space.get())) != n * cols)
            fail(std::string("wrong size of ") + name);
        if (n > 0 && H5Dread(set.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) fail(name);
    };
    {
        Hid set(H5Dopen2(file.get(), "id", H5P_DEFAULT), H5Dclose);
        if (!set.valid()) fail("no dataset id");
        Hid space(H5Dget_space(set.get()), H5Sclose);
        n = hsize_t(H5Sget_simple_extent_npoints(space.get()));
    }
    s.id.resize(n);
    s.position.resize(n);
    s.velocity.resize(n);
    s.angular_velocity.resize(n);
    s.radius.resize(n);
    s.material.resize(n);
    std::vector<double> q(4 * n);
    for_each_state_dataset(s, q, dataset);
    s.orientation.resize(n);
    for (std::size_t i = 0; i < n; ++i)
        s.orientation[i] = Quat(q[4 * i], q[4 * i + 1], q[4 * i + 2], q[4 * i + 3]);
    return s;
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
    return a.size() == b.size() &&
           (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

/// Put a saved state in place of the scene's bodies. Rows are matched by stable id; the
/// mass properties come from the scene, the radius and material must agree with it.
void install_state(World& w, const SavedState& s) {
    const BodyStore& scene = w.bodies;
    if (s.id.size() != scene.size())
        throw StaleState(fmt::format("the state holds {} bodies, the scene {}: run generate again",
                                     s.id.size(), scene.size()));
    std::vector<int64_t> index(scene.size(), -1);  // scene ids are 0 … N−1 after loading
    for (std::size_t i = 0; i < scene.size(); ++i) {
        if (scene.id[i] >= scene.size()) throw std::runtime_error("unexpected body id in the scene");
        index[scene.id[i]] = int64_t(i);
    }
    BodyStore out;
    for (std::size_t k = 0; k < s.id.size(); ++k) {
        const int64_t j = s.id[k] < index.size() ? index[s.id[k]] : -1;
        if (j < 0 || scene.radius[j] != s.radius[k] || scene.material[j] != s.material[k])
            throw StaleState(fmt::format("body id {} of the state does not match the scene: "
                                         "run generate again", s.id[k]));
        out.id.push_back(s.id[k]);
        out.position.push_back(s.position[k]);
        out.orientation.push_back(s.orientation[k]);
        out.velocity.push_back(s.velocity[k]);
        out.angular_velocity.push_back(s.angular_velocity[k]);
        out.radius.push_back(scene.radius[j]);
        out.inv_mass.push_back(scene.inv_mass[j]);
        out.inv_inertia.push_back(scene.inv_inertia[j]);
        out.material.push_back(scene.material[j]);
        out.shape.push_back(scene.shape[j]);
        out.shape_param.push_back(scene.shape_param[j]);
        out.motion.push_back(scene.motion[j]);
    }
    out.clumps = scene.clumps;
    out.motions = scene.motions;
    w.bodies = std::move(out);
    w.time = s.time;
    w.step_count = s.step;
}

// ---------------------------------------------------------------------------------------
// Options and the reference problem

struct Options {
    fs::path scene = fs::path(TALUS_SOURCE_DIR) / "scenes" / "pile100k.toml";
    fs::path state = fs::path(TALUS_SOURCE_DIR) / "benchmarks" / "data" / "pile100k_state.h5";
    fs::path results = fs::path(TALUS_SOURCE_DIR) / "benchmarks" / "results";
    int prime_steps = 10;         ///< steps with the scene's settings before taking the problem
    double budget = 60.0;         ///< wall-time budget per convergence solve [s]
    double tolerance = 1e-6;      ///< convergence runs stop here [m/s]
    int sweeps = 50;              ///< iterations per throughput solve
    std::string only;             ///< throughput: measure only this solver (empty: all)
    int repeats = 7;              ///< throughput and bandwidth repeats (median, best)
    int steps = 20;               ///< measured steps of the breakdown
    int warmup_steps = 5;         ///< unmeasured steps before them
    int frames = 5;               ///< measured trajectory frames (after one unmeasured)
    int threads = 0;              ///< generate / convergence / breakdown threads; 0 = all
    int ranks = 2;                ///< ranks: in-process ranks, and the one process's threads
    /// convergence: the methods compared, each "name" or "name@ω" (a relaxation other than
    /// the solver's default: PGS over-relaxed, for one)
    std::vector<std::string> methods{"pgs", "pj", "apgd"};
    /// convergence: γ_s of the problem's penetration term (negative: the scene's), to see
    /// what the push-out of overlaps does to the convergence
    double stabilization = -1.0;
};

/// One method of the convergence study: a solver, its relaxation (0: its default) and
/// whether bgs runs its cluster sweeps ("+clusters").
struct Method {
    std::string label;  ///< as given, and in the file name ('@' as '_w', '+' as '_')
    SolverType type;
    double relaxation;
    bool clusters = false;
};

Method parse_method(std::string spec) {
    constexpr std::string_view kClusters = "+clusters";
    bool clusters = false;
    if (spec.size() > kClusters.size() && spec.ends_with(kClusters)) {
        clusters = true;
        spec.resize(spec.size() - kClusters.size());
    }
    const std::size_t at = spec.find('@');
    const std::string name = spec.substr(0, at);
    const std::optional<SolverType> type = solver_from_name(name);
    if (!type) throw std::runtime_error("unknown solver \"" + name + "\" in --methods");
    double omega = 0.0;
    if (at != std::string::npos) omega = std::stod(spec.substr(at + 1));
    std::string label = spec;
    if (at != std::string::npos) label.replace(at, 1, "_w");
    if (clusters) {
        if (*type != SolverType::BGS) throw std::runtime_error("+clusters is for bgs only, in --methods");
        label += "_clusters";
    }
    return {label, *type, omega, clusters};
}

void step_or_throw(World& w, double until = World::kNoTimeLimit) {
    const StepStatus st = w.step(until);
    if (!st.ok) throw std::runtime_error("the simulation failed: " + st.message);
}

/// The scene with the saved state in place, advanced by `prime` steps.
Scene load_reference(const Options& o, int prime) {
    Scene scene = load_scene(o.scene);
    const SavedState s = read_state(o.state);
    if (s.scene_text != scene.text)
        throw StaleState(o.state.string() + " was generated from another version of " +
                         o.scene.string() + ": run generate again");
    install_state(scene.world, s);
    for (int k = 0; k < prime; ++k) step_or_throw(scene.world);
    return scene;
}

struct Problems {
    World::Problem cold, warm;
};

Problems reference_problems(World& w) {
    const bool warm_start = w.solver.warm_start;
    Problems p;
    w.solver.warm_start = false;
    p.cold = w.next_problem();
    w.solver.warm_start = true;
    p.warm = w.next_problem();
    w.solver.warm_start = warm_start;
    return p;
}

std::string describe(const World::Problem& p) {
    const AssembledBatch& c = p.batch;
    std::size_t wall = 0;
    for (std::size_t i = 0; i < c.size(); ++i) wall += c.a[i] == kNoBody || c.b[i] == kNoBody;
    const std::size_t colours = c.colour_start.empty() ? 0 : c.colour_start.size() - 1;
    std::string s = fmt::format("{} bodies, {} contacts ({} with a wall), {} colours", p.bodies.size(),
                                c.size(), wall, colours);
    if (c.overflow_colour && colours > 0)
        s += fmt::format(" (overflow colour: {} contacts, swept serially)",
                         c.colour_start[colours] - c.colour_start[colours - 1]);
    return s;
}

/// Solve a copy of the problem; optionally count, per threshold, the contacts whose
/// residual term ‖γ_i − Π_K(γ_i − η_i d_i)‖/η_i stays above it at exit.
SolverResult solve_copy(const World::Problem& p, const SolverSettings& s,
                        const std::vector<double>& thresholds = {},
                        std::vector<std::size_t>* above = nullptr) {
    AssembledBatch batch = p.batch;
    BodyStore bodies = p.bodies;
    SolverWorkspace work;
    SolverResult r = solve_ccp(batch, bodies, s, work);
    if (above) {
        const SolverBodies sb(bodies);
        above->assign(thresholds.size(), 0);
        for (std::size_t i = 0; i < batch.size(); ++i) {
            const Vec3 d = contact_velocity(batch, sb, i);
            const Vec3& g = batch.gamma[i];
            const double term =
                (g - project_friction_cone(g - batch.eta[i] * d, batch.mu[i])).norm() / batch.eta[i];
            for (std::size_t k = 0; k < thresholds.size(); ++k) (*above)[k] += term > thresholds[k];
        }
    }
    return r;
}

std::unique_ptr<tbb::global_control> limit_threads(int threads) {
    if (threads <= 0) return nullptr;
    return std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                 std::size_t(threads));
}

int active_threads() {
    return int(tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
}

// ---------------------------------------------------------------------------------------
// generate

int cmd_generate(const Options& o) {
    const auto limit = limit_threads(o.threads);
    Scene scene = load_scene(o.scene);
    World& w = scene.world;
    // the scene's duration, in its fixed steps or (without a dt) in adaptive ones landing on it
    const double duration = w.simulation.duration;
    const std::string step_text =
        w.simulation.adaptive ? fmt::format("adaptive steps of {} to {} s", w.simulation.min_dt, w.simulation.max_dt)
                              : fmt::format("steps of {} s", w.simulation.dt);
    fmt::print("generate: {} bodies, {} s in {} with {} ({} iterations, tolerance {} m/s), "
               "{} thread(s)\n", w.bodies.size(), duration, step_text, solver_name(w.solver.type),
               w.solver.max_iterations, w.solver.tolerance, active_threads());
    const fs::path log_path = o.results / (o.scene.stem().string() + "_settle.csv");
    std::ofstream log = open_csv(log_path);
    log << "# machine: " << machine_name() << "\n# scene: " << o.scene.filename().string()
        << ", " << w.bodies.size() << " bodies; one row per step\n"
        << "step,time,kinetic_energy,contacts,iterations,residual,step_seconds\n";
    const auto t0 = Clock::now();
    double e_max = 0.0;
    const uint64_t fixed_steps = w.simulation.adaptive ? 0 : uint64_t(std::llround(duration / w.simulation.dt));
    while (w.simulation.adaptive ? w.time < duration * (1.0 - 1e-12) : w.step_count < fixed_steps) {
        const auto ts = Clock::now();
        step_or_throw(w, w.simulation.adaptive ? duration : World::kNoTimeLimit);
        const double dt = seconds_since(ts);
        const StepDiagnostics& d = w.diagnostics();
        e_max = std::max(e_max, d.kinetic_energy);
        log << fmt::format("{},{:.6g},{:.6e},{},{},{:.6e},{:.4f}\n", d.step, d.time,
                           d.kinetic_energy, d.contacts, d.iterations, d.residual, dt);
        if (d.step % 25 == 0)
            fmt::print("  t = {:.3f} s  KE = {:.4e} J  contacts {:7d}  iterations {:3d}  "
                       "residual {:.2e} m/s  ({:.0f} s)\n", d.time, d.kinetic_energy, d.contacts,
                       d.iterations, d.residual, seconds_since(t0));
        std::fflush(stdout);
    }
    const double ke = w.kinetic_energy();
    fmt::print("settled: KE = {:.4e} J = {:.2e} of the peak {:.4e} J; {:.0f} s of wall time\n", ke,
               ke / e_max, e_max, seconds_since(t0));

    save_state(o.state, w, scene.text);
    const SavedState back = read_state(o.state);
    const BodyStore& b = w.bodies;
    const bool exact = same_bits(back.id, b.id) && same_bits(back.position, b.position) &&
                       same_bits(back.velocity, b.velocity) &&
                       same_bits(back.angular_velocity, b.angular_velocity) &&
                       same_bits(back.radius, b.radius) && same_bits(back.material, b.material) &&
                       same_bits(quats_wxyz(back.orientation), quats_wxyz(b.orientation)) &&
                       std::memcmp(&back.time, &w.time, sizeof(double)) == 0 &&
                       back.step == w.step_count && back.scene_text == scene.text;
    fmt::print("saved {} (t = {} s, step {}); reload bit-exact: {}\n", o.state.string(), w.time,
               w.step_count, exact ? "yes" : "NO");
    fmt::print("wrote {}\n", log_path.string());
    return exact ? 0 : kExitFailure;
}

// ---------------------------------------------------------------------------------------
// convergence

struct Threshold {
    double value;
    std::optional<IterationRecord> reached;  ///< first history entry at or below it
    std::size_t above_at_exit = 0;           ///< contacts whose term exceeds it at exit
};

int cmd_convergence(const Options& o) {
    const auto limit = limit_threads(o.threads);
    const std::string machine = machine_name();
    Scene scene = load_reference(o, o.prime_steps);
    if (o.stabilization >= 0.0) scene.world.solver.stabilization = o.stabilization;
    const Problems problems = reference_problems(scene.world);
    fmt::print("convergence: {}; {} thread(s), tolerance {} m/s, budget {} s per solve, "
               "stabilization {}\n", describe(problems.warm), active_threads(), o.tolerance, o.budget,
               scene.world.solver.stabilization);

    struct Row {
        std::string start, solver;
        int cap, iterations;
        double residual, wall;
        bool converged;
        std::size_t unbounded;
        std::vector<Threshold> thresholds;
    };
    std::vector<Row> rows;
    for (const std::string& spec : o.methods) {
        const Method method = parse_method(spec);
        const SolverType type = method.type;
        SolverSettings s = scene.world.solver;
        s.type = type;
        s.relaxation = method.relaxation;  // 0: the solver's default ω
        s.cluster_sweeps = method.clusters;
        s.tolerance = o.tolerance;
        // --tolerance is the one stop: neither the relative term (ε v_c) nor the weight term
        s.relative_tolerance = 0.0;
        s.weight_tolerance = 0.0;
        s.relaxed_tolerance = 0.0;
        s.record_history = true;
        const fs::path path = o.results / fmt::format("convergence_{}.csv", method.label);
        std::ofstream csv = open_csv(path);
        csv << "# machine: " << machine << "\n# problem: " << o.scene.filename().string()
            << ", saved state + " << o.prime_steps << " steps; " << describe(problems.warm)
            << "\n# solver: " << solver_name(type) << ", relaxation " << s.effective_relaxation()
            << ", tolerance " << o.tolerance << " m/s, " << active_threads()
            << " thread(s); seconds exclude the residual passes that only the history needs\n"
            << "start,iteration,seconds,residual\n";
        for (const char* start : {"cold", "warm"}) {
            const World::Problem& p = std::string(start) == "cold" ? problems.cold : problems.warm;
            // The cap: what fits the budget, from two short probes (their difference is
            // the cost per iteration, the rest the solve's fixed set-up and wind-up).
            s.max_iterations = 10;
            const SolverResult short_probe = solve_copy(p, s);
            s.max_iterations = 40;
            const SolverResult long_probe = solve_copy(p, s);
            double cap = 20.0;
            if (long_probe.iterations > short_probe.iterations) {
                const double per_iteration =
                    std::max(1e-9, long_probe.wall_time - short_probe.wall_time) /
                    double(long_probe.iterations - short_probe.iterations);
                const double fixed =
                    std::max(0.0, short_probe.wall_time - short_probe.iterations * per_iteration);
                cap = (o.budget - fixed) / per_iteration;
            }
            s.max_iterations = int(std::clamp(cap, 20.0, 1e6));
            const std::vector<double> levels{1e-3, 1e-4, 1e-5};
            std::vector<std::size_t> above;
            const SolverResult r = solve_copy(p, s, levels, &above);
            for (const IterationRecord& h : r.history)
                csv << fmt::format("{},{},{:.6f},{:.6e}\n", start, h.iteration, h.seconds, h.residual);
            Row row{start, method.label, s.max_iterations, r.iterations, r.residual,
                    r.wall_time, r.converged, r.unbounded_contacts.size(), {}};
            for (std::size_t k = 0; k < levels.size(); ++k) {
                Threshold th{levels[k], std::nullopt, above[k]};
                for (const IterationRecord& h : r.history)
                    if (h.residual <= levels[k]) {
                        th.reached = h;
                        break;
                    }
                row.thresholds.push_back(th);
            }
            fmt::print("  {:4s} {:4s}: {:6d} iterations (cap {}), residual {:.3e} m/s{}, {:.1f} s; "
                       "contacts above 1e-3 / 1e-4 / 1e-5 at exit: {} / {} / {}{}\n",
                       method.label, start, r.iterations, s.max_iterations, r.residual,
                       r.converged ? " (converged)" : "", r.wall_time, above[0], above[1],
                       above[2],
                       r.unbounded_contacts.empty()
                           ? ""
                           : fmt::format(", {} contacts flagged unbounded", r.unbounded_contacts.size()));
            if (r.clusters > 0)
                fmt::print("       {} cluster sweeps, {} contact steps (the work of {:.1f} sweeps)\n", r.clusters,
                           r.cluster_updates, double(r.cluster_updates) / double(p.batch.size()));
            std::fflush(stdout);
            rows.push_back(std::move(row));
        }
        fmt::print("  wrote {}\n", path.string());
    }

    const fs::path table_path = o.results / "convergence_table.csv";
    std::ofstream table = open_csv(table_path);
    table << "machine,contacts,start,solver,threshold_m_s,iterations,seconds,result,"
             "contacts_above_at_exit\n";
    fmt::print("\niterations / seconds to reach the residual (m/s), {} contacts:\n",
               problems.warm.batch.size());
    fmt::print("  {:6s} {:5s} {:>24s} {:>24s} {:>24s}\n", "solver", "start", "1e-3", "1e-4", "1e-5");
    for (const Row& row : rows) {
        std::string line = fmt::format("  {:6s} {:5s}", row.solver, row.start);
        for (const Threshold& th : row.thresholds) {
            std::string result, cell;
            if (th.reached) {
                result = "reached";
                cell = fmt::format("{} it / {:.2f} s", th.reached->iteration, th.reached->seconds);
                table << fmt::format("{},{},{},{},{:g},{},{:.4f},{},{}\n", csv_field(machine),
                                     problems.warm.batch.size(), row.start, row.solver, th.value,
                                     th.reached->iteration, th.reached->seconds, result,
                                     th.above_at_exit);
            } else {
                result = fmt::format("not reached in {} iterations", row.iterations);
                cell = fmt::format("not in {} it", row.iterations);
                table << fmt::format("{},{},{},{},{:g},,,{},{}\n", csv_field(machine),
                                     problems.warm.batch.size(), row.start, row.solver, th.value,
                                     result, th.above_at_exit);
            }
            line += fmt::format(" {:>24s}", cell);
        }
        fmt::print("{}\n", line);
    }
    fmt::print("wrote {}\n", table_path.string());
    return 0;
}

// ---------------------------------------------------------------------------------------
// throughput and bandwidth

/// STREAM-style copy b[i] = a[i] over arrays far larger than the caches; bytes counted as
/// STREAM does (8 read + 8 written per element; the write-allocate read is not counted).
double copy_bandwidth(int threads, int repeats, std::size_t elements) {
    const auto limit = limit_threads(threads);
    std::unique_ptr<double[]> a(new double[elements]), b(new double[elements]);
    const tbb::blocked_range<std::size_t> all(0, elements, 1 << 16);
    tbb::static_partitioner part;
    tbb::parallel_for(all, [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t i = r.begin(); i != r.end(); ++i) {
            a[i] = double(i);
            b[i] = 0.0;
        }
    }, part);
    double best = 1e30;
    for (int k = 0; k < repeats; ++k) {
        const auto t0 = Clock::now();
        tbb::parallel_for(all, [&](const tbb::blocked_range<std::size_t>& r) {
            for (std::size_t i = r.begin(); i != r.end(); ++i) b[i] = a[i];
        }, part);
        best = std::min(best, seconds_since(t0));
    }
    volatile double sink = b[elements / 2];
    (void)sink;
    return 2.0 * sizeof(double) * double(elements) / best;
}

template <class V>
constexpr double elem(const V&) {
    return double(sizeof(typename V::value_type));
}

/// Bytes a solver iteration reads or writes per contact, from the sizes of the arrays it
/// touches (solvers/pgs.cpp, contact_kernels.cpp, pj.cpp, contact_ops.hpp). `streamed`: the
/// per-contact arrays, read in order (the part that must come from memory: they are far
/// larger than the caches). `bodies`: the body arrays, at random, which the 32 MB L3 can
/// hold for 100k bodies. Written data are counted once.
struct Traffic {
    double streamed = 0.0, bodies = 0.0;
};

Traffic pgs_traffic(const World::Problem& p) {
    const AssembledBatch& c = p.batch;
    std::size_t ends = 0;
    for (std::size_t i = 0; i < c.size(); ++i) ends += (c.a[i] != kNoBody) + (c.b[i] != kNoBody);
    const double n = double(std::max<std::size_t>(1, c.size()));
    Traffic t;
    // d_i: a, b, n, u (when stored), both levers, rhs; the step: eta, mu; γ read and written.
    t.streamed = elem(c.a) + elem(c.b) + elem(c.normal) + elem(c.tangent) + elem(c.lever_a) +
                 elem(c.lever_b) + elem(c.rhs) + elem(c.eta) + elem(c.mu) + 2.0 * elem(c.gamma);
    // per body end: one SolverBody line (v, 1/m, ω, 1/J) read and written.
    t.bodies = double(ends) / n * 2.0 * double(sizeof(SolverBody));
    return t;
}

Traffic pj_traffic(const World::Problem& p) {
    const AssembledBatch& c = p.batch;
    SolverWorkspace w;
    std::size_t ends = 0;
    for (std::size_t i = 0; i < c.size(); ++i) ends += (c.a[i] != kNoBody) + (c.b[i] != kNoBody);
    const double n = double(std::max<std::size_t>(1, c.size()));
    Traffic t;
    // contact pass: d_i as in PGS, eta, mu, the step s_i, γ read, the new γ written;
    // colour pass (ν += M⁻¹ D Δγ): a, b, n, u, both levers, γ and the new γ read, γ written.
    const double frame = elem(c.a) + elem(c.b) + elem(c.normal) + elem(c.tangent) +
                         elem(c.lever_a) + elem(c.lever_b);
    t.streamed = frame + elem(c.rhs) + elem(c.eta) + elem(c.mu) + elem(w.s0) + elem(c.gamma) +
                 elem(w.c0) + frame + 2.0 * elem(c.gamma) + elem(w.c0);
    // per body end: one SolverBody line read in the contact pass, read and written in the
    // colour pass.
    t.bodies = double(ends) / n * 3.0 * double(sizeof(SolverBody));
    return t;
}

int cmd_throughput(const Options& o) {
    const std::string machine = machine_name();
    Scene scene = load_reference(o, o.prime_steps);
    const Problems problems = reference_problems(scene.world);
    const World::Problem& p = problems.warm;
    const double n = double(p.batch.size());
    fmt::print("throughput: {}; {} iterations per solve, median of {}\n", describe(p), o.sweeps,
               o.repeats);

    const std::size_t elements = std::size_t(1) << 25;  // 2 × 256 MB, 16× the L3
    const int hw = int(std::max(2u, std::thread::hardware_concurrency()));
    std::vector<int> thread_counts{1, 2};
    if (hw > 2) thread_counts.push_back(hw);
    std::vector<double> bandwidth;
    for (int t : thread_counts) {
        bandwidth.push_back(copy_bandwidth(t, o.repeats, elements));
        fmt::print("  copy bandwidth, {} thread(s): {:.1f} GB/s\n", t, bandwidth.back() / 1e9);
    }

    const fs::path path = o.results / "throughput.csv";
    std::ofstream csv = open_csv(path);
    csv << "machine,solver,threads,contacts,iterations_per_solve,repeats,seconds_per_iteration,"
           "min_seconds_per_iteration,max_seconds_per_iteration,contact_iterations_per_s,"
           "speedup_vs_1_thread,bytes_streamed_per_contact,bytes_bodies_per_contact,"
           "streamed_GB_s,all_GB_s,copy_bandwidth_GB_s\n";
    struct Kind {
        SolverType type;
        std::optional<Traffic> traffic;
    };
    const std::vector<Kind> kinds{{SolverType::PGS, pgs_traffic(p)},
                                  {SolverType::PJ, pj_traffic(p)},
                                  {SolverType::APGD, std::nullopt}};
    for (const Kind& kind : kinds) {
        if (!o.only.empty() && o.only != solver_name(kind.type)) continue;
        SolverSettings s = scene.world.solver;
        s.type = kind.type;
        s.relaxation = 0.0;
        s.tolerance = 1e-30;  // never reached: every solve runs all its iterations
        s.max_iterations = o.sweeps;
        s.record_history = true;
        // Thread counts alternate within each repeat, so a slow spell of this shared
        // machine hits all of them rather than one.
        std::vector<std::vector<double>> per_iteration(thread_counts.size());
        for (int rep = 0; rep < o.repeats; ++rep)
            for (std::size_t k = 0; k < thread_counts.size(); ++k) {
                const auto limit = limit_threads(thread_counts[k]);
                const SolverResult r = solve_copy(p, s);
                // time between the first and last history entries: whole iterations only,
                // without the solve's set-up and final rebuild (and for PGS without the
                // residual passes of the history)
                const IterationRecord& a = r.history.front();
                const IterationRecord& b = r.history.back();
                per_iteration[k].push_back((b.seconds - a.seconds) / double(b.iteration - a.iteration));
            }
        const double one_thread = median(per_iteration[0]);
        for (std::size_t k = 0; k < thread_counts.size(); ++k) {
            const std::vector<double>& v = per_iteration[k];
            const double t = median(v);
            const double lo = *std::min_element(v.begin(), v.end());
            const double hi = *std::max_element(v.begin(), v.end());
            const double rate = n / t;
            std::string traffic_cols = ",,,";
            std::string note;
            if (kind.traffic) {
                const Traffic& tr = *kind.traffic;
                traffic_cols = fmt::format("{:.0f},{:.0f},{:.2f},{:.2f}", tr.streamed, tr.bodies,
                                           rate * tr.streamed / 1e9,
                                           rate * (tr.streamed + tr.bodies) / 1e9);
                note = fmt::format("\n       {:.0f} B streamed + {:.0f} B of bodies per contact: "
                                   "{:.1f} to {:.1f} GB/s, copy bandwidth {:.1f} GB/s",
                                   tr.streamed, tr.bodies, rate * tr.streamed / 1e9,
                                   rate * (tr.streamed + tr.bodies) / 1e9, bandwidth[k] / 1e9);
            }
            csv << fmt::format("{},{},{},{},{},{},{:.6e},{:.6e},{:.6e},{:.4e},{:.3f},{},{:.2f}\n",
                               csv_field(machine), solver_name(kind.type), thread_counts[k],
                               p.batch.size(), o.sweeps, o.repeats, t, lo, hi, rate,
                               one_thread / t, traffic_cols, bandwidth[k] / 1e9);
            fmt::print("  {:4s} {} thread(s): {:.2f} ms per iteration (min {:.2f}, max {:.2f}), "
                       "{:.3e} contact-it/s, speedup {:.2f}{}\n", solver_name(kind.type),
                       thread_counts[k], 1e3 * t, 1e3 * lo, 1e3 * hi, rate, one_thread / t, note);
        }
        std::fflush(stdout);
    }
    fmt::print("wrote {}\n", path.string());
    return 0;
}

// ---------------------------------------------------------------------------------------
// breakdown

int cmd_breakdown(const Options& o) {
    const auto limit = limit_threads(o.threads);
    const std::string machine = machine_name();
    Scene scene = load_reference(o, o.warmup_steps);
    World& w = scene.world;
    fmt::print("breakdown: {} bodies, {} measured steps after {} warm-up steps, {} ({} "
               "iterations, tolerance {} m/s), {} thread(s)\n", w.bodies.size(), o.steps,
               o.warmup_steps, solver_name(w.solver.type), w.solver.max_iterations,
               w.solver.tolerance, active_threads());
    const std::vector<std::string> names{"forces_envelope", "broad_phase", "narrow_phase",
                                         "assembly_colouring", "solve", "integrate_checks",
                                         "other", "step_total"};
    std::vector<std::vector<double>> samples(names.size());
    double contacts = 0.0, iterations = 0.0;
    for (int k = 0; k < o.steps; ++k) {
        const auto t0 = Clock::now();
        step_or_throw(w);
        const double total = seconds_since(t0);
        const StepDiagnostics& d = w.diagnostics();
        const std::array<double, 6> parts = d.stage_seconds();
        double sum = 0.0;
        for (int j = 0; j < 6; ++j) {
            samples[j].push_back(parts[j]);
            sum += parts[j];
        }
        samples[6].push_back(total - sum);
        samples[7].push_back(total);
        contacts += d.contacts;
        iterations += d.iterations;
    }
    contacts /= o.steps;
    iterations /= o.steps;

    // Output: frames of the 100k bodies into a scratch trajectory; the first (which also
    // writes the XDMF sidecar for the first time) is not counted.
    const fs::path tmp = fs::temp_directory_path() /
                         fmt::format("talus_solver_benchmark_{}.h5", long(getpid()));
    std::vector<double> frame_times;
    {
        RunMetadata meta;
        meta.scene_text = scene.text;
        meta.scene_path = o.scene.string();
        meta.talus_version = TALUS_VERSION;
        // The time to write a frame, as before the background writer and compression
        // existed: synchronous (write_frame returns once the frame is on disk), float64,
        // uncompressed, so the figure stays comparable with earlier results.
        meta.background_writer = false;
        meta.compression = 0;
        TrajectoryWriter writer(tmp, meta, w.materials, true, &w.bodies.clumps);
        for (int k = 0; k <= o.frames; ++k) {
            const auto t0 = Clock::now();
            writer.write_frame(w.bodies, w.time + k * w.simulation.dt, w.step_count + k);
            if (k > 0) frame_times.push_back(seconds_since(t0));
        }
        writer.close();
    }
    const fs::path sidecar = fs::path(tmp).replace_extension(".xmf");
    const double frame_bytes = double(fs::file_size(tmp)) / double(o.frames + 1);
    fs::remove(tmp);
    fs::remove(sidecar);

    auto mean = [](const std::vector<double>& v) {
        double s = 0.0;
        for (double x : v) s += x;
        return v.empty() ? 0.0 : s / double(v.size());
    };
    const double step_mean = mean(samples.back());
    const fs::path path = o.results / "step_breakdown.csv";
    std::ofstream csv = open_csv(path);
    csv << "machine,threads,bodies,steps,mean_contacts,mean_iterations,stage,mean_s,min_s,max_s,"
           "percent_of_step\n";
    fmt::print("  mean contacts {:.0f}, mean iterations {:.1f}\n", contacts, iterations);
    fmt::print("  {:22s} {:>10s} {:>10s} {:>10s} {:>8s}\n", "stage", "mean [s]", "min [s]",
               "max [s]", "% step");
    auto row = [&](const std::string& name, const std::vector<double>& v) {
        const double m = mean(v);
        const double lo = *std::min_element(v.begin(), v.end());
        const double hi = *std::max_element(v.begin(), v.end());
        csv << fmt::format("{},{},{},{},{:.0f},{:.2f},{},{:.6f},{:.6f},{:.6f},{:.1f}\n",
                           csv_field(machine), active_threads(), w.bodies.size(), v.size(),
                           contacts, iterations, name, m, lo, hi, 100.0 * m / step_mean);
        fmt::print("  {:22s} {:10.4f} {:10.4f} {:10.4f} {:7.1f}%\n", name, m, lo, hi,
                   100.0 * m / step_mean);
    };
    for (std::size_t j = 0; j < names.size(); ++j) row(names[j], samples[j]);
    row("output_write_frame", frame_times);
    fmt::print("  (one frame is {:.1f} MB in the file; output_write_frame is per frame, and a "
               "run writes one every {} steps)\n", frame_bytes / 1e6,
               std::max<long long>(1, std::llround(scene.output.interval / w.simulation.dt)));
    fmt::print("wrote {}\n", path.string());
    return 0;
}

// ---------------------------------------------------------------------------------------
// ranks: the solvers over in-process ranks against one process (docs/mpi.md)

bool bits_equal(const Vec3& a, const Vec3& b) { return std::memcmp(a.data(), b.data(), sizeof(double) * 3) == 0; }

int cmd_ranks(const Options& o) {
    Scene scene = load_reference(o, o.prime_steps);
    const World::Problem p = reference_problems(scene.world).warm;
    const std::string machine = machine_name();
    const std::vector<int32_t> owner = body_owners(p.bodies, scene.world.solver.envelope, o.ranks);
    const fs::path path = o.results / "ranks.csv";
    std::ofstream csv = open_csv(path);
    csv << "# machine: " << machine << "\n# problem: " << o.scene.filename().string() << ", saved state + "
        << o.prime_steps << " steps; " << describe(p) << "\n# one process on " << o.ranks << " threads against "
        << o.ranks << " in-process ranks (threads) of 1 thread each; the scene's solver settings\n"
        << "solver,iterations,one_process_s,ranks_s,same_bits,halos_per_iteration,messages_per_iteration,"
           "kB_per_iteration,contacts_held_twice\n";
    fmt::print("{}: {}, {} in-process ranks of 1 thread against one process of {} threads ({})\n",
               o.scene.filename().string(), describe(p), o.ranks, o.ranks, machine);
    for (const char* name : {"pgs", "bgs", "pj", "apgd"}) {
        SolverSettings s = scene.world.solver;
        s.type = *solver_from_name(name);
        World::Problem one = p;
        double one_s = 0.0;
        SolverResult serial;
        {
            auto limit = limit_threads(o.ranks);
            SolverWorkspace work;
            const auto t0 = Clock::now();
            serial = solve_ccp(one.batch, one.bodies, s, work);
            one_s = seconds_since(t0);
        }
        auto limit = limit_threads(1);  // each rank's loops run on its own thread alone
        std::vector<RankProblem> parts(static_cast<std::size_t>(o.ranks));
        std::vector<RankTraffic> traffic(parts.size());
        std::vector<double> rank_s(parts.size());
        std::vector<int> iterations(parts.size());
        run_local_ranks(o.ranks, [&](Ranks& r) {
            const std::size_t me = std::size_t(r.rank());
            parts[me] = rank_problem(p.bodies, p.batch, owner, r.rank());
            SolverWorkspace work;
            std::vector<std::string> all;
            r.all_gather(std::string(), all);  // start together
            const auto t0 = Clock::now();
            iterations[me] = solve_ccp_on_rank(parts[me].batch, parts[me].bodies, parts[me].owner, s, work, r,
                                               &traffic[me]).iterations;
            rank_s[me] = seconds_since(t0);
        });
        bool same = true;
        std::vector<int> held(one.batch.size(), 0);
        RankTraffic most;
        for (std::size_t q = 0; q < parts.size(); ++q) {
            const RankProblem& part = parts[q];
            same = same && iterations[q] == serial.iterations;
            for (std::size_t i = 0; i < part.global_contact.size(); ++i) {
                ++held[part.global_contact[i]];
                same = same && bits_equal(part.batch.gamma[i], one.batch.gamma[part.global_contact[i]]);
            }
            for (std::size_t b = 0; b < part.owner.size(); ++b)
                if (part.owner[b] == int32_t(q))
                    same = same && bits_equal(part.bodies.velocity[b], one.bodies.velocity[part.global_body[b]]) &&
                           bits_equal(part.bodies.angular_velocity[b], one.bodies.angular_velocity[part.global_body[b]]);
            most.halos = std::max(most.halos, traffic[q].halos);
            most.messages = std::max(most.messages, traffic[q].messages);
            most.bytes = std::max(most.bytes, traffic[q].bytes);
        }
        const std::size_t twice = std::size_t(std::count(held.begin(), held.end(), 2));
        const double ranks_s = *std::max_element(rank_s.begin(), rank_s.end());
        const double per = std::max(1, serial.iterations);
        fmt::print("  {:5} {:4} iterations: one process {:.3f} s, ranks {:.3f} s ({:.2f}x); {}; a rank sends "
                   "{:.1f} halos, {:.1f} messages, {:.1f} kB an iteration; {} contacts on two ranks\n",
                   name, serial.iterations, one_s, ranks_s, ranks_s / one_s, same ? "same bits" : "DIFFERENT BITS",
                   double(most.halos) / per, double(most.messages) / per, double(most.bytes) / per / 1e3, twice);
        csv << name << "," << serial.iterations << "," << one_s << "," << ranks_s << "," << (same ? 1 : 0) << ","
            << double(most.halos) / per << "," << double(most.messages) / per << "," << double(most.bytes) / per / 1e3
            << "," << twice << "\n";
        if (!same) return kExitFailure;
    }
    fmt::print("wrote {}\n", path.string());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    CLI::App app{"Talus solver benchmarks on a settled 100k-sphere pile (benchmarks/README.md)"};
    app.require_subcommand(1);
    app.fallthrough();
    app.add_option("--scene", o.scene, "Scene of the reference problem")->capture_default_str();
    app.add_option("--state", o.state, "Cached settled state (HDF5)")->capture_default_str();
    app.add_option("--results", o.results, "Directory for the CSV files")->capture_default_str();
    app.add_option("--threads", o.threads,
                   "Threads for generate, convergence and breakdown (0: all)")->capture_default_str();
    app.add_option("--prime", o.prime_steps,
                   "Steps after the saved state before the problem is taken")->capture_default_str();
    auto* gen = app.add_subcommand("generate", "Settle the pile and cache its state");
    auto* conv = app.add_subcommand("convergence", "Residual histories of PGS, PJ, APGD");
    conv->add_option("--budget", o.budget, "Wall-time budget per solve [s]")->capture_default_str();
    conv->add_option("--tolerance", o.tolerance, "Stop at this residual [m/s]")->capture_default_str();
    conv->add_option("--methods", o.methods,
                     "Methods compared: solver names, each optionally @ω (e.g. pgs@1.3), bgs also +clusters "
                     "(its cluster sweeps, e.g. bgs+clusters)")
        ->delimiter(',')->capture_default_str();
    conv->add_option("--stabilization", o.stabilization,
                     "γ_s of the problem's penetration term (default: the scene's)");
    auto* thr = app.add_subcommand("throughput", "Contact-iterations/s on 1 and 2 threads");
    thr->add_option("--iterations", o.sweeps, "Iterations per solve")->capture_default_str();
    thr->add_option("--repeats", o.repeats, "Repeats (median)")->capture_default_str();
    thr->add_option("--only", o.only, "Measure only this solver (pgs, pj or apgd)")
        ->check(CLI::IsMember({"pgs", "pj", "apgd"}));
    auto* brk = app.add_subcommand("breakdown", "Seconds per stage of a whole step");
    brk->add_option("--steps", o.steps, "Measured steps")->capture_default_str();
    brk->add_option("--warmup", o.warmup_steps, "Unmeasured steps before them")->capture_default_str();
    auto* rnk = app.add_subcommand("ranks", "The solvers over in-process ranks of 1 thread against one process");
    rnk->add_option("--ranks", o.ranks, "Ranks, and the one process's threads")->check(CLI::Range(1, 64))
        ->capture_default_str();
    CLI11_PARSE(app, argc, argv);
    try {
        if (*gen) return cmd_generate(o);
        if (*conv) return cmd_convergence(o);
        if (*thr) return cmd_throughput(o);
        if (*brk) return cmd_breakdown(o);
        if (*rnk) return cmd_ranks(o);
    } catch (const StaleState& e) {
        std::fprintf(stderr, "talus_solver_benchmark: %s\n", e.what());
        return kExitStale;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "talus_solver_benchmark: %s\n", e.what());
        return kExitFailure;
    }
    return kExitFailure;
}
