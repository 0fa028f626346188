// The talus command: run a scene (or continue one from a checkpoint), validate a scene,
// describe a trajectory.
// Exit codes: 0 success, 2 invalid input (scene or option, a scene too large for the
// machine's memory, a finished run asked to resume), 3 simulation failed (non-finite state,
// offending bodies named), 4 I/O error or memory exhausted, 128 + the signal for a run
// stopped by SIGHUP (129), SIGINT (130) or SIGTERM (143) after writing its checkpoint.
#include <array>
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <malloc.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/info.h>
#include <unistd.h>

#include <csignal>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "engine/distributed/solve_over_ranks.hpp"
#include "engine/world/rank_world.hpp"
#include "io/checkpoint.hpp"
#include "io/runner.hpp"
#include "io/scene.hpp"
#include "io/text_format.hpp"
#include "io/trajectory_info.hpp"
#include "io/trajectory_writer.hpp"
#include "tools/exit_codes.hpp"
#include "tools/fclib_command.hpp"
#include "tools/mpi_ranks.hpp"
#include "tools/solve_ranks_command.hpp"
#include "tools/sweep_command.hpp"

using talus::kExitInvalid;
using talus::kExitIo;
using talus::kExitSimulation;

namespace {

using Clock = std::chrono::steady_clock;

/// The ranks of this run (a single process unless started by mpirun; tools/mpi_ranks.hpp).
talus::Ranks* g_ranks = nullptr;

/// Leaves at once with `code`, agreed with the other ranks first (for the paths that cannot
/// return through main: a file whose write failed must not be closed).
[[noreturn]] void exit_agreed(int code) {
    std::fflush(nullptr);
    if (g_ranks) {
        code = talus::agree_exit(*g_ranks, code);
        talus::stop_ranks(*g_ranks);
    }
    std::fflush(nullptr);
    std::_Exit(code);
}

std::string format_duration(double seconds) {
    if (!std::isfinite(seconds) || seconds < 0) return "--:--";
    const long s = std::lround(seconds);
    if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
    return fmt::format("{}:{:02}", s / 60, s % 60);
}

/// One updating stderr line on a terminal; a line every few seconds otherwise.
class Progress {
public:
    /// `first_step`: the step the run starts from (a resumed run's checkpoint), so that
    /// steps/s counts the steps of this process only.
    Progress(bool quiet, uint64_t first_step, double first_time)
        : quiet_(quiet), tty_(isatty(STDERR_FILENO) != 0), first_step_(first_step),
          first_time_(first_time) {}

    /// `total_steps` = 0: not known in advance (the adaptive step); the ETA then follows
    /// the simulated time instead.

    void update(const talus::World& w, double duration, uint64_t total_steps, bool final) {
        if (quiet_) return;
        const auto now = Clock::now();
        const double since = std::chrono::duration<double>(now - last_).count();
        if (!final && since < (tty_ ? 0.25 : 5.0)) return;
        const double elapsed = std::chrono::duration<double>(now - start_).count();
        const double rate = elapsed > 0 ? double(w.step_count - first_step_) / elapsed : 0.0;
        const double time_rate = elapsed > 0 ? (w.time - first_time_) / elapsed : 0.0;
        const double eta = total_steps == 0
                               ? (time_rate > 0 ? std::max(0.0, duration - w.time) / time_rate : NAN)
                           : rate > 0 && total_steps > w.step_count
                               ? double(total_steps - w.step_count) / rate
                               : (rate > 0 ? 0.0 : NAN);
        const auto& d = w.diagnostics();
        const std::string line = fmt::format(
            "{}t {:.4g}/{:.4g} s | {:.0f} steps/s | ETA {} | {} bodies | {} contacts | it {} | r {:.2e} m/s",
            stage_.empty() ? std::string() : stage_ + " | ", w.time, duration, rate,
            format_duration(eta), w.distributed() ? d.bodies : w.bodies.size(), d.contacts, d.iterations,
            d.residual);
        if (tty_) std::fprintf(stderr, "\r%s\033[K%s", line.c_str(), final ? "\n" : "");
        else std::fprintf(stderr, "%s\n", line.c_str());
        open_line_ = tty_ && !final;
        last_ = now;
    }

    void set_stage(std::string name) { stage_ = std::move(name); }
    /// A terminal line is being rewritten in place: a message must start on a new line.
    bool needs_newline() {
        const bool open = open_line_;
        open_line_ = false;
        return open;
    }

private:
    bool quiet_, tty_;
    uint64_t first_step_;
    double first_time_;
    bool open_line_ = false;
    std::string stage_;
    Clock::time_point start_ = Clock::now(), last_ = Clock::now() - std::chrono::hours(1);
};

// ---- stopping on a signal ---------------------------------------------------------------

/// The signal that asked the run to stop (0: none yet). The handler only stores it (all an
/// async-signal-safe handler may do); the step loop looks at it between steps and stops
/// there, with a checkpoint and the trajectory closed.
volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void on_stop_signal(int signal) { g_stop_signal = signal; }

/// SIGINT, SIGTERM and SIGHUP (a closed terminal, a dropped ssh session) end the run after
/// its current step instead of killing it. SA_RESETHAND puts the default action back at
/// once, so a second signal (while the checkpoint is written) kills as usual; SA_RESTART
/// keeps the HDF5 writes of the other threads from failing with EINTR. SIGPIPE is ignored:
/// progress written to a pipe whose reader has gone (the ssh session) must not kill the
/// run; the write fails instead, and the run goes on.
void install_stop_handlers() {
    struct sigaction sa = {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND | SA_RESTART;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGHUP, &sa, nullptr);
    std::signal(SIGPIPE, SIG_IGN);
}

const char* signal_name(int signal) {
    return signal == SIGINT    ? "SIGINT"
           : signal == SIGTERM ? "SIGTERM"
           : signal == SIGHUP  ? "SIGHUP (terminal closed)"
                               : "a signal";
}

/// How the user started talus, for commands printed back to them: tools/run exports
/// TALUS_RUN_COMMAND (its own path as typed); otherwise argv[0] followed by "run".
std::string g_argv0 = "talus";
std::string run_command() {
    if (const char* c = std::getenv("TALUS_RUN_COMMAND"); c && *c) return c;
    return g_argv0 + " run";
}

/// `p` as a shell word (quoted when it holds anything but safe characters), for a command
/// the user can paste.
std::string shell_word(const std::filesystem::path& p) {
    const std::string s = p.string();
    if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789_-./+,:@%=") == std::string::npos)
        return s;
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

/// The same file, whichever way the two paths name it.
bool same_path(const std::filesystem::path& a, const std::filesystem::path& b) {
    return std::filesystem::absolute(a).lexically_normal() ==
           std::filesystem::absolute(b).lexically_normal();
}

/// The first bytes of every HDF5 file.
bool is_hdf5(const std::filesystem::path& p) {
    std::FILE* f = std::fopen(p.c_str(), "rb");
    if (!f) return false;
    char head[8] = {};
    const std::size_t n = std::fread(head, 1, sizeof head, f);
    std::fclose(f);
    return n == 8 && std::memcmp(head, "\x89HDF\r\n\x1a\n", 8) == 0;
}

/// A scene argument that is an HDF5 file (a trajectory or a checkpoint given to run or
/// check): say what it is and what to do with it (exit 2), rather than a TOML syntax error.
std::optional<int> refuse_hdf5_scene(const std::string& path, const char* verb) {
    if (!is_hdf5(path)) return std::nullopt;
    if (const auto ck = talus::checkpoint_status(path))
        std::fprintf(stderr, "talus %s: '%s' is a checkpoint, not a scene file: continue its run "
                             "with: %s --resume %s\n",
                     verb, path.c_str(), run_command().c_str(), shell_word(path).c_str());
    else
        std::fprintf(stderr, "talus %s: '%s' is an HDF5 file (a trajectory?), not a scene "
                             "file (TOML): summarise a trajectory with: %s info %s\n",
                     verb, path.c_str(), g_argv0.c_str(), shell_word(path).c_str());
    return kExitInvalid;
}

/// Scene warnings (likely unit slips), one line each on stderr.
void print_warnings(const talus::Scene& scene) {
    for (const std::string& w : scene.warnings) std::fprintf(stderr, "talus: warning: %s\n", w.c_str());
}

/// Scene limits for the talus command: this machine's memory, and a progress line for
/// fills that take more than a couple of seconds.
/// `open_line` is set while a terminal line is being rewritten in place.
talus::SceneLimits command_limits(bool quiet, const std::shared_ptr<bool>& open_line) {
    talus::SceneLimits limits;
    limits.memory_bytes = talus::available_memory_bytes();
    if (!quiet) {
        const auto start = Clock::now();
        auto last = std::make_shared<Clock::time_point>(start);
        const bool tty = isatty(STDERR_FILENO) != 0;
        limits.progress = [start, last, tty, open_line](const std::string& line) {
            const auto now = Clock::now();
            if (now - start < std::chrono::seconds(2) ||
                now - *last < std::chrono::milliseconds(tty ? 250 : 5000))
                return;
            *last = now;
            if (tty) std::fprintf(stderr, "\rtalus: filling %s\033[K", line.c_str());
            else std::fprintf(stderr, "talus: filling %s\n", line.c_str());
            *open_line = tty;
        };
    }
    return limits;
}

/// Loads a scene for run or check: the HDF5 mistake, fill progress, the memory check, the
/// warnings. Returns the exit code on failure.
std::optional<int> load_for_command(const std::string& path, const std::vector<std::string>& sets,
                                    bool quiet, const char* verb, talus::Scene& scene) {
    if (auto code = refuse_hdf5_scene(path, verb)) return code;
    auto open_line = std::make_shared<bool>(false);
    try {
        scene = talus::load_scene(path, sets, command_limits(quiet, open_line));
    } catch (const talus::SceneError& e) {
        std::fprintf(stderr, "%stalus: invalid scene\n%s\n", *open_line ? "\n" : "", e.what());
        return kExitInvalid;
    }
    if (*open_line) std::fprintf(stderr, "\n");
    print_warnings(scene);
    return std::nullopt;
}

/// Seconds in the end-of-run lines: 3 significant digits, in ms or µs below a second, whole
/// seconds (digits grouped) from 100 s. The unit follows the value once rounded, so 0.9996 s
/// is "1 s", not "1e+03 ms" (which the benchmark scripts' patterns would not read).
std::string seconds_text(double s) {
    if (!std::isfinite(s)) return "-";
    if (s < 100.0) s = std::stod(fmt::format("{:.3g}", s));  // (whole seconds above)
    if (s >= 100.0) return talus::group_digits(uint64_t(std::llround(s))) + " s";
    if (s >= 1.0 || s == 0.0) return fmt::format("{:.3g} s", s);
    if (s >= 1e-3) return fmt::format("{:.3g} ms", s * 1e3);
    return fmt::format("{:.3g} µs", s * 1e6);
}

/// What the end of a run says of its steps: how many converged, the deepest penetration,
/// the energy left.
struct RunTally {
    uint64_t steps = 0, converged = 0;
    double max_penetration = 0.0;
    double smallest_radius = 0.0;
    double dt_min = std::numeric_limits<double>::infinity(), dt_max = 0.0, dt_sum = 0.0;
    /// Wall seconds per stage, summed over the steps (StepDiagnostics::stage_seconds).
    std::array<double, 6> stage_seconds{};
    double ranks_seconds = 0.0;  ///< StepDiagnostics::time_ranks, summed

    void add(const talus::StepDiagnostics& d) {
        ++steps;
        ranks_seconds += d.time_ranks;
        const std::array<double, 6> parts = d.stage_seconds();
        for (std::size_t k = 0; k < stage_seconds.size(); ++k) stage_seconds[k] += parts[k];
        dt_min = std::min(dt_min, d.dt);
        dt_max = std::max(dt_max, d.dt);
        dt_sum += d.dt;
        converged += d.converged ? 1 : 0;
        max_penetration = std::max(max_penetration, d.contact_infeasibility);
    }

    /// Where the step loop's time went, as shares of `loop` seconds (the rest: output,
    /// progress, diagnostics and the step's own bookkeeping).
    void print_stages(double loop) const {
        if (steps == 0 || !(loop > 0.0)) return;
        static constexpr const char* names[] = {"forces", "broad phase", "narrow phase",
                                                "colouring and assembly", "solve", "integration"};
        std::string text;
        double sum = 0.0;
        for (std::size_t k = 0; k < stage_seconds.size(); ++k) {
            text += fmt::format("{} {:.0f} % ({}), ", names[k], 100.0 * stage_seconds[k] / loop,
                                seconds_text(stage_seconds[k]));
            sum += stage_seconds[k];
        }
        if (ranks_seconds > 0.0) {
            text += fmt::format("bodies sent between ranks {:.0f} % ({}), ", 100.0 * ranks_seconds / loop,
                                seconds_text(ranks_seconds));
            sum += ranks_seconds;
        }
        std::fprintf(stderr, "talus: time in the stages: %sother %.0f %% (%s)\n", text.c_str(),
                     100.0 * std::max(0.0, loop - sum) / loop, seconds_text(std::max(0.0, loop - sum)).c_str());
    }

    void print(const talus::World& world, const talus::SolverSettings& solver) const {
        const double tolerance = solver.tolerance;
        const int max_iterations = solver.max_iterations;
        std::string rule = fmt::format("{:g} m/s", tolerance);
        if (solver.relative_tolerance > 0.0)
            rule += fmt::format(", {:g} % of the closing speed", 100.0 * solver.relative_tolerance);
        if (solver.weight_tolerance > 0.0)
            rule += fmt::format(", after {} sweeps {:g} % of g h (at most {:g} % of the penetration "
                                "target per step)",
                                talus::SolverSettings::kRelaxedAfter, 100.0 * solver.weight_tolerance,
                                100.0 * solver.weight_tolerance);
        if (solver.relative_tolerance > 0.0 || solver.weight_tolerance > 0.0) rule = "max(" + rule + ")";
        if (steps == 0) return;
        const double share = 100.0 * double(converged) / double(steps);
        const double diameter = 2.0 * smallest_radius;
        std::fprintf(stderr,
                     "talus: solver: %s of %s converged (%.0f %%) to the tolerance %s; "
                     "largest penetration %.2g m%s; kinetic energy at the end %.3g J\n",
                     talus::group_digits(converged).c_str(), talus::count_of(steps, "step").c_str(),
                     share, rule.c_str(), max_penetration,
                     std::isfinite(diameter) && diameter > 0.0
                         ? fmt::format(" ({:.2g} % of the smallest diameter)",
                                       100.0 * max_penetration / diameter).c_str()
                         : "",
                     world.diagnostics().kinetic_energy);
        if (world.simulation.adaptive)
            std::fprintf(stderr, "talus: time steps: adaptive, from %.3g to %.3g s (mean %.3g s)\n",
                         dt_min, dt_max, dt_sum / double(steps));
        if (converged * 2 < steps)
            std::fprintf(stderr,
                         "talus: note: most steps stopped at the iteration cap (%d) before the "
                         "residual reached the tolerance; the penetration above says whether "
                         "that matters. To converge: raise [solver] max_iterations, lower dt "
                         "(or max_dt), or loosen tolerance (README: \"Not converged\")\n",
                         max_iterations);
    }
};

struct RunOptions {
    std::string scene;   ///< scene file, or empty with `resume`
    std::string resume;  ///< checkpoint to continue, or empty
    std::string out;     ///< -o: trajectory file (empty: the scene's, or the checkpoint's)
    int threads = 0;     ///< 0: all cores
    std::vector<std::string> sets;
    bool quiet = false, force = false;
    /// --stop-after-steps: stop as on SIGTERM once the run has taken this many steps in all.
    std::optional<uint64_t> stop_after;
    /// --rank-min-contacts: under mpirun, the fewest contacts a rank for a solve over the ranks.
    std::size_t rank_min_contacts = talus::kRankSolveMinContacts;
    /// --parallel-output: under mpirun, every rank writes its rows of the trajectory itself.
    bool parallel_output = false;
};

int cmd_run(RunOptions opt) {
    const bool resuming = !opt.resume.empty();
    // Under MPI every rank loads the whole scene and then keeps its part (below); rank 0
    // alone writes the trajectory, the sidecar and the checkpoints, and speaks (docs/mpi.md).
    const bool writes = g_ranks->root();
    if (!writes) opt.quiet = true;
    talus::Scene scene;
    talus::RunPosition start;  // the stage to begin with (already begun when resuming)
    std::filesystem::path out, checkpoint;
    if (!resuming) {
        if (auto code = load_for_command(opt.scene, opt.sets, opt.quiet, "run", scene)) return *code;
        out = opt.out.empty() ? std::filesystem::path(scene.output.path) : std::filesystem::path(opt.out);
        checkpoint = scene.output.checkpoint.empty() ? talus::default_checkpoint_path(out)
                                                     : std::filesystem::path(scene.output.checkpoint);
    } else {
        if (const auto st = talus::checkpoint_status(opt.resume); st && st->finished) {
            // resuming would cut the finished trajectory back to the checkpoint's step and
            // compute the rest again
            std::fprintf(stderr,
                         "talus run: the run saved in '%s' has finished (t = %g s, step %llu); "
                         "its trajectory '%s' is complete and is left as it is. Nothing to "
                         "resume: to run the scene again from the start, use --force\n",
                         opt.resume.c_str(), st->finished_time,
                         (unsigned long long)st->finished_step, st->trajectory.c_str());
            return kExitInvalid;
        }
        try {
            talus::Resumed r = talus::read_checkpoint(opt.resume);
            scene = std::move(r.scene);
            start = r.run;
            out = !opt.out.empty()          ? std::filesystem::path(opt.out)
                  : !r.trajectory.empty() ? r.trajectory
                                          : std::filesystem::path(scene.output.path);
        } catch (const talus::IoError& e) {
            std::fprintf(stderr, "talus: %s\n", e.what());
            return kExitIo;
        } catch (const talus::SceneError& e) {
            std::fprintf(stderr, "talus: checkpoint '%s': its scene no longer loads\n%s\n",
                         opt.resume.c_str(), e.what());
            return kExitInvalid;
        }
        // the run goes on checkpointing where it was resumed from
        checkpoint = opt.resume;
    }
    for (const auto& [what, path] : {std::pair{"trajectory", out}, std::pair{"checkpoint", checkpoint}})
        if (!scene.start_from.empty() && same_path(path, scene.start_from)) {
            // the run would replace the state it starts from, which a second branch needs
            std::fprintf(stderr, "talus: the run would write its %s over '%s', which its [start] "
                                 "takes its bodies from; choose another -o or [output] checkpoint\n",
                         what, scene.start_from.c_str());
            return kExitInvalid;
        }
    if (same_path(out, checkpoint)) {
        std::fprintf(stderr, "talus: the trajectory and the checkpoint would be the same file "
                             "'%s'; choose another -o or [output] checkpoint\n", out.c_str());
        return kExitInvalid;
    }
    {
        // found out now, not when a signal asks for the checkpoint that cannot be written
        // (a checkpoint beside the trajectory: the trajectory's own error says it first)
        const auto dir_of = [](const std::filesystem::path& p) {
            return p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
        };
        const std::filesystem::path dir = dir_of(checkpoint);
        std::error_code ec;
        if (!same_path(dir, dir_of(out)) && !std::filesystem::is_directory(dir, ec)) {
            std::fprintf(stderr, "talus: cannot write the checkpoint '%s': directory '%s' does "
                                 "not exist\n", checkpoint.c_str(), dir.c_str());
            return kExitIo;
        }
    }
    if (writes && !resuming && !opt.force && std::filesystem::exists(out)) {
        // the writer would refuse the file; when it is a stopped run of this scene, say how
        // to continue it first
        if (const auto st = talus::checkpoint_status(checkpoint);
            st && !st->finished && same_path(st->trajectory, out)) {
            std::fprintf(stderr,
                         "talus: '%s' holds a run that was stopped at t = %g s (step %llu), "
                         "with a checkpoint.\n"
                         "talus: continue it with: %s --resume %s\n"
                         "talus: or start again from scratch, replacing it: add --force\n",
                         out.c_str(), st->time, (unsigned long long)st->step,
                         run_command().c_str(), shell_word(checkpoint).c_str());
            return kExitIo;
        }
    }
    if (opt.threads > 0 && unsigned(opt.threads) > std::thread::hardware_concurrency() &&
        std::thread::hardware_concurrency() > 0)
        std::fprintf(stderr,
                     "talus: warning: --threads %d is more than this machine's %u hardware "
                     "threads: the extra threads only share the cores (results are the same "
                     "bits, only slower)\n",
                     opt.threads, std::thread::hardware_concurrency());
    std::unique_ptr<tbb::global_control> limit;
    if (opt.threads > 0)
        limit = std::make_unique<tbb::global_control>(
            tbb::global_control::max_allowed_parallelism, std::size_t(opt.threads));

    talus::World& world = scene.world;
    const double dt = world.simulation.dt;
    // With a fixed step, frames and checkpoints come on a step cadence (t = k dt exactly);
    // with the adaptive step, on a time cadence: the steps land on each frame's time and
    // each stage's end (World::step's `until`), and a checkpoint comes at the first step
    // boundary at or after its time.
    const bool adaptive = world.simulation.adaptive;
    // The longest the run can take: every stage to its full duration (a stop condition may
    // end a stage earlier). Steps: known with a fixed step only.
    double duration = 0.0;
    uint64_t total_steps = 0;
    for (const talus::Stage& s : scene.stages) {
        duration += s.duration;
        total_steps += uint64_t(std::llround(s.duration / dt));
    }
    const uint64_t frame_every = talus::Runner::cadence_steps(scene.output.interval, dt);
    const double interval = scene.output.interval;

    if (writes) {
        // Room for the body rows the run will write, found out before its first step: exact
        // for uncompressed rows and a constant body count (exit 4 if it cannot fit); with
        // compression the need is unknown (gzip takes 3–6× on such rows), so only a warning.
        // Emitters add bodies later: the estimate is then a lower bound.
        const double row_bytes = double(talus::TrajectoryWriter::body_row_bytes(scene.output.precision));
        const uint64_t frames_left =
            adaptive ? uint64_t(std::max(0.0, std::ceil((duration - world.time) / interval))) +
                           scene.stages.size()
                     : (total_steps - std::min(total_steps, world.step_count)) / frame_every +
                           scene.stages.size();
        const double need = double(frames_left) * double(world.bodies.size()) * row_bytes;
        std::error_code ec;
        const auto dir = std::filesystem::absolute(out).parent_path();
        const std::filesystem::space_info room = std::filesystem::space(dir, ec);
        if (!ec && need > double(room.available)) {
            const bool exact = scene.output.compression == 0 && world.emitters.empty();
            std::fprintf(stderr,
                         "talus: %s: the trajectory needs %s%.0f MB for %llu frames of %zu "
                         "bodies%s, and '%s' has %.0f MB free\n",
                         exact ? "error" : "warning", exact ? "" : "up to ", need / 1e6,
                         (unsigned long long)frames_left, world.bodies.size(),
                         exact ? " (uncompressed)" : " before compression", dir.c_str(),
                         double(room.available) / 1e6);
            if (exact) {
                std::fprintf(stderr, "talus: not started: free space, or a longer "
                                     "[output] interval, or compression: %s\n", out.c_str());
                return kExitIo;
            }
        }
    }

    std::unique_ptr<talus::TrajectoryWriter> writer;
    // --parallel-output: every rank writes the file with the others (each its own bodies'
    // rows), when it can; else rank 0 alone, as without it, and rank 0 says why
    bool parallel_output = false;
    try {
        talus::RunMetadata meta = talus::prepare_run_output(scene);
        if (opt.parallel_output) {
            const char* why = g_ranks->size() == 1                            ? "one process writes alone"
                              : resuming                                      ? "a resumed run is written by rank 0"
                              : !talus::TrajectoryWriter::parallel_available() ? "this build's HDF5 is not parallel"
                              : meta.shapes ? "a file with capsules, ellipsoids or clumps is written by rank 0"
                                            : nullptr;
            parallel_output = why == nullptr;
            if (why != nullptr && !opt.quiet)
                std::fprintf(stderr, "talus: note: --parallel-output not used: %s\n", why);
        }
        if (parallel_output) meta.parallel = g_ranks;
        if ((writes || parallel_output) && !resuming) {
            writer = std::make_unique<talus::TrajectoryWriter>(out, meta, world.materials,
                                                              opt.force, &world.bodies.clumps);
            // the first frame: rank 0 holds every body yet
            const talus::BodyStore none;
            talus::write_world_frame(*writer, world, writes ? nullptr : &none);
        } else if (writes) {
            writer = std::make_unique<talus::TrajectoryWriter>(
                out, meta, world.materials, &world.bodies.clumps,
                talus::AppendAfterStep{world.step_count});
            // every frame up to the checkpoint must be there: the resumed run starts after it
            const uint64_t due = world.step_count / frame_every * frame_every;
            const double due_time = talus::Runner::next_multiple(world.time, interval) - interval;
            const bool short_of_checkpoint = adaptive ? writer->last_frame_time() < due_time * (1.0 - 1e-12)
                                                      : writer->last_frame_step() < due;
            if (!writer->damage().empty()) {
                // frames a killed run left unreadable cannot be computed again (the state
                // before them is gone); the run itself is whole in the checkpoint, so it
                // goes on, and the trajectory has a gap where those frames were
                std::fprintf(stderr,
                             "talus: warning: trajectory '%s': %s; the run continues from the "
                             "checkpoint '%s' (step %llu), and the trajectory has no frames "
                             "between step %llu and the next one after it\n",
                             out.c_str(), writer->damage().c_str(), opt.resume.c_str(),
                             (unsigned long long)world.step_count,
                             (unsigned long long)writer->last_frame_step());
            } else if (short_of_checkpoint) {
                writer->close();
                std::fprintf(stderr,
                             "talus: trajectory '%s' ends at step %llu, before the frame of "
                             "step %llu that the checkpoint '%s' (step %llu) comes after: it "
                             "cannot be continued from this checkpoint\n",
                             out.c_str(), (unsigned long long)writer->last_frame_step(),
                             (unsigned long long)due, opt.resume.c_str(),
                             (unsigned long long)world.step_count);
                return kExitIo;
            }
        }
    } catch (const talus::IoError& e) {
        std::fprintf(stderr, "talus: %s\n", e.what());
        // A file HDF5 could not close (a full disk while a resume copied a killed run's
        // file) is closed again by HDF5 at exit, which crashes: leave without that.
        exit_agreed(kExitIo);
    }
    // Checkpoints name the scene by its absolute path: a resumed run parses the scene text
    // again and finds its output and mesh files from there, whatever its directory.
    scene.file = std::filesystem::absolute(scene.file).lexically_normal();
    const std::filesystem::path out_absolute = std::filesystem::absolute(out).lexically_normal();
    const int threads = opt.threads > 0 ? opt.threads : tbb::info::default_concurrency();
    // From here on a signal stops the run at the next step boundary (before the first line,
    // so that a script that waits for that line and then signals is never too early).
    install_stop_handlers();
    if (!opt.quiet) {
        if (resuming)
            std::fprintf(stderr,
                         "talus: resuming %s at t = %g s (step %llu of at most %llu): %zu "
                         "bodies, %d thread(s) -> %s (appending)\n",
                         opt.resume.c_str(), world.time, (unsigned long long)world.step_count,
                         (unsigned long long)total_steps, world.bodies.size(), threads, out.c_str());
        else if (adaptive)
            std::fprintf(stderr, "talus: %zu bodies, %g s in adaptive steps of %g to %g s, %d "
                                 "thread(s) -> %s\n",
                         world.bodies.size(), duration, world.simulation.min_dt,
                         world.simulation.max_dt, threads, out.c_str());
        else
            std::fprintf(stderr, "talus: %zu bodies, %llu steps of %g s, %d thread(s) -> %s\n",
                         world.bodies.size(), (unsigned long long)total_steps, dt, threads,
                         out.c_str());
    }

    const uint64_t first_step = world.step_count;
    // After a failure in the step loop: close the trajectory with every frame written so far.
    auto close_after_failure = [&] {
        if (!writer) return;
        try {
            writer->close();
            std::fprintf(stderr, "the trajectory holds every frame up to t = %g s: %s\n",
                         world.time, out.c_str());
        } catch (const talus::IoError& io) {
            std::fprintf(stderr, "talus: %s\n", io.what());
        }
    };
    Progress progress(opt.quiet, first_step, world.time);
    // What the end-of-run lines report of this process's steps.
    RunTally tally;
    tally.smallest_radius = world.smallest_radius_to_come();
    const Clock::time_point loop_start = Clock::now();
    const bool staged = scene.stages.size() > 1;
    talus::RunEvents events;
    events.stage_begins = [&](const talus::Stage& stage, bool fresh) {
        if (staged && !opt.quiet)
            std::fprintf(stderr, "%stalus: stage '%s' %s at t = %g s\n", progress.needs_newline() ? "\n" : "",
                         stage.name.c_str(), fresh ? "begins" : "resumes", world.time);
        progress.set_stage(staged ? stage.name : std::string());
    };
    events.stage_ends = [&](const talus::Stage& stage, const std::string& reason) {
        if (!opt.quiet && (staged || reason != "duration reached"))
            std::fprintf(stderr, "%stalus: stage '%s' ended at t = %g s: %s\n", progress.needs_newline() ? "\n" : "",
                         stage.name.c_str(), world.time, reason.c_str());
    };
    events.after_step = [&](const talus::World& w) {
        tally.add(w.diagnostics());
        progress.update(w, duration, adaptive ? 0 : total_steps, false);
    };
    events.stop_requested = [&] {
        if (opt.stop_after && world.step_count >= *opt.stop_after && g_stop_signal == 0) g_stop_signal = SIGTERM;
        // every rank stops after the same step (throws talus::PeerFailed when another
        // rank has failed)
        return talus::agree_between_steps(*g_ranks, int(g_stop_signal));
    };
    // Under mpirun each rank holds and steps its part of the bodies, and rank 0 gathers the
    // whole for every frame and checkpoint (docs/mpi.md, "The step over ranks"), with the
    // one-process bits. What cannot step over ranks yet (World::rank_step_refusal) runs as
    // before: every rank steps the whole world and only the contact solves are divided.
    talus::RanksSolveCount rank_solves;
    std::string whole_on_each;  // why every rank steps the whole world ("" when it does not)
    const bool parted = g_ranks->size() > 1 && (whole_on_each = world.rank_step_refusal()).empty();
    if (parted) {
        talus::hold_part(world, talus::first_block_edge(world), *g_ranks);
    } else if (g_ranks->size() > 1) {
        if (!opt.quiet)
            std::fprintf(stderr, "talus: note: over MPI ranks %s, so every rank steps the whole world "
                                 "and only the contact solves run over the ranks\n", whole_on_each.c_str());
        world.contact_solve = [&rank_solves, least = opt.rank_min_contacts](
                                  talus::AssembledBatch& batch, talus::BodyStore& bodies,
                                  const talus::SolverSettings& settings, talus::SolverWorkspace& work) {
            return talus::solve_over_ranks(batch, bodies, settings, work, *g_ranks, least, &rank_solves);
        };
    }
    if (g_ranks->size() > 1 && !opt.quiet && world.solver.type == talus::SolverType::BGS &&
        world.solver.cluster_sweeps.value_or(world.bodies_graded()))
        std::fprintf(stderr, "talus: note: over MPI ranks bgs's cluster sweeps do not run (on by default in one "
                             "process where masses differ by more than %gx): the solves are those of "
                             "[solver] cluster_sweeps = false\n", talus::SolverSettings::kClusterMassRatio);
    talus::RunSetup setup;
    setup.start = start;
    setup.resuming = resuming;
    // over parts every rank gathers; a file written in parallel is synced by every rank
    if (writes || parted || parallel_output) setup.checkpoint = checkpoint;
    setup.trajectory = out_absolute;
    // A step frees and takes again its buffers of under 4 MB (those above come from the
    // kernel: main), and glibc gives a heap's free top back to the kernel once it passes
    // 128 KB (a thread's arena by madvise): the next step faults the pages in again. A
    // run that is not large keeps up to 256 MB free at the top of its heaps instead: the
    // settled lattice twin 8.8 -> 8.0 s, the random-pack twin 50.5 -> 48.1 s at the same
    // peak RSS (benchmarks/README.md, "Session 41"). A large run keeps the default, for
    // its peak.
    if (!world.large_run()) mallopt(M_TRIM_THRESHOLD, 256 << 20);
    talus::Runner runner(scene, writer.get(), setup);
    try {
        const talus::RunOutcome outcome = runner.run(events);
        switch (outcome.end) {
            case talus::RunOutcome::End::Finished: break;
            case talus::RunOutcome::End::Stopped:
                std::fprintf(stderr,
                             "%stalus: %s at t = %g s (step %llu): stopped; the trajectory "
                             "holds every frame up to then: %s\n"
                             "talus: checkpoint: %s\n"
                             "talus: continue with: %s --resume %s\n",
                             progress.needs_newline() ? "\n" : "",
                             opt.stop_after && world.step_count >= *opt.stop_after
                                 ? "--stop-after-steps reached"
                                 : signal_name(outcome.signal),
                             world.time, (unsigned long long)world.step_count, out.c_str(),
                             checkpoint.c_str(), run_command().c_str(), shell_word(checkpoint).c_str());
                return 128 + outcome.signal;
            case talus::RunOutcome::End::OutOfMemory:
                std::fprintf(stderr, "\ntalus: %s (see docs/memory.md)\n", outcome.status.message.c_str());
                close_after_failure();
                return kExitIo;
            case talus::RunOutcome::End::SimulationFailed:
                std::fprintf(stderr, "\ntalus: simulation failed: %s\n"
                             "the trajectory holds every frame up to the last good state, "
                             "t = %g s: %s\n",
                             outcome.status.message.c_str(), world.time, out.c_str());
                return kExitSimulation;
        }
    } catch (const talus::PeerFailed&) {
        // another rank failed: it reports why (talus::agree_exit); this one keeps its frames
        close_after_failure();
        return 0;
    } catch (const talus::IoError& e) {
        std::fprintf(stderr, "\ntalus: %s\n", e.what());
        // The trajectory holds what its last successful flush wrote (every frame before it,
        // as after a SIGKILL: readable with swmr=True, see docs/output-format.md). A file
        // whose write failed (a full disk) cannot be closed: HDF5's own clean-up at exit
        // retries the flush and crashes (seen: SIGSEGV in H5F__close_cb, exit 139 instead of
        // 4). Leave without it; nothing else is pending.
        std::fprintf(stderr, "talus: the trajectory keeps the frames flushed before the error: %s\n",
                     out.c_str());
        exit_agreed(kExitIo);
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "\ntalus: out of memory at t = %g s (step %llu): the run needs more "
                             "than this process may use (see docs/memory.md)\n",
                     world.time, (unsigned long long)world.step_count + 1);
        close_after_failure();
        return kExitIo;
    } catch (const std::exception& e) {
        // a failure no check caught: the run stops as a failed simulation (exit 3), with
        // the frames written so far kept, never an abort
        std::fprintf(stderr, "\ntalus: simulation failed at t = %g s (step %llu): %s\n",
                     world.time, (unsigned long long)world.step_count + 1, e.what());
        close_after_failure();
        return kExitSimulation;
    }
    progress.update(world, duration, adaptive ? 0 : world.step_count, true);
    {
        // A finished run has nothing left to resume: its checkpoint (periodic, the one it
        // was resumed from, or a stale one of an earlier run of this output) says so, and
        // --resume then refuses it instead of cutting the trajectory back.
        std::error_code ec;
        if (writes && std::filesystem::exists(checkpoint, ec) && talus::checkpoint_status(checkpoint)) {
            try {
                talus::mark_checkpoint_finished(checkpoint, world.time, world.step_count);
            } catch (const talus::IoError& e) {
                std::fprintf(stderr, "talus: warning: %s\n", e.what());
            }
        }
    }
    if (!opt.quiet) {
        const uint64_t steps = world.step_count - first_step;
        const double loop = std::chrono::duration<double>(Clock::now() - loop_start).count();
        // the step loop alone (frames handed to the writer included; set-up excluded), in
        // a form benchmarks/scaling.py reads
        std::fprintf(stderr, "talus: done at t = %g s. steps: %s in %s (%s per step)\n",
                     world.time, talus::group_digits(steps).c_str(), seconds_text(loop).c_str(),
                     steps > 0 ? seconds_text(loop / double(steps)).c_str() : "-");
        tally.print_stages(loop);
        tally.print(world, scene.world.solver);
        if (parted) {
            // (a step whose solve hit its cap with an impulse growing is taken again whole,
            // for the over-constrained check)
            const std::string whole_steps =
                world.on_ranks.whole_steps == 0
                    ? std::string()
                    : fmt::format("; {} taken again on the whole world by every rank, for the over-constrained check",
                                  talus::count_of(world.on_ranks.whole_steps, "step"));
            std::fprintf(stderr, "talus: ranks: each of the %d ranks held and stepped its part of the bodies "
                                 "(blocks %.3g m wide; the bodies cut again %s of %s steps, when the load "
                                 "drifted past %g times even%s); rank 0 sent %.1f messages and %.1f kB a "
                                 "solver iteration, and %.1f kB a step of bodies and warm start\n",
                         g_ranks->size(), world.on_ranks.block_edge,
                         talus::group_digits(world.on_ranks.decompositions).c_str(),
                         talus::group_digits(steps).c_str(), talus::kRebalanceAbove, whole_steps.c_str(),
                         double(world.on_ranks.solve_messages) / double(std::max<uint64_t>(1, world.on_ranks.solve_iterations)),
                         double(world.on_ranks.solve_bytes) / double(std::max<uint64_t>(1, world.on_ranks.solve_iterations)) / 1e3,
                         double(world.on_ranks.between_bytes) / double(std::max<uint64_t>(1, steps)) / 1e3);
        } else if (g_ranks->size() > 1) {
            const talus::RanksSolveCount& c = rank_solves;
            const double per = double(std::max<uint64_t>(1, c.iterations));
            std::fprintf(stderr,
                         "talus: ranks: %s over the %d ranks, %s whole on each under %s contacts a rank "
                         "(--rank-min-contacts), %s whole as not distributed yet; %s of the whole "
                         "over-constrained check; rank 0 sent %.1f messages and %.1f kB an iteration, "
                         "and %.1f kB a solve to gather the results\n",
                         talus::count_of(c.distributed, "solve").c_str(), g_ranks->size(),
                         talus::group_digits(c.small).c_str(), talus::group_digits(opt.rank_min_contacts).c_str(),
                         talus::group_digits(c.whole).c_str(), talus::count_of(c.unbounded_checks, "run").c_str(),
                         double(c.traffic.messages) / per,
                         double(c.traffic.bytes) / per / 1e3,
                         double(c.gathered_bytes) / double(std::max<uint64_t>(1, c.distributed)) / 1e3);
        }
        std::error_code ec;
        const auto bytes = std::filesystem::file_size(out, ec);
        std::fprintf(stderr, "talus: output: %s, %.1f MB (%s writing, %s): %s\n"
                             "talus: view it in ParaView: %s; summary: %s info %s\n",
                     talus::count_of(writer->frames_written(), "frame").c_str(),
                     ec ? 0.0 : double(bytes) / 1e6, seconds_text(writer->write_seconds()).c_str(),
                     writer->parallel() ? fmt::format("from each of the {} ranks at once", g_ranks->size()).c_str()
                                        : "in the background",
                     out.c_str(), writer->sidecar_path().c_str(), g_argv0.c_str(),
                     shell_word(out).c_str());
    }
    return 0;
}

int cmd_check(const std::string& scene_path, const std::vector<std::string>& sets) {
    talus::Scene scene;
    if (auto code = load_for_command(scene_path, sets, false, "check", scene)) return *code;
    const auto& w = scene.world;
    uint64_t steps = 0;
    double duration = 0.0;
    for (const talus::Stage& s : scene.stages) {
        steps += uint64_t(std::llround(s.duration / w.simulation.dt));
        duration += s.duration;
    }
    const std::string step_text =
        w.simulation.adaptive
            ? fmt::format("{:g} s in adaptive steps of {:g} to {:g} s", duration,
                          w.simulation.min_dt, w.simulation.max_dt)
            : fmt::format("{} of {:g} s", talus::count_of(steps, "step"), w.simulation.dt);
    const std::string flow =
        w.emitters.empty() && w.outlets.empty()
            ? std::string()
            : fmt::format("{}, {}, ", talus::count_of(w.emitters.size(), "emitter"),
                          talus::count_of(w.outlets.size(), "outlet"));
    const std::string stages =
        scene.stages.size() > 1 ? fmt::format("{}, at most ", talus::count_of(scene.stages.size(), "stage"))
                                : std::string();
    const talus::MemoryEstimate m = talus::run_memory(double(w.bodies.size()), w.solver.type);
    std::printf("%s: valid: %s, %s, %s, %s%s%s, a frame every %g s to %s; memory "
                "about %.2g GB at the peak (settled, three contacts per body)\n",
                scene_path.c_str(), talus::count_of(w.bodies.size(), "body", "bodies").c_str(),
                talus::count_of(w.walls.size(), "wall").c_str(),
                talus::count_of(w.materials.size(), "material").c_str(), flow.c_str(),
                stages.c_str(), step_text.c_str(), scene.output.interval, scene.output.path.c_str(), m.typical / 1e9);
    return 0;
}

/// `talus info FILE [--json]`. A checkpoint is not a trajectory: exit 2 (invalid input),
/// with the command that continues it; a file that cannot be read as a trajectory (missing,
/// not HDF5, another HDF5 file) is exit 4, as for every file talus cannot use.
int cmd_info(const std::string& path, bool json) {
    try {
        const talus::TrajectorySummary s = talus::summarize_trajectory(path);
        std::printf("%s", (json ? talus::trajectory_json(s) : talus::describe_trajectory(s)).c_str());
        return 0;
    } catch (const talus::CheckpointNotTrajectory& e) {
        std::fprintf(stderr, "talus info: %s\n", e.what());
        return kExitInvalid;
    } catch (const talus::IoError& e) {
        std::fprintf(stderr, "talus info: %s\n", e.what());
        // a file with a damaged block may be one HDF5 cannot close; its clean-up at exit
        // would then complain ("infinite loop closing library") or crash
        exit_agreed(kExitIo);
    }
}

}  // namespace

int run_main(int argc, char** argv);

int main(int argc, char** argv) {
    // Blocks of 4 MB and more come straight from the kernel and go back to it when freed.
    // glibc would otherwise raise this threshold to the size of the first large block
    // freed and keep later ones in the heap, where memory that a large run gives back
    // between stages (World::lean_bodies) stays resident and adds to the peak.
    mallopt(M_MMAP_THRESHOLD, 4 << 20);
    if (argc > 0 && argv[0] && *argv[0]) g_argv0 = argv[0];
    std::string launch_error;
    const std::unique_ptr<talus::Ranks> ranks = talus::start_ranks(argc, argv, launch_error);
    g_ranks = ranks.get();
    if (!launch_error.empty()) {
        std::fprintf(stderr, "talus: %s\n", launch_error.c_str());
        return kExitInvalid;
    }
    int code;
    try {
        if (!talus::same_arguments(*ranks, argc, argv)) {
            std::fprintf(stderr, "talus: the %d ranks were started with different arguments; every "
                                 "rank of a run must be given the same command\n",
                         ranks->size());
            code = kExitInvalid;
        } else {
            code = run_main(argc, argv);
        }
    } catch (const std::bad_alloc&) {
        // the scene check refuses what cannot fit (exit 2); this is memory taken by others,
        // or a run that grew beyond the estimate
        std::fprintf(stderr, "\ntalus: out of memory: this process could not allocate what "
                             "it needed (the machine's memory, or a ulimit or cgroup limit); "
                             "see docs/memory.md\n");
        code = kExitIo;
    }
    code = talus::agree_exit(*ranks, code);
    talus::stop_ranks(*ranks);
    return code;
}

int run_main(int argc, char** argv) {
    CLI::App app{"Talus " TALUS_VERSION ": hard-contact granular dynamics"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string(TALUS_VERSION));

    std::string scene, h5;
    std::vector<std::string> sets;
    RunOptions run_opt;
    uint64_t stop_after = 0;

    auto* run = app.add_subcommand("run", "Run a scene and write its trajectory (HDF5 + XDMF)");
    run->add_option("scene", run_opt.scene, "Scene file (TOML); not with --resume");
    run->add_option("--resume", run_opt.resume,
                    "Continue the run saved in this checkpoint, appending to its trajectory");
    run->add_option("-o,--output", run_opt.out,
                    "Trajectory file (default: [output] path of the scene; with --resume, the "
                    "checkpointed run's)");
    run->add_option("--threads", run_opt.threads, "Worker threads (default: all cores)")
        ->check(CLI::Validator(
            [](std::string& v) {
                // CLI::PositiveNumber's message quotes the whole double range
                try {
                    std::size_t used = 0;
                    const long n = std::stol(v, &used);
                    if (used == v.size() && n >= 1 && n <= 4096) return std::string();
                } catch (const std::exception&) {
                }
                return "--threads must be a whole number from 1 to 4096 (got '" + v +
                       "'); leave it out to use every core";
            },
            "1..4096"));
    run->add_option("--set", run_opt.sets, "Override a scene value, e.g. --set solver.tolerance=1e-5");
    run->add_flag("--quiet", run_opt.quiet, "No progress line");
    run->add_flag("--force", run_opt.force, "Overwrite an existing trajectory file");
    auto* stop_option = run->add_option(
        "--stop-after-steps", stop_after,
        "Stop as on SIGTERM once the run has taken K steps in all (for tests and scripts)");
    run->add_flag("--parallel-output", run_opt.parallel_output,
                  "Under mpirun: every rank writes its own bodies' rows of the trajectory (parallel "
                  "HDF5, uncompressed; docs/output-format.md) instead of sending them to rank 0");
    run->add_option("--rank-min-contacts", run_opt.rank_min_contacts,
                    "Under mpirun: solve a step's contacts over the ranks when there are at least N "
                    "a rank; every rank solves smaller problems whole (the same bits; default 1000)")
        ->check(CLI::NonNegativeNumber);

    auto* check = app.add_subcommand("check", "Validate a scene file without running it");
    check->add_option("scene", scene, "Scene file (TOML)")->required();
    check->add_option("--set", sets, "Override a scene value, as for run");

    auto* keys = app.add_subcommand(
        "keys", "Print every scene key with its type, default, unit and range (docs/scene-format.md)");

    bool info_json = false;
    auto* info = app.add_subcommand("info", "Summarise a trajectory file");
    info->add_option("file", h5, "Trajectory (.h5)")->required();
    info->add_flag("--json", info_json, "Print one JSON object instead of text");

    talus::FclibOptions fclib_opt;
    auto* fclib = app.add_subcommand(
        "fclib", "Solve an FCLIB frictional contact problem (HDF5) and report its accuracy");
    fclib->add_option("file", fclib_opt.file, "FCLIB problem (.hdf5), local or global")->required();
    fclib->add_option("--solver", fclib_opt.solver,
                      "nsgs, pgs, pj, apgd (the Coulomb law), or maxdiss, lemke (their own models)")
        ->check(CLI::IsMember({"nsgs", "pgs", "pj", "apgd", "maxdiss", "lemke"}))->capture_default_str();
    fclib->add_option("--friction-directions", fclib_opt.friction_directions,
                      "Edges of lemke's polyhedral friction cone (even, 4 to 64)")
        ->check(CLI::Range(4, 64))->capture_default_str();
    fclib->add_option("--friction", fclib_opt.friction,
                      "coulomb (the problem's law) or ccp (its convex relaxation)")
        ->check(CLI::IsMember({"coulomb", "ccp"}))->capture_default_str();
    fclib->add_option("--tolerance", fclib_opt.tolerance, "Stop at ‖F‖₂/(1+‖q‖₂) ≤ T")
        ->check(CLI::PositiveNumber)->capture_default_str();
    fclib->add_option("--max-iterations", fclib_opt.max_iterations, "Iteration cap over all solves")
        ->check(CLI::PositiveNumber)->capture_default_str();
    fclib->add_option("--relaxation", fclib_opt.relaxation, "ω of pgs and pj, in (0, 2) (default 1)")
        ->check(CLI::Range(0.0, 2.0));
    fclib->add_flag("--json", fclib_opt.json, "Print one JSON object instead of text");
    fclib->add_flag("--print-reactions", fclib_opt.print_reactions, "Also print the reactions r");

    talus::SweepOptions sweep_opt;
    auto* sweep = app.add_subcommand(
        "sweep", "Run a scene once per row of a table of --set overrides, N at a time; called "
                 "again, it runs only what is not done");
    sweep->add_option("scene", sweep_opt.scene, "Scene file (TOML)")->required();
    sweep->add_option("table", sweep_opt.table,
                      "Overrides: a .csv (header: the keys, e.g. material.glass.friction; a row per "
                      "run) or a .toml of [[run]] tables (\"material.glass.friction\" = 0.3)")
        ->required();
    sweep->add_option("-j,--jobs", sweep_opt.jobs, "Runs at a time (default 1); the cores are shared out")
        ->check(CLI::Range(1, 1024));
    sweep->add_option("-o,--output-dir", sweep_opt.dir,
                      "Directory of the runs' files and summary.csv (default: the table's path "
                      "without its extension)");

    talus::SolveRanksOptions solve_opt;
    auto* solve_ranks = app.add_subcommand(
        "solve-ranks", "Solve one step's contacts over the MPI job's ranks (mpirun -np P) and compare "
                       "them with one process, bit for bit; exit 3 when they differ");
    solve_ranks->add_option("scene", solve_opt.scene, "Scene file (TOML)")->required();
    solve_ranks->add_option("--steps", solve_opt.steps, "Steps of the scene before the problem is taken")
        ->check(CLI::Range(0, 100000000))->capture_default_str();
    solve_ranks->add_option("--solver", solve_opt.solvers,
                            "pgs, bgs, pj or apgd, one or more (default: all four), each under every friction "
                            "law it takes over ranks (bgs: ccp and coulomb)")
        ->check(CLI::IsMember({"pgs", "bgs", "pj", "apgd"}));
    solve_ranks->add_option("--set", solve_opt.sets, "Override a scene value, as for run");
    solve_ranks->add_option("--threads", solve_opt.threads, "Worker threads a rank (default: all cores)")
        ->check(CLI::Range(1, 4096));

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? 0 : kExitInvalid;  // a bad option is invalid input (exit 2)
    }
    if (g_ranks->size() > 1 && !*run && !*solve_ranks) {
        std::fprintf(stderr, "talus: only `talus run` and `talus solve-ranks` run over MPI ranks (%d here); run `talus %s` "
                             "without mpirun\n",
                     g_ranks->size(), app.get_subcommands().front()->get_name().c_str());
        return kExitInvalid;
    }
    if (*run) {
        if (run_opt.scene.empty() == run_opt.resume.empty()) {
            std::fprintf(stderr, "talus run: give either a scene file or --resume CHECKPOINT\n");
            return kExitInvalid;
        }
        if (!run_opt.resume.empty() && (!run_opt.sets.empty() || run_opt.force)) {
            // the checkpoint holds the scene as it ran, and its trajectory is continued
            std::fprintf(stderr, "talus run: --set and --force do not go with --resume\n");
            return kExitInvalid;
        }
        if (stop_option->count() > 0) run_opt.stop_after = stop_after;
        return cmd_run(run_opt);
    }
    if (*check) return cmd_check(scene, sets);
    if (*keys) {
        std::fputs(talus::scene_reference().c_str(), stdout);
        std::fputc('\n', stdout);
        return 0;
    }
    if (*fclib) return talus::cmd_fclib(fclib_opt);
    if (*solve_ranks) {
        talus::Scene scene;
        if (auto code = load_for_command(solve_opt.scene, solve_opt.sets, true, "solve-ranks", scene)) return *code;
        std::unique_ptr<tbb::global_control> limit;
        if (solve_opt.threads > 0)
            limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                          std::size_t(solve_opt.threads));
        return talus::cmd_solve_ranks(scene, solve_opt, *g_ranks);
    }
    if (*sweep) {
        std::error_code ec;
        sweep_opt.talus = std::filesystem::read_symlink("/proc/self/exe", ec).string();
        if (ec) sweep_opt.talus = argv[0];
        return talus::cmd_sweep(sweep_opt);
    }
    return cmd_info(h5, info_json);
}
