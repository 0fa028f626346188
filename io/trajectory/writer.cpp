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
#include <optional>

#include "core/ranks.hpp"
#include "io/trajectory/writer_impl.hpp"

namespace talus {

using namespace trajectory;

std::size_t TrajectoryWriter::body_row_bytes(OutputPrecision precision) {
    return Impl::body_row_bytes(precision);
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

    // Written from every rank at once (parallel_io.cpp): no compression (HDF5 compresses only
    // in collective writes) and no SWMR mode, which the MPI-IO driver does not have.
    RunMetadata meta = metadata;
    if (metadata.parallel != nullptr && metadata.parallel->size() > 1) {
        if (metadata.shapes)
            throw IoError(fmt::format("trajectory '{}': a file with /shapes (capsules, ellipsoids, "
                                      "clumps) is not written in parallel",
                                      path.string()));
        m.ranks = metadata.parallel;
        m.parallel = true;
        meta.compression = 0;
    }

    std::optional<QuietHdf5> quiet(std::in_place);
    m.create_file(path, force);
    // A sidecar left by an earlier run would describe frames this file does not have.
    if (m.writes_shared()) std::filesystem::remove(xdmf_sidecar_path(path), ec);

    m.create_layout(meta, materials);
    m.write_clumps(clumps);
    if (m.parallel) m.create_committed();
    m.check(H5Fflush(m.file.get(), H5F_SCOPE_LOCAL), "flush");
    if (!m.parallel) m.check(H5Fstart_swmr_write(m.file.get()), "start SWMR write mode");
    m.open_columns();
    m.background = metadata.background_writer && !m.parallel;
    // From here on the writer thread makes every HDF5 call: this thread's last one (giving
    // HDF5 its error printing back) comes before it starts, since HDF5 built for MPI is not
    // thread-safe (calls from two threads at once are a data race there)
    quiet.reset();
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
    std::optional<QuietHdf5> quiet(std::in_place);
    // A cleanly closed file opens for plain reading and is continued in place; one left by
    // a killed run refuses that (its "being written" mark: readers open it in SWMR mode)
    // and is copied instead.
    bool clean = true;
    const hid_t f = hdf5::open_trajectory_for_reading(path.c_str(), &clean);
    if (f < 0)
        throw IoError(fmt::format("cannot open trajectory '{}' to continue it: {}", path.string(),
                                  hdf5_error_text()));
    Hid read_only(f, H5Fclose);
    const Impl::Kept kept = m.examine(read_only.get(), metadata, at.step);
    // A file written in parallel (HDF5's earliest format, which has no SWMR mode) is
    // continued by this process alone, in a copy made as a new file is.
    if (m.exists(read_only.get(), "/frames/committed")) clean = false;
    // A file written before some /diagnostics columns were added is copied too: the copy
    // has the whole layout, those columns reading "unrecorded" for the steps kept.
    if (!m.absent.empty()) clean = false;
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
    write_xdmf_sidecar(path, m.frames, m.rows, m.float32 ? 4 : 8, m.sidecar_extras());
    m.sidecar_frames = m.frames.size();
    m.background = metadata.background_writer;
    quiet.reset();  // before the writer thread starts, as above
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
                                   const WallContactList* contacts, const ContactRecord* record,
                                   const std::vector<Wall>* walls) {
    Impl& m = *impl_;
    if (m.closed) throw IoError(fmt::format("trajectory '{}': write_frame after close", m.path.string()));
    if (!m.background) {
        m.pack(m.sync_rows, bodies, time, step, emitted, removed, loads, contacts, record, walls);
        QuietHdf5 quiet;
        m.write_rows(m.sync_rows);
    } else {
        m.rethrow_if_failed();
        std::unique_ptr<FrameRows> rows = m.take_buffer();
        try {
            m.pack(*rows, bodies, time, step, emitted, removed, loads, contacts, record, walls);
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
const std::string& TrajectoryWriter::damage() const { return impl_->damage; }
double TrajectoryWriter::write_seconds() const { return impl_->write_seconds; }

}  // namespace talus

