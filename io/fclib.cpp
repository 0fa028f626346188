// Reading FCLIB problems (io/fclib.hpp). libfclib does the HDF5 reading; it assumes a
// well-formed file, so the groups are checked here first (with HDF5's error printing off)
// and every index it hands back is range-checked before use.
#include "io/fclib.hpp"

extern "C" {  // fclib.h is a C header without its own extern "C"
#include <fclib.h>
}
#include <hdf5.h>

#include <Eigen/SparseLU>
#include <fmt/format.h>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <vector>

#include "io/hdf5_handles.hpp"

namespace talus {
namespace {

using ColMatrix = Eigen::SparseMatrix<double>;

[[noreturn]] void fail(const std::filesystem::path& file, const std::string& what) {
    throw FclibError(fmt::format("{}: {}", file.string(), what));
}

/// Which of the two problem groups the file holds ("" if neither).
std::string problem_group(const std::filesystem::path& file) {
    hdf5::QuietHdf5 quiet;
    if (H5Fis_hdf5(file.c_str()) <= 0) fail(file, "not an HDF5 file");
    hdf5::Hid f(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
    if (!f.valid()) fail(file, "cannot open it for reading");
    for (const char* g : {"fclib_local", "fclib_global", "fclib_global_rolling"})
        if (H5Lexists(f.get(), g, H5P_DEFAULT) > 0) return g;
    return {};
}

/// libfclib reads each array into a buffer sized from the matrix's own m, n, nz and nzmax,
/// without comparing it with the dataset's length: check that here first, so a damaged or
/// hostile file is refused instead of overrunning memory.
class Layout {
public:
    Layout(const std::filesystem::path& file) : file_(file) {
        f_ = hdf5::Hid(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
        if (!f_.valid()) fail(file, "cannot open it for reading");
    }

    /// Elements of dataset `path`; fails naming it when it is missing.
    long length(const std::string& path) const {
        if (H5Lexists(f_.get(), path.c_str(), H5P_DEFAULT) <= 0 && !exists_parents(path))
            fail(file_, fmt::format("/{} is missing", path));
        hdf5::Hid d(H5Dopen2(f_.get(), path.c_str(), H5P_DEFAULT), H5Dclose);
        if (!d.valid()) fail(file_, fmt::format("/{} is missing or not a dataset", path));
        hdf5::Hid sp(H5Dget_space(d.get()), H5Sclose);
        const hssize_t n = sp.valid() ? H5Sget_simple_extent_npoints(sp.get()) : -1;
        if (n < 0) fail(file_, fmt::format("/{} cannot be read", path));
        return long(n);
    }
    bool has(const std::string& path) const {
        return exists_parents(path) && H5Lexists(f_.get(), path.c_str(), H5P_DEFAULT) > 0;
    }
    /// A one-element integer dataset.
    long integer(const std::string& path) const {
        if (length(path) != 1) fail(file_, fmt::format("/{} must hold one integer", path));
        hdf5::Hid d(H5Dopen2(f_.get(), path.c_str(), H5P_DEFAULT), H5Dclose);
        long long v = 0;
        if (H5Dread(d.get(), H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, &v) < 0)
            fail(file_, fmt::format("/{} cannot be read as an integer", path));
        return long(v);
    }
    /// The CSparse arrays of matrix group `g` agree with its m, n, nz, nzmax; returns m and n.
    std::pair<long, long> matrix(const std::string& g) const {
        const long m = integer(g + "/m"), n = integer(g + "/n"), nz = integer(g + "/nz"),
                   nzmax = integer(g + "/nzmax");
        if (m <= 0 || n <= 0 || nzmax < 0 || nz < -2 || m > (1L << 30) || n > (1L << 30) || nzmax > (1L << 31))
            fail(file_, fmt::format("/{}: m = {}, n = {}, nz = {}, nzmax = {} are not a matrix's", g, m, n, nz, nzmax));
        const long lp = length(g + "/p"), li = length(g + "/i"), lx = length(g + "/x");
        const bool ok = nz >= 0 ? (nz <= nzmax && lp <= nzmax && li <= nzmax && lx <= nzmax && lp >= nz &&
                                   li >= nz && lx >= nz)
                                : (lp == (nz == -1 ? n : m) + 1 && li <= nzmax && lx <= nzmax && li == lx);
        if (!ok)
            fail(file_, fmt::format("/{}: arrays p, i, x of {}, {}, {} elements do not fit m = {}, n = {}, "
                                    "nz = {}, nzmax = {}", g, lp, li, lx, m, n, nz, nzmax));
        return {m, n};
    }
    void vector(const std::string& path, long expected) const {
        const long l = length(path);
        if (l != expected)
            fail(file_, fmt::format("/{} has {} elements, expected {}", path, l, expected));
    }

private:
    bool exists_parents(const std::string& path) const {
        std::size_t at = 0;
        while ((at = path.find('/', at + 1)) != std::string::npos)
            if (H5Lexists(f_.get(), path.substr(0, at).c_str(), H5P_DEFAULT) <= 0) return false;
        return true;
    }
    std::filesystem::path file_;
    hdf5::Hid f_;
};

/// A CSparse-form fclib_matrix (CSR, CSC or triplets) as an Eigen matrix of the expected size.
ColMatrix to_eigen(const std::filesystem::path& file, const char* name, const fclib_matrix* m,
                   long rows, long cols) {
    if (m == nullptr) fail(file, fmt::format("matrix {} is missing", name));
    if (m->m != rows || m->n != cols)
        fail(file, fmt::format("matrix {} is {} × {}, expected {} × {}", name, m->m, m->n, rows, cols));
    std::vector<Eigen::Triplet<double>> entries;
    auto add = [&](long r, long c, double v) {
        if (r < 0 || r >= rows || c < 0 || c >= cols)
            fail(file, fmt::format("matrix {} has an entry at ({}, {}) outside its {} × {}", name, r, c, rows, cols));
        if (!std::isfinite(v)) fail(file, fmt::format("matrix {} has a non-finite entry at ({}, {})", name, r, c));
        entries.emplace_back(Eigen::Index(r), Eigen::Index(c), v);
    };
    if (m->nz >= 0) {  // triplets: rows in i, columns in p
        for (long k = 0; k < m->nz; ++k) add(m->i[k], m->p[k], m->x[k]);
    } else if (m->nz == -1 || m->nz == -2) {  // compressed columns (−1) or rows (−2)
        const long outer = m->nz == -1 ? cols : rows;
        if (m->p[0] != 0) fail(file, fmt::format("matrix {}: compressed pointers must start at 0", name));
        for (long o = 0; o < outer; ++o) {
            if (m->p[o + 1] < m->p[o] || m->p[o + 1] > m->nzmax)
                fail(file, fmt::format("matrix {}: compressed pointers must rise within nzmax", name));
            for (long k = m->p[o]; k < m->p[o + 1]; ++k) {
                if (m->nz == -1) add(m->i[k], o, m->x[k]);
                else add(o, m->i[k], m->x[k]);
            }
        }
    } else {
        fail(file, fmt::format("matrix {} has storage code nz = {} (expected −2, −1 or ≥ 0)", name, m->nz));
    }
    ColMatrix out(rows, cols);
    out.setFromTriplets(entries.begin(), entries.end());
    return out;
}

Eigen::VectorXd to_vector(const std::filesystem::path& file, const char* name, const double* x, long size) {
    if (x == nullptr) fail(file, fmt::format("vector {} is missing", name));
    Eigen::VectorXd v = Eigen::Map<const Eigen::VectorXd>(x, size);
    if (!v.allFinite()) fail(file, fmt::format("vector {} has entries that are not finite", name));
    return v;
}

// fclib_delete_local/global free what the problem holds but not the struct that
// fclib_read_local/global allocated (LeakSanitizer: 64/72 bytes per read): free it too.
void delete_local(fclib_local* p) {
    fclib_delete_local(p);
    std::free(p);
}
void delete_global(fclib_global* p) {
    fclib_delete_global(p);
    std::free(p);
}

std::string title_of(const fclib_info* info) {
    return info != nullptr && info->title != nullptr ? std::string(info->title) : std::string();
}

}  // namespace

FclibProblem read_fclib(const std::filesystem::path& file) {
    if (!std::filesystem::is_regular_file(file)) fail(file, "no such file");
    const std::string group = problem_group(file);
    if (group.empty()) fail(file, "holds neither /fclib_local nor /fclib_global (not an FCLIB problem)");
    if (group == "fclib_global_rolling")
        fail(file, "a problem with rolling friction (spacedim 5); Talus reads 3-D problems only");
    FclibProblem out;
    DelassusProblem& p = out.problem;
    hdf5::QuietHdf5 quiet;
    {
        const Layout l(file);
        if (group == "fclib_local") {
            const auto [m, n] = l.matrix("fclib_local/W");
            if (m != n || m % 3 != 0) fail(file, fmt::format("W is {} × {}, not 3n × 3n", m, n));
            l.vector("fclib_local/vectors/q", m);
            l.vector("fclib_local/vectors/mu", m / 3);
            if (l.has("fclib_local/V") || l.has("fclib_local/R"))
                fail(file, "a local problem with equality constraints (V, R); not supported");
        } else {
            const auto [dm, dn] = l.matrix("fclib_global/M");
            const auto [hm, hn] = l.matrix("fclib_global/H");
            if (dm != dn || hm != dm || hn % 3 != 0)
                fail(file, fmt::format("M is {} × {} and H {} × {}: expected d × d and d × 3n", dm, dn, hm, hn));
            l.vector("fclib_global/vectors/f", dm);
            l.vector("fclib_global/vectors/w", hn);
            l.vector("fclib_global/vectors/mu", hn / 3);
            if (l.has("fclib_global/G"))
                fail(file, "a global problem with equality constraints (G, b); not supported");
        }
        if (l.integer(std::string(group) + "/spacedim") != 3)
            fail(file, fmt::format("spacedim {}; Talus reads 3-D problems only",
                                   l.integer(std::string(group) + "/spacedim")));
    }
    if (group == "fclib_local") {
        std::unique_ptr<fclib_local, void (*)(fclib_local*)> lp(fclib_read_local(file.c_str()),
                                                               delete_local);
        if (!lp || lp->W == nullptr) fail(file, "libfclib could not read the local problem");
        if (lp->spacedim != 3)
            fail(file, fmt::format("spacedim {}; Talus reads 3-D problems only", lp->spacedim));
        const long n = lp->W->m;
        if (n <= 0 || n % 3 != 0) fail(file, fmt::format("W has {} rows, not a positive multiple of 3", n));
        if (lp->V != nullptr || lp->R != nullptr)
            fail(file, "a local problem with equality constraints (V, R); not supported");
        p.W = to_eigen(file, "W", lp->W, n, n);
        p.q = to_vector(file, "q", lp->q, n);
        const Eigen::VectorXd mu = to_vector(file, "mu", lp->mu, n / 3);
        p.mu.assign(mu.data(), mu.data() + mu.size());
        out.formulation = "local";
        out.title = title_of(lp->info);
    } else {
        std::unique_ptr<fclib_global, void (*)(fclib_global*)> gp(fclib_read_global(file.c_str()),
                                                                  delete_global);
        if (!gp || gp->M == nullptr || gp->H == nullptr) fail(file, "libfclib could not read the global problem");
        if (gp->spacedim != 3)
            fail(file, fmt::format("spacedim {}; Talus reads 3-D problems only", gp->spacedim));
        if (gp->G != nullptr) fail(file, "a global problem with equality constraints (G, b); not supported");
        const long dofs = gp->M->m, rows = gp->H->n;
        if (dofs <= 0) fail(file, "M is empty");
        if (rows <= 0 || rows % 3 != 0) fail(file, fmt::format("H has {} columns, not a positive multiple of 3", rows));
        const ColMatrix M = to_eigen(file, "M", gp->M, dofs, dofs);
        const ColMatrix H = to_eigen(file, "H", gp->H, dofs, rows);
        const Eigen::VectorXd f = to_vector(file, "f", gp->f, dofs);
        const Eigen::VectorXd w = to_vector(file, "w", gp->w, rows);
        const Eigen::VectorXd mu = to_vector(file, "mu", gp->mu, rows / 3);
        // Sparse LU, not LDLᵀ: the finite-element problems' M is not exactly symmetric, and
        // LDLᵀ would read only one triangle of it (another W than the file's).
        Eigen::SparseLU<ColMatrix, Eigen::COLAMDOrdering<int>> lu;
        lu.compute(M);
        if (lu.info() != Eigen::Success)
            fail(file, "M is singular: the problem cannot be condensed to W = Hᵀ M⁻¹ H");
        const ColMatrix MinvH = lu.solve(H);
        const Eigen::VectorXd Minvf = lu.solve(f);
        if (lu.info() != Eigen::Success || !Minvf.allFinite())
            fail(file, "M is singular: the problem cannot be condensed to W = Hᵀ M⁻¹ H");
        const ColMatrix W = H.transpose() * MinvH;
        p.W = W;
        p.q = H.transpose() * Minvf + w;
        p.mu.assign(mu.data(), mu.data() + mu.size());
        out.formulation = "global";
        out.title = title_of(gp->info);
        out.dofs = int(dofs);
    }
    p.W.makeCompressed();
    if (const std::string bad = check_delassus(p); !bad.empty()) fail(file, bad);
    return out;
}

}  // namespace talus
