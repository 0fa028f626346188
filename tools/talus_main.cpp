// The talus command: run a scene, validate a scene, describe a trajectory.
// Exit codes: 0 success, 1 usage error, 2 invalid input (scene or option), 3 simulation
// failed (non-finite state, offending bodies named), 4 I/O error.
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <malloc.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/info.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "io/scene.hpp"
#include "io/trajectory_info.hpp"
#include "io/trajectory_writer.hpp"

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
    explicit Progress(bool quiet) : quiet_(quiet), tty_(isatty(STDERR_FILENO) != 0) {}

    void update(const talus::World& w, double duration, uint64_t total_steps, bool final) {
        if (quiet_) return;
        const auto now = Clock::now();
        const double since = std::chrono::duration<double>(now - last_).count();
        if (!final && since < (tty_ ? 0.25 : 5.0)) return;
        const double elapsed = std::chrono::duration<double>(now - start_).count();
        const double rate = elapsed > 0 ? double(w.step_count) / elapsed : 0.0;
        const double eta = rate > 0 ? double(total_steps - w.step_count) / rate : NAN;
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

int cmd_run(const std::string& scene_path, const std::string& out_opt, int threads,
            const std::vector<std::string>& sets, bool quiet, bool force) {
    talus::Scene scene;
    try {
        scene = talus::load_scene(scene_path, sets);
    } catch (const talus::SceneError& e) {
        std::fprintf(stderr, "talus: invalid scene\n%s\n", e.what());
        return kExitInvalid;
    }
    const std::filesystem::path out = out_opt.empty() ? scene.output.path : out_opt;
    std::unique_ptr<tbb::global_control> limit;
    if (threads > 0)
        limit = std::make_unique<tbb::global_control>(
            tbb::global_control::max_allowed_parallelism, std::size_t(threads));

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
        writer = std::make_unique<talus::TrajectoryWriter>(out, meta, world.materials, force,
                                                          &world.bodies.clumps);
        write_frame(*writer, world);
    } catch (const talus::IoError& e) {
        std::fprintf(stderr, "talus: %s\n", e.what());
        return kExitIo;
    }
    if (!quiet)
        std::fprintf(stderr, "talus: %zu bodies, %llu steps of %g s, %d thread(s) -> %s\n",
                     world.bodies.size(), (unsigned long long)total_steps, dt,
                     threads > 0 ? threads : tbb::info::default_concurrency(), out.c_str());

    Progress progress(quiet);
    const Clock::time_point loop_start = Clock::now();
    const bool staged = scene.stages.size() > 1;
    try {
        for (const talus::Stage& stage : scene.stages) {
            talus::begin_stage(stage, world);
            talus::StageMonitor monitor(stage, world);
            if (staged && !quiet)
                std::fprintf(stderr, "%stalus: stage '%s' begins at t = %g s\n",
                             progress.needs_newline() ? "\n" : "", stage.name.c_str(), world.time);
            progress.set_stage(staged ? stage.name : std::string());
            bool over = false;
            while (!over) {
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
            if (!quiet && (staged || monitor.reason() != "duration reached"))
                std::fprintf(stderr, "%stalus: stage '%s' ended at t = %g s: %s\n",
                             progress.needs_newline() ? "\n" : "", stage.name.c_str(), world.time,
                             monitor.reason().c_str());
        }
        writer->close();
    } catch (const talus::IoError& e) {
        std::fprintf(stderr, "\ntalus: %s\n", e.what());
        return kExitIo;
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
    if (!quiet) {
        // the step loop alone (frames handed to the writer included; set-up excluded), in
        // a form benchmarks/scaling.py reads
        const double loop = std::chrono::duration<double>(Clock::now() - loop_start).count();
        std::fprintf(stderr, "talus: steps: %llu in %.6f s (%.6g s per step)\n",
                     (unsigned long long)world.step_count, loop,
                     world.step_count > 0 ? loop / double(world.step_count) : 0.0);
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

int cmd_info(const std::string& path) {
    try {
        std::printf("%s", talus::describe_trajectory(path).c_str());
        return 0;
    } catch (const talus::IoError& e) {
        std::fprintf(stderr, "talus: %s\n", e.what());
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

    std::string scene, out, h5;
    int threads = 0;
    bool quiet = false, force = false;
    std::vector<std::string> sets;

    auto* run = app.add_subcommand("run", "Run a scene and write its trajectory (HDF5 + XDMF)");
    run->add_option("scene", scene, "Scene file (TOML)")->required();
    run->add_option("-o,--output", out, "Trajectory file (default: [output] path of the scene)");
    run->add_option("--threads", threads, "Worker threads (default: all cores)")
        ->check(CLI::PositiveNumber);
    run->add_option("--set", sets, "Override a scene value, e.g. --set solver.tolerance=1e-5");
    run->add_flag("--quiet", quiet, "No progress line");
    run->add_flag("--force", force, "Overwrite an existing trajectory file");

    auto* check = app.add_subcommand("check", "Validate a scene file without running it");
    check->add_option("scene", scene, "Scene file (TOML)")->required();
    check->add_option("--set", sets, "Override a scene value, as for run");

    auto* info = app.add_subcommand("info", "Summarise a trajectory file");
    info->add_option("file", h5, "Trajectory (.h5)")->required();

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? 0 : kExitInvalid;  // a bad option is invalid input (exit 2)
    }
    if (*run) return cmd_run(scene, out, threads, sets, quiet, force);
    if (*check) return cmd_check(scene, sets);
    return cmd_info(h5);
}
