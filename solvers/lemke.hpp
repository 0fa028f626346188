#pragma once
/// A dense solver of the linear complementarity problem LCP(q, M) by Lemke's complementary
/// pivoting with lexicographic degeneracy resolution (solvers/lemke.cpp): find z with
/// w = M z + q,  w ≥ 0,  z ≥ 0,  zᵀw = 0.
/// Units are the caller's: z in those of the LCP's unknowns, w and q in those of M z.
#include <Eigen/Core>
#include <string>

namespace talus {

/// How solve_lcp_lemke pivots and when it gives up.
struct LemkeSettings {
    /// Pivots allowed, the first (z0 entering) included; 0 means 50 (n + 1). Lemke's method
    /// typically needs O(n) pivots; the cap only guards against cycling (lexicographic off)
    /// and pathological exponential instances.
    int max_pivots = 0;
    /// Lexicographic minimum ratio test (exact degeneracy resolution: no cycling). Off: the
    /// plain minimum ratio test with ties broken by the lowest row, which can cycle.
    bool lexicographic = true;
    /// An entry of the entering column counts as a blocking pivot only if it exceeds this
    /// times the column's largest magnitude [-]. Guards against pivoting on round-off.
    double pivot_tolerance = 1e-9;
    /// Two ratios tie when they differ by at most this times max(1, |smallest ratio|), the
    /// data scaled to unit size (see lemke.cpp) [-].
    double tie_tolerance = 1e-11;
};

/// How a Lemke solve ended.
enum class LemkeStatus {
    Solved,          ///< z solves the LCP (z0 left the basis, or q ≥ 0 and z = 0)
    RayTermination,  ///< the entering column has no blocking row; see LemkeResult::message
    PivotLimit,      ///< max_pivots reached without a solution (e.g. cycling)
    InvalidInput,    ///< M not square, sizes differ, non-finite data or max_pivots < 0
};

/// What solve_lcp_lemke returns.
struct LemkeResult {
    LemkeStatus status = LemkeStatus::InvalidInput;
    /// Solved: the solution, negatives clamped to 0. Otherwise: the z-part of the last
    /// almost-complementary point (not a solution; empty for InvalidInput).
    Eigen::VectorXd z;
    /// M z + q recomputed from the returned z; when Solved, its negative entries (round-off,
    /// of the order of `residual`) set to 0.
    Eigen::VectorXd w;
    int pivots = 0;          ///< pivots performed, the first (z0 entering) included
    /// ‖min(z, M z + q)‖∞ (componentwise min) before clamping: 0 for an exact solution.
    double residual = 0.0;
    std::string message;  ///< what happened, in words (what failed and what it means)
};

/// Solve LCP(q, M) by Lemke's method with covering vector e = (1, …, 1). Never throws;
/// every outcome comes back as a status with a message. O(n²) memory and work per pivot.
LemkeResult solve_lcp_lemke(const Eigen::MatrixXd& M, const Eigen::VectorXd& q,
                            const LemkeSettings& settings = {});

/// Short name of a status ("solved", "ray termination", …).
const char* lemke_status_name(LemkeStatus status);

}  // namespace talus
