// The Stewart–Trinkle LCP time-stepper (seed 000 §3, multiple contacts §3.4, eqs. (25)–(29);
// Anitescu–Potra form), solved densely by Lemke's method (solvers/lemke.hpp). Not a CCP
// solver: the friction cone is the polyhedral cone of seed 000 eq. (12).
//
// Per contact i, with frame [n u w] and k balanced directions in the tangent plane
//     d_l = cos θ_l u + sin θ_l w,   θ_l = 2π l / k,  l = 0 … k−1   (d_{l+k/2} = −d_l),
// the unknowns are the normal impulse c_n [N s], the friction impulses β ∈ R^k along the d_l
// [N s] and λ ≈ the sliding speed [m/s]. With ν = ν* + M⁻¹ (N c_n + D β) eliminated
// (the Schur complement of seed 000 §3.1):
//     ρ = Nᵀν + b        ≥ 0  ⊥  c_n ≥ 0      (b: the batch's normal rhs, stabilisation
//                                              and wall velocity)
//     σ = Dᵀν + E λ      ≥ 0  ⊥  β   ≥ 0      (friction opposes the sliding velocity)
//     ζ = μ c_n − Eᵀβ    ≥ 0  ⊥  λ   ≥ 0      (friction inside the polyhedral cone)
// i.e. LCP(q, M) with, per pair of contacts (i, j) and W_ij = J_i M⁻¹ J_jᵀ the 3×3 Delassus
// block in the frames of i and j (J_i the rows n, u, w of contact i, world frame, see
// solvers/contact_ops.hpp), T = [cos θ_l, sin θ_l]_l (k × 2):
//     [ W_nn      W_nt Tᵀ     0 ] [c_n]   [ d*_n     ]
//     [ T W_tn    T W_tt Tᵀ   E ] [β  ] + [ T d*_t   ]      d* = c(ν*) + rhs.
//     [ μ         −Eᵀ         0 ] [λ  ]   [ 0        ]
// W_ij is non-zero only when i and j share a dynamic body; it is summed body by body from
// the body-major contact lists (serial, fixed order: independent of the thread count).
//
// Units: impulse unknowns are scaled by η_j = 3 / trace(W_jj) (c_n = η_j ĉ_n, β = η_j β̂)
// and the ζ rows divided by η_i, so every unknown and every row of the LCP Lemke sees is in
// m/s and of order one; its natural residual ‖min(x, M̂x + q)‖∞ is then the residual this
// solver reports, in m/s (zero at an exact solution). The DESIGN §6 CCP residual does not
// vanish at the LCP's solution (the cones differ), so it is not what we report.
//
// Result: γ_n = c_n, (γ_u, γ_w) = Σ_l β_l (cos θ_l, sin θ_l); SolveScope::finish rebuilds ν⁺.
// Failure (ray termination, pivot cap, which seed 000 §3.2 rules out in exact arithmetic
// when the normals are independent; an over-constrained grain makes the LCP infeasible):
// never fatal (unless Lemke's last point solves the LCP to round-off, see kAcceptResidual:
// then it is used); the batch keeps its γ on entry (the warm start, or zero without one),
// `converged` is false and the step's diagnostics show it. Problems of more than
// kLcpMaxUnknowns unknowns are refused (SolverResult::refused), which stops the run with a
// message. Warm start, tolerance, max_iterations and relaxation are not used (direct method).
// The position-level variant of seed 000 §3.6 re-runs this solver on problems linearised at
// the predicted positions; the World owns that loop (engine/world/position_level.cpp).
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "solvers/contact_ops.hpp"
#include "solvers/lemke.hpp"
#include "solvers/solver.hpp"

namespace talus {
namespace {

/// A Lemke point that is not flagged solved is still accepted when its natural residual is
/// at most this times max|q| (round-off) [-].
constexpr double kAcceptResidual = 1e-10;

/// One contact end on a body: the contact's rows of J for that body, world frame.
struct EndRows {
    uint32_t contact;
    double sign;  ///< +1 on side B, −1 on side A
    Vec3 lin[3];  ///< n, u, w
    Vec3 ang[3];  ///< r × n, r × u, r × w
    Vec3 iang[3];  ///< I⁻¹ (r × ·)
};

/// The 3m × 3m Delassus matrix W = J M⁻¹ Jᵀ [1/kg], blocks in each contact's (n, u, w).
Eigen::MatrixXd delassus_matrix(const AssembledBatch& c, const SolverWorkspace& work) {
    const std::size_t m = c.size();
    Eigen::MatrixXd W = Eigen::MatrixXd::Zero(Eigen::Index(3 * m), Eigen::Index(3 * m));
    const BodyContacts& bc = work.body_contacts;
    const SolverBodies& sb = work.bodies;
    std::vector<EndRows> ends;
    for (std::size_t b = 0; b < bc.body_count(); ++b) {
        const uint32_t lo = bc.start[b], hi = bc.start[b + 1];
        if (lo == hi) continue;
        ends.clear();
        for (uint32_t e = lo; e < hi; ++e) {
            const uint32_t entry = bc.entry[e];
            const std::size_t i = entry >> 1;
            const ContactFrame f = contact_frame(c, i);
            const Vec3& r = (entry & 1) ? c.lever_b[i] : c.lever_a[i];
            EndRows er;
            er.contact = uint32_t(i);
            er.sign = (entry & 1) ? 1.0 : -1.0;
            er.lin[0] = f.n;
            er.lin[1] = f.u;
            er.lin[2] = f.w;
            for (int k = 0; k < 3; ++k) {
                er.ang[k] = cross(r, er.lin[k]);
                er.iang[k] = sb.inv_inertia_times(b, er.ang[k]);
            }
            ends.push_back(er);
        }
        const double inv_mass = sb.body[b].inv_mass;
        for (const EndRows& p : ends)
            for (const EndRows& q : ends) {
                const double s = p.sign * q.sign;
                for (int k = 0; k < 3; ++k)
                    for (int l = 0; l < 3; ++l)
                        W(3 * p.contact + k, 3 * q.contact + l) +=
                            s * (inv_mass * p.lin[k].dot(q.lin[l]) + p.ang[k].dot(q.iang[l]));
            }
    }
    return W;
}

}  // namespace

SolverResult solve_lcp_stepper(AssembledBatch& batch, BodyStore& bodies,
                               const SolverSettings& settings, SolverWorkspace& work) {
    const detail::SolveScope scope(batch, bodies, work);
    SolverResult result;
    const std::size_t m = batch.size();
    const int k = settings.friction_directions;
    const std::size_t per = std::size_t(k) + 2;  // c_n, β_0 … β_{k−1}, λ
    const std::size_t n = m * per;
    if (k < 4 || k % 2 != 0) {
        result.refused = "friction_directions = " + std::to_string(k) +
                         ": the polyhedral cone needs an even number of directions ≥ 4";
    } else if (n > kLcpMaxUnknowns) {
        result.refused = "the dense \"lemke\" solver takes at most " +
                         std::to_string(kLcpMaxUnknowns) + " LCP unknowns, and " +
                         std::to_string(m) + " contacts × (" + std::to_string(k) +
                         " friction directions + 2) make " + std::to_string(n) +
                         "; use an iterative solver (\"pgs\", \"apgd\") or fewer "
                         "friction_directions";
    }
    if (m == 0 || !result.refused.empty()) {
        scope.finish(batch, bodies, settings.tolerance, false, result);
        result.residual = 0.0;
        result.converged = result.refused.empty();
        return result;
    }

    // Directions: the first half by cos/sin, the second its exact negative (balanced).
    std::vector<double> ct(static_cast<std::size_t>(k)), st(static_cast<std::size_t>(k));
    for (int l = 0; l < k / 2; ++l) {
        const double theta = 2.0 * std::numbers::pi * double(l) / double(k);
        ct[l] = std::cos(theta);
        st[l] = std::sin(theta);
        ct[l + k / 2] = -ct[l];
        st[l + k / 2] = -st[l];
    }

    const Eigen::MatrixXd W = delassus_matrix(batch, work);
    using Eigen::Index;
    Eigen::MatrixXd M = Eigen::MatrixXd::Zero(Index(n), Index(n));
    Eigen::VectorXd q = Eigen::VectorXd::Zero(Index(n));
    for (std::size_t i = 0; i < m; ++i) {
        const Index ri = Index(i * per);
        const Vec3 d = contact_velocity(batch, work.bodies, i);  // bodies hold ν*
        q[ri] = d[0];
        for (int l = 0; l < k; ++l) q[ri + 1 + l] = ct[l] * d[1] + st[l] * d[2];
        for (std::size_t j = 0; j < m; ++j) {
            const Index cj = Index(j * per);
            const auto B = W.block<3, 3>(Index(3 * i), Index(3 * j));
            if (B.isZero(0.0)) continue;
            const double eta = batch.eta[j];
            // B Tᵀ columns: the response of (n, u, w)_i to a unit β_jm.
            M(ri, cj) = eta * B(0, 0);
            for (int mm = 0; mm < k; ++mm) {
                const double bn = B(0, 1) * ct[mm] + B(0, 2) * st[mm];
                const double bu = B(1, 1) * ct[mm] + B(1, 2) * st[mm];
                const double bw = B(2, 1) * ct[mm] + B(2, 2) * st[mm];
                M(ri, cj + 1 + mm) = eta * bn;
                for (int l = 0; l < k; ++l) M(ri + 1 + l, cj + 1 + mm) = eta * (ct[l] * bu + st[l] * bw);
            }
            for (int l = 0; l < k; ++l)
                M(ri + 1 + l, cj) = eta * (ct[l] * B(1, 0) + st[l] * B(2, 0));
        }
        const Index lam = ri + 1 + k;
        for (int l = 0; l < k; ++l) {
            M(ri + 1 + l, lam) = 1.0;  // E λ
            M(lam, ri + 1 + l) = -1.0;  // −Eᵀβ (row divided by η_i, columns scaled by η_i)
        }
        M(lam, ri) = batch.mu[i];
    }

    const LemkeResult lcp = solve_lcp_lemke(M, q);
    result.iterations = lcp.pivots;
    // A ray termination or pivot cap at a point that already solves the LCP to round-off is
    // accepted: z0 ≈ 0 that rounding kept from leaving the basis (seen on piles at k = 32).
    const bool solved = lcp.status == LemkeStatus::Solved ||
                        (lcp.status != LemkeStatus::InvalidInput && lcp.z.size() == Eigen::Index(n) &&
                         lcp.residual <= kAcceptResidual * std::max(q.cwiseAbs().maxCoeff(), 1e-300));
    if (solved) {
        for (std::size_t i = 0; i < m; ++i) {
            const Index ri = Index(i * per);
            const double eta = batch.eta[i];
            double gu = 0.0, gw = 0.0;
            for (int l = 0; l < k; ++l) {
                const double beta = std::max(lcp.z[ri + 1 + l], 0.0);
                gu += beta * ct[l];
                gw += beta * st[l];
            }
            batch.gamma[i] = Vec3(eta * std::max(lcp.z[ri], 0.0), eta * gu, eta * gw);
        }
    }
    scope.finish(batch, bodies, settings.tolerance, false, result);  // ν⁺ from γ
    // The LCP's natural residual [m/s] (see top); after a failure, that of Lemke's last
    // almost-complementary point (not a solution), which is not the γ kept.
    result.residual = lcp.residual;
    result.converged = solved;
    if (settings.record_history) result.history.push_back({lcp.pivots, scope.seconds(), lcp.residual});
    return result;
}

}  // namespace talus
