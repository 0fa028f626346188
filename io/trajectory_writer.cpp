// TrajectoryWriter: one HDF5 file per run, appended frame after frame (docs/design.md §9).
//
// Why this shape:
// - Rows, not frames, are the unit of storage: every /bodies dataset holds one row per body
//   per frame, and the /frames index says which rows belong to which frame. A population
//   that changes (inflow, outflow) then needs nothing special, and a reader selects a frame
//   with one contiguous slice.
// - Every dataset is created in the constructor, chunked with an unlimited first dimension,
//   and the file is then switched to SWMR (single-writer/multiple-reader) mode. In that
//   mode HDF5 orders its metadata writes so the file on disk is always a consistent file:
//   a reader may open it during the run, and a run killed at any instant leaves a file
//   readable up to its last complete frame. SWMR forbids creating objects or attributes
//   afterwards, hence "create everything first; only extend".
// - Writes are ordered so that a reader never sees an index entry whose data is missing:
//   data datasets are written and flushed first, and the one dataset that marks an entry
//   complete (/frames/row_count, /diagnostics/step) is written and flushed last. Extending
//   a dataset and writing into it are two steps, so the marking datasets have an
//   "unwritten" fill value (2^64 - 1): readers count an entry only once its marker is set.
// - Diagnostics are buffered in memory and appended at each frame and at close, so the step
//   loop never calls HDF5.
// - Frames are written by a background thread (RunMetadata::background_writer). The step
//   loop only packs a frame: it copies the rows, already in their storage type and layout,
//   with the diagnostics buffered since the previous frame, into one of kFrameBuffers
//   buffers and queues it; the writer thread makes the HDF5 calls, in queue order, exactly
//   those the synchronous path makes, so the file is the same bit for bit and the crash-safety
//   order above holds unchanged. The loop waits only when every buffer is taken. The writer's
//   first failure stops it (the file keeps its last complete frame) and is raised again, word
//   for word, by the next write_frame, write_diagnostics, flush or close on the main thread.
// - The XDMF sidecar is rewritten whole (atomically) after each frame. Its size grows with the
//   frame count, so past kSidecarAlwaysFrames frames a rewrite is skipped while sidecar writing
//   has used more than kSidecarTimeShare of the wall time since the file was created; close()
//   always brings it up to date. A run with thousands of small frames then does not spend its
//   time rewriting XML, and the HDF5 file stays the authority on what was written.
// - A resumed run (io/checkpoint.hpp) continues its own file instead of starting another:
//   the append constructor cuts what lies beyond the checkpoint's step (frames a killed run
//   wrote after its last checkpoint; the resumed run writes them again), before SWMR mode
//   starts, since SWMR only lets datasets grow, and restores the counters a writer keeps
//   (rows, frames, the /flow totals of the last frame), so the file grows on as if the run
//   had never stopped.
// The HDF5 C API is used directly; every call is checked and a failure becomes an IoError
// naming the file and HDF5's innermost error description.
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
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "core/body_store.hpp"
#include "core/materials.hpp"
#include "engine/world/diagnostics.hpp"
#include "io/hdf5_handles.hpp"
#include "io/xdmf.hpp"

namespace talus {

namespace {

static_assert(sizeof(Vec3) == 3 * sizeof(double), "Vec3 rows are written straight from memory");

using hdf5::Hid;
using hdf5::kUnwritten;
using hdf5::QuietHdf5;

constexpr hsize_t kBodyChunkRows = 8192;  ///< rows per chunk of /bodies/* (~200 kB for N×3 f64)
constexpr hsize_t kIndexChunkRows = 1024; ///< rows per chunk of /frames/* and /diagnostics/*
constexpr std::size_t kSidecarAlwaysFrames = 200;  ///< up to this many frames, rewrite every frame
constexpr double kSidecarTimeShare = 0.02;         ///< beyond: wall-time budget for rewrites [-]
/// Frames the background writer may hold at once: the one it is writing and one waiting.
/// Each is a full copy of the frame's rows (~73 B per body in float32, ~130 B in float64),
/// so this bounds the output's memory; the step loop waits only when both are taken.
constexpr std::size_t kFrameBuffers = 2;
/// Frames of at least this many bodies do not keep their buffer between frames.
constexpr std::size_t kKeepBufferBodies = 100000;

/// HDF5's innermost (most specific) error description on the current stack, then clears it.
std::string hdf5_error_text() {
    std::string text;
    auto visit = [](unsigned n, const H5E_error2_t* e, void* out) -> herr_t {
        auto* s = static_cast<std::string*>(out);
        if (n == 0 && e->desc != nullptr) *s = e->desc;
        return 0;
    };
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, visit, &text);
    H5Eclear2(H5E_DEFAULT);
    return text.empty() ? std::string("unknown HDF5 error") : text;
}

/// One appendable dataset: its handle, row width and the memory type of what we write.
struct Column {
    Hid id;
    hsize_t width = 1;  ///< 1: shape (rows,) unless `matrix`; otherwise (rows, width)
    bool matrix = false;  ///< (rows, width) even when width is 1
    bool triple = false;  ///< (rows, width, 3): a 3-vector per column (per-wall forces)
    hid_t mem_type = H5I_INVALID_HID;
    std::string name;   ///< path in the file, for messages and reopening
};

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
};

/// Offsets (in reals, for n bodies) of the columns of FrameRows::real64 / real32.
struct RealColumns {
    std::size_t position, orientation, velocity, angular_velocity, radius, total;
    explicit RealColumns(std::size_t n)
        : position(0), orientation(3 * n), velocity(7 * n), angular_velocity(10 * n),
          radius(13 * n), total(14 * n) {}
};

/// Copies the reals of `b` into `out` (layout RealColumns), converting to T (for float:
/// round to nearest, as IEEE conversion does).
template <class T>
void pack_reals(const BodyStore& b, std::vector<T>& out) {
    const std::size_t n = b.size();
    const RealColumns c(n);
    out.resize(c.total);
    T* p = out.data();
    for (std::size_t i = 0; i < n; ++i) {
        const Vec3 &x = b.position[i], &v = b.velocity[i], &w = b.angular_velocity[i];
        const Quat& q = b.orientation[i];
        for (int a = 0; a < 3; ++a) {
            p[c.position + 3 * i + a] = static_cast<T>(x[a]);
            p[c.velocity + 3 * i + a] = static_cast<T>(v[a]);
            p[c.angular_velocity + 3 * i + a] = static_cast<T>(w[a]);
        }
        p[c.orientation + 4 * i + 0] = static_cast<T>(q.w());
        p[c.orientation + 4 * i + 1] = static_cast<T>(q.x());
        p[c.orientation + 4 * i + 2] = static_cast<T>(q.y());
        p[c.orientation + 4 * i + 3] = static_cast<T>(q.z());
        p[c.radius + i] = static_cast<T>(b.radius[i]);
    }
}

}  // namespace

struct TrajectoryWriter::Impl {
    std::filesystem::path path;
    std::filesystem::path open_path;  ///< the file HDF5 has open: `path`, or a copy being made
    Hid file;
    bool closed = false;

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
    // /walls: per frame, per wall, mean force and torque since the previous frame
    Column w_force, w_torque;
    std::size_t n_walls = 0;
    // /walls/contacts (optional): rows of body–wall contacts, indexed per frame
    bool wall_contacts = false;
    Column wc_wall, wc_body, wc_point, wc_impulse, wc_angular, wc_first_row, wc_row_count, wc_dt;
    uint64_t wc_rows = 0;
    Column d_step, d_time, d_contacts, d_iterations, d_residual, d_kinetic, d_potential,
        d_wall, d_envelope, d_converged, d_joint_infeasibility, d_contact_infeasibility, d_dt;

    uint64_t rows = 0;        ///< rows in /bodies/*
    uint64_t diag_rows = 0;   ///< rows in /diagnostics/*
    std::vector<XdmfFrame> frames;
    std::vector<StepDiagnostics> pending;   ///< diagnostics buffered since the last frame
    std::vector<StepDiagnostics> to_write;  ///< diagnostics being appended to the file
    bool float32 = false;                   ///< per-body reals stored as float32
    bool frozen = false;                    ///< a write failed: HDF5 writes nothing more
    std::size_t clump_templates = 0;       ///< templates in /clumps
    /// false while an appended file's columns are only described (its datasets exist):
    /// create_layout then creates no group, dataset or attribute.
    bool creating = true;
    bool copying = false;  ///< continue_by_copy is filling a new file: no sidecar yet

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
            out.insert(out.end(), {&wc_wall, &wc_body, &wc_point, &wc_impulse, &wc_angular,
                                   &wc_first_row, &wc_row_count, &wc_dt});
        if (n_emitters > 0)
            out.insert(out.end(), {&f_emitted_count, &f_emitted_mass, &f_emitted_total_count,
                                   &f_emitted_total_mass});
        if (n_outlets > 0)
            out.insert(out.end(), {&f_removed_count, &f_removed_mass, &f_removed_total_count,
                                   &f_removed_total_mass});
        return out;
    }
    std::array<Column*, 13> diagnostic_columns() {
        return {&d_step, &d_time, &d_contacts, &d_iterations, &d_residual, &d_kinetic,
                &d_potential, &d_wall, &d_envelope, &d_converged, &d_joint_infeasibility,
                &d_contact_infeasibility, &d_dt};
    }

    [[noreturn]] void fail(const std::string& what) const {
        throw IoError(fmt::format("trajectory '{}': {}: {}", path.string(), what, hdf5_error_text()));
    }
    template <class T>
    T check(T result, const std::string& what) const {
        if (result < 0) fail(what);
        return result;
    }

    // ---- creation (before SWMR) ---------------------------------------------------------

    void string_attribute(hid_t loc, const char* name, const std::string& value) {
        Hid type(check(H5Tcopy(H5T_C_S1), "string type"), H5Tclose);
        check(H5Tset_size(type.get(), H5T_VARIABLE), "string type");
        check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "string type");
        Hid space(check(H5Screate(H5S_SCALAR), "dataspace"), H5Sclose);
        Hid attr(check(H5Acreate2(loc, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                       fmt::format("create attribute '{}'", name)),
                 H5Aclose);
        const char* data = value.c_str();
        check(H5Awrite(attr.get(), type.get(), &data), fmt::format("write attribute '{}'", name));
    }

    void string_array_attribute(hid_t loc, const char* name, const std::vector<std::string>& values) {
        Hid type(check(H5Tcopy(H5T_C_S1), "string type"), H5Tclose);
        check(H5Tset_size(type.get(), H5T_VARIABLE), "string type");
        check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "string type");
        const hsize_t n = values.size();
        Hid space(check(H5Screate_simple(1, &n, nullptr), "dataspace"), H5Sclose);
        Hid attr(check(H5Acreate2(loc, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                       fmt::format("create attribute '{}'", name)),
                 H5Aclose);
        std::vector<const char*> data;
        for (const std::string& v : values) data.push_back(v.c_str());
        if (n > 0)
            check(H5Awrite(attr.get(), type.get(), data.data()), fmt::format("write attribute '{}'", name));
    }

    void number_attribute(hid_t loc, const char* name, hid_t file_type, hid_t mem_type,
                          const void* data, hsize_t n, bool scalar) {
        Hid space(check(scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr), "dataspace"),
                  H5Sclose);
        Hid attr(check(H5Acreate2(loc, name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                       fmt::format("create attribute '{}'", name)),
                 H5Aclose);
        if (scalar || n > 0)
            check(H5Awrite(attr.get(), mem_type, data), fmt::format("write attribute '{}'", name));
    }

    /// Creates an empty, chunked, unlimited dataset with `unit` and `description` attributes.
    void create_column(Column& c, const std::string& name, hid_t file_type, hid_t mem_type,
                       hsize_t width, hsize_t chunk_rows, const char* unit,
                       const char* description, const uint64_t* fill = nullptr,
                       bool matrix = false, bool triple = false, int deflate = 0) {
        c.name = name;
        c.width = width;
        c.matrix = matrix;
        c.triple = triple;
        c.mem_type = mem_type;
        if (!creating) return;  // an appended file: the dataset is there
        const int rank = triple ? 3 : width == 1 && !matrix ? 1 : 2;
        const hsize_t dims[3] = {0, width, 3};
        const hsize_t max_dims[3] = {H5S_UNLIMITED, width, 3};
        const hsize_t chunk[3] = {chunk_rows, width, 3};
        Hid space(check(H5Screate_simple(rank, dims, max_dims), "dataspace"), H5Sclose);
        Hid dcpl(check(H5Pcreate(H5P_DATASET_CREATE), "property list"), H5Pclose);
        check(H5Pset_chunk(dcpl.get(), rank, chunk), "chunking of " + name);
        if (fill != nullptr) check(H5Pset_fill_value(dcpl.get(), H5T_NATIVE_UINT64, fill), "fill value");
        if (deflate > 0) {
            // Shuffle groups the bytes of equal significance of neighbouring values (signs
            // and exponents of nearby positions agree), which is what lets deflate find runs.
            check(H5Pset_shuffle(dcpl.get()), "shuffle filter of " + name);
            check(H5Pset_deflate(dcpl.get(), unsigned(deflate)), "deflate filter of " + name);
        }
        Hid ds(check(H5Dcreate2(file.get(), name.c_str(), file_type, space.get(), H5P_DEFAULT,
                                dcpl.get(), H5P_DEFAULT),
                     "create dataset " + name),
               H5Dclose);
        string_attribute(ds.get(), "unit", unit);
        string_attribute(ds.get(), "description", description);
    }

    /// Writes a fixed-size dataset (not appendable): rows × width values of `mem_type`.
    void write_fixed(const std::string& name, hid_t file_type, hid_t mem_type, hsize_t rows,
                     hsize_t width, const void* data, const char* unit, const char* description) {
        const int rank = width == 1 ? 1 : 2;
        const hsize_t dims[2] = {rows, width};
        Hid space(check(H5Screate_simple(rank, dims, nullptr), "dataspace"), H5Sclose);
        Hid ds(check(H5Dcreate2(file.get(), name.c_str(), file_type, space.get(), H5P_DEFAULT,
                                H5P_DEFAULT, H5P_DEFAULT),
                     "create dataset " + name),
               H5Dclose);
        if (rows > 0)
            check(H5Dwrite(ds.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), "write " + name);
        string_attribute(ds.get(), "unit", unit);
        string_attribute(ds.get(), "description", description);
    }

    /// /clumps: the clump templates, written once (they do not change during a run).
    void write_clumps(const ClumpTable* clumps) {
        Hid group(check(H5Gcreate2(file.get(), "/clumps", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                        "create group /clumps"),
                  H5Gclose);
        const ClumpTable empty;
        const ClumpTable& t = clumps ? *clumps : empty;
        clump_templates = t.size();
        std::vector<double> spheres(4 * t.centre.size());
        for (std::size_t k = 0; k < t.centre.size(); ++k) {
            for (int a = 0; a < 3; ++a) spheres[4 * k + a] = t.centre[k][a];
            spheres[4 * k + 3] = t.radius[k];
        }
        write_fixed("/clumps/first", H5T_STD_U32LE, H5T_NATIVE_UINT32, t.first.size(), 1,
                    t.first.data(), "1",
                    "template t has the rows [first[t], first[t+1]) of /clumps/spheres");
        write_fixed("/clumps/spheres", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, t.centre.size(), 4,
                    spheres.data(), "m",
                    "sphere centre in the body frame (x, y, z) and radius r; world centre = "
                    "position + R(orientation) * (x, y, z)");
    }

    /// Creates every group, attribute and dataset (or, `creating` false, describes the
    /// columns of an appended file, whose datasets exist).
    void create_layout(const RunMetadata& meta, const MaterialTable& materials) {
        if (creating) create_root(meta, materials);
        define_columns(meta);
    }

    void create_root(const RunMetadata& meta, const MaterialTable& materials) {
        const hid_t root = file.get();
        string_attribute(root, "format", "talus-trajectory");
        const int32_t version = 1;
        number_attribute(root, "format_version", H5T_STD_I32LE, H5T_NATIVE_INT32, &version, 1, true);
        string_attribute(root, "talus_version", meta.talus_version);
        string_attribute(root, "units", "SI");
        string_attribute(root, "quaternion_convention",
                         "Hamilton, scalar first (w, x, y, z), body to world");
        string_attribute(root, "scene", meta.scene_text);
        string_attribute(root, "scene_path", meta.scene_path);
        string_array_attribute(root, "overrides", meta.overrides);
        std::vector<std::string> names;
        std::vector<double> density, friction;
        for (const Material& m : materials.materials) {
            names.push_back(m.name);
            density.push_back(m.density);
            friction.push_back(m.friction);
        }
        string_array_attribute(root, "material_names", names);
        number_attribute(root, "material_density", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                         density.data(), density.size(), false);
        number_attribute(root, "material_friction", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                         friction.data(), friction.size(), false);

        for (const char* g : {"/bodies", "/frames", "/diagnostics", "/flow", "/walls"}) {
            Hid group(check(H5Gcreate2(root, g, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                            fmt::format("create group {}", g)),
                      H5Gclose);
        }
    }

    void define_columns(const RunMetadata& meta) {
        const hid_t root = file.get();
        const hid_t f64 = H5T_IEEE_F64LE, u64 = H5T_STD_U64LE, u32 = H5T_STD_U32LE, u8 = H5T_STD_U8LE;
        const hid_t nf64 = H5T_NATIVE_DOUBLE, nu64 = H5T_NATIVE_UINT64, nu32 = H5T_NATIVE_UINT32,
                    nu8 = H5T_NATIVE_UINT8;
        const hsize_t b = kBodyChunkRows, k = kIndexChunkRows;
        // Row datasets (one row per body or contact per frame) are the bulk of the file:
        // they take the compression; per-body reals take the chosen precision.
        const int z = meta.compression;
        float32 = meta.precision == OutputPrecision::Float32;
        const hid_t real = float32 ? H5T_IEEE_F32LE : f64;
        const hid_t nreal = float32 ? H5T_NATIVE_FLOAT : nf64;
        // (body_row_bytes below counts these columns: keep the two together)
        create_column(id, "/bodies/id", u64, nu64, 1, b, "1", "stable body id", nullptr, false,
                      false, z);
        create_column(position, "/bodies/position", real, nreal, 3, b, "m",
                      "centre of mass, world frame (x, y, z)", nullptr, false, false, z);
        create_column(orientation, "/bodies/orientation", real, nreal, 4, b, "1",
                      "unit quaternion, Hamilton, body to world, scalar first (w, x, y, z)",
                      nullptr, false, false, z);
        create_column(velocity, "/bodies/velocity", real, nreal, 3, b, "m/s",
                      "linear velocity of the centre of mass, world frame", nullptr, false, false, z);
        create_column(angular_velocity, "/bodies/angular_velocity", real, nreal, 3, b, "rad/s",
                      "angular velocity in the BODY frame; world frame = R(q) * this", nullptr,
                      false, false, z);
        create_column(radius, "/bodies/radius", real, nreal, 1, b, "m",
                      "sphere radius; other shapes: bounding radius about the centre of mass",
                      nullptr, false, false, z);
        create_column(material, "/bodies/material", u32, nu32, 1, b, "1",
                      "index into the root attribute material_names", nullptr, false, false, z);
        create_column(shape, "/bodies/shape", u8, nu8, 1, b, "1",
                      "0 sphere, 1 capsule, 2 ellipsoid, 3 clump", nullptr, false, false, z);
        create_column(clump, "/bodies/clump", H5T_STD_I32LE, H5T_NATIVE_INT32, 1, b, "1",
                      "clump template (index into /clumps/first), -1 for other shapes", nullptr,
                      false, false, z);

        create_column(frame_time, "/frames/time", f64, nf64, 1, k, "s", "simulated time of the frame");
        create_column(frame_step, "/frames/step", u64, nu64, 1, k, "1", "step count at the frame");
        create_column(frame_first_row, "/frames/first_row", u64, nu64, 1, k, "1",
                      "first row of the frame in /bodies/*");
        create_column(frame_row_count, "/frames/row_count", u64, nu64, 1, k, "1",
                      "bodies in the frame; 2^64-1 = entry not yet written", &kUnwritten);

        n_emitters = meta.emitters;
        n_outlets = meta.outlets;
        last_emitted.assign(n_emitters, FlowTally{});
        last_removed.assign(n_outlets, FlowTally{});
        const auto flow_set = [&](const char* what, hsize_t n, Column& count, Column& mass,
                                  Column& total_count, Column& total_mass) {
            if (n == 0) return;
            const std::string base = fmt::format("/flow/{}_", what);
            const std::string since = fmt::format("bodies {} since the previous frame, per {}", what,
                                                  what[0] == 'e' ? "emitter" : "outlet");
            const std::string since_mass = fmt::format("mass {} since the previous frame, per {}", what,
                                                       what[0] == 'e' ? "emitter" : "outlet");
            const std::string total = fmt::format("bodies {} since the start of the run, per {}",
                                                  what, what[0] == 'e' ? "emitter" : "outlet");
            const std::string total_mass_text = fmt::format(
                "mass {} since the start of the run, per {}", what, what[0] == 'e' ? "emitter" : "outlet");
            create_column(count, base + "count", u64, nu64, n, k, "1", since.c_str(), nullptr, true);
            create_column(mass, base + "mass", f64, nf64, n, k, "kg", since_mass.c_str(), nullptr, true);
            create_column(total_count, base + "total_count", u64, nu64, n, k, "1", total.c_str(),
                          nullptr, true);
            create_column(total_mass, base + "total_mass", f64, nf64, n, k, "kg",
                          total_mass_text.c_str(), nullptr, true);
        };
        n_walls = meta.wall_names.size();
        if (n_walls > 0) {
            if (creating) {
                Hid group(check(H5Gopen2(root, "/walls", H5P_DEFAULT), "open group /walls"), H5Gclose);
                string_array_attribute(group.get(), "names", meta.wall_names);
                std::vector<double> ref;
                for (const Vec3& p : meta.wall_reference_points)
                    ref.insert(ref.end(), {p.x(), p.y(), p.z()});
                number_attribute(group.get(), "torque_reference_points", H5T_IEEE_F64LE,
                                 H5T_NATIVE_DOUBLE, ref.data(), ref.size(), false);
            }
            create_column(w_force, "/walls/force", f64, nf64, n_walls, k, "N",
                          "mean force the bodies exert on each wall over the interval since the "
                          "previous frame (world frame; 0 in the first frame)",
                          nullptr, true, true);
            create_column(w_torque, "/walls/torque", f64, nf64, n_walls, k, "N m",
                          "mean torque on each wall about its torque reference point (attribute "
                          "torque_reference_points of /walls) over the same interval",
                          nullptr, true, true);
            wall_contacts = meta.wall_contacts;
        }
        if (wall_contacts && creating) {
            Hid group(check(H5Gcreate2(root, "/walls/contacts", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                            "create group /walls/contacts"),
                      H5Gclose);
            number_attribute(group.get(), "dt", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &meta.dt, 1, true);
        }
        if (wall_contacts) {
            create_column(wc_wall, "/walls/contacts/wall", u32, nu32, 1, b, "1",
                          "wall of the contact (index into the names attribute of /walls)", nullptr, false, false, z);
            create_column(wc_body, "/walls/contacts/body", u64, nu64, 1, b, "1",
                          "stable id of the body in contact", nullptr, false, false, z);
            create_column(wc_point, "/walls/contacts/point", f64, nf64, 3, b, "m",
                          "contact point at the start of the step, world frame", nullptr, false, false, z);
            create_column(wc_impulse, "/walls/contacts/impulse", f64, nf64, 3, b, "N s",
                          "impulse the body gave the wall over the frame's last step (world "
                          "frame, nullptr, false, false, z); divide by the step (attribute dt of /walls/contacts) for a force");
            create_column(wc_angular, "/walls/contacts/angular_impulse", f64, nf64, 3, b, "N m s",
                          "torque impulse on the wall from rolling and spinning resistance over "
                          "the same step (a couple; 0 without them)", nullptr, false, false, z);
            create_column(wc_first_row, "/walls/contacts/first_row", u64, nu64, 1, k, "1",
                          "per frame: first row of the frame's contacts in /walls/contacts/*");
            create_column(wc_row_count, "/walls/contacts/row_count", u64, nu64, 1, k, "1",
                          "per frame: number of the frame's contacts");
            create_column(wc_dt, "/walls/contacts/dt", f64, nf64, 1, k, "s",
                          "per frame: the step the frame's impulses cover (its last step)");
        }
        flow_set("emitted", n_emitters, f_emitted_count, f_emitted_mass, f_emitted_total_count,
                 f_emitted_total_mass);
        flow_set("removed", n_outlets, f_removed_count, f_removed_mass, f_removed_total_count,
                 f_removed_total_mass);

        create_column(d_step, "/diagnostics/step", u64, nu64, 1, k, "1",
                      "step number after the step; 2^64-1 = entry not yet written", &kUnwritten);
        create_column(d_time, "/diagnostics/time", f64, nf64, 1, k, "s", "simulated time after the step");
        create_column(d_contacts, "/diagnostics/contacts", u32, nu32, 1, k, "1", "contacts in the solve");
        create_column(d_iterations, "/diagnostics/iterations", u32, nu32, 1, k, "1", "solver iterations");
        create_column(d_residual, "/diagnostics/residual", f64, nf64, 1, k, "m/s",
                      "solver residual at exit (docs/design.md section 6)");
        create_column(d_kinetic, "/diagnostics/kinetic_energy", f64, nf64, 1, k, "J",
                      "translational plus rotational kinetic energy after the step");
        create_column(d_potential, "/diagnostics/potential_energy", f64, nf64, 1, k, "J",
                      "gravitational potential energy -m g.x after the step");
        create_column(d_wall, "/diagnostics/solver_wall_time", f64, nf64, 1, k, "s",
                      "wall-clock time spent in the solve stage");
        create_column(d_envelope, "/diagnostics/envelope", f64, nf64, 1, k, "m",
                      "collision envelope used this step");
        create_column(d_converged, "/diagnostics/converged", u8, nu8, 1, k, "1",
                      "1 if the residual reached the tolerance before the iteration cap");
        create_column(d_joint_infeasibility, "/diagnostics/joint_infeasibility", f64, nf64, 1, k,
                      "m or rad",
                      "joint infeasibility max |g_j| after the step (Anitescu 2003 eq. 3.15); "
                      "0 without joints");
        create_column(d_contact_infeasibility, "/diagnostics/contact_infeasibility", f64, nf64, 1,
                      k, "m",
                      "largest penetration among the step's contacts, at the start of the step "
                      "(Anitescu 2003 eq. 3.15, contact part); 0 without penetration");
        create_column(d_dt, "/diagnostics/dt", f64, nf64, 1, k, "s",
                      "the step just taken (fixed, or chosen by the adaptive step)");
    }

    void open_columns() {
        // Each column is appended to, never read back, so its chunk cache needs the chunk
        // being filled and little more. HDF5's default (1 MiB per dataset) kept up to that
        // much of already written chunks per column: a 400-bead soak grew by 11 MiB over
        // 10^5 steps as the caches of the smaller columns slowly filled
        // (benchmarks/soak.py). Two chunks per column bound it from the first frames on.
        auto open = [&](Column& c) {
            std::size_t chunk_bytes = 0;
            {
                Hid ds(check(H5Dopen2(file.get(), c.name.c_str(), H5P_DEFAULT), "open " + c.name),
                       H5Dclose);
                Hid dcpl(check(H5Dget_create_plist(ds.get()), "properties of " + c.name), H5Pclose);
                Hid type(check(H5Dget_type(ds.get()), "type of " + c.name), H5Tclose);
                hsize_t dims[3] = {1, 1, 1};
                const int rank = check(H5Pget_chunk(dcpl.get(), 3, dims), "chunking of " + c.name);
                chunk_bytes = H5Tget_size(type.get());
                for (int k = 0; k < rank; ++k) chunk_bytes *= std::size_t(dims[k]);
            }
            Hid dapl(check(H5Pcreate(H5P_DATASET_ACCESS), "property list"), H5Pclose);
            check(H5Pset_chunk_cache(dapl.get(), 13, 2 * chunk_bytes, 1.0), "chunk cache of " + c.name);
            c.id = Hid(check(H5Dopen2(file.get(), c.name.c_str(), dapl.get()), "open " + c.name),
                       H5Dclose);
        };
        for (Column* c : body_columns()) open(*c);
        for (Column* c : frame_columns()) open(*c);
        for (Column* c : diagnostic_columns()) open(*c);
        for (Column* c : flow_columns()) open(*c);
    }

    // ---- continuing an existing file (a resumed run) -----------------------------------
    // The helpers take the file: the one continued in place, or the one copied from.

    static bool exists(hid_t f, const char* name) {
        // H5Lexists fails (< 0) when a parent group is missing: that is "no" too
        std::string prefix;
        for (std::string_view rest = name; !rest.empty();) {
            const std::size_t slash = rest.find('/', 1);
            prefix += rest.substr(0, slash);
            if (H5Lexists(f, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
            rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
        }
        return true;
    }

    /// The current dimensions of dataset `name`.
    std::vector<hsize_t> dims_of(hid_t f, const std::string& name) const {
        Hid ds(check(H5Dopen2(f, name.c_str(), H5P_DEFAULT), "open " + name), H5Dclose);
        Hid space(check(H5Dget_space(ds.get()), "dataspace of " + name), H5Sclose);
        const int rank = check(H5Sget_simple_extent_ndims(space.get()), "dataspace of " + name);
        std::vector<hsize_t> d(std::size_t(std::max(rank, 1)), 0);
        check(H5Sget_simple_extent_dims(space.get(), d.data(), nullptr), "dataspace of " + name);
        return d;
    }

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
    std::vector<std::string> read_strings(hid_t f, const char* name) const {
        if (H5Aexists(f, name) <= 0) return {};
        Hid attr(check(H5Aopen(f, name, H5P_DEFAULT), fmt::format("attribute '{}'", name)), H5Aclose);
        Hid stored(check(H5Aget_type(attr.get()), "type"), H5Tclose);
        if (H5Tget_class(stored.get()) != H5T_STRING || H5Tis_variable_str(stored.get()) <= 0)
            return {};
        Hid space(check(H5Aget_space(attr.get()), "dataspace"), H5Sclose);
        const hssize_t n = check(H5Sget_simple_extent_npoints(space.get()), "dataspace");
        Hid type(check(H5Tcopy(H5T_C_S1), "string type"), H5Tclose);
        check(H5Tset_size(type.get(), H5T_VARIABLE), "string type");
        check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "string type");
        std::vector<char*> data(std::size_t(n), nullptr);
        if (n > 0)
            check(H5Aread(attr.get(), type.get(), data.data()), fmt::format("read attribute '{}'", name));
        std::vector<std::string> out;
        for (char* p : data) {
            out.emplace_back(p != nullptr ? p : "");
            H5free_memory(p);
        }
        return out;
    }

    /// Throws IoError unless `f` is a trajectory of the run `meta` describes: a file of
    /// another scene would mix two runs' frames.
    void check_same_run(hid_t f, const RunMetadata& meta) const {
        if (read_strings(f, "format") != std::vector<std::string>{"talus-trajectory"})
            throw IoError(fmt::format("cannot continue '{}': not a Talus trajectory", path.string()));
        if (read_strings(f, "scene") != std::vector<std::string>{meta.scene_text} ||
            read_strings(f, "overrides") != meta.overrides)
            throw IoError(fmt::format(
                "cannot continue '{}': it is the trajectory of another scene (or other --set "
                "overrides) than the checkpoint's; give the run's own trajectory with -o",
                path.string()));
        const auto width = [&](const char* name) -> std::size_t {
            if (!exists(f, name)) return 0;
            const std::vector<hsize_t> d = dims_of(f, name);
            return d.size() >= 2 ? std::size_t(d[1]) : 0;
        };
        const std::size_t emitters = width("/flow/emitted_count"),
                          outlets = width("/flow/removed_count"), walls = width("/walls/force");
        const bool contacts = exists(f, "/walls/contacts");
        const bool want_contacts = meta.wall_contacts && !meta.wall_names.empty();
        bool stored32 = false;
        {
            Hid ds(check(H5Dopen2(f, "/bodies/position", H5P_DEFAULT), "open /bodies/position"),
                   H5Dclose);
            Hid type(check(H5Dget_type(ds.get()), "type of /bodies/position"), H5Tclose);
            stored32 = H5Tget_size(type.get()) == sizeof(float);
        }
        if (emitters != meta.emitters || outlets != meta.outlets ||
            walls != meta.wall_names.size() || contacts != want_contacts ||
            stored32 != (meta.precision == OutputPrecision::Float32))
            throw IoError(fmt::format(
                "cannot continue '{}': it has {} emitters, {} outlets, {} walls{}, {} rows; "
                "the checkpoint's run {}, {}, {}{}, {}",
                path.string(), emitters, outlets, walls, contacts ? " with contacts" : "",
                name_of(stored32 ? OutputPrecision::Float32 : OutputPrecision::Float64), meta.emitters,
                meta.outlets, meta.wall_names.size(), want_contacts ? " with contacts" : "",
                name_of(meta.precision)));
    }

    /// What of a file a resumed run keeps: its complete entries (as readers count them) up
    /// to `step`.
    struct Kept {
        hsize_t frames = 0;       ///< frames kept
        std::vector<double> time;
        std::vector<uint64_t> step, first_row, row_count;  ///< the whole index read (≥ frames)
        uint64_t rows = 0;        ///< /bodies rows of the frames kept
        uint64_t diag_rows = 0;   ///< /diagnostics entries kept
        uint64_t wc_rows = 0;     ///< /walls/contacts rows of the frames kept
    };

    /// Needs the columns described (define_columns: their names).
    Kept keep(hid_t f, uint64_t step) {
        Kept k;
        hsize_t index_rows = std::numeric_limits<hsize_t>::max(), body_rows = index_rows,
                diag_len = index_rows;
        for (Column* c : frame_columns()) index_rows = std::min(index_rows, dims_of(f, c->name)[0]);
        for (Column* c : body_columns()) body_rows = std::min(body_rows, dims_of(f, c->name)[0]);
        for (Column* c : diagnostic_columns()) diag_len = std::min(diag_len, dims_of(f, c->name)[0]);
        k.time = read_column<double>(f, frame_time, 0, index_rows);
        k.step = read_column<uint64_t>(f, frame_step, 0, index_rows);
        k.first_row = read_column<uint64_t>(f, frame_first_row, 0, index_rows);
        k.row_count = read_column<uint64_t>(f, frame_row_count, 0, index_rows);
        while (k.frames < index_rows && k.row_count[k.frames] != kUnwritten &&
               k.first_row[k.frames] <= body_rows &&
               k.row_count[k.frames] <= body_rows - k.first_row[k.frames] && k.step[k.frames] <= step)
            ++k.frames;
        if (k.frames == 0)
            throw IoError(fmt::format("cannot continue '{}': it holds no complete frame up to "
                                      "step {}", path.string(), step));
        const hsize_t last = k.frames - 1;
        k.rows = k.first_row[last] + k.row_count[last];
        if (wall_contacts)
            k.wc_rows = read_column<uint64_t>(f, wc_first_row, last, 1)[0] +
                        read_column<uint64_t>(f, wc_row_count, last, 1)[0];
        const auto diag_step = read_column<uint64_t>(f, d_step, 0, diag_len);
        while (k.diag_rows < diag_len && diag_step[k.diag_rows] != kUnwritten &&
               diag_step[k.diag_rows] <= step)
            ++k.diag_rows;
        return k;
    }

    /// The /flow totals of frame `k` of `f` into `emitted`, `removed`.
    void read_tallies(hid_t f, hsize_t k, std::vector<FlowTally>& emitted,
                      std::vector<FlowTally>& removed) const {
        const auto tally = [&](const Column& total_count, const Column& total_mass,
                               std::vector<FlowTally>& out, std::size_t n) {
            out.assign(n, FlowTally{});
            if (n == 0) return;
            const auto c = read_column<uint64_t>(f, total_count, k, 1);
            const auto m = read_column<double>(f, total_mass, k, 1);
            for (std::size_t j = 0; j < n; ++j) out[j] = FlowTally{c[j], m[j]};
        };
        tally(f_emitted_total_count, f_emitted_total_mass, emitted, n_emitters);
        tally(f_removed_total_count, f_removed_total_mass, removed, n_outlets);
    }

    /// Takes up what `k` keeps as this writer's own past: frames, rows, /flow totals.
    void adopt(hid_t f, const Kept& k) {
        frames.clear();
        for (hsize_t i = 0; i < k.frames; ++i)
            frames.push_back(XdmfFrame{k.time[i], k.first_row[i], k.row_count[i]});
        rows = k.rows;
        diag_rows = k.diag_rows;
        wc_rows = k.wc_rows;
        last_step = k.step[k.frames - 1];
        last_time = k.time[k.frames - 1];
        read_tallies(f, k.frames - 1, last_emitted, last_removed);
    }

    /// Reads what a resumed run keeps of `f` (open for reading), after checking that it is
    /// the run's file; nothing is written yet, so a refusal leaves the file as it was.
    Kept examine(hid_t f, const RunMetadata& meta, uint64_t step) {
        check_same_run(f, meta);
        creating = false;  // describe the columns (their names); the datasets are there
        define_columns(meta);
        if (exists(f, "/clumps/first")) {
            const hsize_t n = dims_of(f, "/clumps/first")[0];
            clump_templates = n > 0 ? std::size_t(n - 1) : 0;
        }
        return keep(f, step);
    }

    /// A cleanly closed file (`file`, open read-write; `k` from examine()): cut in place
    /// what lies beyond the step. Shrinking a chunked dataset is allowed before SWMR mode
    /// starts; HDF5 refills the cut part of a partial chunk with the fill value, so a marker
    /// past the end reads "unwritten" again.
    void continue_in_place(const Kept& k) {
        adopt(file.get(), k);
        const auto cut = [&](const Column& c, hsize_t n) {
            Hid ds(check(H5Dopen2(file.get(), c.name.c_str(), H5P_DEFAULT), "open " + c.name), H5Dclose);
            Hid space(check(H5Dget_space(ds.get()), "dataspace of " + c.name), H5Sclose);
            hsize_t d[3] = {0, 0, 0};
            check(H5Sget_simple_extent_dims(space.get(), d, nullptr), "dataspace of " + c.name);
            if (d[0] <= n) return;
            d[0] = n;
            check(H5Dset_extent(ds.get(), d), "cut " + c.name);
        };
        for (Column* c : body_columns()) cut(*c, rows);
        for (Column* c : frame_columns()) cut(*c, k.frames);
        for (Column* c : diagnostic_columns()) cut(*c, diag_rows);
        for (Column* c : flow_columns()) cut(*c, is_contact_row_column(c) ? wc_rows : k.frames);
        check(H5Fflush(file.get(), H5F_SCOPE_LOCAL), "flush");
        check(H5Fstart_swmr_write(file.get()), "start SWMR write mode");
        open_columns();
    }

    bool is_contact_row_column(const Column* c) const {
        return c == &wc_wall || c == &wc_body || c == &wc_point || c == &wc_impulse ||
               c == &wc_angular;
    }

    /// A file a killed run left (`old`, open for SWMR reading): its "being written" mark
    /// forbids opening it read-write, and its on-disk metadata is a snapshot that HDF5 may
    /// not extend safely. So the frames and diagnostics kept are copied, in their storage
    /// types, into a new file created as the run created its own (PATH.resume.tmp), with the
    /// same calls a writer makes (so the copy holds the same values); that file then
    /// replaces PATH by rename, and the original stays whole until then.
    void continue_by_copy(hid_t old, const Kept& k, const RunMetadata& meta,
                          const MaterialTable& materials, const ClumpTable* clumps) {
        RunMetadata m = meta;
        if (const auto p = read_strings(old, "scene_path"); p.size() == 1) m.scene_path = p[0];
        if (const auto v = read_strings(old, "talus_version"); v.size() == 1) m.talus_version = v[0];
        std::filesystem::path tmp = path;
        tmp += ".resume.tmp";
        create_file(tmp, true);
        copying = true;
        creating = true;
        try {
            create_layout(m, materials);
            write_clumps(clumps);
            check(H5Fflush(file.get(), H5F_SCOPE_LOCAL), "flush");
            check(H5Fstart_swmr_write(file.get()), "start SWMR write mode");
            open_columns();
            copy_frames(old, k);
            check(H5Fflush(file.get(), H5F_SCOPE_LOCAL), "flush");
            sync_file(tmp);
            std::error_code ec;
            std::filesystem::rename(tmp, path, ec);
            if (ec)
                throw IoError(fmt::format("cannot continue '{}': cannot rename '{}' over it: {}",
                                          path.string(), tmp.string(), ec.message()));
        } catch (...) {
            freeze();  // nothing more reaches the copy, which goes
            for (Column* c : body_columns()) c->id.reset();
            for (Column* c : frame_columns()) c->id.reset();
            for (Column* c : diagnostic_columns()) c->id.reset();
            for (Column* c : flow_columns()) c->id.reset();
            file.reset();
            closed = true;
            std::error_code ignored;
            std::filesystem::remove(tmp, ignored);
            throw;
        }
        copying = false;
        open_path = path;
        write_seconds = 0.0;
    }

    /// Writes the kept frames of `old` through write_rows, each with the diagnostics of
    /// its steps; the diagnostics after the last frame (up to the checkpoint) last.
    void copy_frames(hid_t old, const Kept& k) {
        // Each dataset of `old` is opened once: its chunk cache then serves the frames that
        // share a chunk, instead of each frame decompressing the chunk again.
        std::map<const Column*, Hid> opened;
        const auto rows = [&](const Column& c, auto element, hsize_t first, hsize_t n) {
            auto it = opened.find(&c);
            if (it == opened.end())
                it = opened.emplace(&c, Hid(check(H5Dopen2(old, c.name.c_str(), H5P_DEFAULT),
                                                  "open " + c.name),
                                            H5Dclose))
                         .first;
            return read_open_rows<decltype(element)>(it->second.get(), c.name, c.mem_type, first, n);
        };
        const auto diag_steps = rows(d_step, uint64_t{}, 0, k.diag_rows);
        uint64_t d = 0;  // next diagnostics entry to copy
        const auto diagnostics_up_to = [&](uint64_t last_step_included, FrameRows& into) {
            uint64_t n = 0;
            while (d + n < k.diag_rows && diag_steps[d + n] <= last_step_included) ++n;
            into.diagnostics.assign(std::size_t(n), StepDiagnostics{});
            if (n == 0) return;
            const auto time = rows(d_time, double{}, d, n);
            const auto contacts = rows(d_contacts, uint32_t{}, d, n);
            const auto iterations = rows(d_iterations, uint32_t{}, d, n);
            const auto residual = rows(d_residual, double{}, d, n);
            const auto kinetic = rows(d_kinetic, double{}, d, n);
            const auto potential = rows(d_potential, double{}, d, n);
            const auto wall = rows(d_wall, double{}, d, n);
            const auto envelope = rows(d_envelope, double{}, d, n);
            const auto converged = rows(d_converged, uint8_t{}, d, n);
            const auto joint = rows(d_joint_infeasibility, double{}, d, n);
            const auto penetration = rows(d_contact_infeasibility, double{}, d, n);
            const auto dt = rows(d_dt, double{}, d, n);
            for (std::size_t i = 0; i < n; ++i) {
                StepDiagnostics& s = into.diagnostics[i];
                s.step = diag_steps[d + i];
                s.time = time[i];
                s.contacts = contacts[i];
                s.iterations = iterations[i];
                s.residual = residual[i];
                s.kinetic_energy = kinetic[i];
                s.potential_energy = potential[i];
                s.solver_wall_time = wall[i];
                s.envelope = envelope[i];
                s.converged = converged[i] != 0;
                s.joint_infeasibility = joint[i];
                s.contact_infeasibility = penetration[i];
                s.dt = dt[i];
            }
            d += n;
        };
        const auto tallies = [&](hsize_t frame, const Column& total_count, const Column& total_mass,
                                 std::size_t n, std::vector<FlowTally>& out) {
            out.assign(n, FlowTally{});
            if (n == 0) return;
            const auto c = rows(total_count, uint64_t{}, frame, 1);
            const auto m = rows(total_mass, double{}, frame, 1);
            for (std::size_t j = 0; j < n; ++j) out[j] = FlowTally{c[j], m[j]};
        };
        FrameRows fr;
        for (hsize_t i = 0; i < k.frames; ++i) {
            const hsize_t a = k.first_row[i], n = k.row_count[i];
            fr.frame = true;
            fr.time = k.time[i];
            fr.step = k.step[i];
            fr.n = std::size_t(n);
            diagnostics_up_to(fr.step, fr);
            fr.id = rows(id, uint64_t{}, a, n);
            fr.material = rows(material, uint32_t{}, a, n);
            fr.shape = rows(shape, uint8_t{}, a, n);
            fr.clump = rows(clump, int32_t{}, a, n);
            const RealColumns c(fr.n);
            const auto reals = [&](auto& out) {
                using T = typename std::decay_t<decltype(out)>::value_type;
                out.resize(c.total);
                const auto put = [&](const Column& col, std::size_t offset) {
                    const auto v = rows(col, T{}, a, n);
                    std::copy(v.begin(), v.end(), out.begin() + std::ptrdiff_t(offset));
                };
                put(position, c.position);
                put(orientation, c.orientation);
                put(velocity, c.velocity);
                put(angular_velocity, c.angular_velocity);
                put(radius, c.radius);
            };
            if (float32) reals(fr.real32);
            else reals(fr.real64);
            tallies(i, f_emitted_total_count, f_emitted_total_mass, n_emitters, fr.emitted);
            tallies(i, f_removed_total_count, f_removed_total_mass, n_outlets, fr.removed);
            if (n_walls > 0) {
                fr.wall_force = rows(w_force, Vec3(0, 0, 0), i, 1);
                fr.wall_torque = rows(w_torque, Vec3(0, 0, 0), i, 1);
            }
            fr.contacts.clear();
            if (wall_contacts) {
                const uint64_t ca = rows(wc_first_row, uint64_t{}, i, 1)[0];
                const uint64_t cn = rows(wc_row_count, uint64_t{}, i, 1)[0];
                fr.contacts.wall = rows(wc_wall, uint32_t{}, ca, cn);
                fr.contacts.body = rows(wc_body, uint64_t{}, ca, cn);
                fr.contacts.point = rows(wc_point, Vec3(0, 0, 0), ca, cn);
                fr.contacts.impulse = rows(wc_impulse, Vec3(0, 0, 0), ca, cn);
                fr.contacts.angular_impulse = rows(wc_angular, Vec3(0, 0, 0), ca, cn);
                fr.contacts.step = rows(wc_dt, double{}, i, 1)[0];
            }
            write_rows_unguarded(fr);
        }
        fr.frame = false;
        diagnostics_up_to(std::numeric_limits<uint64_t>::max(), fr);
        write_rows_unguarded(fr);
        last_step = k.step[k.frames - 1];
        last_time = k.time[k.frames - 1];
    }

    /// Creates the HDF5 file at `at` in the latest format (which SWMR needs: superblock 3,
    /// new chunk indexes); `truncate`: over an existing one.
    void create_file(const std::filesystem::path& at, bool truncate) {
        Hid fapl(check(H5Pcreate(H5P_FILE_ACCESS), "property list"), H5Pclose);
        check(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_LATEST, H5F_LIBVER_LATEST),
              "library version bounds");
        const hid_t f = H5Fcreate(at.c_str(), truncate ? H5F_ACC_TRUNC : H5F_ACC_EXCL, H5P_DEFAULT,
                                  fapl.get());
        if (f < 0)
            throw IoError(fmt::format("cannot create trajectory file '{}': {}", at.string(),
                                      hdf5_error_text()));
        file = Hid(f, H5Fclose);
        open_path = at;
    }

    /// Flushes a closed or flushed file's data to the disk, so that a rename cannot outlive it.
    static void sync_file(const std::filesystem::path& p) {
        const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return;
        ::fsync(fd);
        ::close(fd);
    }

    /// Appends one /flow row per set: increases since the last frame and totals.
    void append_flow(hsize_t frame, const std::vector<FlowTally>& now, std::vector<FlowTally>& last,
                     Column& count, Column& mass, Column& total_count, Column& total_mass) {
        const std::size_t n = last.size();
        if (n == 0) return;
        std::vector<uint64_t> dc(n), tc(n);
        std::vector<double> dm(n), tm(n);
        for (std::size_t j = 0; j < n; ++j) {
            dc[j] = now[j].count - last[j].count;
            dm[j] = now[j].mass - last[j].mass;
            tc[j] = now[j].count;
            tm[j] = now[j].mass;
        }
        append(count, frame, 1, dc.data());
        append(mass, frame, 1, dm.data());
        append(total_count, frame, 1, tc.data());
        append(total_mass, frame, 1, tm.data());
        last = now;
    }

    // ---- appending (SWMR) ---------------------------------------------------------------

    /// Extends `c` from `old_rows` to `old_rows + n` rows and writes `data` into the new rows.
    void append(Column& c, hsize_t old_rows, hsize_t n, const void* data) {
        if (n == 0) return;
        const int rank = c.triple ? 3 : c.width == 1 && !c.matrix ? 1 : 2;
        const hsize_t new_dims[3] = {old_rows + n, c.width, 3};
        const hsize_t start[3] = {old_rows, 0, 0};
        const hsize_t count[3] = {n, c.width, 3};
        check(H5Dset_extent(c.id.get(), new_dims), "extend " + c.name);
        Hid file_space(check(H5Dget_space(c.id.get()), "dataspace of " + c.name), H5Sclose);
        check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr),
              "select rows of " + c.name);
        Hid mem_space(check(H5Screate_simple(rank, count, nullptr), "dataspace"), H5Sclose);
        check(H5Dwrite(c.id.get(), c.mem_type, mem_space.get(), file_space.get(), H5P_DEFAULT, data),
              "write " + c.name);
    }

    void flush(Column& c) { check(H5Dflush(c.id.get()), "flush " + c.name); }

    /// Rewrites the sidecar if it is behind and (`always` or) within its time budget.
    void update_sidecar(bool always) {
        if (copying || sidecar_frames == frames.size()) return;
        using clock = std::chrono::steady_clock;
        const auto start = clock::now();
        const double lifetime = std::chrono::duration<double>(start - created).count();
        if (!always && frames.size() > kSidecarAlwaysFrames &&
            sidecar_seconds > kSidecarTimeShare * lifetime)
            return;
        write_xdmf_sidecar(path, frames, rows, float32 ? 4 : 8);
        sidecar_seconds += std::chrono::duration<double>(clock::now() - start).count();
        sidecar_frames = frames.size();
    }

    /// Moves the buffered diagnostics into the file; /diagnostics/step goes last.
    void append_diagnostics() {
        const hsize_t n = to_write.size();
        if (n == 0) return;
        std::vector<uint64_t> step(n);
        std::vector<double> time(n), residual(n), kinetic(n), potential(n), wall(n), envelope(n),
            joint(n), penetration(n), dt(n);
        std::vector<uint32_t> contacts(n), iterations(n);
        std::vector<uint8_t> converged(n);
        for (std::size_t i = 0; i < n; ++i) {
            const StepDiagnostics& d = to_write[i];
            step[i] = d.step;
            time[i] = d.time;
            contacts[i] = d.contacts;
            iterations[i] = d.iterations;
            residual[i] = d.residual;
            kinetic[i] = d.kinetic_energy;
            potential[i] = d.potential_energy;
            wall[i] = d.solver_wall_time;
            envelope[i] = d.envelope;
            joint[i] = d.joint_infeasibility;
            penetration[i] = d.contact_infeasibility;
            dt[i] = d.dt;
            converged[i] = d.converged ? 1 : 0;
        }
        const hsize_t r = diag_rows;
        append(d_time, r, n, time.data());
        append(d_contacts, r, n, contacts.data());
        append(d_iterations, r, n, iterations.data());
        append(d_residual, r, n, residual.data());
        append(d_kinetic, r, n, kinetic.data());
        append(d_potential, r, n, potential.data());
        append(d_wall, r, n, wall.data());
        append(d_envelope, r, n, envelope.data());
        append(d_joint_infeasibility, r, n, joint.data());
        append(d_contact_infeasibility, r, n, penetration.data());
        append(d_dt, r, n, dt.data());
        append(d_converged, r, n, converged.data());
        for (Column* c : diagnostic_columns())
            if (c != &d_step) flush(*c);
        append(d_step, r, n, step.data());
        flush(d_step);
        diag_rows += n;
        to_write.clear();
    }

    /// Checks the frame against the file and copies it into `out` (no HDF5 call).
    void pack(FrameRows& out, const BodyStore& bodies, double time, uint64_t step,
              const std::vector<FlowTally>& emitted, const std::vector<FlowTally>& removed,
              const WallLoads* loads, const WallContactList* contacts) {
        if (emitted.size() != n_emitters || removed.size() != n_outlets)
            throw IoError(fmt::format("trajectory '{}': the file was created for {} emitters and {} "
                                      "outlets, the frame brings {} and {}",
                                      path.string(), n_emitters, n_outlets, emitted.size(),
                                      removed.size()));
        const std::size_t n = bodies.size();
        if (bodies.position.size() != n || bodies.orientation.size() != n ||
            bodies.velocity.size() != n || bodies.angular_velocity.size() != n ||
            bodies.radius.size() != n || bodies.material.size() != n || bodies.shape.size() != n ||
            bodies.shape_param.size() != n) {
            throw IoError(fmt::format("trajectory '{}': BodyStore arrays have different lengths",
                                      path.string()));
        }
        out.frame = true;
        out.time = time;
        out.step = step;
        out.n = n;
        out.shape.resize(n);
        out.clump.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            out.shape[i] = uint8_t(bodies.shape[i]);
            out.clump[i] = bodies.shape[i] == Shape::Clump ? int32_t(bodies.clump_of(i)) : -1;
            if (out.clump[i] >= int32_t(clump_templates))
                throw IoError(fmt::format("trajectory '{}': body {} uses clump template {}, but the "
                                          "file was created with {} templates",
                                          path.string(), bodies.id[i], out.clump[i],
                                          clump_templates));
        }
        out.id.assign(bodies.id.begin(), bodies.id.end());
        out.material.assign(bodies.material.begin(), bodies.material.end());
        if (float32) {
            pack_reals(bodies, out.real32);
            out.real64.clear();
        } else {
            pack_reals(bodies, out.real64);
            out.real32.clear();
        }
        out.emitted = emitted;
        out.removed = removed;
        out.wall_force.assign(n_walls, Vec3::Zero());
        out.wall_torque.assign(n_walls, Vec3::Zero());
        if (loads != nullptr && loads->time > 0.0 && loads->impulse.size() == n_walls) {
            for (std::size_t w = 0; w < n_walls; ++w) {
                out.wall_force[w] = loads->impulse[w] / loads->time;
                out.wall_torque[w] = loads->angular_impulse[w] / loads->time;
            }
        }
        out.contacts.clear();
        if (wall_contacts && contacts != nullptr) out.contacts = *contacts;
        out.diagnostics.swap(pending);
        pending.clear();
    }

    /// After a failed write: HDF5 may not write to the file again. The file then stays as
    /// the last successful flush and the writes after it left it: the consistent SWMR state a
    /// killed run leaves, readable up to its last complete frame. Closing it normally instead
    /// would write metadata describing space that never reached the disk (a full disk leaves
    /// a superblock whose end-of-file lies beyond the file: "truncated file", unreadable).
    /// The file descriptor under HDF5 is replaced by a read-only one, so every later write
    /// fails and nothing on disk changes.
    void freeze() {
        if (frozen) return;
        frozen = true;
        void* handle = nullptr;
        if (H5Fget_vfd_handle(file.get(), H5P_DEFAULT, &handle) < 0 || handle == nullptr) return;
        const int fd = *static_cast<int*>(handle);  // the sec2 (POSIX) driver's descriptor
        const int read_only = ::open(open_path.c_str(), O_RDONLY | O_CLOEXEC);
        if (read_only < 0) return;
        ::dup2(read_only, fd);
        ::close(read_only);
    }

    /// write_rows_unguarded, freezing the file if it fails.
    void write_rows(FrameRows& fr) {
        try {
            write_rows_unguarded(fr);
        } catch (...) {
            freeze();
            throw;
        }
    }

    /// Writes a packed frame: its diagnostics, then the body rows, then /flow and /walls,
    /// then the index entry with row_count last; flushes, and updates the sidecar.
    void write_rows_unguarded(FrameRows& fr) {
        const auto start = std::chrono::steady_clock::now();
        to_write.swap(fr.diagnostics);
        append_diagnostics();
        if (!fr.frame) {  // sync(): the diagnostics alone
            check(H5Fflush(file.get(), H5F_SCOPE_LOCAL), "flush");
            write_seconds +=
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            return;
        }

        const hsize_t r = rows, n = fr.n;
        const RealColumns c(fr.n);
        const auto real = [&](std::size_t offset) -> const void* {
            return float32 ? static_cast<const void*>(fr.real32.data() + offset)
                           : static_cast<const void*>(fr.real64.data() + offset);
        };
        append(id, r, n, fr.id.data());
        append(position, r, n, real(c.position));
        append(orientation, r, n, real(c.orientation));
        append(velocity, r, n, real(c.velocity));
        append(angular_velocity, r, n, real(c.angular_velocity));
        append(radius, r, n, real(c.radius));
        append(material, r, n, fr.material.data());
        append(shape, r, n, fr.shape.data());
        append(clump, r, n, fr.clump.data());
        for (Column* col : body_columns()) flush(*col);

        // The frame's /flow row (with the body rows: complete once row_count is set).
        const hsize_t f = frames.size();
        append_flow(f, fr.emitted, last_emitted, f_emitted_count, f_emitted_mass,
                    f_emitted_total_count, f_emitted_total_mass);
        append_flow(f, fr.removed, last_removed, f_removed_count, f_removed_mass,
                    f_removed_total_count, f_removed_total_mass);
        if (n_walls > 0) {
            append(w_force, f, 1, fr.wall_force.data());
            append(w_torque, f, 1, fr.wall_torque.data());
        }
        if (wall_contacts) {
            const WallContactList& wc = fr.contacts;
            const uint64_t first = wc_rows, count = wc.size();
            if (count > 0) {
                append(wc_wall, first, count, wc.wall.data());
                append(wc_body, first, count, wc.body.data());
                append(wc_point, first, count, wc.point.data());
                append(wc_impulse, first, count, wc.impulse.data());
                append(wc_angular, first, count, wc.angular_impulse.data());
            }
            append(wc_first_row, f, 1, &first);
            append(wc_row_count, f, 1, &count);
            append(wc_dt, f, 1, &wc.step);
            wc_rows += count;
        }
        for (Column* col : flow_columns()) flush(*col);

        // The index entry, row_count last: once it is set, everything above is on disk.
        const uint64_t first_row = r, row_count = n;
        append(frame_time, f, 1, &fr.time);
        append(frame_step, f, 1, &fr.step);
        append(frame_first_row, f, 1, &first_row);
        flush(frame_time);
        flush(frame_step);
        flush(frame_first_row);
        append(frame_row_count, f, 1, &row_count);
        flush(frame_row_count);
        check(H5Fflush(file.get(), H5F_SCOPE_LOCAL), "flush");

        rows += n;
        frames.push_back(XdmfFrame{fr.time, first_row, row_count});
        update_sidecar(false);
        write_seconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }

    // ---- the background writer ----------------------------------------------------------

    /// Re-raises, on the calling (main) thread, the writer thread's failure, word for word.
    void rethrow_if_failed() {
        if (!failed.load(std::memory_order_acquire)) return;
        std::lock_guard<std::mutex> lock(mutex);
        throw IoError(error);
    }

    /// A buffer for the next frame: a spare one, a new one while fewer than kFrameBuffers
    /// exist, or else the first the writer gives back (the step loop waits only here).
    std::unique_ptr<FrameRows> take_buffer() {
        std::unique_lock<std::mutex> lock(mutex);
        wake_main.wait(lock, [&] { return !spare.empty() || buffers < kFrameBuffers || failed; });
        if (failed) throw IoError(error);
        if (!spare.empty()) {
            std::unique_ptr<FrameRows> b = std::move(spare.back());
            spare.pop_back();
            return b;
        }
        ++buffers;
        return std::make_unique<FrameRows>();
    }

    void give_back(std::unique_ptr<FrameRows> b) {
        {
            std::lock_guard<std::mutex> lock(mutex);
            spare.push_back(std::move(b));
        }
        wake_main.notify_all();
    }

    /// The writer thread: writes queued frames in order until close() asks it to stop and
    /// the queue is empty. After a failure it writes nothing more (the file keeps its last
    /// complete frame) and only hands buffers back.
    void run_worker() {
        QuietHdf5 quiet;  // HDF5's error stack and its printing are per thread
        for (;;) {
            std::unique_ptr<FrameRows> job;
            {
                std::unique_lock<std::mutex> lock(mutex);
                wake_worker.wait(lock, [&] { return !queue.empty() || stopping; });
                if (queue.empty()) return;
                job = std::move(queue.front());
                queue.pop_front();
                busy = true;
            }
            std::string message;
            if (!failed.load(std::memory_order_acquire)) {
                try {
                    write_rows(*job);
                } catch (const IoError& e) {
                    message = e.what();
                } catch (const std::exception& e) {
                    message = fmt::format("trajectory '{}': {}", path.string(), e.what());
                }
            }
            {
                std::lock_guard<std::mutex> lock(mutex);
                if (!message.empty() && !failed) {
                    error = message;
                    failed.store(true, std::memory_order_release);
                }
                busy = false;
                // A large frame's buffer goes back to the system instead of waiting for
                // the next frame: between frames it would only add to the run's peak
                // (73 MB at a million bodies in float32).
                if (job->n >= kKeepBufferBodies) {
                    job.reset();
                    --buffers;
                } else {
                    spare.push_back(std::move(job));
                }
            }
            wake_main.notify_all();
        }
    }

    /// Waits until every frame handed over is in the file (or the writer failed).
    void drain() {
        if (!worker.joinable()) return;
        std::unique_lock<std::mutex> lock(mutex);
        wake_main.wait(lock, [&] { return (queue.empty() && !busy) || failed; });
    }

    /// Lets the writer finish the queue, then joins it.
    void stop_worker() {
        if (!worker.joinable()) return;
        {
            std::lock_guard<std::mutex> lock(mutex);
            stopping = true;
        }
        wake_worker.notify_one();
        worker.join();
    }

    void close_all() {
        if (closed) return;
        closed = true;
        stop_worker();  // every queued frame is in the file (or the writer failed) after this
        QuietHdf5 quiet;
        std::string message = failed ? error : std::string();
        try {
            if (!frozen) {
                to_write.insert(to_write.end(), pending.begin(), pending.end());
                pending.clear();
                append_diagnostics();
            }
            update_sidecar(true);  // a file of its own: describes the complete frames
        } catch (const IoError& e) {
            if (message.empty()) message = e.what();
        }
        bool ok = true;
        for (Column* c : body_columns()) ok = c->id.reset() && ok;
        for (Column* c : frame_columns()) ok = c->id.reset() && ok;
        for (Column* c : diagnostic_columns()) ok = c->id.reset() && ok;
        for (Column* c : flow_columns()) ok = c->id.reset() && ok;
        ok = file.reset() && ok;
        if (!message.empty()) throw IoError(message);
        if (!ok) fail("close");
    }
};

std::size_t TrajectoryWriter::body_row_bytes(OutputPrecision precision) {
    const std::size_t real = precision == OutputPrecision::Float32 ? 4 : 8;
    return sizeof(uint64_t) + sizeof(uint32_t) + sizeof(uint8_t) + sizeof(int32_t)  // id, material, shape, clump
           + (3 + 4 + 3 + 3 + 1) * real;  // position, orientation, velocity, angular velocity, radius
}

TrajectoryWriter::TrajectoryWriter(const std::filesystem::path& path, const RunMetadata& metadata,
                                   const MaterialTable& materials, bool force,
                                   const ClumpTable* clumps)
    : impl_(std::make_unique<Impl>()) {
    Impl& m = *impl_;
    m.path = path;
    std::error_code ec;
    if (std::filesystem::exists(path, ec) && !force) {
        throw IoError(fmt::format("trajectory file '{}' already exists; use --force to overwrite it",
                                  path.string()));
    }
    const std::filesystem::path parent = path.parent_path();
    if (!parent.empty() && !std::filesystem::is_directory(parent, ec)) {
        throw IoError(fmt::format("cannot create trajectory file '{}': directory '{}' does not exist",
                                  path.string(), parent.string()));
    }

    QuietHdf5 quiet;
    m.create_file(path, force);
    // A sidecar left by an earlier run would describe frames this file does not have.
    std::filesystem::remove(xdmf_sidecar_path(path), ec);

    m.create_layout(metadata, materials);
    m.write_clumps(clumps);
    m.check(H5Fflush(m.file.get(), H5F_SCOPE_LOCAL), "flush");
    m.check(H5Fstart_swmr_write(m.file.get()), "start SWMR write mode");
    m.open_columns();
    m.background = metadata.background_writer;
    if (m.background) m.worker = std::thread([&m] { m.run_worker(); });
}

TrajectoryWriter::TrajectoryWriter(const std::filesystem::path& path, const RunMetadata& metadata,
                                   const MaterialTable& materials, const ClumpTable* clumps,
                                   AppendAfterStep at)
    : impl_(std::make_unique<Impl>()) {
    Impl& m = *impl_;
    m.path = path;
    m.open_path = path;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        throw IoError(fmt::format("cannot continue trajectory '{}': no such file", path.string()));
    QuietHdf5 quiet;
    // A cleanly closed file opens for plain reading and is continued in place; one left by
    // a killed run refuses that (its "being written" mark: readers open it in SWMR mode)
    // and is copied instead.
    bool clean = true;
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        H5Eclear2(H5E_DEFAULT);
        clean = false;
        f = H5Fopen(path.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, H5P_DEFAULT);
    }
    if (f < 0)
        throw IoError(fmt::format("cannot open trajectory '{}' to continue it: {}", path.string(),
                                  hdf5_error_text()));
    Hid read_only(f, H5Fclose);
    const Impl::Kept kept = m.examine(read_only.get(), metadata, at.step);
    if (clean) {
        read_only.reset();
        Hid fapl(m.check(H5Pcreate(H5P_FILE_ACCESS), "property list"), H5Pclose);
        m.check(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_LATEST, H5F_LIBVER_LATEST),
                "library version bounds");
        const hid_t rw = H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl.get());
        if (rw < 0)
            throw IoError(fmt::format("cannot open trajectory '{}' to continue it: {}",
                                      path.string(), hdf5_error_text()));
        m.file = Hid(rw, H5Fclose);
        try {
            m.continue_in_place(kept);
        } catch (...) {
            // stop here, as after a failed write: the file is left as a killed run's
            // (readable; a later --resume copies it) rather than closed half cut
            m.freeze();
            throw;
        }
    } else {
        m.continue_by_copy(read_only.get(), kept, metadata, materials, clumps);
    }
    // the sidecar of the frames kept, at once: the old one may list frames just cut
    write_xdmf_sidecar(path, m.frames, m.rows, m.float32 ? 4 : 8);
    m.sidecar_frames = m.frames.size();
    m.background = metadata.background_writer;
    if (m.background) m.worker = std::thread([&m] { m.run_worker(); });
}

TrajectoryWriter::~TrajectoryWriter() {
    try {
        impl_->close_all();
    } catch (...) {
        // A destructor must not throw; close() reports the same failure to callers who ask.
    }
}

void TrajectoryWriter::write_frame(const BodyStore& bodies, double time, uint64_t step,
                                   const std::vector<FlowTally>& emitted,
                                   const std::vector<FlowTally>& removed, const WallLoads* loads,
                                   const WallContactList* contacts) {
    Impl& m = *impl_;
    if (m.closed) throw IoError(fmt::format("trajectory '{}': write_frame after close", m.path.string()));
    if (!m.background) {
        m.pack(m.sync_rows, bodies, time, step, emitted, removed, loads, contacts);
        QuietHdf5 quiet;
        m.write_rows(m.sync_rows);
    } else {
        m.rethrow_if_failed();
        std::unique_ptr<FrameRows> rows = m.take_buffer();
        try {
            m.pack(*rows, bodies, time, step, emitted, removed, loads, contacts);
        } catch (...) {
            m.give_back(std::move(rows));
            throw;
        }
        {
            std::lock_guard<std::mutex> lock(m.mutex);
            m.queue.push_back(std::move(rows));
        }
        m.wake_worker.notify_one();
    }
    m.frames_handed += 1;
    m.rows_handed += bodies.size();
    m.last_step = step;
    m.last_time = time;
}

void TrajectoryWriter::write_diagnostics(const StepDiagnostics& diagnostics) {
    if (impl_->closed) {
        throw IoError(fmt::format("trajectory '{}': write_diagnostics after close",
                                  impl_->path.string()));
    }
    impl_->rethrow_if_failed();
    impl_->pending.push_back(diagnostics);
}

void TrajectoryWriter::flush() {
    Impl& m = *impl_;
    if (m.closed) return;
    m.drain();
    m.rethrow_if_failed();
}

void TrajectoryWriter::sync() {
    Impl& m = *impl_;
    if (m.closed) return;
    if (!m.pending.empty()) {
        if (!m.background) {
            QuietHdf5 quiet;
            m.sync_rows.frame = false;
            m.sync_rows.diagnostics.swap(m.pending);
            m.pending.clear();
            m.write_rows(m.sync_rows);
        } else {
            m.rethrow_if_failed();
            std::unique_ptr<FrameRows> job = m.take_buffer();
            job->frame = false;
            job->diagnostics.swap(m.pending);
            m.pending.clear();
            {
                std::lock_guard<std::mutex> lock(m.mutex);
                m.queue.push_back(std::move(job));
            }
            m.wake_worker.notify_one();
        }
    }
    flush();
}

void TrajectoryWriter::close() { impl_->close_all(); }

const std::filesystem::path& TrajectoryWriter::path() const { return impl_->path; }
std::filesystem::path TrajectoryWriter::sidecar_path() const { return xdmf_sidecar_path(impl_->path); }
uint64_t TrajectoryWriter::frames_written() const { return impl_->frames_handed; }
uint64_t TrajectoryWriter::last_frame_step() const { return impl_->last_step; }
double TrajectoryWriter::last_frame_time() const { return impl_->last_time; }
uint64_t TrajectoryWriter::rows_written() const { return impl_->rows_handed; }
double TrajectoryWriter::write_seconds() const { return impl_->write_seconds; }

}  // namespace talus
