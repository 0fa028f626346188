#pragma once
/// The contact part of the Stewart–Trinkle LCP with a polyhedral friction cone (seed 000
/// §3.4; the derivation and the unknowns' scaling are at the top of solvers/lcp_stepper.cpp),
/// built from a dense Delassus matrix: shared by the "lemke" step solver (on bodies) and by
/// "lemke" on an assembled Delassus operator (solvers/delassus.cpp, `talus fclib`).
#include <Eigen/Core>
#include <vector>

#include "core/math.hpp"
#include "solvers/lemke.hpp"

namespace talus {

/// k balanced directions d_l = cos θ_l u + sin θ_l w: the first half by cos/sin of
/// θ_l = 2π l / k, the second their exact negatives.
struct PolyhedralCone {
    int k;
    std::vector<double> ct, st;
    explicit PolyhedralCone(int directions);
    /// Unknowns per contact: c_n, β_0 … β_{k−1}, λ.
    std::size_t per_contact() const { return std::size_t(k) + 2; }
};

/// Fills the rows and columns of contacts 0 … m−1 (per_contact() each, from index 0) of the
/// LCP (M, q), which must be zero there and large enough: W the Delassus matrix whose rows
/// 3i … 3i+2 are contact i's (n, u, w) (it may have more rows, e.g. joints), d_i the
/// contact's velocity at zero impulse (n, u, w), η_i the scale of its impulses.
void fill_contact_lcp(const Eigen::MatrixXd& W, const std::vector<Vec3>& d, const std::vector<double>& mu,
                      const std::vector<double>& eta, const PolyhedralCone& cone, Eigen::MatrixXd& M,
                      Eigen::VectorXd& q);

/// Contact i's impulse (n, u, w) from an LCP solution z.
Vec3 contact_impulse(const Eigen::VectorXd& z, std::size_t i, double eta, const PolyhedralCone& cone);

/// Whether Lemke's answer is used: solved, or a ray termination or pivot cap at a point that
/// solves the LCP to round-off (natural residual ≤ 1e-9 max|q|): z0 ≈ 0 that rounding kept
/// from leaving the basis (seen on piles at k = 32: 2.4e-13 m/s, its point's residual 4e-10
/// max|q| after 662 pivots on 646 unknowns; 1e-9 max|q| is 2e-11 m/s there, five orders
/// below the iterative solvers' tightest tolerance).
bool lcp_accepted(const LemkeResult& lcp, const Eigen::VectorXd& q);

}  // namespace talus
