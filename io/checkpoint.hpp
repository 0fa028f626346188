#pragma once
/// Checkpoints: the whole state of a run at the end of a step, in one HDF5 file, from which
/// the run continues with the same bits as if it had never stopped.
///
/// A checkpoint holds
/// - the scene: its text, file name and --set overrides (the scene's tables — settings,
///   materials, wall geometry, clump templates, kinematic motions, emitter and outlet
///   regions, stages — come from parsing that text again);
/// - the world's state: every per-body array (BodyStore::for_each_array), the time, the
///   step count, the next stable id, each wall's active flag and motion start, each
///   emitter's tally, pending radius and random generators, each outlet's tally;
/// - what one step hands to the next (World::CarriedState: warm-start cache, joint
///   multipliers, wall loads since the last frame);
/// - where the run is: the stage and its monitor (RunPosition).
/// Arrays are stored as their bytes in this build's layout, so a checkpoint is read back by
/// the Talus version that wrote it (the file names it; another version refuses the file).
///
/// Written atomically: to PATH.tmp, closed, then renamed over PATH. A crash while writing
/// leaves the previous checkpoint (and at most a stale PATH.tmp), never a torn one.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>

#include "engine/world/stages.hpp"
#include "io/scene.hpp"

namespace talus {

/// Where a run stands between two steps: the running stage and its monitor.
struct RunPosition {
    std::size_t stage = 0;        ///< index into Scene::stages; their number once the run has ended
    StageMonitor::State monitor;  ///< that stage's monitor (StageMonitor::state())
};

/// Writes scene.world's state with the scene's text and `run` to `path` (atomically).
/// `trajectory` is the file the run writes its frames to (stored so that a resumed run
/// appends to it; may be empty). Throws IoError naming the path when it cannot be written.
void write_checkpoint(const std::filesystem::path& path, const Scene& scene,
                      const RunPosition& run, const std::filesystem::path& trajectory = {});

struct Resumed {
    Scene scene;      ///< parsed again from the stored text; its world holds the stored state
    RunPosition run;  ///< the stage to continue and its monitor
    std::filesystem::path trajectory;  ///< as given to write_checkpoint (may be empty)
};

/// Reads a checkpoint written by write_checkpoint. Throws IoError naming the path for a
/// file that is missing, not a checkpoint, from another Talus version or inconsistent with
/// its own scene; SceneError if the stored scene no longer parses.
Resumed read_checkpoint(const std::filesystem::path& path);

/// What a checkpoint says of its run, read without loading the state.
struct CheckpointStatus {
    double time = 0.0;                 ///< [s] of the saved state
    uint64_t step = 0;                 ///< steps taken at the saved state
    std::filesystem::path trajectory;  ///< the run's trajectory (may be empty)
    std::filesystem::path scene;       ///< the scene file the run was started from
    /// The run continued from (or checkpointing to) this file ran to its end: there is
    /// nothing left to resume. finished_time/step say where it ended.
    bool finished = false;
    double finished_time = 0.0;
    uint64_t finished_step = 0;
};

/// The status of the checkpoint at `path`; nullopt when the file is missing or is not a
/// Talus checkpoint (of any version).
std::optional<CheckpointStatus> checkpoint_status(const std::filesystem::path& path);

/// Marks the checkpoint at `path` as belonging to a run that ended (by its duration or stop
/// condition) at `time`, `step`: `talus run --resume` then refuses it instead of cutting the
/// finished trajectory back to the checkpoint's step. Throws IoError naming the path.
void mark_checkpoint_finished(const std::filesystem::path& path, double time, uint64_t step);

/// Where a run keeps its checkpoint when the scene names none ([output] checkpoint): beside
/// the trajectory, its ".h5" replaced by ".checkpoint.h5" (appended to another extension).
std::filesystem::path default_checkpoint_path(const std::filesystem::path& trajectory);

}  // namespace talus
