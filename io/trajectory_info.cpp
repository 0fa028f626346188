// describe_trajectory: the summary behind `talus info OUT.h5`.
//
// Why this shape: the summary must work on the files that matter most when something went
// wrong: a run still writing, or one that was killed. Such files carry HDF5's "open for
// SWMR writing" mark, which plain readers (ParaView among them) refuse. So the file is opened
// read-only, and if that fails, read-only with the SWMR read flag; the summary says which
// worked, since a marked file needs `h5clear -s --increment=0` before ParaView opens it
// (`-s` alone can truncate a killed file short of its last rows: docs/output-format.md).
// A frame counts only if its index entry is complete: /frames/row_count is written last
// and its fill value 2^64-1 means "not yet written" (see trajectory_writer.cpp); the same
// holds for /diagnostics/step. Everything read is small (index and diagnostics, never body rows).
#include "io/trajectory_info.hpp"

#include <fmt/format.h>
#include <hdf5.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "io/hdf5_handles.hpp"
#include "io/trajectory_writer.hpp"

namespace talus {

namespace {

using hdf5::Hid;
using hdf5::kUnwritten;
using hdf5::QuietHdf5;

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
    if (ds.get() < 0) return std::nullopt;
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

}  // namespace

std::string describe_trajectory(const std::filesystem::path& path) {
    QuietHdf5 quiet;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        throw IoError(fmt::format("cannot open trajectory '{}': no such file", path.string()));
    }
    // A plain open succeeds only on a file closed cleanly; a file still being written, or
    // left by a killed run, needs the SWMR read flag.
    bool closed_cleanly = true;
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        closed_cleanly = false;
        f = H5Fopen(path.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, H5P_DEFAULT);
    }
    if (f < 0) {
        H5Eclear2(H5E_DEFAULT);
        throw IoError(fmt::format("cannot open trajectory '{}': not an HDF5 file, or unreadable",
                                  path.string()));
    }
    Hid file(f, H5Fclose);

    const auto format = read_string_attribute(f, "format");
    if (!format || *format != "talus-trajectory") {
        throw IoError(fmt::format(
            "'{}' is not a Talus trajectory (its root attribute format is not \"talus-trajectory\")",
            path.string()));
    }
    const int64_t version = read_int_attribute(f, "format_version").value_or(-1);
    const std::string talus_version = read_string_attribute(f, "talus_version").value_or("?");
    const std::string scene_path = read_string_attribute(f, "scene_path").value_or("");

    const auto index_rows =
        min_rows(f, {"/frames/time", "/frames/step", "/frames/first_row", "/frames/row_count"});
    const auto body_rows = min_rows(f, {"/bodies/id", "/bodies/position", "/bodies/orientation",
                                        "/bodies/velocity", "/bodies/angular_velocity",
                                        "/bodies/radius", "/bodies/material"});
    if (!index_rows || !body_rows) {
        throw IoError(fmt::format("'{}' is not a complete Talus trajectory (missing /frames or /bodies)",
                                  path.string()));
    }

    // Complete frames: leading index entries that are written and whose rows exist.
    const auto row_count = read_column<uint64_t>(f, "/frames/row_count", H5T_NATIVE_UINT64, *index_rows, path);
    const auto first_row = read_column<uint64_t>(f, "/frames/first_row", H5T_NATIVE_UINT64, *index_rows, path);
    uint64_t frames = 0;
    while (frames < *index_rows && row_count[frames] != kUnwritten &&
           first_row[frames] + row_count[frames] <= *body_rows)
        ++frames;
    const auto time = read_column<double>(f, "/frames/time", H5T_NATIVE_DOUBLE, frames, path);
    const auto step = read_column<uint64_t>(f, "/frames/step", H5T_NATIVE_UINT64, frames, path);

    std::string out = fmt::format("Talus trajectory {}\n", path.string());
    auto line = [&out](const char* key, const std::string& value) {
        out += fmt::format("  {:<12}{}\n", key, value);
    };
    line("format:", fmt::format("{}, version {}", *format, version));
    line("written by:", fmt::format("talus {}", talus_version));
    if (!scene_path.empty()) line("scene:", scene_path);
    line("state:", closed_cleanly ? std::string("closed")
                                  : fmt::format("open for writing, or the run was killed (for ParaView, "
                                                "first run: h5clear -s --increment=0 {})",
                                                path.string()));
    line("storage:", storage_text(f));
    line("frames:", fmt::format("{}", frames));
    if (frames > 0) {
        line("time:", fmt::format("{} s to {} s (steps {} to {})", time.front(), time.back(),
                                  step.front(), step.back()));
        line("bodies:", fmt::format("{} in the last frame", row_count[frames - 1]));
        // sources and sinks (/flow, present only for scenes with emitters or outlets)
        for (const char* what : {"emitted", "removed"}) {
            const auto count = read_row<uint64_t>(
                f, fmt::format("/flow/{}_total_count", what).c_str(), H5T_NATIVE_UINT64, frames - 1);
            const auto mass = read_row<double>(
                f, fmt::format("/flow/{}_total_mass", what).c_str(), H5T_NATIVE_DOUBLE, frames - 1);
            if (count.empty() || mass.size() != count.size()) continue;
            uint64_t n = 0;
            double m = 0.0;
            for (std::size_t j = 0; j < count.size(); ++j) n += count[j], m += mass[j];
            const bool emitted = what[0] == 'e';
            line(emitted ? "emitted:" : "removed:",
                 fmt::format("{} bodies, {:.6g} kg by the last frame ({} {}{})", n, m, count.size(),
                             emitted ? "emitter" : "outlet", count.size() == 1 ? "" : "s"));
        }
    }

    const auto diag_rows = min_rows(
        f, {"/diagnostics/step", "/diagnostics/time", "/diagnostics/contacts", "/diagnostics/iterations",
            "/diagnostics/residual", "/diagnostics/kinetic_energy", "/diagnostics/potential_energy",
            "/diagnostics/solver_wall_time", "/diagnostics/envelope", "/diagnostics/converged"});
    uint64_t steps = 0;
    if (diag_rows) {
        const auto dstep = read_column<uint64_t>(f, "/diagnostics/step", H5T_NATIVE_UINT64, *diag_rows, path);
        while (steps < *diag_rows && dstep[steps] != kUnwritten) ++steps;
        line("steps:", fmt::format("{} in the diagnostics", steps));
        if (steps > 0) {
            const auto residual = read_column<double>(f, "/diagnostics/residual", H5T_NATIVE_DOUBLE, steps, path);
            const auto iterations =
                read_column<uint32_t>(f, "/diagnostics/iterations", H5T_NATIVE_UINT32, steps, path);
            const auto converged =
                read_column<uint8_t>(f, "/diagnostics/converged", H5T_NATIVE_UINT8, steps, path);
            line("last step:", fmt::format("{}: residual {:.6g} m/s after {} iterations ({})",
                                           dstep[steps - 1], residual.back(), iterations.back(),
                                           converged.back() != 0 ? "converged" : "not converged"));
            // written since joints exist; older files lack it
            const char* joint_column = "/diagnostics/joint_infeasibility";
            if (const auto rows = dataset_rows(f, joint_column); rows && *rows >= steps) {
                const auto joint = read_column<double>(f, joint_column, H5T_NATIVE_DOUBLE, steps, path);
                const double worst = *std::max_element(joint.begin(), joint.end());
                if (worst > 0.0)
                    line("joints:", fmt::format("infeasibility max |g| {:.3g} over the run, {:.3g} "
                                                "at the last step (m or rad)",
                                                worst, joint.back()));
            }
        }
    } else {
        line("steps:", "no diagnostics");
    }
    return out;
}

}  // namespace talus
