#pragma once
/// TrajectoryWriter: the one HDF5 file a run writes (docs/design.md §9), plus its XDMF sidecar.
/// The layout, every dataset's dtype, shape and unit, is in docs/output-format.md.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/math.hpp"
#include "core/settings.hpp"
#include "engine/flow/flow.hpp"
#include "io/wall_surface.hpp"

namespace talus {

class Ranks;
struct BodyStore;
struct ClumpTable;
struct MaterialTable;
struct StepDiagnostics;
struct WallLoads;
struct WallContactList;
struct ContactRecord;

/// A file could not be created, written, opened or understood. The message names the path
/// and, where there is one, the fix.
class IoError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// What a trajectory records about how it was made (root attributes).
struct RunMetadata {
    std::string scene_text;              ///< the full scene file, verbatim
    std::string scene_path;              ///< where the scene was read from, as given
    std::vector<std::string> overrides;  ///< the --set KEY=VALUE strings, in order
    std::string talus_version;           ///< engine version that wrote the file
    std::size_t emitters = 0;            ///< [[emitter]]s: columns of /flow/emitted_*
    std::size_t outlets = 0;             ///< [[outlet]]s: columns of /flow/removed_*
    /// One entry per wall ("wall.N" for unnamed ones): columns of /walls/force and torque.
    std::vector<std::string> wall_names;
    std::vector<Vec3> wall_reference_points;  ///< torque reference of each wall [m]
    /// Create /walls/contacts: every body–wall contact of each frame's last step, with its
    /// point and impulse ([output] wall_contacts). Needs at least one wall.
    bool wall_contacts = false;
    /// Create /contacts: every contact of each frame's last step, between bodies and with
    /// walls ([output] contacts).
    bool contacts = false;
    /// Create /shapes: each frame's capsules, ellipsoids and clumps as glyphs (the run starts
    /// with one; prepare_run_output). A resumed run keeps what its file has.
    bool shapes = false;
    double dt = 0.0;  ///< the run's step h [s] (attribute dt of /walls/contacts and /contacts)
    /// The walls as triangles at their reference pose (/walls/surface, and the sidecar's
    /// "walls"); empty: none. A resumed run takes the file's own.
    WallSurface wall_surface;
    /// Storage type of the per-body float rows (/bodies/position, orientation, velocity,
    /// angular_velocity, radius): float32 rounds each double to nearest.
    OutputPrecision precision = OutputPrecision::Float64;
    /// gzip level 0..9 (0 = no filter) of the row datasets (/bodies/*, /walls/contacts/*),
    /// with the shuffle filter before it. The small per-frame index and diagnostics
    /// datasets are never compressed.
    int compression = kDefaultOutputCompression;
    /// Bodies a frame is expected to hold (the scene's at t = 0): the body rows' chunks are
    /// this many rows, within [kMinChunkRows, 8192], so that a frame of that many bodies
    /// fills whole chunks and none is compressed and rewritten again at every frame (a
    /// chunk written in parts is stored anew each time it grows). 0 = unknown: 8192.
    std::size_t rows_per_frame = 0;
    /// The run's stages in order (root attribute stage_names; /diagnostics/stage indexes it).
    std::vector<std::string> stage_names;
    /// Write frames on a background thread, so the step loop does not wait for the disk
    /// (see TrajectoryWriter). false: every write_frame writes before it returns.
    bool background_writer = true;
    /// Write the file from every rank of an MPI job at once (parallel HDF5, `talus run
    /// --parallel-output`; docs/output-format.md, "A file written in parallel"): every rank
    /// constructs the writer with the same metadata and makes every call in the same order,
    /// each handing write_frame only the bodies it owns (rank by rank, their rows follow one
    /// another in the frame); what is the same on every rank (diagnostics, flow, walls,
    /// contacts) rank 0 writes. Needs parallel_available(), more than one rank and no
    /// /shapes; then no compression and no background thread. Null: this process alone.
    Ranks* parallel = nullptr;
};

/// Where a resumed run takes up an existing trajectory (TrajectoryWriter's append
/// constructor): the step of the checkpoint it continues from.
struct AppendAfterStep {
    uint64_t step = 0;
};

/// Appends frames (every body's state at one time) and per-step diagnostics to an HDF5
/// file that only grows. All datasets are created in the constructor and the file is then
/// switched to single-writer/multiple-reader (SWMR) mode, so a reader may open it while the
/// run goes on, and a killed run leaves a file readable up to its last complete frame.
///
/// By default frames are written by a background thread: write_frame copies the frame
/// (into one of two buffers) and returns; it waits only if the writer still holds both.
/// The file is the same as written synchronously. A failure on the writer thread is thrown
/// again, as the same IoError message, by the next write_frame, write_diagnostics, flush or
/// close. Use from one thread.
class TrajectoryWriter {
public:
    /// Bytes one body takes in one frame's rows before compression: the integer columns
    /// (id, material, shape, clump) and 14 reals (position, orientation, velocity, angular
    /// velocity, radius) at `precision`. For the room check before a run.
    static std::size_t body_row_bytes(OutputPrecision precision);
    /// Whether this build's HDF5 can write one file from every rank (RunMetadata::parallel).
    static bool parallel_available();

    /// Creates `path` (and removes a stale sidecar). Throws IoError if the file exists and
    /// `force` is false, or if it cannot be created. `clumps` (may be null: none) is
    /// written once as /clumps; it must hold every template the frames' bodies use.
    TrajectoryWriter(const std::filesystem::path& path, const RunMetadata& metadata,
                     const MaterialTable& materials, bool force,
                     const ClumpTable* clumps = nullptr);
    /// Opens the existing trajectory `path` to continue a run from a checkpoint taken at
    /// `at.step`. What the file holds beyond that step (frames and diagnostics written
    /// after the checkpoint by a run that was then killed: the resumed run writes them
    /// again) and any incomplete entry are dropped first, and the sidecar is rewritten to
    /// match; frames are then appended as by a new writer, so the file reads as one run.
    /// A cleanly closed file is cut in place. A file left by a killed run (HDF5's "being
    /// written" mark) is rebuilt: what is kept is copied into a new file, made like the
    /// original from `metadata`, `materials` and `clumps`, which replaces it by rename.
    /// `metadata` must describe the run that made the file (the same scene text and
    /// overrides, emitters, outlets, walls, wall contacts and precision), or IoError:
    /// another run's file. Throws IoError naming the path if the file is missing, not a
    /// trajectory, or has no complete frame up to `at.step`; the file is then unchanged.
    TrajectoryWriter(const std::filesystem::path& path, const RunMetadata& metadata,
                     const MaterialTable& materials, const ClumpTable* clumps,
                     AppendAfterStep at);
    /// Closes the file; never throws (call close() to see errors).
    ~TrajectoryWriter();

    TrajectoryWriter(const TrajectoryWriter&) = delete;
    TrajectoryWriter& operator=(const TrajectoryWriter&) = delete;

    /// Hands the frame to the writer: from the background writer's thread, or at once
    /// without it, it appends the buffered diagnostics, then one row per body, then the
    /// frame's index entry
    /// (last, so a reader never sees a frame whose rows are missing); flushes, and rewrites
    /// the XDMF sidecar (beyond 200 frames, only while that takes under 2% of the run's wall
    /// time; close() always does). Throws IoError on an HDF5 failure or inconsistent
    /// BodyStore arrays.
    /// `emitted` and `removed` are the cumulative tallies of each emitter and outlet (as
    /// many as RunMetadata announced; empty when there are none): the frame's /flow row
    /// records them and their increase since the previous frame. `loads` (when the file has
    /// walls) gives the frame's /walls row: impulses / covered time, zeros if null or empty.
    /// `contacts` (when the file was created with wall_contacts) gives the frame's rows of
    /// /walls/contacts; null = none. `record` (when the file was created with contacts)
    /// gives the frame's rows of /contacts; null = none. `walls` (when the file has a wall
    /// surface) poses it at `time` for the frame's /walls/surface/points; null = the
    /// reference pose.
    void write_frame(const BodyStore& bodies, double time, uint64_t step,
                     const std::vector<FlowTally>& emitted = {},
                     const std::vector<FlowTally>& removed = {},
                     const WallLoads* loads = nullptr,
                     const WallContactList* contacts = nullptr,
                     const ContactRecord* record = nullptr,
                     const std::vector<Wall>* walls = nullptr);

    /// Buffers one step's record in memory; it reaches the file with the next write_frame or
    /// on close(), so the step loop makes no HDF5 call. Throws IoError after close(), or
    /// the writer thread's failure.
    void write_diagnostics(const StepDiagnostics& diagnostics);

    /// Returns once every frame handed to write_frame is in the file (flushed; a reader or
    /// a kill from now on sees it). Throws the writer thread's failure, if any. Anything
    /// that needs the file complete up to now (a checkpoint, a reader in-process) calls it.
    void flush();

    /// As flush(), and also appends the diagnostics buffered since the last frame: the file
    /// then holds every step handed over. A checkpoint is written only after it, so a
    /// trajectory never lags behind the checkpoint that continues it.
    void sync();

    /// Waits for the frames handed over, appends what is buffered, brings the sidecar up to
    /// date, flushes and closes; after it write_frame and write_diagnostics throw. Throws
    /// the writer thread's failure, if any. Safe to call twice.
    void close();

    const std::filesystem::path& path() const;
    std::filesystem::path sidecar_path() const;  ///< the .xmf beside the .h5
    uint64_t frames_written() const;             ///< frames handed over (written or queued)
    /// Step of the last frame handed over, or, before any, of the last frame in the file
    /// (an appended file's, after the cut).
    uint64_t last_frame_step() const;
    /// Its simulated time [s].
    double last_frame_time() const;
    uint64_t rows_written() const;               ///< body rows over those frames
    /// What a continued killed run's file had that did not read and was dropped: frames
    /// (from the first that does not read) and diagnostics. Empty when nothing was lost.
    const std::string& damage() const;
    bool parallel() const;                       ///< written from every rank (RunMetadata::parallel)
    /// Whether this process writes what every rank holds alike: rank 0 in parallel, else
    /// the one writer. In parallel, the others hand write_frame only the bodies they own.
    bool writes_shared() const;
    /// Wall time spent writing frames (on the writer's thread in the background) [s];
    /// complete after flush() or close().
    double write_seconds() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace talus
