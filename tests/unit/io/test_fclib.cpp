// FCLIB problems (io/fclib.hpp, solvers/delassus.hpp): hand-written tiny problems in each
// matrix storage (CSR, CSC, triplets) read back exactly, a global problem condensed to
// W = Hᵀ M⁻¹ H as a dense solve gives it, files that are not problems refused with their
// name, and every 3-D problem of tests/data/fclib solved to ‖F‖₂/(1+‖q‖₂) ≤ 1e-6 by the
// exact-Coulomb solvers within the caps stated below.
#include <gtest/gtest.h>

#include <cstdio>
#include <hdf5.h>

extern "C" {
#include <fclib.h>
}

#include <Eigen/Dense>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/fclib.hpp"
#include "solvers/delassus.hpp"

namespace talus {
namespace {

namespace fs = std::filesystem;

const fs::path kData = fs::path(TALUS_SOURCE_DIR) / "tests" / "data" / "fclib";

fs::path scratch(const std::string& name) {
    const fs::path dir = fs::path(TALUS_BINARY_DIR) / "test_fclib";
    fs::create_directories(dir);
    fs::remove(dir / name);
    return dir / name;
}

/// A dense matrix in CSparse storage: nz = −2 CSR, −1 CSC, ≥ 0 triplets (zeros left out).
struct Stored {
    std::vector<int> p, i;
    std::vector<double> x;
    fclib_matrix m{};

    Stored(const Eigen::MatrixXd& A, int nz) {
        const int rows = int(A.rows()), cols = int(A.cols());
        if (nz == -2 || nz == -1) {
            const int outer = nz == -2 ? rows : cols, inner = nz == -2 ? cols : rows;
            p.push_back(0);
            for (int o = 0; o < outer; ++o) {
                for (int k = 0; k < inner; ++k) {
                    const double v = nz == -2 ? A(o, k) : A(k, o);
                    if (v == 0.0) continue;
                    i.push_back(k);
                    x.push_back(v);
                }
                p.push_back(int(x.size()));
            }
        } else {
            for (int c = cols - 1; c >= 0; --c)  // any order will do: backwards
                for (int r = 0; r < rows; ++r)
                    if (A(r, c) != 0.0) {
                        i.push_back(r);
                        p.push_back(c);
                        x.push_back(A(r, c));
                    }
        }
        m.m = rows;
        m.n = cols;
        m.nzmax = int(x.size());
        m.nz = nz >= 0 ? int(x.size()) : nz;
        m.p = p.data();
        m.i = i.data();
        m.x = x.data();
        m.info = nullptr;
    }
};

Eigen::MatrixXd dense(const DelassusProblem& p) { return Eigen::MatrixXd(p.W); }

// Two contacts, W 6 × 6 (with zero entries and a non-symmetric pair), q and μ as written.
TEST(Fclib, ReadsLocalProblemsInEachMatrixFormat) {
    Eigen::MatrixXd W(6, 6);
    W << 2.0, 0.1, 0.0, 0.5, 0.0, 0.0,
         0.1, 3.0, 0.2, 0.0, 0.0, 0.0,
         0.0, 0.25, 4.0, 0.0, 0.0, 0.3,
         0.5, 0.0, 0.0, 5.0, 0.0, 0.0,
         0.0, 0.0, 0.0, 0.0, 6.0, 0.7,
         0.0, 0.0, 0.3, 0.0, 0.7, 7.0;
    std::vector<double> q{-1.0, 0.5, 0.25, -2.0, 0.0, 1.5}, mu{0.3, 0.6};
    for (const int nz : {-2, -1, 0}) {
        Stored s(W, nz);
        fclib_local local{};
        local.W = &s.m;
        local.q = q.data();
        local.mu = mu.data();
        local.spacedim = 3;
        const fs::path file = scratch("local" + std::to_string(nz) + ".hdf5");
        ASSERT_EQ(fclib_write_local(&local, file.c_str()), 1) << "nz = " << nz;
        const FclibProblem fp = read_fclib(file);
        EXPECT_EQ(fp.formulation, "local");
        ASSERT_EQ(fp.problem.contacts(), 2u);
        EXPECT_EQ(dense(fp.problem), W) << "nz = " << nz;  // exact: nothing is computed
        EXPECT_EQ(fp.problem.q, Eigen::Map<const Eigen::VectorXd>(q.data(), 6));
        EXPECT_EQ(fp.problem.mu, mu);
    }
}

// M 4 × 4 SPD but not diagonal (triplets), H 4 × 3 (CSC): W and q against a dense LU solve.
TEST(Fclib, CondensesGlobalProblemsToHtMinvH) {
    Eigen::MatrixXd M(4, 4), H(4, 3);
    M << 4.0, 1.0, 0.0, 0.0,
         1.0, 3.0, 0.5, 0.0,
         0.0, 0.5, 2.0, 0.25,
         0.0, 0.0, 0.25, 1.0;
    H << 1.0, 0.0, 0.5,
         0.0, 1.0, 0.0,
         -1.0, 0.0, 0.0,
         0.0, 0.2, 1.0;
    std::vector<double> f{0.5, -9.81, 0.0, 1.0}, w{0.1, 0.0, -0.2}, mu{0.4};
    for (const int nz : {0, -1, -2}) {
        Stored sm(M, nz), sh(H, nz == 0 ? -1 : 0);
        fclib_global global{};
        global.M = &sm.m;
        global.H = &sh.m;
        global.f = f.data();
        global.w = w.data();
        global.mu = mu.data();
        global.spacedim = 3;
        const fs::path file = scratch("global" + std::to_string(nz) + ".hdf5");
        ASSERT_EQ(fclib_write_global(&global, file.c_str()), 1);
        const FclibProblem fp = read_fclib(file);
        EXPECT_EQ(fp.formulation, "global");
        EXPECT_EQ(fp.dofs, 4);
        const Eigen::PartialPivLU<Eigen::MatrixXd> lu(M);
        const Eigen::MatrixXd Wd = H.transpose() * lu.solve(H);
        const Eigen::VectorXd qd = H.transpose() * lu.solve(Eigen::Map<Eigen::VectorXd>(f.data(), 4)) +
                                   Eigen::Map<Eigen::VectorXd>(w.data(), 3);
        EXPECT_LE((dense(fp.problem) - Wd).norm(), 1e-14 * Wd.norm());
        EXPECT_LE((fp.problem.q - qd).norm(), 1e-14 * qd.norm());
    }
}

void expect_refused(const fs::path& file, const std::string& words) {
    try {
        read_fclib(file);
        ADD_FAILURE() << file << " was accepted";
    } catch (const FclibError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find(file.string()), std::string::npos) << what;
        EXPECT_NE(what.find(words), std::string::npos) << what;
    }
}

TEST(Fclib, RefusesWhatIsNotAThreeDimensionalProblemNamingTheFile) {
    expect_refused(scratch("missing.hdf5"), "no such file");
    const fs::path text = scratch("text.hdf5");
    std::ofstream(text) << "not hdf5\n";
    expect_refused(text, "not an HDF5 file");
    expect_refused(fs::path(TALUS_SOURCE_DIR) / "tests" / "data" / "fclib" / "README.md", "not an HDF5 file");
    expect_refused(kData / "Chute-ndof-768-nc-4-3.hdf5", "spacedim 5");
    // an HDF5 file with neither problem group
    const fs::path empty = scratch("empty.hdf5");
    const hid_t f = H5Fcreate(empty.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(f, 0);
    H5Fclose(f);
    expect_refused(empty, "not an FCLIB problem");
}

/// A valid two-contact local problem in CSR at `file`.
void write_small_local(const fs::path& file) {
    Eigen::MatrixXd W = 2.0 * Eigen::MatrixXd::Identity(6, 6);
    W(0, 3) = W(3, 0) = 0.5;
    Stored s(W, -2);
    std::vector<double> q{-1.0, 0.5, 0.25, -2.0, 0.0, 1.5}, mu{0.3, 0.6};
    fclib_local local{};
    local.W = &s.m;
    local.q = q.data();
    local.mu = mu.data();
    local.spacedim = 3;
    fs::remove(file);  // libfclib will not write over a file
    ASSERT_EQ(fclib_write_local(&local, file.c_str()), 1);
}

/// Replaces dataset `path` of `file` by `values` (any length).
template <class T>
void replace_dataset(const fs::path& file, const char* path, const std::vector<T>& values, hid_t type) {
    const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    ASSERT_GE(f, 0);
    H5Ldelete(f, path, H5P_DEFAULT);
    const hsize_t n = values.size();
    const hid_t space = H5Screate_simple(1, &n, nullptr);
    const hid_t d = H5Dcreate2(f, path, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(d, 0);
    H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
    H5Dclose(d);
    H5Sclose(space);
    H5Fclose(f);
}

// A damaged file is refused before libfclib reads it (it would size its buffers from the
// stored m, n, nz, nzmax and overrun them): arrays longer than nzmax, a row-pointer array
// of the wrong length, a q or μ of the wrong length, a missing dataset.
TEST(Fclib, RefusesArraysThatDoNotFitTheirMatrix) {
    const fs::path file = scratch("damaged.hdf5");
    write_small_local(file);
    ASSERT_NO_THROW(read_fclib(file));
    replace_dataset(file, "/fclib_local/W/nzmax", std::vector<int>{3}, H5T_NATIVE_INT);
    expect_refused(file, "do not fit");

    write_small_local(file);
    replace_dataset(file, "/fclib_local/W/p", std::vector<int>{0, 2, 3}, H5T_NATIVE_INT);
    expect_refused(file, "do not fit");

    write_small_local(file);
    replace_dataset(file, "/fclib_local/vectors/q", std::vector<double>(100, 1.0), H5T_NATIVE_DOUBLE);
    expect_refused(file, "/fclib_local/vectors/q has 100 elements, expected 6");

    write_small_local(file);
    replace_dataset(file, "/fclib_local/vectors/mu", std::vector<double>{0.3}, H5T_NATIVE_DOUBLE);
    expect_refused(file, "/fclib_local/vectors/mu has 1 elements, expected 2");

    write_small_local(file);
    {
        const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
        H5Ldelete(f, "/fclib_local/W/x", H5P_DEFAULT);
        H5Fclose(f);
    }
    expect_refused(file, "/fclib_local/W/x is missing");
}

struct Case {
    const char* file;
    const char* formulation;
    std::size_t contacts;
};
const Case kProblems[] = {
    {"Box_Stacks-i0122-82-5.hdf5", "global", 82},
    {"Capsules-i125-1213.hdf5", "local", 286},
    {"CubeH8.hdf5", "global", 1},
    {"LMGC_100_PR_PerioBox-i00361-60-03000.hdf5", "local", 60},
    {"LMGC_GlobalFrictionContactProblem00046.hdf5", "global", 9},
    {"Spheres-i099-356-679.hdf5", "global", 356},
    {"spheres-in-a-box-98-i10000-256-10.hdf5", "global", 256},
};

/// Solve with `type` under Coulomb from r = 0, cap `cap`; the accuracy is recomputed from r.
void expect_solved(SolverType type, int cap) {
    for (const Case& c : kProblems) {
        SCOPED_TRACE(c.file);
        const FclibProblem fp = read_fclib(kData / c.file);
        EXPECT_EQ(fp.formulation, c.formulation);
        EXPECT_EQ(fp.problem.contacts(), c.contacts);
        SolverSettings s;
        s.type = type;
        s.friction = FrictionLaw::Coulomb;
        s.tolerance = 1e-6;
        s.max_iterations = cap;
        Eigen::VectorXd r;
        const SolverResult res = solve_delassus(fp.problem, s, r);
        ASSERT_TRUE(res.refused.empty()) << res.refused;
        const DelassusAccuracy a = delassus_accuracy(fp.problem, r);
        EXPECT_TRUE(res.converged) << res.iterations << " iterations, " << res.residual;
        EXPECT_LE(a.relative_error, 1e-6);
        EXPECT_EQ(a.relative_error, res.residual);
        EXPECT_LE(res.iterations, cap);
        EXPECT_GT(a.sum_rn, 0.0) << "every problem carries load";
        std::printf("[ %s, %s ] %d iterations\n", solver_name(type), c.file, res.iterations);
    }
}

// The exact-Coulomb Gauss–Seidel: at most 1243 sweeps were needed (spheres-in-a-box,
// Capsules) when written; cap 5000.
TEST(Fclib, NsgsSolvesEveryThreeDimensionalProblem) { expect_solved(SolverType::NSGS, 5000); }

// bgs's own Coulomb step (normal, then the tangent clipped to μ γ_n, in its block metric):
// at most 8260 sweeps (spheres-in-a-box; the test prints each problem's count) when
// written; cap 40000.
TEST(Fclib, BgsSolvesEveryThreeDimensionalProblem) { expect_solved(SolverType::BGS, 40000); }

// De Saxcé's fixed point over APGD: at most 2243 gradient steps (spheres-in-a-box); cap 10000.
TEST(Fclib, FixedPointOverApgdSolvesEveryThreeDimensionalProblem) { expect_solved(SolverType::APGD, 10000); }

// ... and over PGS: at most 16297 sweeps (spheres-in-a-box); cap 40000.
TEST(Fclib, FixedPointOverPgsSolvesEveryThreeDimensionalProblem) { expect_solved(SolverType::PGS, 40000); }

// The CCP relaxation of the same problem is another problem: its solution has the
// sliding contacts separating, so it is not a Coulomb solution (on Spheres, μ = 0.7).
TEST(Fclib, CcpSolutionIsNotACoulombSolution) {
    const FclibProblem fp = read_fclib(kData / "Spheres-i099-356-679.hdf5");
    SolverSettings s;
    s.type = SolverType::PGS;
    s.friction = FrictionLaw::CCP;
    s.tolerance = 1e-8;
    s.max_iterations = 100000;
    Eigen::VectorXd r;
    const SolverResult res = solve_delassus(fp.problem, s, r);
    ASSERT_TRUE(res.converged);
    EXPECT_LE(delassus_accuracy(fp.problem, r, FrictionLaw::CCP).relative_error, 1e-8);
    EXPECT_GT(delassus_accuracy(fp.problem, r, FrictionLaw::Coulomb).relative_error, 1e-6);
}

}  // namespace
}  // namespace talus

namespace talus {
namespace {

// One contact, W = I, q = (−1, 2, 0), μ = 0.5: the contact slides along u, r = (1, −0.5, 0),
// u = (0, 1.5, 0). The friction direction is an edge of lemke's cone and W is isotropic,
// so every solver's model gives this answer: each must find it (within 1e-9).
TEST(Delassus, EverySolverFindsTheSlidingContactsAnswer) {
    DelassusProblem p;
    p.W = Eigen::SparseMatrix<double, Eigen::RowMajor>(3, 3);
    p.W.setIdentity();
    p.q = Eigen::Vector3d(-1.0, 2.0, 0.0);
    p.mu = {0.5};
    for (SolverType type : {SolverType::NSGS, SolverType::PGS, SolverType::PJ, SolverType::APGD,
                            SolverType::MaxDiss, SolverType::Lemke}) {
        SolverSettings s;
        s.type = type;
        s.friction = FrictionLaw::Coulomb;
        s.tolerance = 1e-12;
        s.max_iterations = 10000;
        Eigen::VectorXd r;
        const SolverResult res = solve_delassus(p, s, r);
        ASSERT_TRUE(res.refused.empty()) << solver_name(type) << ": " << res.refused;
        EXPECT_TRUE(res.converged) << solver_name(type);
        EXPECT_LE((r - Eigen::Vector3d(1.0, -0.5, 0.0)).norm(), 1e-9) << solver_name(type) << ": " << r.transpose();
        EXPECT_LE(res.residual, 1e-9) << solver_name(type);
    }
}

// lemke refuses a problem above its size limit, naming the count; maxdiss and lemke report
// the Coulomb accuracy of their answers, which on Capsules they do not reach.
TEST(Delassus, OwnModelSolversReportTheirCoulombAccuracy) {
    const FclibProblem spheres = read_fclib(kData / "Spheres-i099-356-679.hdf5");
    SolverSettings s;
    s.type = SolverType::Lemke;
    s.friction = FrictionLaw::Coulomb;
    Eigen::VectorXd r;
    const SolverResult big = solve_delassus(spheres.problem, s, r);
    EXPECT_NE(big.refused.find("356 contacts × (8 friction directions + 2) make 3560"), std::string::npos)
        << big.refused;
    const FclibProblem box = read_fclib(kData / "Box_Stacks-i0122-82-5.hdf5");
    for (SolverType type : {SolverType::MaxDiss, SolverType::Lemke}) {
        s.type = type;
        s.tolerance = 1e-8;
        s.max_iterations = 20000;
        r.resize(0);
        const SolverResult res = solve_delassus(box.problem, s, r);
        ASSERT_TRUE(res.refused.empty()) << res.refused;
        EXPECT_TRUE(res.converged) << solver_name(type);
        EXPECT_EQ(res.residual, delassus_accuracy(box.problem, r).relative_error);
        EXPECT_GT(res.residual, 1e-6) << solver_name(type) << " is not the Coulomb law here";
        EXPECT_LT(res.residual, 1e-3) << solver_name(type) << " is close to it";
    }
}

}  // namespace
}  // namespace talus
