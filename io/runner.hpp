#pragma once
/// The run driver: a scene's stages stepped to their end, frames written on the output's
/// cadence, periodic checkpoints, and a stop between two steps when asked (a signal, a step
/// budget), with a checkpoint that a resumed run continues from. One loop, used by
/// `talus run` (tools/talus_main.cpp), the tests and the benchmarks; what is said to the
/// user (progress, stage lines, messages, exit codes) stays with the caller, which hears
/// of the run through RunEvents and gets a RunOutcome back.
///
/// Cadences (docs/design.md §9): with a fixed step, frames and checkpoints come every
/// round(interval / dt) steps; with the adaptive step, at the first step boundary at or
/// after each multiple of the interval (the step lands on frame times and stage ends).
/// Every stage's end writes a frame too.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "engine/world/stages.hpp"
#include "io/checkpoint.hpp"
#include "io/scene.hpp"
#include "io/trajectory_writer.hpp"

namespace talus {

/// The trajectory's description of the scene's run (the scene text, walls, flow columns,
/// precision); also tells the world to record its wall contacts when the output wants them.
RunMetadata prepare_run_output(Scene& scene);

/// A frame of the world now, with the cumulative tallies of its emitters and outlets (/flow
/// rows) and the wall loads since the previous frame (/walls rows), which then start again
/// from zero.
/// `bodies`: the frame's bodies instead of world.bodies (a World stepped over ranks: the
/// whole store gathered on rank 0).
void write_world_frame(TrajectoryWriter& writer, World& world, const BodyStore* bodies = nullptr);

/// The step's series into its diagnostics row (the output's /diagnostics/wall_force and
/// flow totals): each wall's mean force over the step just taken, and the emitters' and
/// outlets' totals since the start.
void add_step_series(StepDiagnostics& d, const World& world);

/// What the caller hears of a run as it goes; every member may be left empty.
struct RunEvents {
    /// A stage begins (fresh) or resumes from a checkpoint (not fresh).
    std::function<void(const Stage&, bool fresh)> stage_begins;
    /// A stage ended, and why (StageMonitor::reason()).
    std::function<void(const Stage&, const std::string& reason)> stage_ends;
    /// After every step that succeeded (its diagnostics are world.diagnostics()).
    std::function<void(const World&)> after_step;
    /// Between two steps: a signal number to stop the run with a checkpoint, or 0 to go on.
    std::function<int()> stop_requested;
};

/// How a run ended.
struct RunOutcome {
    enum class End {
        Finished,          ///< every stage ran to its end; the trajectory is closed
        Stopped,           ///< stop_requested answered `signal`: checkpoint written, trajectory closed, `at`
        SimulationFailed,  ///< a step failed (`status`): the last good state is the last frame, closed
        OutOfMemory,       ///< a step ran out of memory (`status`); the trajectory is left open
    };
    End end = End::Finished;
    int signal = 0;
    StepStatus status;
    RunPosition at;  ///< Stopped: the stage and monitor the run stopped in
};

/// Where a run starts and what it writes to.
struct RunSetup {
    RunPosition start;                     ///< the stage to begin with (its monitor, when resuming)
    bool resuming = false;                 ///< `start` was read from a checkpoint: its stage has begun
    std::filesystem::path checkpoint;      ///< where checkpoints go (empty: none are written)
    std::filesystem::path trajectory;      ///< the trajectory as the checkpoint names it (absolute)
};

class Runner {
public:
    /// `writer` holds the frames written so far (the first one, or the resumed file's);
    /// null: a run without output (tests, benchmarks), which still steps onto frame times.
    ///
    /// A World stepped over ranks (World::distributed(), engine/world/rank_world.hpp) steps
    /// with step_on_ranks, and every frame and checkpoint is the whole state gathered on
    /// rank 0 (gather_whole), which alone has the writer and writes the checkpoints: every
    /// rank runs the same loop and gathers with it. A write that fails on rank 0 stops the
    /// other ranks with PeerFailed (core/ranks.hpp) while rank 0 throws the error. A writer
    /// that writes from every rank (TrajectoryWriter::parallel) is on every rank instead:
    /// each hands it its own bodies, and every rank syncs and closes it.
    Runner(Scene& scene, TrajectoryWriter* writer, RunSetup setup);

    /// Steps every stage from setup.start to its end, or until a stop or a failure.
    /// Throws what the writer, the checkpoint or the step throw (IoError, std::bad_alloc, …).
    RunOutcome run(const RunEvents& events);

    /// Frames, checkpoints: the first time due after `t` on a cadence of `every` [s].
    static double next_multiple(double t, double every) { return (std::floor(t / every + 1e-9) + 1.0) * every; }
    /// A fixed step's cadence in steps for an interval [s] (at least 1).
    static uint64_t cadence_steps(double interval, double dt) {
        return std::max<uint64_t>(1, uint64_t(std::llround(interval / dt)));
    }

private:
    /// A checkpoint at `at`, once per step: the trajectory first (synced), then the state.
    void checkpoint_now(const RunPosition& at);
    /// A frame of the world now (over ranks: gathered on rank 0, a collective), then the
    /// wall loads start again from zero.
    void write_frame();
    /// After a failed step: the last good state as the last frame (unless it is one), and
    /// the trajectory closed.
    void close_after_failure();
    /// Over ranks (a collective): the whole store on rank 0 (gather_bodies), an empty one
    /// elsewhere; nothing in one process, whose frames are world.bodies.
    std::optional<BodyStore> gathered_bodies() const;
    /// The trajectory is written from every rank at once (TrajectoryWriter::parallel).
    bool parallel_writer() const;
    /// A frame of a file written in parallel: every rank hands the writer its own bodies.
    void write_own_frame();
    /// `write()` on the rank that writes (over ranks: rank 0; the others learn whether it
    /// failed: a collective).
    template <class F>
    void on_writing_rank(F&& write);

    Scene& scene_;
    TrajectoryWriter* writer_;
    RunSetup setup_;
    uint64_t frame_every_ = 1, checkpoint_every_ = 0;
    uint64_t checkpointed_ = UINT64_MAX;  ///< the step of the checkpoint on disk
};

}  // namespace talus
