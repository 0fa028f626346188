#pragma once
/// `talus info OUT.h5`: a short summary of a trajectory file, as text or as one JSON object.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "io/trajectory_writer.hpp"

namespace talus {

/// What `talus info` reports about a trajectory. Everything comes from the index, the
/// diagnostics, the root attributes and /bodies/radius (the only body column read, for
/// the smallest diameter); a field the file lacks is empty (std::nullopt, or an empty list).
struct TrajectorySummary {
    std::string path;
    std::string format;                  ///< root attribute "format"
    int64_t format_version = -1;
    std::string talus_version;           ///< "?" if missing
    std::string scene_path;              ///< "" if missing
    bool closed_cleanly = true;          ///< false: open for writing, or left by a killed run
    /// Written from every rank at once (/frames/committed; readers need no SWMR flag and no
    /// h5clear, docs/output-format.md).
    bool parallel = false;
    std::string precision;               ///< of the body reals: "float64", "float32" or "?"
    int compression = 0;                 ///< gzip level of the body rows, 0 uncompressed
    bool shuffle = false;
    struct Material {
        std::string name;
        double density = 0.0;   ///< [kg/m³]
        double friction = 0.0;  ///< μ
    };
    std::vector<Material> materials;
    uint64_t frames = 0;  ///< complete frames
    /// Frames complete by the index but not counted in `frames`: a killed run's body rows whose
    /// chunk index the kill tore (docs/output-format.md); 0 in an intact file.
    uint64_t torn_frames = 0;
    std::string torn_column;  ///< the /bodies dataset found torn
    // of the first and last complete frames (meaningful if frames > 0)
    double first_time = 0.0, last_time = 0.0;
    uint64_t first_step = 0, last_step = 0;
    uint64_t bodies = 0;  ///< in the last frame
    /// bodies of each shape in the last frame ("sphere", "capsule", "ellipsoid", "clump"),
    /// only the shapes present; empty for files without /bodies/shape
    std::vector<std::pair<std::string, uint64_t>> shapes;
    uint64_t clump_templates = 0;
    /// Totals by the last frame over all emitters (or outlets); nothing without /flow.
    struct Flow {
        uint64_t bodies = 0;
        double mass = 0.0;         ///< [kg]
        std::size_t sources = 0;   ///< emitters or outlets
    };
    std::optional<Flow> emitted, removed;
    bool has_diagnostics = false;
    uint64_t steps = 0;              ///< complete entries of /diagnostics
    uint64_t converged_steps = 0;    ///< of those, with /diagnostics/converged set
    // the last step's (meaningful if steps > 0)
    uint64_t last_diagnostics_step = 0;
    double last_residual = 0.0;
    uint32_t last_iterations = 0;
    bool last_converged = false;
    std::optional<double> final_kinetic_energy;  ///< /diagnostics/kinetic_energy of the last step [J]
    std::optional<double> max_penetration;  ///< max of /diagnostics/contact_infeasibility [m]
    /// 2 × the smallest radius over the body rows of the complete frames and the spheres of
    /// the clump templates [m]; nothing without frames
    std::optional<double> smallest_diameter;
    std::optional<double> max_joint_infeasibility, last_joint_infeasibility;  ///< m or rad
    /// When each stage the diagnostics reach began (/diagnostics/stage, root stage_names):
    /// its name, the time it began [s] and its first step; empty for files written before.
    struct StageStart {
        std::string name;
        double time = 0.0;
        uint64_t step = 0;
    };
    std::vector<StageStart> stages;

    /// converged_steps / steps; nothing without steps
    std::optional<double> converged_share() const;
    /// max_penetration / smallest_diameter; nothing if either is missing or the diameter 0
    std::optional<double> max_penetration_share_of_smallest_diameter() const;
};

/// The file is a Talus checkpoint, not a trajectory (`talus info` says how to continue it).
class CheckpointNotTrajectory : public IoError {
public:
    CheckpointNotTrajectory(const std::string& message, std::filesystem::path trajectory)
        : IoError(message), trajectory_(std::move(trajectory)) {}
    /// the trajectory the checkpointed run writes to, as stored (may be empty)
    const std::filesystem::path& trajectory() const { return trajectory_; }

private:
    std::filesystem::path trajectory_;
};

/// Reads the summary. Works on a file still being written or left by a killed run (opens
/// read-only, in SWMR read mode if need be). Throws CheckpointNotTrajectory for a Talus
/// checkpoint, and IoError naming the path for a file that is missing, unreadable, not
/// HDF5 or not a Talus trajectory.
TrajectorySummary summarize_trajectory(const std::filesystem::path& path);

/// One complete frame's bodies as the file stores them (float32 reals widened exactly), for
/// a scene that starts from it ([start] from). Rows in file order.
struct FrameBodies {
    uint64_t frame = 0;  ///< its index among the complete frames
    double time = 0.0;   ///< [s]
    uint64_t step = 0;
    std::vector<uint64_t> id;
    std::vector<Vec3> position, velocity, angular_velocity;  ///< ω in the body frame
    std::vector<Quat> orientation;
    std::vector<double> radius;
    std::vector<uint32_t> material;  ///< into material_names
    std::vector<uint8_t> shape;      ///< 0 sphere (all 0 in files written before shapes)
    std::vector<std::string> material_names;
    std::string precision;           ///< "float64" or "float32"
};

/// read_frame_bodies was asked for a frame the file does not hold.
class FrameOutOfRange : public IoError {
public:
    using IoError::IoError;
};

/// Frame `frame` of the trajectory `path` (negative: from the end, −1 the last complete
/// one). Throws IoError naming the path for a missing or unreadable file, a checkpoint (by
/// CheckpointNotTrajectory), or a frame out of range (by FrameOutOfRange, saying how many
/// there are).
FrameBodies read_frame_bodies(const std::filesystem::path& path, int64_t frame);

/// The summary as text: one "key: value" line each, counts with their nouns in the right
/// number, reals rounded.
std::string describe_trajectory(const TrajectorySummary& s);
std::string describe_trajectory(const std::filesystem::path& path);

/// The summary as one JSON object (keys in docs/output-format.md, "talus info"); missing
/// values are null.
std::string trajectory_json(const TrajectorySummary& s);

}  // namespace talus
