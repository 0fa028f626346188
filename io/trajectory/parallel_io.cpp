// A trajectory written from every rank of an MPI job at once (RunMetadata::parallel, `talus
// run --parallel-output`; docs/output-format.md, "A file written in parallel").
//
// Why this shape: HDF5's MPI-IO driver cannot run in SWMR mode, so the file on disk is not
// kept consistent by HDF5 while the run goes on; its metadata (the datasets' extents and
// chunk indexes) reaches the disk only when the ranks flush together. So the metadata is made
// to change rarely: every appendable dataset grows by doubling (make_room; in parallel HDF5
// allocates the chunks of the new extent at once), and between two growths a frame's writes
// are raw data into space already allocated. Each frame ends with a collective flush, after
// which rank 0 writes /frames/committed, two 8-byte values at a fixed place: the frames
// readers may count, and whether the file was closed. A run killed between two flushes leaves
// the metadata of the last flush, which describes every committed frame. The datasets keep
// their room at close too (cutting them back frees file space, which HDF5 1.10's MPI-IO
// driver then accounts differently on different ranks: seen as a hang in H5Fclose), so a
// reader counts frames by the markers and the committed count, never by a dataset's length
// (tools/talus_h5.py, talus info and the resume do).
#include "core/ranks.hpp"
#include "io/trajectory/writer_impl.hpp"

namespace talus {

using namespace trajectory;

bool TrajectoryWriter::parallel_available() {
#ifdef H5_HAVE_PARALLEL
    return true;
#else
    return false;
#endif
}

bool TrajectoryWriter::parallel() const { return impl_->parallel; }
bool TrajectoryWriter::writes_shared() const { return impl_->writes_shared(); }

bool TrajectoryWriter::Impl::writes_shared() const { return !parallel || ranks->root(); }

hdf5::Hid TrajectoryWriter::Impl::parallel_access() const {
    Hid fapl(check(H5Pcreate(H5P_FILE_ACCESS), "property list"), H5Pclose);
#ifdef H5_HAVE_PARALLEL
    const auto* comm = static_cast<const MPI_Comm*>(ranks->mpi_communicator());
    if (comm == nullptr)
        throw IoError(fmt::format("trajectory '{}': parallel output needs the ranks of an MPI job",
                                  path.string()));
    check(H5Pset_fapl_mpio(fapl.get(), *comm, MPI_INFO_NULL), "MPI-IO file access");
#else
    throw IoError(fmt::format("trajectory '{}': this build's HDF5 cannot write in parallel "
                              "(build with TALUS_MPI and libhdf5-openmpi-dev)",
                              path.string()));
#endif
    return fapl;
}

void TrajectoryWriter::Impl::make_room(Column& c, hsize_t rows) {
    if (rows <= c.capacity) return;
    const hsize_t room = std::max(rows, 2 * c.capacity);
    const hsize_t dims[3] = {room, c.width, 3};
    check(H5Dset_extent(c.id.get(), dims), "extend " + c.name);
    c.capacity = room;
}

void TrajectoryWriter::Impl::append_part(Column& c, hsize_t old_rows, hsize_t total, hsize_t offset,
                                         hsize_t n, const void* data) {
    if (total == 0) return;
    make_room(c, old_rows + total);
    if (n > 0) write_at(c, old_rows + offset, n, data);
}

void TrajectoryWriter::Impl::create_committed() {
    const std::string name = "/frames/committed";
    const hsize_t two = 2;
    Hid space(check(H5Screate_simple(1, &two, nullptr), "dataspace"), H5Sclose);
    Hid dcpl(check(H5Pcreate(H5P_DATASET_CREATE), "property list"), H5Pclose);
    // its 16 bytes exist from the start, at a place that never moves: writing it changes no
    // metadata
    check(H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS), "layout of " + name);
    check(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY), "allocation of " + name);
    const uint64_t zero = 0;
    check(H5Pset_fill_value(dcpl.get(), H5T_NATIVE_UINT64, &zero), "fill value");
    committed = Hid(check(H5Dcreate2(file.get(), name.c_str(), H5T_STD_U64LE, space.get(), H5P_DEFAULT,
                                     dcpl.get(), H5P_DEFAULT),
                          "create dataset " + name),
                    H5Dclose);
    string_attribute(committed.get(), "unit", "1");
    string_attribute(committed.get(), "description",
                     "a file written in parallel: [0] frames complete on disk (readers count no "
                     "frame past it), [1] 1 once the file was closed (0: being written, or the "
                     "run was killed)");
}

void TrajectoryWriter::Impl::commit_frames(uint64_t count, bool closing) {
    const uint64_t values[2] = {count, closing ? 1u : 0u};
    if (writes_shared())
        check(H5Dwrite(committed.get(), H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, values),
              "write /frames/committed");
}

}  // namespace talus
