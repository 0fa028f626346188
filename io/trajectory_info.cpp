// summarize_trajectory and its text and JSON forms: the summary behind `talus info OUT.h5`
// (tools/talus_h5.py prints the same, through `talus info`, so there is one summary).
//
// Why this shape: the summary must work on the files that matter most when something went
// wrong: a run still writing, or one that was killed. Such files carry HDF5's "open for
// SWMR writing" mark, which plain readers (ParaView among them) refuse. So the file is opened
// read-only, and if that fails, read-only with the SWMR read flag; the summary says which
// worked, since a marked file needs `h5clear -s --increment=0` before ParaView opens it
// (`-s` alone can truncate a killed file short of its last rows: docs/output-format.md). A frame counts
// only if its index entry is complete: /frames/row_count is written last and its fill
// value 2^64-1 means "not yet written" (see io/trajectory/writer.cpp); the same holds for
// /diagnostics/step. Everything read is small (index, diagnostics, one frame's shapes),
// except /bodies/radius, read in blocks of 2^20 rows for the smallest diameter.
//
// A checkpoint (io/checkpoint.cpp: /state/format holds "talus-checkpoint") is recognised
// and named as such, with the command that continues it, since it is the other .h5 file
// a run leaves beside its trajectory.
#include "io/trajectory_info.hpp"

#include <fmt/format.h>
#include <hdf5.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "io/hdf5_handles.hpp"
#include "io/text_format.hpp"
#include "io/trajectory_writer.hpp"

namespace talus {

namespace {

using hdf5::Hid;
using hdf5::kUnwritten;
using hdf5::QuietHdf5;
using hdf5::hdf5_error_text;

/// A string attribute of `loc` (variable or fixed length), or nothing.
std::optional<std::string> read_string_attribute(hid_t loc, const char* name) {
    if (H5Aexists(loc, name) <= 0) return std::nullopt;
    Hid attr(H5Aopen(loc, name, H5P_DEFAULT), H5Aclose);
    if (attr.get() < 0) return std::nullopt;
    Hid type(H5Aget_type(attr.get()), H5Tclose);
    if (type.get() < 0 || H5Tget_class(type.get()) != H5T_STRING) return std::nullopt;
    Hid space(H5Aget_space(attr.get()), H5Sclose);
    if (H5Sget_simple_extent_npoints(space.get()) != 1) return std::nullopt;
    if (H5Tis_variable_str(type.get()) > 0) {
        Hid mem(H5Tcopy(H5T_C_S1), H5Tclose);
        H5Tset_size(mem.get(), H5T_VARIABLE);
        H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
        char* data = nullptr;
        if (H5Aread(attr.get(), mem.get(), &data) < 0 || data == nullptr) return std::nullopt;
        std::string s(data);
        H5free_memory(data);
        return s;
    }
    const std::size_t size = H5Tget_size(type.get());
    std::string s(size, '\0');
    if (H5Aread(attr.get(), type.get(), s.data()) < 0) return std::nullopt;
    s.resize(std::min(s.find('\0'), s.size()));
    return s;
}

std::optional<int64_t> read_int_attribute(hid_t loc, const char* name) {
    if (H5Aexists(loc, name) <= 0) return std::nullopt;
    Hid attr(H5Aopen(loc, name, H5P_DEFAULT), H5Aclose);
    Hid type(H5Aget_type(attr.get()), H5Tclose);
    if (type.get() < 0 || H5Tget_class(type.get()) != H5T_INTEGER) return std::nullopt;
    int64_t v = 0;
    if (H5Aread(attr.get(), H5T_NATIVE_INT64, &v) < 0) return std::nullopt;
    return v;
}

/// Length of the first dimension of dataset `name`, or nothing if it is missing.
std::optional<uint64_t> dataset_rows(hid_t file, const char* name) {
    if (H5Lexists(file, name, H5P_DEFAULT) <= 0) return std::nullopt;
    Hid ds(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose);
    if (ds.get() < 0) {
        // there, but not readable: say so, rather than report the file without it
        const std::string why = hdf5_error_text();
        char path[4096] = "?";
        H5Fget_name(file, path, sizeof path);
        throw IoError(fmt::format("trajectory '{}': {} is damaged and cannot be read ({}){}", path, name, why,
                                  why.find("checksum") != std::string::npos
                                      ? "; a run killed while writing this block can leave it so "
                                        "(docs/output-format.md, \"Reading a file that is being written, or was killed\")"
                                      : ""));
    }
    Hid space(H5Dget_space(ds.get()), H5Sclose);
    hsize_t dims[2] = {0, 0};
    if (H5Sget_simple_extent_ndims(space.get()) < 1 || H5Sget_simple_extent_dims(space.get(), dims, nullptr) < 0)
        return std::nullopt;
    return dims[0];
}

/// The first `rows` values of a 1-D dataset, converted to `T` (HDF5 converts on read).
template <class T>
std::vector<T> read_column(hid_t file, const char* name, hid_t mem_type, uint64_t rows,
                           const std::filesystem::path& path) {
    std::vector<T> out(rows);
    if (rows == 0) return out;
    Hid ds(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose);
    Hid file_space(H5Dget_space(ds.get()), H5Sclose);
    const hsize_t start = 0, count = rows;
    Hid mem_space(H5Screate_simple(1, &count, nullptr), H5Sclose);
    if (ds.get() < 0 || file_space.get() < 0 ||
        H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &start, nullptr, &count, nullptr) < 0 ||
        H5Dread(ds.get(), mem_type, mem_space.get(), file_space.get(), H5P_DEFAULT, out.data()) < 0) {
        throw IoError(fmt::format("trajectory '{}': cannot read {}", path.string(), name));
    }
    return out;
}

/// Row `row` of a 2-D dataset (rows, width), converted to `T`; empty if the dataset is
/// missing, not 2-D or shorter.
template <class T>
std::vector<T> read_row(hid_t file, const char* name, hid_t mem_type, uint64_t row) {
    if (H5Lexists(file, "/flow", H5P_DEFAULT) <= 0 || H5Lexists(file, name, H5P_DEFAULT) <= 0) return {};
    Hid ds(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose);
    if (ds.get() < 0) return {};
    Hid file_space(H5Dget_space(ds.get()), H5Sclose);
    hsize_t dims[2] = {0, 0};
    if (H5Sget_simple_extent_ndims(file_space.get()) != 2 ||
        H5Sget_simple_extent_dims(file_space.get(), dims, nullptr) < 0 || dims[0] <= row || dims[1] == 0)
        return {};
    std::vector<T> out(dims[1]);
    const hsize_t start[2] = {row, 0}, count[2] = {1, dims[1]};
    Hid mem_space(H5Screate_simple(2, count, nullptr), H5Sclose);
    if (H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) < 0 ||
        H5Dread(ds.get(), mem_type, mem_space.get(), file_space.get(), H5P_DEFAULT, out.data()) < 0)
        return {};
    return out;
}

/// How /bodies/position is stored: "float64" or "float32", and its filters ("gzip level 1
/// with shuffle", "uncompressed").
std::string storage_text(hid_t file) {
    Hid ds(H5Dopen2(file, "/bodies/position", H5P_DEFAULT), H5Dclose);
    if (ds.get() < 0) return "?";
    Hid type(H5Dget_type(ds.get()), H5Tclose);
    const bool is_float = type.get() >= 0 && H5Tget_class(type.get()) == H5T_FLOAT;
    const std::string precision =
        is_float ? fmt::format("float{}", 8 * H5Tget_size(type.get())) : std::string("?");
    Hid dcpl(H5Dget_create_plist(ds.get()), H5Pclose);
    bool shuffle = false;
    int level = -1;
    const int filters = dcpl.get() >= 0 ? H5Pget_nfilters(dcpl.get()) : 0;
    for (int i = 0; i < filters; ++i) {
        unsigned flags = 0, values[4] = {0, 0, 0, 0};
        std::size_t n_values = 4;
        const H5Z_filter_t id =
            H5Pget_filter2(dcpl.get(), unsigned(i), &flags, &n_values, values, 0, nullptr, nullptr);
        if (id == H5Z_FILTER_SHUFFLE) shuffle = true;
        if (id == H5Z_FILTER_DEFLATE) level = n_values > 0 ? int(values[0]) : 0;
    }
    if (level < 0) return fmt::format("{} body rows, uncompressed", precision);
    return fmt::format("{} body rows, gzip level {}{}", precision, level,
                       shuffle ? " with shuffle" : "");
}

/// Shortest of several optional lengths; nothing if any is missing.
std::optional<uint64_t> min_rows(hid_t file, std::initializer_list<const char*> names) {
    uint64_t n = std::numeric_limits<uint64_t>::max();
    for (const char* name : names) {
        const auto rows = dataset_rows(file, name);
        if (!rows) return std::nullopt;
        n = std::min(n, *rows);
    }
    return n;
}

/// The datasets of `group`, by full name.
std::vector<std::string> group_datasets(hid_t file, const char* group) {
    std::vector<std::string> out;
    Hid g(H5Gopen2(file, group, H5P_DEFAULT), H5Gclose);
    H5G_info_t info{};
    if (g.get() < 0 || H5Gget_info(g.get(), &info) < 0) return out;
    for (hsize_t i = 0; i < info.nlinks; ++i) {
        char name[256];
        H5O_info_t object{};
        if (H5Lget_name_by_idx(g.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name, H5P_DEFAULT) >= 0 &&
            H5Oget_info_by_name2(g.get(), name, &object, H5O_INFO_BASIC, H5P_DEFAULT) >= 0 &&
            object.type == H5O_TYPE_DATASET)
            out.push_back(std::string(group) + "/" + name);
    }
    return out;
}

/// The rows every one of a group's `datasets` (group_datasets) holds (the least of them), so
/// that a column the writer's table adds (io/trajectory/layout.cpp) counts without being named
/// here; nothing when one of `required` is missing.
std::optional<uint64_t> group_rows(hid_t file, const std::vector<std::string>& datasets,
                                   std::initializer_list<const char*> required) {
    auto n = min_rows(file, required);
    if (!n) return std::nullopt;
    for (const std::string& name : datasets)
        if (const auto rows = dataset_rows(file, name.c_str())) n = std::min(*n, *rows);
    return n;
}


/// A variable-length string array attribute (material_names), or nothing.
std::vector<std::string> read_string_array_attribute(hid_t loc, const char* name) {
    if (H5Aexists(loc, name) <= 0) return {};
    Hid attr(H5Aopen(loc, name, H5P_DEFAULT), H5Aclose);
    Hid type(H5Aget_type(attr.get()), H5Tclose);
    if (type.get() < 0 || H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) <= 0)
        return {};
    Hid space(H5Aget_space(attr.get()), H5Sclose);
    const hssize_t n = H5Sget_simple_extent_npoints(space.get());
    if (n <= 0) return {};
    Hid mem(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mem.get(), H5T_VARIABLE);
    H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
    std::vector<char*> data(std::size_t(n), nullptr);
    if (H5Aread(attr.get(), mem.get(), data.data()) < 0) return {};
    std::vector<std::string> out;
    for (char* c : data) {
        out.emplace_back(c != nullptr ? c : "");
        H5free_memory(c);
    }
    return out;
}

/// A numeric array attribute as doubles, or nothing.
std::vector<double> read_double_array_attribute(hid_t loc, const char* name) {
    if (H5Aexists(loc, name) <= 0) return {};
    Hid attr(H5Aopen(loc, name, H5P_DEFAULT), H5Aclose);
    Hid type(H5Aget_type(attr.get()), H5Tclose);
    if (type.get() < 0 || H5Tget_class(type.get()) != H5T_FLOAT) return {};
    Hid space(H5Aget_space(attr.get()), H5Sclose);
    const hssize_t n = H5Sget_simple_extent_npoints(space.get());
    if (n <= 0) return {};
    std::vector<double> out(static_cast<std::size_t>(n));
    if (H5Aread(attr.get(), H5T_NATIVE_DOUBLE, out.data()) < 0) return {};
    return out;
}

/// The text of a checkpoint's byte dataset (io/checkpoint.cpp stores texts as uint8 rows),
/// or nothing. Reads at most `limit` bytes.
std::optional<std::string> read_byte_text(hid_t file, const char* name, hsize_t limit) {
    if (H5Lexists(file, "/state", H5P_DEFAULT) <= 0 || H5Lexists(file, name, H5P_DEFAULT) <= 0)
        return std::nullopt;
    Hid ds(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose);
    if (ds.get() < 0) return std::nullopt;
    Hid space(H5Dget_space(ds.get()), H5Sclose);
    hsize_t n = 0;
    if (H5Sget_simple_extent_ndims(space.get()) != 1 || H5Sget_simple_extent_dims(space.get(), &n, nullptr) < 0 ||
        n > limit)
        return std::nullopt;
    std::string s(n, '\0');
    if (n > 0 && H5Dread(ds.get(), H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, s.data()) < 0)
        return std::nullopt;
    return s;
}

/// Smallest value of the 1-D dataset `name` over rows [0, rows), read in blocks.
std::optional<double> column_min(hid_t file, const char* name, uint64_t rows, const std::filesystem::path& path) {
    if (rows == 0) return std::nullopt;
    Hid ds(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose);
    Hid file_space(H5Dget_space(ds.get()), H5Sclose);
    constexpr uint64_t kBlock = uint64_t{1} << 20;
    std::vector<double> buf(std::min(rows, kBlock));
    double lo = std::numeric_limits<double>::infinity();
    for (uint64_t start = 0; start < rows; start += kBlock) {
        const hsize_t first = start, count = std::min(kBlock, rows - start);
        Hid mem_space(H5Screate_simple(1, &count, nullptr), H5Sclose);
        if (ds.get() < 0 || file_space.get() < 0 ||
            H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &first, nullptr, &count, nullptr) < 0 ||
            H5Dread(ds.get(), H5T_NATIVE_DOUBLE, mem_space.get(), file_space.get(), H5P_DEFAULT, buf.data()) < 0)
            throw IoError(fmt::format("trajectory '{}': cannot read {}", path.string(), name));
        lo = std::min(lo, *std::min_element(buf.begin(), buf.begin() + std::ptrdiff_t(count)));
    }
    return lo;
}

/// Rows [first, first + count) of the 1-D dataset `name` converted to `T`, or nothing if it
/// is missing or shorter.
template <class T>
std::vector<T> read_range(hid_t file, const char* name, hid_t mem_type, uint64_t first, uint64_t count) {
    const auto rows = dataset_rows(file, name);
    if (!rows || *rows < first + count || count == 0) return {};
    std::vector<T> out(count);
    Hid ds(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose);
    Hid file_space(H5Dget_space(ds.get()), H5Sclose);
    const hsize_t start = first, n = count;
    Hid mem_space(H5Screate_simple(1, &n, nullptr), H5Sclose);
    if (H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &start, nullptr, &n, nullptr) < 0 ||
        H5Dread(ds.get(), mem_type, mem_space.get(), file_space.get(), H5P_DEFAULT, out.data()) < 0)
        return {};
    return out;
}

/// Whether row `row` of the dataset `name` reads (every value of it, in the file's own type):
/// false when its chunk index fails its checksum, as one a kill tore does.
bool row_readable(hid_t file, const char* name, uint64_t row) {
    Hid ds(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose);
    Hid type(ds.get() < 0 ? H5I_INVALID_HID : H5Dget_type(ds.get()), H5Tclose);
    Hid file_space(ds.get() < 0 ? H5I_INVALID_HID : H5Dget_space(ds.get()), H5Sclose);
    if (type.get() < 0 || file_space.get() < 0) return false;
    hsize_t dims[3] = {0, 1, 1};
    const int rank = H5Sget_simple_extent_ndims(file_space.get());
    if (rank < 1 || rank > 3 || H5Sget_simple_extent_dims(file_space.get(), dims, nullptr) < 0 || row >= dims[0])
        return false;
    hsize_t start[3] = {row, 0, 0}, count[3] = {1, dims[1], dims[2]};
    Hid mem_space(H5Screate_simple(rank, count, nullptr), H5Sclose);
    std::vector<unsigned char> buffer(H5Tget_size(type.get()) * dims[1] * dims[2]);
    const bool ok = H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) >= 0 &&
                    H5Dread(ds.get(), type.get(), mem_space.get(), file_space.get(), H5P_DEFAULT, buffer.data()) >= 0;
    if (!ok) H5Eclear2(H5E_DEFAULT);
    return ok;
}


/// Why H5Fopen failed on `path`, in words naming it.
std::string open_failure(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return fmt::format("cannot open trajectory '{}': the file cannot be read ({})", path.string(),
                           std::strerror(errno));
    }
    if (std::filesystem::is_directory(path))
        return fmt::format("cannot open trajectory '{}': it is a directory", path.string());
    // HDF5's signature sits at byte 0, 512, 1024, 2048, ... (after a user block)
    static const char kSignature[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
    char buf[8];
    for (std::streamoff at = 0;; at = at == 0 ? 512 : 2 * at) {
        in.clear();
        in.seekg(at);
        if (!in.read(buf, 8)) break;
        if (std::memcmp(buf, kSignature, 8) == 0)
            return fmt::format("cannot open trajectory '{}': an HDF5 file that HDF5 cannot open "
                               "(damaged, or truncated?)",
                               path.string());
    }
    return fmt::format("'{}' is not an HDF5 file (talus info reads Talus trajectories, the .h5 "
                       "files that talus run writes)",
                       path.string());
}

/// A share as a rounded percentage that is "100 %" only when it is all and "0 %" only when
/// it is none: "91 %", "<1 %", ">99 %".
std::string percent_of_count(uint64_t part, uint64_t whole) {
    if (part == whole) return "100 %";
    if (part == 0) return "0 %";
    const double p = 100.0 * double(part) / double(whole);
    if (p < 1.0) return "<1 %";
    if (p > 99.0) return ">99 %";
    return fmt::format("{:.0f} %", p);
}

/// A percentage of a real with two significant digits, without exponent where it reads
/// better: "12 %", "2.5 %", "0.21 %", "3.1e-05 %".
std::string percent_text(double p) {
    if (p == 0.0) return "0 %";
    if (p >= 1e4 || p < 1e-3) return fmt::format("{:.1e} %", p);
    if (p >= 10.0) return fmt::format("{:.0f} %", p);
    if (p >= 1.0) return fmt::format("{:.1f} %", p);
    return fmt::format("{:.2g} %", p);
}

/// A physical quantity with two significant digits: "2.1e-05 m", "0 J".
std::string quantity(double x, const char* unit) {
    if (x == 0.0) return fmt::format("0 {}", unit);
    return fmt::format("{:.1e} {}", x, unit);
}

using talus::json_number;
std::string json_number(const std::optional<double>& x) { return x ? talus::json_number(*x) : "null"; }

}  // namespace

std::optional<double> TrajectorySummary::converged_share() const {
    if (steps == 0) return std::nullopt;
    return double(converged_steps) / double(steps);
}

std::optional<double> TrajectorySummary::max_penetration_share_of_smallest_diameter() const {
    if (!max_penetration || !smallest_diameter || *smallest_diameter <= 0.0) return std::nullopt;
    return *max_penetration / *smallest_diameter;
}

namespace {

/// Rows [first, first + n) of a (rows, width) dataset (width 1: a 1-D one), as `mem_type`.
template <class T>
std::vector<T> read_block(hid_t f, const char* name, hid_t mem_type, uint64_t first, uint64_t n,
                          int width, const std::filesystem::path& path) {
    // T may hold a whole row (a Vec3 of a (rows, 3) dataset)
    std::vector<T> out(std::size_t(n) * std::size_t(width) * H5Tget_size(mem_type) / sizeof(T));
    if (n == 0) return out;
    Hid ds(H5Dopen2(f, name, H5P_DEFAULT), H5Dclose);
    Hid space(ds.get() >= 0 ? H5Dget_space(ds.get()) : -1, H5Sclose);
    const int rank = width == 1 ? 1 : 2;
    const hsize_t start[2] = {first, 0}, count[2] = {n, hsize_t(width)};
    Hid mem(H5Screate_simple(rank, count, nullptr), H5Sclose);
    if (ds.get() < 0 || space.get() < 0 ||
        H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) < 0 ||
        H5Dread(ds.get(), mem_type, mem.get(), space.get(), H5P_DEFAULT, out.data()) < 0)
        throw IoError(fmt::format("trajectory '{}': cannot read {}", path.string(), name));
    return out;
}

}  // namespace

FrameBodies read_frame_bodies(const std::filesystem::path& path, int64_t frame) {
    const TrajectorySummary s = summarize_trajectory(path);  // complete frames, named errors
    const int64_t n = int64_t(s.frames);
    const int64_t k = frame < 0 ? n + frame : frame;
    if (k < 0 || k >= n)
        throw FrameOutOfRange(fmt::format("'{}' has {} complete frame{}: {} is out of range (0 to {}, "
                                          "or -1 to -{})",
                                          path.string(), n, n == 1 ? "" : "s", frame, n - 1, n));
    QuietHdf5 quiet;
    const hid_t f = hdf5::open_trajectory_for_reading(path.c_str());
    if (f < 0) throw IoError(open_failure(path));
    Hid file(f, H5Fclose);
    FrameBodies out;
    out.frame = uint64_t(k);
    out.precision = s.precision;
    const uint64_t at = uint64_t(k);  // the frame's index entry, alone
    out.time = read_block<double>(f, "/frames/time", H5T_NATIVE_DOUBLE, at, 1, 1, path)[0];
    out.step = read_block<uint64_t>(f, "/frames/step", H5T_NATIVE_UINT64, at, 1, 1, path)[0];
    const uint64_t first = read_block<uint64_t>(f, "/frames/first_row", H5T_NATIVE_UINT64, at, 1, 1, path)[0];
    const uint64_t rows = read_block<uint64_t>(f, "/frames/row_count", H5T_NATIVE_UINT64, at, 1, 1, path)[0];
    out.id = read_block<uint64_t>(f, "/bodies/id", H5T_NATIVE_UINT64, first, rows, 1, path);
    out.position = read_block<Vec3>(f, "/bodies/position", H5T_NATIVE_DOUBLE, first, rows, 3, path);
    out.velocity = read_block<Vec3>(f, "/bodies/velocity", H5T_NATIVE_DOUBLE, first, rows, 3, path);
    out.angular_velocity = read_block<Vec3>(f, "/bodies/angular_velocity", H5T_NATIVE_DOUBLE, first, rows, 3, path);
    const auto q = read_block<double>(f, "/bodies/orientation", H5T_NATIVE_DOUBLE, first, rows, 4, path);
    for (uint64_t i = 0; i < rows; ++i)
        out.orientation.emplace_back(q[4 * i], q[4 * i + 1], q[4 * i + 2], q[4 * i + 3]);  // w, x, y, z
    out.radius = read_block<double>(f, "/bodies/radius", H5T_NATIVE_DOUBLE, first, rows, 1, path);
    out.material = read_block<uint32_t>(f, "/bodies/material", H5T_NATIVE_UINT32, first, rows, 1, path);
    out.shape = dataset_rows(f, "/bodies/shape")
                    ? read_block<uint8_t>(f, "/bodies/shape", H5T_NATIVE_UINT8, first, rows, 1, path)
                    : std::vector<uint8_t>(rows, 0);
    out.material_names = read_string_array_attribute(f, "material_names");
    return out;
}

TrajectorySummary summarize_trajectory(const std::filesystem::path& path) {
    QuietHdf5 quiet;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        throw IoError(fmt::format("cannot open trajectory '{}': no such file", path.string()));
    }
    // A plain open succeeds only on a file closed cleanly; a file still being written, or
    // left by a killed run, needs the SWMR read flag.
    TrajectorySummary s;
    s.path = path.string();
    const hid_t f = hdf5::open_trajectory_for_reading(path.c_str(), &s.closed_cleanly);
    if (f < 0) {
        H5Eclear2(H5E_DEFAULT);
        throw IoError(open_failure(path));
    }
    Hid file(f, H5Fclose);

    const auto format = read_string_attribute(f, "format");
    if (!format && read_byte_text(f, "/state/format", 64) == std::string("talus-checkpoint")) {
        const std::string trajectory = read_byte_text(f, "/state/trajectory", 1 << 16).value_or("");
        const std::string of_run =
            trajectory.empty() ? std::string("a checkpoint") : fmt::format("a checkpoint of run {}", trajectory);
        throw CheckpointNotTrajectory(
            fmt::format("'{0}' is {1}, not a trajectory: continue it with tools/run --resume {0} "
                        "(or talus run --resume {0}){2}",
                        path.string(), of_run,
                        trajectory.empty() ? std::string()
                                           : fmt::format("; talus info {} summarises the run", trajectory)),
            trajectory);
    }
    if (!format || *format != "talus-trajectory") {
        throw IoError(fmt::format(
            "'{}' is not a Talus trajectory (its root attribute format is not \"talus-trajectory\")",
            path.string()));
    }
    s.format = *format;
    s.format_version = read_int_attribute(f, "format_version").value_or(-1);
    s.talus_version = read_string_attribute(f, "talus_version").value_or("?");
    s.scene_path = read_string_attribute(f, "scene_path").value_or("");
    {
        const auto names = read_string_array_attribute(f, "material_names");
        const auto density = read_double_array_attribute(f, "material_density");
        const auto friction = read_double_array_attribute(f, "material_friction");
        for (std::size_t k = 0; k < names.size(); ++k)
            s.materials.push_back({names[k], k < density.size() ? density[k] : std::nan(""),
                                   k < friction.size() ? friction[k] : std::nan("")});
    }

    const auto index_rows =
        min_rows(f, {"/frames/time", "/frames/step", "/frames/first_row", "/frames/row_count"});
    const auto body_columns = group_datasets(f, "/bodies");
    const auto body_rows = group_rows(f, body_columns,
                                      {"/bodies/id", "/bodies/position", "/bodies/orientation", "/bodies/velocity",
                                       "/bodies/angular_velocity", "/bodies/radius", "/bodies/material"});
    if (!index_rows || !body_rows) {
        throw IoError(fmt::format("'{}' is not a complete Talus trajectory (missing /frames or /bodies)",
                                  path.string()));
    }
    {
        const std::string storage = storage_text(f);  // "float32 body rows, gzip level 1 with shuffle"
        s.precision = storage.substr(0, storage.find(' '));
        if (const auto at = storage.find("gzip level "); at != std::string::npos)
            s.compression = std::atoi(storage.c_str() + at + 11);
        s.shuffle = storage.find("with shuffle") != std::string::npos;
    }

    // Complete frames: leading index entries that are written and whose rows exist.
    const auto row_count = read_column<uint64_t>(f, "/frames/row_count", H5T_NATIVE_UINT64, *index_rows, path);
    const auto first_row = read_column<uint64_t>(f, "/frames/first_row", H5T_NATIVE_UINT64, *index_rows, path);
    uint64_t frames = 0;
    while (frames < *index_rows && row_count[frames] != kUnwritten &&
           first_row[frames] + row_count[frames] <= *body_rows)
        ++frames;
    if (H5Lexists(f, "/frames/committed", H5P_DEFAULT) > 0) {
        // written in parallel: no frame past the committed count; closed once marked so
        Hid ds(H5Dopen2(f, "/frames/committed", H5P_DEFAULT), H5Dclose);
        uint64_t committed[2] = {0, 0};
        if (ds.get() < 0 || H5Dread(ds.get(), H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, committed) < 0)
            throw IoError(fmt::format("'{}': cannot read /frames/committed", path.string()));
        frames = std::min(frames, committed[0]);
        s.parallel = true;
        s.closed_cleanly = committed[1] == 1;
    }
    if (!s.closed_cleanly && !s.parallel && frames > 0) {
        // A kill can tear the block of a body column's chunk index being rewritten (one chunk
        // per frame in small runs: docs/output-format.md): the frames whose rows it indexes
        // no longer read. It holds the newest chunks, so those frames are the last ones: count
        // the leading frames whose last row reads in every body column.
        auto readable = [&](uint64_t k) {
            if (row_count[k] == 0) return true;
            for (const std::string& c : body_columns)
                if (!row_readable(f, c.c_str(), first_row[k] + row_count[k] - 1)) {
                    s.torn_column = c;
                    return false;
                }
            return true;
        };
        if (!readable(frames - 1)) {
            uint64_t lo = 0, hi = frames - 1;  // frames below lo read; frame hi does not
            while (lo < hi) {
                const uint64_t mid = lo + (hi - lo) / 2;
                if (readable(mid)) lo = mid + 1;
                else hi = mid;
            }
            s.torn_frames = frames - hi;
            frames = hi;
        }
    }
    s.frames = frames;
    if (const auto t = dataset_rows(f, "/clumps/first"); t && *t > 0) s.clump_templates = *t - 1;
    if (frames > 0) {
        const auto time = read_column<double>(f, "/frames/time", H5T_NATIVE_DOUBLE, frames, path);
        const auto step = read_column<uint64_t>(f, "/frames/step", H5T_NATIVE_UINT64, frames, path);
        s.first_time = time.front(), s.last_time = time.back();
        s.first_step = step.front(), s.last_step = step.back();
        s.bodies = row_count[frames - 1];
        const auto shape =
            read_range<uint8_t>(f, "/bodies/shape", H5T_NATIVE_UINT8, first_row[frames - 1], s.bodies);
        uint64_t by_shape[5] = {0, 0, 0, 0, 0};
        for (const uint8_t c : shape) ++by_shape[std::min<uint8_t>(c, 4)];
        for (int k = 0; k < 5; ++k)
            if (by_shape[k] > 0)
                s.shapes.emplace_back(k < 4 ? std::string(name_of(Shape(k))) : std::string("other"), by_shape[k]);
        // the body rows of the complete frames (rows beyond them may be half written)
        uint64_t rows = 0;
        for (uint64_t k = 0; k < frames; ++k) rows = std::max(rows, first_row[k] + row_count[k]);
        auto radius = column_min(f, "/bodies/radius", rows, path);
        if (s.clump_templates > 0) {
            if (const auto n = dataset_rows(f, "/clumps/spheres"); n && *n > 0) {
                Hid ds(H5Dopen2(f, "/clumps/spheres", H5P_DEFAULT), H5Dclose);
                std::vector<double> spheres(4 * *n);
                if (H5Dread(ds.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, spheres.data()) >= 0)
                    for (uint64_t k = 0; k < *n; ++k)
                        radius = std::min(radius.value_or(spheres[4 * k + 3]), spheres[4 * k + 3]);
            }
        }
        // A capsule's or ellipsoid's /bodies/radius only encloses it. Its glyphs in the first
        // frame (/shapes/axes, three vectors each: the end spheres' and cylinder's radius, the
        // ellipsoid's semi-axes, the clump spheres') give its thickness, as the engine's
        // BodyStore::thickness_radius takes it (capsule and ellipsoid bodies exist only from
        // the start; emitters make spheres and clumps, whose spheres are counted above).
        const auto glyphs_first = read_range<uint64_t>(f, "/shapes/first_row", H5T_NATIVE_UINT64, 0, 1);
        const auto glyphs = read_range<uint64_t>(f, "/shapes/row_count", H5T_NATIVE_UINT64, 0, 1);
        if (!glyphs_first.empty() && !glyphs.empty() && glyphs[0] > 0) {
            const auto axes =
                read_block<double>(f, "/shapes/axes", H5T_NATIVE_DOUBLE, glyphs_first[0], glyphs[0], 9, path);
            for (std::size_t v = 0; v + 2 < axes.size(); v += 3) {
                const double half = std::sqrt(axes[v] * axes[v] + axes[v + 1] * axes[v + 1] + axes[v + 2] * axes[v + 2]);
                if (half > 0.0) radius = std::min(radius.value_or(half), half);
            }
        }
        if (radius) s.smallest_diameter = 2.0 * *radius;
        // sources and sinks (/flow, present only for scenes with emitters or outlets)
        for (const char* what : {"emitted", "removed"}) {
            const auto count = read_row<uint64_t>(
                f, fmt::format("/flow/{}_total_count", what).c_str(), H5T_NATIVE_UINT64, frames - 1);
            const auto mass = read_row<double>(
                f, fmt::format("/flow/{}_total_mass", what).c_str(), H5T_NATIVE_DOUBLE, frames - 1);
            if (count.empty() || mass.size() != count.size()) continue;
            TrajectorySummary::Flow flow;
            for (std::size_t j = 0; j < count.size(); ++j) flow.bodies += count[j], flow.mass += mass[j];
            flow.sources = count.size();
            (what[0] == 'e' ? s.emitted : s.removed) = flow;
        }
    }

    const auto diag_rows = group_rows(
        f, group_datasets(f, "/diagnostics"), {"/diagnostics/step", "/diagnostics/time", "/diagnostics/contacts", "/diagnostics/iterations",
            "/diagnostics/residual", "/diagnostics/kinetic_energy", "/diagnostics/potential_energy",
            "/diagnostics/solver_wall_time", "/diagnostics/envelope", "/diagnostics/converged"});
    if (diag_rows) {
        s.has_diagnostics = true;
        const auto dstep = read_column<uint64_t>(f, "/diagnostics/step", H5T_NATIVE_UINT64, *diag_rows, path);
        uint64_t steps = 0;
        while (steps < *diag_rows && dstep[steps] != kUnwritten) ++steps;
        s.steps = steps;
        if (steps > 0) {
            const auto residual = read_column<double>(f, "/diagnostics/residual", H5T_NATIVE_DOUBLE, steps, path);
            const auto iterations =
                read_column<uint32_t>(f, "/diagnostics/iterations", H5T_NATIVE_UINT32, steps, path);
            const auto converged =
                read_column<uint8_t>(f, "/diagnostics/converged", H5T_NATIVE_UINT8, steps, path);
            const auto kinetic =
                read_column<double>(f, "/diagnostics/kinetic_energy", H5T_NATIVE_DOUBLE, steps, path);
            s.last_diagnostics_step = dstep[steps - 1];
            s.last_residual = residual.back();
            s.last_iterations = iterations.back();
            s.last_converged = converged.back() != 0;
            s.converged_steps = uint64_t(std::count_if(converged.begin(), converged.end(),
                                                       [](uint8_t c) { return c != 0; }));
            s.final_kinetic_energy = kinetic.back();
            // written since joints exist; older files lack them
            const char* joint_column = "/diagnostics/joint_infeasibility";
            if (const auto rows = dataset_rows(f, joint_column); rows && *rows >= steps) {
                const auto joint = read_column<double>(f, joint_column, H5T_NATIVE_DOUBLE, steps, path);
                s.max_joint_infeasibility = *std::max_element(joint.begin(), joint.end());
                s.last_joint_infeasibility = joint.back();
            }
            // stages (files written since /diagnostics/stage exists): where the index changes
            const char* stage_column = "/diagnostics/stage";
            if (const auto rows = dataset_rows(f, stage_column); rows && *rows >= steps) {
                const auto stage = read_column<uint32_t>(f, stage_column, H5T_NATIVE_UINT32, steps, path);
                const auto time = read_column<double>(f, "/diagnostics/time", H5T_NATIVE_DOUBLE, steps, path);
                const auto dt = read_column<double>(f, "/diagnostics/dt", H5T_NATIVE_DOUBLE, steps, path);
                const auto names = read_string_array_attribute(f, "stage_names");
                for (uint64_t i = 0; i < steps; ++i) {
                    if (i > 0 && stage[i] == stage[i - 1]) continue;
                    TrajectorySummary::StageStart start;
                    start.name = stage[i] < names.size() ? names[stage[i]] : fmt::format("stage {}", stage[i]);
                    // it began where the step before it ended (the first step: its own start)
                    start.time = i > 0 ? time[i - 1] : time[0] - dt[0];
                    start.step = dstep[i];
                    s.stages.push_back(std::move(start));
                }
            }
            const char* contact_column = "/diagnostics/contact_infeasibility";
            if (const auto rows = dataset_rows(f, contact_column); rows && *rows >= steps) {
                const auto depth = read_column<double>(f, contact_column, H5T_NATIVE_DOUBLE, steps, path);
                s.max_penetration = *std::max_element(depth.begin(), depth.end());
            }
        }
    }
    return s;
}

std::string describe_trajectory(const TrajectorySummary& s) {
    std::string out = fmt::format("Talus trajectory {}\n", s.path);
    auto line = [&out](const char* key, const std::string& value) {
        out += fmt::format("  {:<11} {}\n", key, value);
    };
    line("format:", fmt::format("{}, version {}", s.format, s.format_version));
    line("written by:", fmt::format("talus {}", s.talus_version));
    if (!s.scene_path.empty()) line("scene:", s.scene_path);
    line("state:", s.closed_cleanly ? std::string(s.parallel ? "closed (written in parallel)" : "closed")
                   : s.parallel ? std::string("written in parallel and not closed: being written, or the run was "
                                              "killed (readable as it is, up to its committed frames)")
                                    : fmt::format("open for writing, or the run was killed (for ParaView, "
                                                  "first run: h5clear -s --increment=0 {}, on a copy)",
                                                  s.path));
    line("storage:", fmt::format("{} body rows, {}", s.precision,
                                 s.compression > 0 ? fmt::format("gzip level {}{}", s.compression,
                                                                 s.shuffle ? " with shuffle" : "")
                                                   : std::string("uncompressed")));
    if (!s.materials.empty()) {
        std::string m;
        for (const auto& mat : s.materials)
            m += fmt::format("{}{} ({:.6g} kg/m³, friction {:.3g})", m.empty() ? "" : ", ", mat.name,
                             mat.density, mat.friction);
        line("materials:", m);
    }
    line("frames:", fmt::format("{}", s.frames));
    if (s.torn_frames > 0)
        line("torn:", fmt::format("{} more frame{} not counted: their rows' chunk index ({}) fails its "
                                  "checksum, torn by the kill (docs/output-format.md)",
                                  s.torn_frames, s.torn_frames == 1 ? " is" : "s are", s.torn_column));
    if (s.frames > 0) {
        line("time:", fmt::format("{:.6g} s to {:.6g} s (steps {} to {})", s.first_time, s.last_time,
                                  s.first_step, s.last_step));
        line("bodies:", fmt::format("{} in the last frame", group_digits(s.bodies)));
        if (!s.shapes.empty()) {
            std::string text;
            for (const auto& [name, n] : s.shapes)
                text += (text.empty() ? "" : ", ") + count_of(n, name.c_str(), (name + "s").c_str());
            line("shapes:", text + " in the last frame");
        }
        if (s.clump_templates > 0) line("clumps:", count_of(s.clump_templates, "template", "templates"));
        for (const auto* flow : {&s.emitted, &s.removed}) {
            if (!*flow) continue;
            const bool emitted = flow == &s.emitted;
            line(emitted ? "emitted:" : "removed:",
                 fmt::format("{}, {:.6g} kg by the last frame ({})", count_of((*flow)->bodies, "body", "bodies"),
                             (*flow)->mass,
                             count_of((*flow)->sources, emitted ? "emitter" : "outlet",
                                      emitted ? "emitters" : "outlets")));
        }
    }
    if (!s.has_diagnostics) {
        line("steps:", "no diagnostics");
        return out;
    }
    line("steps:", fmt::format("{} in the diagnostics", s.steps));
    if (s.steps == 0) return out;
    line("last step:", fmt::format("{}: residual {:.3g} m/s after {} ({})", s.last_diagnostics_step,
                                   s.last_residual, count_of(s.last_iterations, "iteration", "iterations"),
                                   s.last_converged ? "converged" : "not converged"));
    line("converged:", fmt::format("{} of {} ({})", group_digits(s.converged_steps), count_of(s.steps, "step", "steps"),
                                   percent_of_count(s.converged_steps, s.steps)));
    if (s.max_penetration) {
        std::string text = fmt::format("largest {}", quantity(*s.max_penetration, "m"));
        if (const auto share = s.max_penetration_share_of_smallest_diameter())
            text += fmt::format(" ({} of the smallest diameter, {})", percent_text(100.0 * *share),
                                quantity(*s.smallest_diameter, "m"));
        line("penetration:", text);
    }
    if (s.final_kinetic_energy)
        line("kinetic:", fmt::format("{} at the last step", quantity(*s.final_kinetic_energy, "J")));
    if (s.stages.size() > 1) {  // (one stage is the whole run: nothing to tell)
        std::string text;
        for (const auto& st : s.stages)
            text += fmt::format("{}{} from {:.6g} s (step {})", text.empty() ? "" : ", ", st.name, st.time, st.step);
        line("stages:", text);
    }
    if (s.max_joint_infeasibility && *s.max_joint_infeasibility > 0.0)
        line("joints:", fmt::format("infeasibility max |g| {:.2g} over the run, {:.2g} at the last step (m or rad)",
                                    *s.max_joint_infeasibility, *s.last_joint_infeasibility));
    return out;
}

std::string describe_trajectory(const std::filesystem::path& path) {
    return describe_trajectory(summarize_trajectory(path));
}

std::string trajectory_json(const TrajectorySummary& s) {
    const bool framed = s.frames > 0, stepped = s.steps > 0;
    std::string materials, shapes;
    for (const auto& m : s.materials)
        materials += fmt::format("{}{{\"name\": {}, \"density\": {}, \"friction\": {}}}", materials.empty() ? "" : ", ",
                                 json_string(m.name), json_number(m.density), json_number(m.friction));
    for (const auto& [name, n] : s.shapes) shapes += fmt::format("{}{}: {}", shapes.empty() ? "" : ", ", json_string(name), n);
    auto flow = [](const std::optional<TrajectorySummary::Flow>& f, const char* sources) {
        if (!f) return std::string("null");
        return fmt::format("{{\"bodies\": {}, \"mass\": {}, \"{}\": {}}}", f->bodies, json_number(f->mass), sources,
                           f->sources);
    };
    auto opt_u64 = [](bool have, uint64_t v) { return have ? std::to_string(v) : std::string("null"); };
    std::string out = "{";
    out += fmt::format("\"file\": {}, \"format\": {}, \"format_version\": {}, \"talus_version\": {}, ",
                       json_string(s.path), json_string(s.format), s.format_version, json_string(s.talus_version));
    out += fmt::format("\"scene_path\": {}, \"closed\": {}, ", json_string(s.scene_path),
                       s.closed_cleanly ? "true" : "false");
    out += fmt::format("\"precision\": {}, \"compression\": {}, \"shuffle\": {}, ", json_string(s.precision),
                       s.compression, s.shuffle ? "true" : "false");
    out += fmt::format("\"materials\": [{}], ", materials);
    out += fmt::format("\"frames\": {}, \"first_time\": {}, \"last_time\": {}, \"first_step\": {}, "
                       "\"last_step\": {}, ",
                       s.frames, framed ? json_number(s.first_time) : "null",
                       framed ? json_number(s.last_time) : "null", opt_u64(framed, s.first_step),
                       opt_u64(framed, s.last_step));
    out += fmt::format("\"torn_frames\": {}, ", s.torn_frames);
    out += fmt::format("\"bodies\": {}, \"shapes\": {{{}}}, \"clump_templates\": {}, ", opt_u64(framed, s.bodies),
                       shapes, s.clump_templates);
    out += fmt::format("\"emitted\": {}, \"removed\": {}, ", flow(s.emitted, "emitters"), flow(s.removed, "outlets"));
    out += fmt::format("\"steps\": {}, \"converged_steps\": {}, \"converged_share\": {}, ",
                       opt_u64(s.has_diagnostics, s.steps), opt_u64(s.has_diagnostics, s.converged_steps),
                       json_number(s.converged_share()));
    out += fmt::format("\"last_diagnostics_step\": {}, \"last_residual\": {}, \"last_iterations\": {}, "
                       "\"last_converged\": {}, ",
                       opt_u64(stepped, s.last_diagnostics_step), stepped ? json_number(s.last_residual) : "null",
                       opt_u64(stepped, s.last_iterations),
                       stepped ? (s.last_converged ? "true" : "false") : "null");
    out += fmt::format("\"max_penetration\": {}, \"smallest_diameter\": {}, "
                       "\"max_penetration_share_of_smallest_diameter\": {}, ",
                       json_number(s.max_penetration), json_number(s.smallest_diameter),
                       json_number(s.max_penetration_share_of_smallest_diameter()));
    std::string stages;
    for (const auto& st : s.stages)
        stages += fmt::format("{}{{\"name\": {}, \"start_time\": {}, \"start_step\": {}}}", stages.empty() ? "" : ", ",
                              json_string(st.name), json_number(st.time), st.step);
    out += fmt::format("\"stages\": [{}], ", stages);
    out += fmt::format("\"final_kinetic_energy\": {}, \"max_joint_infeasibility\": {}}}",
                       json_number(s.final_kinetic_energy), json_number(s.max_joint_infeasibility));
    return out + "\n";
}

}  // namespace talus
