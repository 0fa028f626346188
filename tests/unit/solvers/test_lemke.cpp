// Lemke's method (solvers/lemke.cpp) against independent answers: brute-force enumeration of
// all 2ⁿ complementary index sets for random P-matrices, a linear program with a known
// optimum, constructed positive semidefinite problems; a degenerate LCP that cycles under
// the plain ratio test and is solved under the lexicographic one; infeasible problems
// (ray termination), the pivot cap and invalid input.
#include <gtest/gtest.h>

#include <Eigen/LU>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <vector>

#include "solvers/lemke.hpp"

namespace talus {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

/// Uniform in [lo, hi) from the raw 32-bit output (std::mt19937 is fully specified, the
/// standard distributions are not: same numbers on every platform).
double uniform(std::mt19937& gen, double lo, double hi) {
    return lo + (hi - lo) * (static_cast<double>(gen()) / 4294967296.0);
}

MatrixXd random_matrix(std::mt19937& gen, int rows, int cols) {
    MatrixXd A(rows, cols);
    for (int j = 0; j < cols; ++j)
        for (int i = 0; i < rows; ++i) A(i, j) = uniform(gen, -1.0, 1.0);
    return A;
}

/// Symmetric positive definite (a P-matrix): A Aᵀ + I.
MatrixXd spd_matrix(std::mt19937& gen, int n) {
    const MatrixXd A = random_matrix(gen, n, n);
    return A * A.transpose() + MatrixXd::Identity(n, n);
}

/// Non-symmetric P-matrix: strictly row diagonally dominant with positive diagonal (every
/// principal submatrix is too, so every principal minor is positive).
MatrixXd dominant_matrix(std::mt19937& gen, int n) {
    MatrixXd M = random_matrix(gen, n, n);
    for (int i = 0; i < n; ++i)
        M(i, i) = M.row(i).cwiseAbs().sum() - std::abs(M(i, i)) + uniform(gen, 0.1, 1.0);
    return M;
}

/// Every solution of LCP(q, M) by enumeration: for each index set α, z_α solves
/// M_αα z_α = −q_α, z_ᾱ = 0; kept if z ≥ −tol and w = M z + q ≥ −tol (tol 1e-12 of the
/// data's size). Distinct solutions only.
std::vector<VectorXd> enumerate_solutions(const MatrixXd& M, const VectorXd& q) {
    const int n = static_cast<int>(q.size());
    const double tol = 1e-12 * (1.0 + q.cwiseAbs().maxCoeff());
    std::vector<VectorXd> found;
    for (std::uint32_t set = 0; set < (1u << n); ++set) {
        std::vector<int> alpha;
        for (int i = 0; i < n; ++i)
            if (set >> i & 1u) alpha.push_back(i);
        VectorXd z = VectorXd::Zero(n);
        if (!alpha.empty()) {
            const Eigen::FullPivLU<MatrixXd> lu(M(alpha, alpha));
            if (!lu.isInvertible()) continue;
            z(alpha) = lu.solve(-q(alpha));
        }
        const VectorXd w = M * z + q;
        if (z.minCoeff() < -tol || w.minCoeff() < -tol) continue;
        bool seen = false;
        for (const VectorXd& f : found) seen = seen || (f - z).cwiseAbs().maxCoeff() <= 1e-9;
        if (!seen) found.push_back(z);
    }
    return found;
}

/// z ≥ 0, w ≥ 0 exactly (the polish clamps); w = M z + q and max z_i w_i to `rel` of the
/// size of w, s = ‖q‖∞ + ‖M‖∞ ‖z‖∞ (times ‖z‖∞ for the products).
void expect_solves(const MatrixXd& M, const VectorXd& q, const LemkeResult& r,
                   double rel = 1e-12) {
    ASSERT_EQ(r.status, LemkeStatus::Solved) << r.message;
    ASSERT_EQ(r.z.size(), q.size());
    ASSERT_EQ(r.w.size(), q.size());
    const double zmax = r.z.size() ? r.z.cwiseAbs().maxCoeff() : 0.0;
    const double s = q.cwiseAbs().maxCoeff() + M.cwiseAbs().rowwise().sum().maxCoeff() * zmax;
    EXPECT_GE(r.z.minCoeff(), 0.0);
    EXPECT_GE(r.w.minCoeff(), 0.0);
    EXPECT_LE((r.w - M * r.z - q).cwiseAbs().maxCoeff(), rel * s);
    EXPECT_LE(r.z.cwiseProduct(r.w).cwiseAbs().maxCoeff(), rel * s * std::max(zmax, 1e-300));
    EXPECT_LE(r.residual, rel * s);
}

/// P-matrix → unique solution: Lemke (both ratio tests) must find enumeration's, to 1e-9
/// of max(1, ‖z‖∞) (the data are O(1), the matrices' condition numbers below ~10³).
void check_against_enumeration(const MatrixXd& M, const VectorXd& q, const char* what) {
    const std::vector<VectorXd> sol = enumerate_solutions(M, q);
    ASSERT_EQ(sol.size(), 1u) << what << " n = " << q.size();
    for (bool lex : {true, false}) {
        LemkeSettings s;
        s.lexicographic = lex;
        const LemkeResult r = solve_lcp_lemke(M, q, s);
        SCOPED_TRACE(::testing::Message() << what << " n = " << q.size() << " lex = " << lex);
        expect_solves(M, q, r);
        EXPECT_LE((r.z - sol[0]).cwiseAbs().maxCoeff(),
                  1e-9 * std::max(1.0, sol[0].cwiseAbs().maxCoeff()));
        EXPECT_LE(r.pivots, 50 * (static_cast<int>(q.size()) + 1));
    }
}

TEST(Lemke, NonnegativeQGivesZeroWithoutPivots) {
    const MatrixXd M = (MatrixXd(3, 3) << 1, -2, 0, 3, -1, 4, 0, 0, -5).finished();
    const VectorXd q = (VectorXd(3) << 0.0, 2.0, 0.5).finished();
    const LemkeResult r = solve_lcp_lemke(M, q);
    EXPECT_EQ(r.status, LemkeStatus::Solved);
    EXPECT_EQ(r.pivots, 0);
    EXPECT_EQ(r.z, VectorXd::Zero(3));
    EXPECT_EQ(r.w, q);
    const LemkeResult empty = solve_lcp_lemke(MatrixXd(0, 0), VectorXd(0));
    EXPECT_EQ(empty.status, LemkeStatus::Solved);
    EXPECT_EQ(empty.pivots, 0);
}

TEST(Lemke, SymmetricPositiveDefiniteMatchesEnumeration) {
    for (int n = 1; n <= 12; ++n)
        for (std::uint32_t seed : {1u, 2u, 3u}) {
            std::mt19937 gen(1000 * n + seed);
            const MatrixXd M = spd_matrix(gen, n);
            VectorXd q(n);
            for (int i = 0; i < n; ++i) q[i] = uniform(gen, -1.0, 1.0);
            check_against_enumeration(M, q, "A A^T + I");
        }
}

TEST(Lemke, NonsymmetricPMatrixMatchesEnumeration) {
    for (int n = 1; n <= 12; ++n)
        for (std::uint32_t seed : {1u, 2u, 3u}) {
            std::mt19937 gen(2000 * n + seed);
            const MatrixXd M = dominant_matrix(gen, n);
            VectorXd q(n);
            for (int i = 0; i < n; ++i) q[i] = uniform(gen, -1.0, 1.0);
            check_against_enumeration(M, q, "diagonally dominant");
        }
}

// For docs/validation/lemke.md: errors against enumeration for n ≤ 12 and pivots and
// residuals up to n = 400, both matrix kinds, written to <build>/validation/lemke_sizes.csv
// (tools/validation/plot_lemke.py). Asserts every problem solved: enumeration's solution
// to 1e-9 where it exists, the LCP conditions to 1e-10 of the data's size otherwise.
TEST(Lemke, SizesTable) {
    const std::filesystem::path dir = std::filesystem::path(TALUS_BINARY_DIR) / "validation";
    std::filesystem::create_directories(dir);
    std::ofstream csv(dir / "lemke_sizes.csv");
    csv << "kind,n,seed,pivots,residual,error_vs_enumeration\n";
    for (int n : {2, 4, 6, 8, 10, 12, 25, 50, 100, 200, 400})
        for (std::uint32_t seed = 1; seed <= 5; ++seed)
            for (const char* kind : {"spd", "dominant"}) {
                std::mt19937 gen(7000 * n + 13 * seed + (kind[0] == 'd'));
                const MatrixXd M = kind[0] == 's' ? spd_matrix(gen, n) : dominant_matrix(gen, n);
                VectorXd q(n);
                for (int i = 0; i < n; ++i) q[i] = uniform(gen, -1.0, 1.0);
                const LemkeResult r = solve_lcp_lemke(M, q);
                SCOPED_TRACE(::testing::Message() << kind << " n = " << n << " seed " << seed);
                expect_solves(M, q, r, 1e-10);
                double error = -1.0;
                if (n <= 12) {
                    const std::vector<VectorXd> sol = enumerate_solutions(M, q);
                    ASSERT_EQ(sol.size(), 1u);
                    error = (r.z - sol[0]).cwiseAbs().maxCoeff();
                    EXPECT_LE(error, 1e-9 * std::max(1.0, sol[0].cwiseAbs().maxCoeff()));
                }
                csv << kind << ',' << n << ',' << seed << ',' << r.pivots << ',' << r.residual << ',';
                if (error >= 0.0) csv << error;
                csv << '\n';
            }
}

// Units must not matter: LCP(d q, c M) is solved by (d / c) z. Factors that are not powers
// of two (the solver's internal scaling is exact only for those); agreement to 1e-9.
TEST(Lemke, ScalingTheDataScalesTheSolution) {
    std::mt19937 gen(77);
    const int n = 8;
    const MatrixXd M = dominant_matrix(gen, n);
    VectorXd q(n);
    for (int i = 0; i < n; ++i) q[i] = uniform(gen, -1.0, 1.0);
    const LemkeResult ref = solve_lcp_lemke(M, q);
    expect_solves(M, q, ref);
    const double c = 3.7e6, d = 2.3e-4;
    const LemkeResult r = solve_lcp_lemke(c * M, d * q);
    expect_solves(c * M, d * q, r);
    EXPECT_EQ(r.pivots, ref.pivots);
    EXPECT_LE((r.z * (c / d) - ref.z).cwiseAbs().maxCoeff(), 1e-9 * ref.z.cwiseAbs().maxCoeff());
}

// The target size (rods, four balls): n = 200, no enumeration possible, so the solution is
// checked by its conditions alone (to 1e-10 of the size of w).
TEST(Lemke, LargeDominantProblemSolved) {
    std::mt19937 gen(4242);
    const int n = 200;
    const MatrixXd M = dominant_matrix(gen, n);
    VectorXd q(n);
    for (int i = 0; i < n; ++i) q[i] = uniform(gen, -1.0, 1.0);
    const LemkeResult r = solve_lcp_lemke(M, q);
    expect_solves(M, q, r, 1e-10);
    EXPECT_GT(r.pivots, 10);
}

// A degenerate LCP on which the plain minimum ratio test (ties to the lowest row) cycles.
// Found by brute force: random 3x3 integer M with entries in {-1, 0, 1, 2}, q in {-1, 0}³,
// keeping the P-matrices (all principal minors ≥ 1) on which this solver's plain rule hit
// a 200-pivot cap and its lexicographic rule solved; among those, this circulant with
// q = −e. Checked in exact rational arithmetic: the plain rule's first pivot (z0 in, w1
// out) leaves b = (1, 0, 0); z0 stays 1 and the basis {z0, z1, w3} after pivot 2 recurs
// after pivot 8 (pivots 3..8: z2, w1, z3, w2, z1, w3 enter), a cycle of length 6. The
// lexicographic rule takes w3 out first and solves in 4 pivots. The unique solution is
// z = (1/3, 1/3, 1/3), w = 0.
TEST(Lemke, DegenerateCirculantCyclesOnlyWithoutLexicographicRule) {
    const MatrixXd M = (MatrixXd(3, 3) << 1, 2, 0, 0, 1, 2, 2, 0, 1).finished();
    const VectorXd q = -VectorXd::Ones(3);

    LemkeSettings plain;
    plain.lexicographic = false;
    const LemkeResult cyc = solve_lcp_lemke(M, q, plain);
    EXPECT_EQ(cyc.status, LemkeStatus::PivotLimit) << cyc.message;
    EXPECT_EQ(cyc.pivots, 50 * (3 + 1));  // the default cap, all used
    EXPECT_NE(cyc.message.find("cycling"), std::string::npos) << cyc.message;
    // Cycling, not slow progress: every pivot is degenerate, so whatever the cap the
    // iterate has not moved from z = 0 (z0 = 1, residual ‖min(z, q)‖∞ = 1). With finitely
    // many bases and a deterministic rule, a path that never moves must repeat a basis.
    for (int cap = 2; cap <= 40; ++cap) {
        plain.max_pivots = cap;
        const LemkeResult k = solve_lcp_lemke(M, q, plain);
        EXPECT_EQ(k.status, LemkeStatus::PivotLimit) << "cap " << cap;
        EXPECT_EQ(k.z, VectorXd::Zero(3)) << "cap " << cap;
        EXPECT_EQ(k.residual, 1.0) << "cap " << cap;
    }

    const LemkeResult r = solve_lcp_lemke(M, q);  // lexicographic by default
    expect_solves(M, q, r);
    EXPECT_LE(r.pivots, 10);
    EXPECT_LE((r.z - VectorXd::Constant(3, 1.0 / 3.0)).cwiseAbs().maxCoeff(), 1e-15);
    EXPECT_LE(r.w.cwiseAbs().maxCoeff(), 1e-15);
    const std::vector<VectorXd> sol = enumerate_solutions(M, q);
    ASSERT_EQ(sol.size(), 1u);
    EXPECT_LE((r.z - sol[0]).cwiseAbs().maxCoeff(), 1e-12);
}

// No solution: w = −z − 1 < 0 for every z ≥ 0. After z0 enters, z1 enters with nothing to
// block it (z0 = 1 + z1 grows along the ray).
TEST(Lemke, RayTerminationOnInfeasibleProblems) {
    const LemkeResult r = solve_lcp_lemke(MatrixXd::Constant(1, 1, -1.0), -VectorXd::Ones(1));
    EXPECT_EQ(r.status, LemkeStatus::RayTermination);
    EXPECT_EQ(r.pivots, 1);
    EXPECT_NE(r.message.find("ray termination"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("z[0]"), std::string::npos) << r.message;
    // Positive semidefinite (copositive-plus), infeasible: w1 + w2 = −2 for every z.
    const MatrixXd M = (MatrixXd(2, 2) << 1, -1, -1, 1).finished();
    const LemkeResult r2 = solve_lcp_lemke(M, -VectorXd::Ones(2));
    EXPECT_EQ(r2.status, LemkeStatus::RayTermination) << r2.message;
    EXPECT_FALSE(r2.message.empty());
}

// Copositive-plus, feasible → Lemke must solve (CPS §4.4). Positive semidefinite of rank
// 3 < n = 7, q = w* − M z* from a complementary pair (z*, w*) ≥ 0, so a solution exists but
// z is not unique; w is (for symmetric PSD M, solutions differ by null vectors of M), so
// w must equal w*, to 1e-10.
TEST(Lemke, RankDeficientPositiveSemidefiniteSolved) {
    for (std::uint32_t seed : {5u, 6u, 7u, 8u}) {
        std::mt19937 gen(seed);
        const int n = 7;
        const MatrixXd B = random_matrix(gen, n, 3);
        const MatrixXd M = B * B.transpose();
        VectorXd zs = VectorXd::Zero(n), ws = VectorXd::Zero(n);
        for (int i = 0; i < n; ++i) (i % 2 ? zs[i] : ws[i]) = uniform(gen, 0.1, 1.0);
        const VectorXd q = ws - M * zs;
        const LemkeResult r = solve_lcp_lemke(M, q);
        SCOPED_TRACE(::testing::Message() << "seed " << seed);
        expect_solves(M, q, r);
        EXPECT_LE((r.w - ws).cwiseAbs().maxCoeff(), 1e-10);
    }
}

// A linear program as a skew-symmetric (copositive-plus) LCP: min x1 + x2 subject to
// x1 + 2 x2 ≥ 2, 3 x1 + x2 ≥ 3, x ≥ 0. With z = (x, y), y the duals, M = [0 −Aᵀ; A 0],
// q = (c, −b). Optimum x = (4/5, 3/5), y = (2/5, 1/5), value 7/5 (both constraints active).
TEST(Lemke, LinearProgramAsSkewSymmetricLcp) {
    const MatrixXd M = (MatrixXd(4, 4) << 0, 0, -1, -3,  //
                        0, 0, -2, -1,                    //
                        1, 2, 0, 0,                      //
                        3, 1, 0, 0)
                           .finished();
    const VectorXd q = (VectorXd(4) << 1, 1, -2, -3).finished();
    const LemkeResult r = solve_lcp_lemke(M, q);
    expect_solves(M, q, r);
    const VectorXd expected = (VectorXd(4) << 0.8, 0.6, 0.4, 0.2).finished();
    EXPECT_LE((r.z - expected).cwiseAbs().maxCoeff(), 1e-14);
    EXPECT_NEAR(r.z[0] + r.z[1], 1.4, 1e-14);        // primal value cᵀx
    EXPECT_NEAR(2 * r.z[2] + 3 * r.z[3], 1.4, 1e-14);  // dual value bᵀy
}

TEST(Lemke, PivotCapAndInvalidInputReportedNotThrown) {
    std::mt19937 gen(9);
    const int n = 6;
    const MatrixXd M = spd_matrix(gen, n);
    const VectorXd q = -VectorXd::Ones(n);
    LemkeSettings s;
    s.max_pivots = 1;
    const LemkeResult capped = solve_lcp_lemke(M, q, s);
    EXPECT_EQ(capped.status, LemkeStatus::PivotLimit);
    EXPECT_EQ(capped.pivots, 1);
    EXPECT_NE(capped.message.find("pivot limit"), std::string::npos) << capped.message;

    const LemkeResult bad_size = solve_lcp_lemke(MatrixXd::Identity(3, 2), q);
    EXPECT_EQ(bad_size.status, LemkeStatus::InvalidInput);
    EXPECT_FALSE(bad_size.message.empty());
    MatrixXd nan = M;
    nan(2, 3) = std::nan("");
    EXPECT_EQ(solve_lcp_lemke(nan, q).status, LemkeStatus::InvalidInput);
    s.max_pivots = -1;
    EXPECT_EQ(solve_lcp_lemke(M, q, s).status, LemkeStatus::InvalidInput);
    EXPECT_STREQ(lemke_status_name(LemkeStatus::RayTermination), "ray termination");
}

}  // namespace
}  // namespace talus
