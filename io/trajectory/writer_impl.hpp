#pragma once
/// The trajectory writer's inside (io/trajectory_writer.hpp is its face): the columns, the
/// packed frame, and TrajectoryWriter::Impl, whose members live in the files beside by what
/// they do: layout.cpp creates the file and its datasets, resume.cpp continues a file a
/// killed run left, frame_queue.cpp appends frames and runs the background writer;
/// writer.cpp is the public class. Internal to io/trajectory/.
#include "io/trajectory_writer.hpp"
#include <fcntl.h>
#include <fmt/format.h>
#include <hdf5.h>
#include <unistd.h>
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>
#include "core/body_store.hpp"
#include "core/materials.hpp"
#include "engine/world/diagnostics.hpp"
#include "io/hdf5_handles.hpp"
#include "io/wall_surface.hpp"
#include "io/xdmf.hpp"

namespace talus {
namespace trajectory {

static_assert(sizeof(Vec3) == 3 * sizeof(double), "Vec3 rows are written straight from memory");

using hdf5::Hid;
using hdf5::kUnwritten;
using hdf5::QuietHdf5;

inline constexpr hsize_t kBodyChunkRows = 8192;  ///< most rows per chunk of /bodies/* (~200 kB for N×3 f64)
inline constexpr hsize_t kMinChunkRows = 16;     ///< fewest: a chunk's index entry costs about a row
/// Smallest chunk a large frame is split into (body_chunk_rows): below it, chunk index
/// entries and per-chunk filter calls start to cost more than the rows they save.
inline constexpr hsize_t kMinSplitChunkRows = 256;

/// Rows per chunk of the row datasets for frames of `rows_per_frame` rows (0: unknown): the
/// frame itself up to kBodyChunkRows; above, the largest divisor of it from kMinSplitChunkRows up to
/// kBodyChunkRows, so that each frame ends on a chunk boundary; failing one (a prime count),
/// kBodyChunkRows (a frame's last chunk is then finished, and stored again, by the next).
inline hsize_t body_chunk_rows(std::size_t rows_per_frame) {
    const hsize_t n = rows_per_frame;
    if (n == 0) return kBodyChunkRows;
    if (n <= kBodyChunkRows) return std::max(n, kMinChunkRows);
    for (hsize_t c = kBodyChunkRows; c >= kMinSplitChunkRows; --c)
        if (n % c == 0) return c;
    return kBodyChunkRows;
}
inline constexpr hsize_t kIndexChunkRows = 1024; ///< rows per chunk of /frames/* and /diagnostics/*
inline constexpr std::size_t kSidecarAlwaysFrames = 200;  ///< up to this many frames, rewrite every frame
inline constexpr double kSidecarTimeShare = 0.02;         ///< beyond: wall-time budget for rewrites [-]
/// The file's space comes in pages of this many bytes (one process; layout.cpp, create_file).
inline constexpr hsize_t kFileSpacePage = 1024;
/// Frames the background writer may hold at once: the one it is writing and one waiting.
/// Each is a full copy of the frame's rows (~73 B per body in float32, ~130 B in float64),
/// so this bounds the output's memory; the step loop waits only when both are taken.
inline constexpr std::size_t kFrameBuffers = 2;
/// Frames of at least this many bodies do not keep their buffer between frames.
inline constexpr std::size_t kKeepBufferBodies = 100000;

using hdf5::hdf5_error_text;

/// One appendable dataset: its handle, row width and the memory type of what we write.
struct Column {
    Hid id;
    hsize_t width = 1;  ///< 1: shape (rows,) unless `matrix`; otherwise (rows, width)
    bool matrix = false;  ///< (rows, width) even when width is 1
    bool triple = false;  ///< (rows, width, 3): a 3-vector per column (per-wall forces)
    hid_t mem_type = H5I_INVALID_HID;
    std::string name;   ///< path in the file, for messages and reopening
    /// A file written in parallel: the rows the dataset has room for (its extent, grown by
    /// doubling, so that its metadata rarely changes). Unused otherwise (the extent is the
    /// rows written).
    hsize_t capacity = 0;
};

/// A frame's bodies other than spheres as ParaView glyphs (/shapes; io/trajectory/shapes.cpp):
/// rows of "ellipsoids" first (each sphere of a clump, the two end spheres of a capsule and
/// each ellipsoid, every one an ellipsoid whose three semi-axes are world vectors), then
/// `cylinders` rows (the middle of each capsule: the vectors its unit cylinder's x, y (the
/// axis) and z are mapped to, halved). Plain data like the rest of the frame.
struct ShapeGlyphs {
    std::vector<uint64_t> body;               ///< stable id of the body drawn
    std::vector<uint32_t> material;           ///< its material
    std::vector<Vec3> position;               ///< the glyph's centre, world frame [m]
    std::vector<std::array<double, 9>> axes;  ///< three vectors, x y z each [m]
    uint64_t cylinders = 0;                   ///< the last rows that are capsules' middles
    std::size_t size() const { return body.size(); }
    void clear() {
        body.clear();
        material.clear();
        position.clear();
        axes.clear();
        cylinders = 0;
    }
};

/// The glyphs of every capsule, ellipsoid and clump of `bodies` (spheres have none: the
/// bodies' own rows draw them), in row order (`order`, as rows_by_id) within each kind.
void shape_glyphs(const BodyStore& bodies, std::span<const uint32_t> order, ShapeGlyphs& out);

/// The order of a frame's rows: the bodies by ascending stable id, whatever order the store
/// holds them in (the step renumbers them in space, ranks hold them in parts), so that a
/// run's file has the same bytes however its bodies were held (docs/output-format.md).
inline std::vector<uint32_t> rows_by_id(const BodyStore& b) {
    std::vector<uint32_t> order(b.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = uint32_t(i);
    if (!std::is_sorted(b.id.begin(), b.id.end()))
        std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return b.id[x] < b.id[y]; });
    return order;
}

/// One frame as it goes to the file: every row already in its storage type and layout
/// (orientation reordered to w, x, y, z; reals rounded to float32 if asked), together with
/// the diagnostics buffered since the previous frame. Plain data, owned: once packed it no
/// longer refers to the engine's arrays.
struct FrameRows {
    bool frame = true;  ///< false: only the buffered diagnostics (TrajectoryWriter::sync)
    double time = 0.0;
    uint64_t step = 0;
    std::size_t n = 0;                       ///< bodies
    std::vector<StepDiagnostics> diagnostics;
    std::vector<uint64_t> id;
    /// Per-body reals, column after column: position 3n, orientation 4n, velocity 3n,
    /// angular velocity 3n, radius n. One of the two is used, per the file's precision.
    std::vector<double> real64;
    std::vector<float> real32;
    std::vector<uint32_t> material;
    std::vector<uint8_t> shape;
    std::vector<int32_t> clump;
    std::vector<FlowTally> emitted, removed;  ///< cumulative tallies per emitter / outlet
    std::vector<Vec3> wall_force, wall_torque;
    WallContactList contacts;
    ContactRecord record;  ///< the frame's /contacts rows (files with contacts)
    ShapeGlyphs glyphs;    ///< the frame's /shapes rows (files with shapes)
    std::vector<Vec3> wall_points;  ///< the walls' surface at the frame's pose (/walls/surface)
};

/// Offsets (in reals, for n bodies) of the columns of FrameRows::real64 / real32.
struct RealColumns {
    std::size_t position, orientation, velocity, angular_velocity, radius, total;
    explicit RealColumns(std::size_t n)
        : position(0), orientation(3 * n), velocity(7 * n), angular_velocity(10 * n),
          radius(13 * n), total(14 * n) {}
};

/// Copies the reals of `b` into `out` (layout RealColumns, rows in `order`), converting to T (for float:
/// round to nearest, as IEEE conversion does).
template <class T>
inline void pack_reals(const BodyStore& b, std::span<const uint32_t> order, std::vector<T>& out) {
    const std::size_t n = b.size();
    const RealColumns c(n);
    out.resize(c.total);
    T* p = out.data();
    for (std::size_t i = 0; i < n; ++i) {  // row i: body order[i]
        const std::size_t k = order[i];
        const Vec3 &x = b.position[k], &v = b.velocity[k], &w = b.angular_velocity[k];
        const Quat& q = b.orientation[k];
        for (int a = 0; a < 3; ++a) {
            p[c.position + 3 * i + a] = static_cast<T>(x[a]);
            p[c.velocity + 3 * i + a] = static_cast<T>(v[a]);
            p[c.angular_velocity + 3 * i + a] = static_cast<T>(w[a]);
        }
        p[c.orientation + 4 * i + 0] = static_cast<T>(q.w());
        p[c.orientation + 4 * i + 1] = static_cast<T>(q.x());
        p[c.orientation + 4 * i + 2] = static_cast<T>(q.y());
        p[c.orientation + 4 * i + 3] = static_cast<T>(q.z());
        p[c.radius + i] = static_cast<T>(b.radius[k]);
    }
}

}  // namespace trajectory

struct TrajectoryWriter::Impl {
    using Hid = hdf5::Hid;
    using Column = trajectory::Column;
    using FrameRows = trajectory::FrameRows;

    std::filesystem::path path;
    std::filesystem::path open_path;  ///< the file HDF5 has open: `path`, or a copy being made
    Hid file;
    bool closed = false;

    // Written from every rank at once (RunMetadata::parallel; parallel_io.cpp): the ranks,
    // and /frames/committed, the count of frames a reader may trust.
    Ranks* ranks = nullptr;
    bool parallel = false;
    Hid committed;
    /// Rank 0 writes what every rank holds alike; in a file of one writer, that one.
    bool writes_shared() const;

    // Background writing. The main thread packs each frame into a buffer and queues it;
    // the writer thread makes every HDF5 call from then on, in queue order, so the file is
    // written exactly as the synchronous writer would. Members below the mutex are shared.
    bool background = true;
    std::thread worker;
    std::mutex mutex;
    std::condition_variable wake_worker;  ///< a frame was queued, or stop
    std::condition_variable wake_main;    ///< a buffer came back, or the writer went idle
    std::deque<std::unique_ptr<FrameRows>> queue;  ///< packed frames, oldest first
    std::vector<std::unique_ptr<FrameRows>> spare; ///< buffers to reuse
    std::size_t buffers = 0;                       ///< allocated, ≤ kFrameBuffers
    bool busy = false;                             ///< the writer is writing a frame
    bool stopping = false;                         ///< close(): drain the queue and exit
    std::string error;                             ///< the writer's first failure, verbatim
    std::atomic<bool> failed{false};
    FrameRows sync_rows;                           ///< the buffer when not in background
    uint64_t frames_handed = 0, rows_handed = 0;   ///< what the main thread handed over
    uint64_t last_step = 0;                        ///< step of the last frame handed or kept
    double last_time = 0.0;                        ///< its time [s]
    double write_seconds = 0.0;  ///< wall time in write_rows (on the writer's thread) [s]

    // /bodies
    Column id, position, orientation, velocity, angular_velocity, radius, material, shape, clump;
    // /frames
    Column frame_time, frame_step, frame_first_row, frame_row_count;
    // /diagnostics
    // /flow: per frame, per emitter or outlet (present only when the scene has them)
    Column f_emitted_count, f_emitted_mass, f_emitted_total_count, f_emitted_total_mass;
    Column f_removed_count, f_removed_mass, f_removed_total_count, f_removed_total_mass;
    std::size_t n_emitters = 0, n_outlets = 0;
    std::vector<FlowTally> last_emitted, last_removed;  ///< totals at the previous frame
    // /diagnostics, per step (present only when the scene has walls, emitters, outlets):
    // each wall's mean force over the step, and the flow totals after it
    Column d_wall_force, d_emitted_total_count, d_emitted_total_mass, d_removed_total_count,
        d_removed_total_mass;
    // /walls: per frame, per wall, mean force and torque since the previous frame
    Column w_force, w_torque;
    std::size_t n_walls = 0;
    // /walls/contacts (optional): rows of body–wall contacts, indexed per frame
    bool wall_contacts = false;
    Column wc_wall, wc_body, wc_point, wc_impulse, wc_angular, wc_first_row, wc_row_count, wc_dt;
    uint64_t wc_rows = 0;
    // /contacts (optional): rows of every contact, indexed per frame
    bool all_contacts = false;
    Column c_wall, c_a, c_b, c_point, c_normal, c_gap, c_normal_impulse, c_tangential_impulse,
        c_segment, c_first_row, c_row_count, c_dt;
    uint64_t c_rows = 0;
    // /shapes (runs that start with capsules, ellipsoids or clumps): glyph rows per frame
    bool shapes = false;
    Column s_body, s_material, s_position, s_axes, s_first_row, s_row_count, s_cylinders;
    uint64_t s_rows = 0;
    // /walls/surface (scenes with walls): fixed triangles, points per frame
    WallSurface surface;
    Column ws_points;
    std::vector<float> wall_points32;  ///< the writer thread's scratch for a float32 file
    Column d_step, d_time, d_contacts, d_iterations, d_residual, d_kinetic, d_potential,
        d_wall, d_envelope, d_converged, d_joint_infeasibility, d_contact_infeasibility, d_dt,
        d_stage, d_set_aside, d_resolves;

    uint64_t rows = 0;        ///< rows in /bodies/*
    uint64_t diag_rows = 0;   ///< rows in /diagnostics/*
    std::vector<XdmfFrame> frames;
    std::vector<StepDiagnostics> pending;   ///< diagnostics buffered since the last frame
    std::vector<StepDiagnostics> to_write;  ///< diagnostics being appended to the file
    bool float32 = false;                   ///< per-body reals stored as float32
    hsize_t body_chunk_rows = trajectory::kBodyChunkRows;  ///< rows per chunk of the row datasets (define_columns)
    bool frozen = false;                    ///< a write failed: HDF5 writes nothing more
    std::size_t clump_templates = 0;       ///< templates in /clumps
    /// false while an appended file's columns are only described (its datasets exist):
    /// create_layout then creates no group, dataset or attribute.
    bool creating = true;
    bool copying = false;  ///< continue_by_copy is filling a new file: no sidecar yet
    /// What continue_by_copy could not read of a killed run's file (empty: nothing lost).
    std::string damage;
    /// The /diagnostics columns that a continued file lacks, having been written before
    /// they were added to the format (examine()): such a file is continued by copy, in
    /// which each of them gets the whole layout's column, reading `unrecorded` for the
    /// steps the old file kept.
    std::vector<const Column*> absent;

    std::chrono::steady_clock::time_point created = std::chrono::steady_clock::now();
    double sidecar_seconds = 0.0;          ///< wall time spent rewriting the sidecar [s]
    std::size_t sidecar_frames = 0;        ///< frames the sidecar on disk describes

    std::array<Column*, 9> body_columns() {
        return {&id, &position, &orientation, &velocity, &angular_velocity, &radius, &material,
                &shape, &clump};
    }
    std::array<Column*, 4> frame_columns() {
        return {&frame_time, &frame_step, &frame_first_row, &frame_row_count};
    }
    /// The /flow and /walls columns that exist in this file.
    std::vector<Column*> flow_columns() {
        std::vector<Column*> out;
        if (n_walls > 0) out.insert(out.end(), {&w_force, &w_torque});
        if (wall_contacts)
            for (const ColumnSpec& c : kWallContactColumns) out.push_back(&(this->*c.column));
        if (!surface.empty()) out.push_back(&ws_points);
        if (all_contacts)
            for (const ColumnSpec& c : kContactColumns) out.push_back(&(this->*c.column));
        if (shapes)
            for (const ColumnSpec& c : kShapeColumns) out.push_back(&(this->*c.column));
        if (n_emitters > 0)
            out.insert(out.end(), {&f_emitted_count, &f_emitted_mass, &f_emitted_total_count,
                                   &f_emitted_total_mass});
        if (n_outlets > 0)
            out.insert(out.end(), {&f_removed_count, &f_removed_mass, &f_removed_total_count,
                                   &f_removed_total_mass});
        return out;
    }
    /// The /diagnostics columns that exist in this file (one row per step).
    std::vector<Column*> diagnostic_columns() {
        std::vector<Column*> out = {&d_step, &d_time, &d_contacts, &d_iterations, &d_residual, &d_kinetic,
                                    &d_potential, &d_wall, &d_envelope, &d_converged, &d_joint_infeasibility,
                                    &d_contact_infeasibility, &d_dt, &d_stage, &d_set_aside, &d_resolves};
        if (n_walls > 0) out.push_back(&d_wall_force);
        if (n_emitters > 0) out.insert(out.end(), {&d_emitted_total_count, &d_emitted_total_mass});
        if (n_outlets > 0) out.insert(out.end(), {&d_removed_total_count, &d_removed_total_mass});
        return out;
    }

    [[noreturn]] void fail(const std::string& what) const {
        throw IoError(fmt::format("trajectory '{}': {}: {}", path.string(), what, trajectory::hdf5_error_text()));
    }
    template <class T>
    T check(T result, const std::string& what) const {
        if (result < 0) fail(what);
        return result;
    }

    void string_attribute(hid_t loc, const char* name, const std::string& value);

    void string_array_attribute(hid_t loc, const char* name, const std::vector<std::string>& values);

    void number_attribute(hid_t loc, const char* name, hid_t file_type, hid_t mem_type,
                          const void* data, hsize_t n, bool scalar);

    /// How a column's values are stored; Real: float64, or float32 when the run asks.
    enum class Stored : uint8_t { U8, U32, U64, I32, F64, Real };
    /// One column of fixed width as the file holds it (the tables in layout.cpp; the
    /// per-emitter, per-outlet and per-wall columns, whose width is the scene's, are made
    /// beside them). `per_row`: a row per body or per wall contact, chunked by
    /// kBodyChunkRows and compressed as the run asks; otherwise an entry per frame or per
    /// step, chunked by kIndexChunkRows, uncompressed. `marker`: the column whose entry,
    /// once written, makes its frame or step count for readers (filled with 2^64 − 1).
    struct ColumnSpec {
        Column Impl::*column;
        const char* path;
        Stored type;
        hsize_t width;
        bool per_row;
        const char* unit;
        const char* description;
        bool marker = false;
    };
    static const std::vector<ColumnSpec> kBodyColumns, kFrameColumns, kWallContactColumns, kContactColumns,
        kShapeColumns,
        kDiagnosticColumns;
    /// Bytes of one body row in the file before compression: the /bodies columns.
    static std::size_t body_row_bytes(OutputPrecision precision);
    /// Creates the columns of `specs` (create_column), `deflate` for the per-row ones.
    void create_columns(const std::vector<ColumnSpec>& specs, int deflate);

    /// Creates an empty, chunked, unlimited dataset with `unit` and `description` attributes.
    void create_column(Column& c, const std::string& name, hid_t file_type, hid_t mem_type,
                       hsize_t width, hsize_t chunk_rows, const char* unit,
                       const char* description, const uint64_t* fill = nullptr,
                       bool matrix = false, bool triple = false, int deflate = 0);

    /// Writes a fixed-size dataset (not appendable): rows × width values of `mem_type`.
    void write_fixed(const std::string& name, hid_t file_type, hid_t mem_type, hsize_t rows,
                     hsize_t width, const void* data, const char* unit, const char* description);

    /// /clumps: the clump templates, written once (they do not change during a run).
    void write_clumps(const ClumpTable* clumps);

    /// Creates every group, attribute and dataset (or, `creating` false, describes the
    /// columns of an appended file, whose datasets exist).
    void create_layout(const RunMetadata& meta, const MaterialTable& materials);

    void create_root(const RunMetadata& meta, const MaterialTable& materials);

    void define_columns(const RunMetadata& meta);

    void open_columns();

    /// Whether the link `name` exists in `f` (this writer's file `path`); IoError when a
    /// level of it does not read.
    bool exists(hid_t f, const char* name) const;

    /// The current dimensions of dataset `name`.
    std::vector<hsize_t> dims_of(hid_t f, const std::string& name) const;

    /// Rows [first, first + n) of dataset `name` (all of each row), read as `mem_type`.
    template <class T>
    std::vector<T> read_rows(hid_t f, const std::string& name, hid_t mem_type, hsize_t first,
                             hsize_t n) const {
        Hid ds(check(H5Dopen2(f, name.c_str(), H5P_DEFAULT), "open " + name), H5Dclose);
        return read_open_rows<T>(ds.get(), name, mem_type, first, n);
    }

    /// The same from an open dataset `ds` (named `name` in messages).
    template <class T>
    std::vector<T> read_open_rows(hid_t ds, const std::string& name, hid_t mem_type,
                                  hsize_t first, hsize_t n) const {
        Hid space(check(H5Dget_space(ds), "dataspace of " + name), H5Sclose);
        const int rank = check(H5Sget_simple_extent_ndims(space.get()), "dataspace of " + name);
        if (rank < 1 || rank > 3) fail("unexpected rank of " + name);
        hsize_t dims[3] = {0, 1, 1};
        check(H5Sget_simple_extent_dims(space.get(), dims, nullptr), "dataspace of " + name);
        const hsize_t start[3] = {first, 0, 0};
        const hsize_t count[3] = {n, dims[1], dims[2]};
        // T may hold several values (a Vec3 per row of an (R, 3) dataset)
        const std::size_t bytes = std::size_t(n * dims[1] * dims[2]) * H5Tget_size(mem_type);
        if (bytes % sizeof(T) != 0) fail("rows of " + name + " do not fill whole elements");
        std::vector<T> out(bytes / sizeof(T));
        if (n == 0) return out;
        check(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr),
              "select rows of " + name);
        Hid mem(check(H5Screate_simple(rank, count, nullptr), "dataspace"), H5Sclose);
        check(H5Dread(ds, mem_type, mem.get(), space.get(), H5P_DEFAULT, out.data()),
              "read " + name);
        return out;
    }

    /// read_rows into the column's own memory type.
    template <class T>
    std::vector<T> read_column(hid_t f, const Column& c, hsize_t first, hsize_t n) const {
        return read_rows<T>(f, c.name, c.mem_type, first, n);
    }

    /// A root attribute of variable-length strings (a scalar one gives one string).
    std::vector<std::string> read_strings(hid_t f, const char* name) const;

    /// Throws IoError unless `f` is a trajectory of the run `meta` describes: a file of
    /// another scene would mix two runs' frames.
    void check_same_run(hid_t f, const RunMetadata& meta) const;

    /// What of a file a resumed run keeps: its complete entries (as readers count them) up
    /// to `step`.
    struct Kept {
        hsize_t frames = 0;       ///< frames kept
        std::vector<double> time;
        std::vector<uint64_t> step, first_row, row_count;  ///< the whole index read (≥ frames)
        uint64_t rows = 0;        ///< /bodies rows of the frames kept
        uint64_t diag_rows = 0;   ///< /diagnostics entries kept
        uint64_t wc_rows = 0;     ///< /walls/contacts rows of the frames kept
        uint64_t c_rows = 0;      ///< /contacts rows of the frames kept
        /// per frame kept, its /contacts rows and step (files with contacts)
        std::vector<uint64_t> c_first_row, c_row_count;
        std::vector<double> c_dt;
        uint64_t s_rows = 0;      ///< /shapes rows of the frames kept
        std::vector<uint64_t> s_first_row, s_row_count, s_cylinders;  ///< per frame kept
    };

    /// Needs the columns described (define_columns: their names).
    Kept keep(hid_t f, uint64_t step);

    /// The /flow totals of frame `k` of `f` into `emitted`, `removed`.
    void read_tallies(hid_t f, hsize_t k, std::vector<FlowTally>& emitted,
                      std::vector<FlowTally>& removed) const;

    /// Takes up what `k` keeps as this writer's own past: frames, rows, /flow totals.
    void adopt(hid_t f, const Kept& k);

    /// The value a column that a continued file lacks (absent) holds for the steps that
    /// file kept: the largest value of an unsigned count, NaN for a real.
    template <class T>
    static T unrecorded() {
        if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::quiet_NaN();
        else if constexpr (std::is_integral_v<T>) return std::numeric_limits<T>::max();
        else if constexpr (requires { T::Constant(0.0); })
            return T::Constant(std::numeric_limits<double>::quiet_NaN());  // a Vec3
        else return T{};  // (the other row types: no /diagnostics column has them)
    }

    /// Reads what a resumed run keeps of `f` (open for reading), after checking that it is
    /// the run's file; nothing is written yet, so a refusal leaves the file as it was.
    Kept examine(hid_t f, const RunMetadata& meta, uint64_t step);

    /// A cleanly closed file (`file`, open read-write; `k` from examine()): cut in place
    /// what lies beyond the step. Shrinking a chunked dataset is allowed before SWMR mode
    /// starts; HDF5 refills the cut part of a partial chunk with the fill value, so a marker
    /// past the end reads "unwritten" again.
    void continue_in_place(const Kept& k);

    /// The length a per-frame or per-row /flow, /walls or /contacts column is cut to: the
    /// contact rows kept for a contact row column, else the frames kept.
    hsize_t kept_length(const Column* c, hsize_t frames) const;
    /// /walls/surface of `f` (its reference pose and triangles); empty without it.
    WallSurface read_wall_surface(hid_t f) const;

    /// A file a killed run left (`old`, open for SWMR reading): its "being written" mark
    /// forbids opening it read-write, and its on-disk metadata is a snapshot that HDF5 may
    /// not extend safely. So the frames and diagnostics kept are copied, in their storage
    /// types, into a new file created as the run created its own (PATH.resume.tmp), with the
    /// same calls a writer makes (so the copy holds the same values); that file then
    /// replaces PATH by rename, and the original stays whole until then.
    void continue_by_copy(hid_t old, const Kept& k, const RunMetadata& meta,
                          const MaterialTable& materials, const ClumpTable* clumps);

    /// Writes the kept frames of `old` through write_rows, each with the diagnostics of
    /// its steps; the diagnostics after the last frame (up to the checkpoint) last.
    void copy_frames(hid_t old, const Kept& k);

    /// Creates the HDF5 file at `at` in the latest format (which SWMR needs: superblock 3,
    /// new chunk indexes); `truncate`: over an existing one.
    void create_file(const std::filesystem::path& at, bool truncate);

    // A file written in parallel (parallel_io.cpp).
    /// The MPI-IO file access properties of the ranks' communicator.
    Hid parallel_access() const;
    /// Grows `c` (a collective: every rank, the same `rows`) to room for at least `rows`,
    /// doubling, so that a run of F frames changes the file's metadata about log2 F times.
    void make_room(Column& c, hsize_t rows);
    /// /frames/committed: created with the layout, and written (rank 0) after each frame is
    /// flushed: the frames readers may count, and 1 once the file is closed.
    void create_committed();
    void commit_frames(uint64_t count, bool closing = false);
    /// Writes rows [at, at + n) of `c` from `data` (the extent must hold them).
    void write_at(Column& c, hsize_t at, hsize_t n, const void* data);
    /// Appends rows split over the ranks: `total` rows after `old_rows`, of which this rank
    /// writes its `n` at `offset` (a collective).
    void append_part(Column& c, hsize_t old_rows, hsize_t total, hsize_t offset, hsize_t n,
                     const void* data);

    /// Flushes a closed or flushed file's data to the disk, so that a rename cannot outlive it.
    static void sync_file(const std::filesystem::path& p);

    /// Appends one /flow row per set: increases since the last frame and totals.
    void append_flow(hsize_t frame, const std::vector<FlowTally>& now, std::vector<FlowTally>& last,
                     Column& count, Column& mass, Column& total_count, Column& total_mass);

    /// Extends `c` from `old_rows` to `old_rows + n` rows and writes `data` into the new rows.
    void append(Column& c, hsize_t old_rows, hsize_t n, const void* data);

    void flush(Column& c) {
        if (!parallel) check(H5Dflush(c.id.get()), "flush " + c.name);  // SWMR's order; parallel: H5Fflush
    }

    /// What the sidecar shows besides the bodies.
    XdmfExtras sidecar_extras() const {
        XdmfExtras e;
        if (all_contacts) e.contact_rows = c_rows;
        if (shapes) e.shape_rows = s_rows;
        e.wall_points = surface.points.size();
        e.wall_real_bytes = float32 ? 4 : 8;
        e.wall_triangles = surface.triangles.size();
        return e;
    }

    /// Rewrites the sidecar if it is behind and (`always` or) within its time budget.
    void update_sidecar(bool always);

    /// Moves the buffered diagnostics into the file; /diagnostics/step goes last.
    void append_diagnostics();

    /// Checks the frame against the file and copies it into `out` (no HDF5 call).
    void pack(FrameRows& out, const BodyStore& bodies, double time, uint64_t step,
              const std::vector<FlowTally>& emitted, const std::vector<FlowTally>& removed,
              const WallLoads* loads, const WallContactList* contacts, const ContactRecord* record,
              const std::vector<Wall>* walls);

    /// After a failed write: HDF5 may not write to the file again. The file then stays as
    /// the last successful flush and the writes after it left it: the consistent SWMR state a
    /// killed run leaves, readable up to its last complete frame. Closing it normally instead
    /// would write metadata describing space that never reached the disk (a full disk leaves
    /// a superblock whose end-of-file lies beyond the file: "truncated file", unreadable).
    /// The file descriptor under HDF5 is replaced by a read-only one, so every later write
    /// fails and nothing on disk changes.
    void freeze();

    /// write_rows_unguarded, freezing the file if it fails.
    void write_rows(FrameRows& fr);

    /// Writes a packed frame: its diagnostics, then the body rows, then /flow and /walls,
    /// then the index entry with row_count last; flushes, and updates the sidecar.
    void write_rows_unguarded(FrameRows& fr);

    /// Re-raises, on the calling (main) thread, the writer thread's failure, word for word.
    void rethrow_if_failed();

    /// A buffer for the next frame: a spare one, a new one while fewer than kFrameBuffers
    /// exist, or else the first the writer gives back (the step loop waits only here).
    std::unique_ptr<FrameRows> take_buffer();

    void give_back(std::unique_ptr<FrameRows> b);

    /// The writer thread: writes queued frames in order until close() asks it to stop and
    /// the queue is empty. After a failure it writes nothing more (the file keeps its last
    /// complete frame) and only hands buffers back.
    void run_worker();

    /// Waits until every frame handed over is in the file (or the writer failed).
    void drain();

    /// Lets the writer finish the queue, then joins it.
    void stop_worker();

    void close_all();
};

}  // namespace talus
