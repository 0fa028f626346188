// The talus command: run a scene (or continue one from a checkpoint), validate a scene,
// describe a trajectory.
// Exit codes: 0 success, 2 invalid input (scene or option), 3 simulation failed
// (non-finite state, offending bodies named), 4 I/O error, 128 + the signal for a run
// stopped by SIGINT (130) or SIGTERM (143) after writing its checkpoint.
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
#include <string>
#include <vector>

#include "io/checkpoint.hpp"
#include "io/scene.hpp"
#include "io/trajectory_info.hpp"
#include "io/trajectory_writer.hpp"
#include "tools/fclib_command.hpp"

namespace {

constexpr int kExitInvalid = 2;
constexpr int kExitSimulation = 3;
constexpr int kExitIo = 4;

using Clock = std::chrono::steady_clock;

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
    Progress(bool quiet, uint64_t first_step)
        : quiet_(quiet), tty_(isatty(STDERR_FILENO) != 0), first_step_(first_step) {}

    void update(const talus::World& w, double duration, uint64_t total_steps, bool final) {
        if (quiet_) return;
        const auto now = Clock::now();
        const double since = std::chrono::duration<double>(now - last_).count();
        if (!final && since < (tty_ ? 0.25 : 5.0)) return;
        const double elapsed = std::chrono::duration<double>(now - start_).count();
        const double rate = elapsed > 0 ? double(w.step_count - first_step_) / elapsed : 0.0;
        const double eta = rate > 0 && total_steps > w.step_count
                               ? double(total_steps - w.step_count) / rate
                               : (rate > 0 ? 0.0 : NAN);
        const auto& d = w.diagnostics();
        const std::string line = fmt::format(
            "{}t {:.4g}/{:.4g} s | {:.0f} steps/s | ETA {} | {} bodies | {} contacts | it {} | r {:.2e} m/s",
            stage_.empty() ? std::string() : stage_ + " | ", w.time, duration, rate,
            format_duration(eta), w.bodies.size(), d.contacts, d.iterations, d.residual);
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
    bool open_line_ = false;
    std::string stage_;
    Clock::time_point start_ = Clock::now(), last_ = Clock::now() - std::chrono::hours(1);
};

/// A frame with the cumulative tallies of the world's emitters and outlets (/flow rows) and
/// the wall loads since the previous frame (/walls rows), which then start again from zero.
void write_frame(talus::TrajectoryWriter& writer, talus::World& world) {
    std::vector<talus::FlowTally> emitted, removed;
    for (const talus::Emitter& e : world.emitters) emitted.push_back(e.emitted);
    for (const talus::Outlet& o : world.outlets) removed.push_back(o.removed);
    writer.write_frame(world.bodies, world.time, world.step_count, emitted, removed,
                       &world.wall_loads(), &world.wall_contacts());
    world.reset_wall_loads();
}

// ---- stopping on a signal ---------------------------------------------------------------

/// The signal that asked the run to stop (0: none yet). The handler only stores it (all an
/// async-signal-safe handler may do); the step loop looks at it between steps and stops
/// there, with a checkpoint and the trajectory closed.
volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void on_stop_signal(int signal) { g_stop_signal = signal; }

/// SIGINT and SIGTERM end the run after its current step instead of killing it.
/// SA_RESETHAND puts the default action back at once, so a second signal (while the
/// checkpoint is written) kills as usual; SA_RESTART keeps the HDF5 writes of the other
/// threads from failing with EINTR.
void install_stop_handlers() {
    struct sigaction sa = {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND | SA_RESTART;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
}

const char* signal_name(int signal) {
    return signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "a signal";
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

struct RunOptions {
    std::string scene;   ///< scene file, or empty with `resume`
    std::string resume;  ///< checkpoint to continue, or empty
    std::string out;     ///< -o: trajectory file (empty: the scene's, or the checkpoint's)
    int threads = 0;     ///< 0: all cores
    std::vector<std::string> sets;
    bool quiet = false, force = false;
    /// --stop-after-steps: stop as on SIGTERM once the run has taken this many steps in all.
    std::optional<uint64_t> stop_after;
};

int cmd_run(const RunOptions& opt) {
    const bool resuming = !opt.resume.empty();
    talus::Scene scene;
    talus::RunPosition start;  // the stage to begin with (already begun when resuming)
    std::filesystem::path out, checkpoint;
    if (!resuming) {
        try {
            scene = talus::load_scene(opt.scene, opt.sets);
        } catch (const talus::SceneError& e) {
            std::fprintf(stderr, "talus: invalid scene\n%s\n", e.what());
            return kExitInvalid;
        }
        out = opt.out.empty() ? std::filesystem::path(scene.output.path) : std::filesystem::path(opt.out);
        checkpoint = scene.output.checkpoint.empty() ? talus::default_checkpoint_path(out)
                                                     : std::filesystem::path(scene.output.checkpoint);
    } else {
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
    std::unique_ptr<tbb::global_control> limit;
    if (opt.threads > 0)
        limit = std::make_unique<tbb::global_control>(
            tbb::global_control::max_allowed_parallelism, std::size_t(opt.threads));

    talus::World& world = scene.world;
    const double dt = world.simulation.dt;
    // The longest the run can take: every stage to its full duration (a stop condition may
    // end a stage earlier).
    double duration = 0.0;
    uint64_t total_steps = 0;
    for (const talus::Stage& s : scene.stages) {
        duration += s.duration;
        total_steps += uint64_t(std::llround(s.duration / dt));
    }
    const uint64_t frame_every =
        std::max<uint64_t>(1, uint64_t(std::llround(scene.output.interval / dt)));
    // Periodic checkpoints on a step cadence, like frames (0: none).
    const uint64_t checkpoint_every =
        scene.output.checkpoint_interval > 0.0
            ? std::max<uint64_t>(1, uint64_t(std::llround(scene.output.checkpoint_interval / dt)))
            : 0;

    {
        // Room for the body rows the run will write, found out before its first step: exact
        // for uncompressed rows and a constant body count (exit 4 if it cannot fit); with
        // compression the need is unknown (gzip takes 3–6× on such rows), so only a warning.
        // Emitters add bodies later: the estimate is then a lower bound.
        const double row_bytes = double(talus::TrajectoryWriter::body_row_bytes(scene.output.precision));
        const uint64_t frames_left = (total_steps - std::min(total_steps, world.step_count)) /
                                         frame_every + scene.stages.size();
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
    try {
        talus::RunMetadata meta;
        meta.scene_text = scene.text;
        meta.scene_path = scene.file.string();
        meta.overrides = scene.overrides;
        meta.talus_version = TALUS_VERSION;
        meta.emitters = world.emitters.size();
        meta.outlets = world.outlets.size();
        for (std::size_t w = 0; w < world.walls.size(); ++w) {
            const talus::Wall& wall = world.walls[w];
            meta.wall_names.push_back(wall.name.empty() ? fmt::format("wall.{}", w) : wall.name);
            meta.wall_reference_points.push_back(talus::wall_reference_point(wall));
        }
        meta.wall_contacts = scene.output.wall_contacts && !world.walls.empty();
        meta.dt = dt;
        meta.precision = scene.output.precision;
        meta.compression = scene.output.compression;
        world.record_wall_contacts = meta.wall_contacts;
        if (!resuming) {
            writer = std::make_unique<talus::TrajectoryWriter>(out, meta, world.materials,
                                                              opt.force, &world.bodies.clumps);
            write_frame(*writer, world);
        } else {
            writer = std::make_unique<talus::TrajectoryWriter>(
                out, meta, world.materials, &world.bodies.clumps,
                talus::AppendAfterStep{world.step_count});
            // every frame up to the checkpoint must be there: the resumed run starts after it
            const uint64_t due = world.step_count / frame_every * frame_every;
            if (writer->last_frame_step() < due) {
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
        return kExitIo;
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
        else
            std::fprintf(stderr, "talus: %zu bodies, %llu steps of %g s, %d thread(s) -> %s\n",
                         world.bodies.size(), (unsigned long long)total_steps, dt, threads,
                         out.c_str());
    }

    const uint64_t first_step = world.step_count;
    // The step of the checkpoint on disk: none is written twice for one step.
    uint64_t checkpointed = resuming ? world.step_count : UINT64_MAX;
    // The trajectory first, complete up to this step, then the checkpoint that continues it.
    auto checkpoint_now = [&](const talus::RunPosition& at) {
        if (checkpointed == world.step_count) return;
        writer->sync();
        talus::write_checkpoint(checkpoint, scene, at, out_absolute);
        checkpointed = world.step_count;
    };

    Progress progress(opt.quiet, first_step);
    const Clock::time_point loop_start = Clock::now();
    const bool staged = scene.stages.size() > 1;
    try {
        for (std::size_t s = start.stage; s < scene.stages.size(); ++s) {
            const talus::Stage& stage = scene.stages[s];
            // the stage a checkpoint was taken in has begun: its start actions are in the
            // restored state, and its monitor continues
            const bool fresh = !(resuming && s == start.stage);
            if (fresh) talus::begin_stage(stage, world);
            talus::StageMonitor monitor(stage, world);
            if (!fresh) monitor.restore(start.monitor);
            if (staged && !opt.quiet)
                std::fprintf(stderr, "%stalus: stage '%s' %s at t = %g s\n",
                             progress.needs_newline() ? "\n" : "", stage.name.c_str(),
                             fresh ? "begins" : "resumes", world.time);
            progress.set_stage(staged ? stage.name : std::string());
            bool over = false;
            while (!over) {
                // Between two steps: stop if asked, else the periodic checkpoint if due.
                // (Here, not at the end of a step, so that a stage that has just ended is
                // followed by the next one begun: a checkpoint always names a running stage.)
                if (opt.stop_after && world.step_count >= *opt.stop_after && g_stop_signal == 0)
                    g_stop_signal = SIGTERM;
                if (const int sig = g_stop_signal; sig != 0) {
                    checkpoint_now({s, monitor.state()});
                    writer->close();
                    std::fprintf(stderr,
                                 "%stalus: %s at t = %g s (step %llu): stopped; the trajectory "
                                 "holds every frame up to then: %s\n"
                                 "talus: checkpoint: %s\n"
                                 "talus: continue with: talus run --resume %s\n",
                                 progress.needs_newline() ? "\n" : "",
                                 opt.stop_after && world.step_count >= *opt.stop_after
                                     ? "--stop-after-steps reached"
                                     : signal_name(sig),
                                 world.time, (unsigned long long)world.step_count, out.c_str(),
                                 checkpoint.c_str(), shell_word(checkpoint).c_str());
                    return 128 + sig;
                }
                if (checkpoint_every > 0 && world.step_count > 0 &&
                    world.step_count % checkpoint_every == 0)
                    checkpoint_now({s, monitor.state()});

                const talus::StepStatus status = world.step();
                if (!status.ok) {
                    // the failed step left the state as it was before it: the last good
                    // state, which becomes the trajectory's last frame (unless it is one)
                    if (world.step_count % frame_every != 0) write_frame(*writer, world);
                    writer->close();
                    std::fprintf(stderr, "\ntalus: simulation failed: %s\n"
                                 "the trajectory holds every frame up to the last good state, "
                                 "t = %g s: %s\n",
                                 status.message.c_str(), world.time, out.c_str());
                    return kExitSimulation;
                }
                writer->write_diagnostics(world.diagnostics());
                over = monitor.done(world);
                // frames on the global cadence, and the state at every stage's end
                if (world.step_count % frame_every == 0 || over) write_frame(*writer, world);
                progress.update(world, duration, total_steps, false);
            }
            if (!opt.quiet && (staged || monitor.reason() != "duration reached"))
                std::fprintf(stderr, "%stalus: stage '%s' ended at t = %g s: %s\n",
                             progress.needs_newline() ? "\n" : "", stage.name.c_str(), world.time,
                             monitor.reason().c_str());
        }
        writer->close();
    } catch (const talus::IoError& e) {
        std::fprintf(stderr, "\ntalus: %s\n", e.what());
        // The trajectory holds what its last successful flush wrote (every frame before it,
        // as after a SIGKILL: readable with swmr=True, see docs/output-format.md). A file
        // whose write failed (a full disk) cannot be closed: HDF5's own clean-up at exit
        // retries the flush and crashes (seen: SIGSEGV in H5F__close_cb, exit 139 instead of
        // 4). Leave without it; nothing else is pending.
        std::fprintf(stderr, "talus: the trajectory keeps the frames flushed before the error: %s\n",
                     out.c_str());
        std::fflush(nullptr);
        std::_Exit(kExitIo);
    } catch (const std::exception& e) {
        // a failure no check caught: the run stops as a failed simulation (exit 3), with
        // the frames written so far kept, never an abort
        std::fprintf(stderr, "\ntalus: simulation failed at t = %g s (step %llu): %s\n",
                     world.time, (unsigned long long)world.step_count + 1, e.what());
        try {
            writer->close();
            std::fprintf(stderr, "the trajectory holds every frame up to t = %g s: %s\n",
                         world.time, out.c_str());
        } catch (const talus::IoError& io) {
            std::fprintf(stderr, "talus: %s\n", io.what());
        }
        return kExitSimulation;
    }
    progress.update(world, duration, world.step_count, true);
    if (!opt.quiet) {
        // the step loop alone (frames handed to the writer included; set-up excluded), in
        // a form benchmarks/scaling.py reads
        const uint64_t steps = world.step_count - first_step;
        const double loop = std::chrono::duration<double>(Clock::now() - loop_start).count();
        std::fprintf(stderr, "talus: steps: %llu in %.6f s (%.6g s per step)\n",
                     (unsigned long long)steps, loop, steps > 0 ? loop / double(steps) : 0.0);
        std::error_code ec;
        const auto bytes = std::filesystem::file_size(out, ec);
        std::fprintf(stderr, "talus: output: %llu frames, %.1f MB, %.2f s writing (background)\n",
                     (unsigned long long)writer->frames_written(), ec ? 0.0 : double(bytes) / 1e6,
                     writer->write_seconds());
    }
    return 0;
}

int cmd_check(const std::string& scene_path, const std::vector<std::string>& sets) {
    try {
        const talus::Scene scene = talus::load_scene(scene_path, sets);
        const auto& w = scene.world;
        uint64_t steps = 0;
        for (const talus::Stage& s : scene.stages) steps += uint64_t(std::llround(s.duration / w.simulation.dt));
        const std::string flow =
            w.emitters.empty() && w.outlets.empty()
                ? std::string()
                : fmt::format("{} emitters, {} outlets, ", w.emitters.size(), w.outlets.size());
        const std::string stages =
            scene.stages.size() > 1 ? fmt::format("{} stages, at most ", scene.stages.size()) : std::string();
        std::printf("%s: valid: %zu bodies, %zu walls, %zu materials, %s%s%llu steps of %g s, "
                    "output %s every %g s\n",
                    scene_path.c_str(), w.bodies.size(), w.walls.size(), w.materials.size(), flow.c_str(),
                    stages.c_str(), (unsigned long long)steps, w.simulation.dt,
                    scene.output.path.c_str(), scene.output.interval);
        return 0;
    } catch (const talus::SceneError& e) {
        std::fprintf(stderr, "talus: invalid scene\n%s\n", e.what());
        return kExitInvalid;
    }
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
        return kExitIo;
    }
}

}  // namespace

int main(int argc, char** argv) {
    // Blocks of 4 MB and more come straight from the kernel and go back to it when freed.
    // glibc would otherwise raise this threshold to the size of the first large block
    // freed and keep later ones in the heap, where memory that a large run gives back
    // between stages (World::lean_bodies) stays resident and adds to the peak.
    mallopt(M_MMAP_THRESHOLD, 4 << 20);
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
        ->check(CLI::PositiveNumber);
    run->add_option("--set", run_opt.sets, "Override a scene value, e.g. --set solver.tolerance=1e-5");
    run->add_flag("--quiet", run_opt.quiet, "No progress line");
    run->add_flag("--force", run_opt.force, "Overwrite an existing trajectory file");
    auto* stop_option = run->add_option(
        "--stop-after-steps", stop_after,
        "Stop as on SIGTERM once the run has taken K steps in all (for tests and scripts)");

    auto* check = app.add_subcommand("check", "Validate a scene file without running it");
    check->add_option("scene", scene, "Scene file (TOML)")->required();
    check->add_option("--set", sets, "Override a scene value, as for run");

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

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? 0 : kExitInvalid;  // a bad option is invalid input (exit 2)
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
    if (*fclib) return talus::cmd_fclib(fclib_opt);
    return cmd_info(h5, info_json);
}
