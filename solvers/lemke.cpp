// Lemke's complementary pivoting method for LCP(q, M), dense, with lexicographic
// degeneracy resolution. Reference: R. W. Cottle, J.-S. Pang, R. E. Stone, "The Linear
// Complementarity Problem" (Academic Press, 1992), ch. 4: §4.4 (Lemke's method) and the
// lexicographic pivoting rule of the same chapter; K. G. Murty, "Linear Complementarity,
// Linear and Nonlinear Programming" (Heldermann, 1988), ch. 2.
//
// Augmented system, with covering vector e = (1, …, 1) and artificial variable z0:
//     w − M z − e z0 = q,     w, z, z0 ≥ 0,     w_i z_i = 0 (i = 1..n).
// A basis B holds n of the 2n + 1 variables; we keep B⁻¹ and b = B⁻¹ q (revised form: the
// entering column is B⁻¹ A_j, A_j = e_j for w_j, −M_j for z_j, −e for z0). Start: B = I
// (w basic). If q ≥ 0, z = 0 solves. Otherwise z0 enters at z0 = −min q and the row of the
// most negative q_r leaves, which makes b ≥ 0. Then the complement of the variable that
// just left enters (the complementary pivot rule); the minimum ratio test over rows with
// d_i = (B⁻¹A_j)_i > 0 picks the leaving row. Stop when z0 leaves (solution), when no
// d_i > 0 (ray termination: for copositive-plus M, e.g. positive semidefinite, this proves
// the LCP infeasible), or at the pivot cap.
//
// Degeneracy: if several rows tie in the ratio b_i / d_i (some b_i = 0), the plain rule can
// cycle. The lexicographic rule solves the perturbed problem q(ε) = q + (ε, ε², …, εⁿ) for
// all small ε > 0 at once: B⁻¹ q(ε) = b + B⁻¹ (ε, …, εⁿ)ᵀ, so the leaving row is the
// lexicographic minimum of the rows of [b | B⁻¹] / d_i. B⁻¹ is nonsingular, so that
// minimum is unique and no basis repeats: termination in finitely many pivots. The first
// pivot uses the same order on the rows of [q | I] (ties in min q go to the last row),
// after which every row of [b | B⁻¹] is lexicographically positive and stays so.
//
// Numerics: the data are scaled by powers of two (exact) to max|M| and max|q| in [½, 1),
// so the tolerances are relative. A pivot costs O(n²): one matrix–vector product for the
// entering column and a rank-one update of B⁻¹. On success the basis gives the index set
// α of positive z; z_α is recomputed by an LU solve of M_αα z_α = −q_α and kept if its
// natural residual ‖min(z, M z + q)‖∞ is smaller than the tableau's; then w = M z + q and
// round-off negatives of z and w are set to 0.
#include "solvers/lemke.hpp"

#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

namespace talus {
namespace {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

/// A power of two s with max_abs · s in [½, 1); 1 for max_abs = 0.
double pow2_scale(double max_abs) {
    if (max_abs == 0.0) return 1.0;
    int e = 0;
    std::frexp(max_abs, &e);
    return std::ldexp(1.0, -e);
}

/// Variables: w_i = i, z_i = n + i, the artificial z0 = 2n.
std::string variable_name(int v, int n) {
    if (v == 2 * n) return "z0";
    return (v < n ? "w[" : "z[") + std::to_string(v < n ? v : v - n) + "]";
}

/// The leaving row among `rows` (ascending): the lexicographic minimum of the rows of
/// [b | B⁻¹] each divided by div_i, or, lexicographic off, the lowest row attaining the
/// minimum of b_i / div_i. `rows` and `keep` are scratch.
int select_row(std::vector<int>& rows, std::vector<int>& keep, const VectorXd& div,
               const VectorXd& b, const MatrixXd& binv, const LemkeSettings& s) {
    const Index n = b.size();
    for (Index col = -1; col < n; ++col) {
        auto ratio = [&](int i) { return (col < 0 ? b[i] : binv(i, col)) / div[i]; };
        double m = std::numeric_limits<double>::infinity();
        for (int i : rows) m = std::min(m, ratio(i));
        const double limit = m + s.tie_tolerance * std::max(1.0, std::abs(m));
        keep.clear();
        for (int i : rows)
            if (ratio(i) <= limit) keep.push_back(i);
        if (!s.lexicographic || keep.size() == 1) return keep.front();
        rows.swap(keep);
    }
    return rows.front();  // only through round-off: the rows of B⁻¹ are independent
}

/// ‖min(z, M z + q)‖∞, componentwise min.
double natural_residual(const MatrixXd& M, const VectorXd& q, const VectorXd& z) {
    const VectorXd w = M * z + q;
    return z.size() == 0 ? 0.0 : z.cwiseMin(w).cwiseAbs().maxCoeff();
}

}  // namespace

const char* lemke_status_name(LemkeStatus status) {
    switch (status) {
        case LemkeStatus::Solved: return "solved";
        case LemkeStatus::RayTermination: return "ray termination";
        case LemkeStatus::PivotLimit: return "pivot limit";
        case LemkeStatus::InvalidInput: return "invalid input";
    }
    return "unknown";
}

LemkeResult solve_lcp_lemke(const MatrixXd& M, const VectorXd& q, const LemkeSettings& settings) {
    LemkeResult result;
    const Index n = q.size();
    std::ostringstream msg;
    if (M.rows() != n || M.cols() != n) {
        msg << "M is " << M.rows() << "x" << M.cols() << " but q has " << n
            << " entries; M must be square of q's size";
    } else if (!M.allFinite() || !q.allFinite()) {
        msg << "M or q holds a NaN or infinite entry";
    } else if (settings.max_pivots < 0 || !(settings.pivot_tolerance >= 0.0) ||
               !(settings.tie_tolerance >= 0.0)) {
        msg << "max_pivots, pivot_tolerance and tie_tolerance must be >= 0 (0 pivots: default)";
    }
    if (!msg.str().empty()) {
        result.status = LemkeStatus::InvalidInput;
        result.message = msg.str();
        return result;
    }
    if (n == 0 || q.minCoeff() >= 0.0) {
        result.status = LemkeStatus::Solved;
        result.z = VectorXd::Zero(n);
        result.w = q;
        result.message = "q >= 0: z = 0 solves the LCP without pivoting";
        return result;
    }

    const int ni = static_cast<int>(n);
    const int z0 = 2 * ni;
    const int cap = settings.max_pivots > 0 ? settings.max_pivots : 50 * (ni + 1);
    // Scaled problem: Ms zs + qs = sq (M z + q) with z = (sm / sq) zs.
    const double sm = pow2_scale(M.cwiseAbs().maxCoeff());
    const double sq = pow2_scale(q.cwiseAbs().maxCoeff());
    const MatrixXd Ms = sm * M;
    MatrixXd binv = MatrixXd::Identity(n, n);
    VectorXd b = sq * q;
    std::vector<int> basis(ni);
    for (int i = 0; i < ni; ++i) basis[i] = i;
    VectorXd d(n);
    Eigen::RowVectorXd pivot_row(n);
    std::vector<int> rows, keep;
    rows.reserve(ni);
    keep.reserve(ni);

    // Pivot on (r, column d): row r /= d_r, every other row i −= d_i · (new row r).
    auto pivot = [&](int r) {
        const double p = d[r];
        binv.row(r) /= p;
        b[r] /= p;
        pivot_row = binv.row(r);
        const double br = b[r];
        d[r] = 0.0;
        binv.noalias() -= d * pivot_row;
        b -= br * d;
    };

    // First pivot: z0 enters (column −e); the lexicographically smallest row of [q | I]
    // leaves (plain: the lowest row with the smallest q_i).
    for (int i = 0; i < ni; ++i) rows.push_back(i);
    int r = select_row(rows, keep, VectorXd::Ones(n), b, binv, settings);
    d.setConstant(-1.0);
    pivot(r);
    int leaving = basis[r];
    basis[r] = z0;
    result.pivots = 1;
    int entering = leaving + ni;  // the complement of w_r is z_r
    int blocked = -1;             // the entering variable at ray termination
    result.status = LemkeStatus::PivotLimit;
    while (result.pivots < cap) {
        if (entering < ni)
            d = binv.col(entering);
        else
            d.noalias() = -(binv * Ms.col(entering - ni));
        const double threshold = settings.pivot_tolerance * d.cwiseAbs().maxCoeff();
        rows.clear();
        for (int i = 0; i < ni; ++i)
            if (d[i] > threshold && d[i] > 0.0) rows.push_back(i);
        if (rows.empty()) {
            result.status = LemkeStatus::RayTermination;
            blocked = entering;
            break;
        }
        r = select_row(rows, keep, d, b, binv, settings);
        pivot(r);
        ++result.pivots;
        leaving = basis[r];
        basis[r] = entering;
        if (leaving == z0) {
            result.status = LemkeStatus::Solved;
            break;
        }
        entering = leaving < ni ? leaving + ni : leaving - ni;
    }

    // The z-part of the final basic solution, back in the caller's units.
    const double unscale = sm / sq;
    VectorXd z = VectorXd::Zero(n);
    double z0_value = 0.0;
    std::vector<int> alpha;  // indices of basic z
    for (int i = 0; i < ni; ++i) {
        if (basis[i] == z0) z0_value = b[i] / sq;
        else if (basis[i] >= ni) {
            z[basis[i] - ni] = unscale * b[i];
            alpha.push_back(basis[i] - ni);
        }
    }
    result.residual = natural_residual(M, q, z);

    if (result.status == LemkeStatus::Solved) {
        if (!alpha.empty()) {  // polish: z_α from M_αα z_α = −q_α directly
            std::sort(alpha.begin(), alpha.end());
            const MatrixXd Maa = M(alpha, alpha);
            const VectorXd qa = q(alpha);
            const VectorXd za = Eigen::PartialPivLU<MatrixXd>(Maa).solve(-qa);
            VectorXd z_lu = VectorXd::Zero(n);
            z_lu(alpha) = za;
            const double res_lu = natural_residual(M, q, z_lu);
            if (za.allFinite() && res_lu <= result.residual) {
                z = z_lu;
                result.residual = res_lu;
            }
        }
        result.z = z.cwiseMax(0.0);
        result.w = (M * result.z + q).cwiseMax(0.0);
        msg << "solved in " << result.pivots << " pivots, " << alpha.size()
            << " positive z, residual ||min(z, Mz+q)|| = " << result.residual;
    } else {
        result.z = z;
        result.w = M * z + q;
        if (result.status == LemkeStatus::RayTermination) {
            msg << "ray termination after " << result.pivots << " pivots: entering "
                << variable_name(blocked, ni) << " meets no blocking row, so z0 = " << z0_value
                << " cannot be driven to 0; Lemke's method found no solution. For copositive-plus"
                   " M (e.g. positive semidefinite) this proves LCP(q, M) has none";
        } else {
            msg << "pivot limit: no solution after " << result.pivots << " pivots (z0 = "
                << z0_value << ")"
                << (settings.lexicographic
                        ? "; raise max_pivots (Lemke's method can need exponentially many)"
                        : "; with lexicographic off this is the signature of cycling on a "
                          "degenerate problem: turn lexicographic on");
        }
    }
    result.message = msg.str();
    return result;
}

}  // namespace talus
