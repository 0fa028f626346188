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
// solver reports, in m/s (zero at an exact solution). The docs/design.md §6 CCP residual does not
// vanish at the LCP's solution (the cones differ), so it is not what we report.
//
// Joints (bilateral rows j, solvers/bilateral.hpp; Anitescu 2003 §2, the mixed LCP): the
// equality b_j + G_jᵀν = 0 with λ_j free becomes two complementary pairs by splitting
// λ_j = λ⁺_j − λ⁻_j, both ≥ 0:
//     ρ⁺_j =  (G_jᵀν + b_j) ≥ 0 ⊥ λ⁺_j ≥ 0,    ρ⁻_j = −(G_jᵀν + b_j) ≥ 0 ⊥ λ⁻_j ≥ 0,
// which forces the equality at any solution (if both λ± vanish, ρ⁺ ≥ 0 and −ρ⁺ ≥ 0). The
// Delassus matrix then spans the contacts' rows n, u, w and the joint rows; λ is scaled by
// the row's η_j like the impulses. This keeps redundant joints (a singular G ᵀM⁻¹G, e.g.
// closed loops) solvable, where eliminating λ by a Schur complement would not.
//
// Result: γ_n = c_n, (γ_u, γ_w) = Σ_l β_l (cos θ_l, sin θ_l), λ_j = λ⁺_j − λ⁻_j;
// SolveScope::finish rebuilds ν⁺.
// Failure (ray termination, pivot cap, which seed 000 §3.2 rules out in exact arithmetic
// when the normals are independent; an over-constrained grain makes the LCP infeasible):
// never fatal (unless Lemke's last point solves the LCP to round-off, see lcp_accepted:
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

#include "solvers/bilateral.hpp"
#include "solvers/contact_ops.hpp"
#include "solvers/lemke.hpp"
#include "solvers/polyhedral_lcp.hpp"
#include "solvers/solver.hpp"

namespace talus {
namespace {

/// One Jacobian row's part on one body (world frame): its index in the Delassus matrix
/// (contact i: 3i + 0, 1, 2 for n, u, w; joint row j: 3m + j), linear and angular parts
/// with the side's sign included, and I⁻¹ times the angular part.
struct BodyRow {
    Eigen::Index index;
    Vec3 lin, ang, iang;
};

/// The Delassus matrix W = J M⁻¹ Jᵀ [1/kg] over the contacts' rows (n, u, w) and the joint
/// rows, summed body by body in a fixed order (contacts in body-major order, then rows).
Eigen::MatrixXd delassus_matrix(const AssembledBatch& c, const SolverWorkspace& work) {
    const std::size_t m = c.size();
    const BilateralBatch& rows = c.bilateral;
    const Eigen::Index size = Eigen::Index(3 * m + rows.size());
    Eigen::MatrixXd W = Eigen::MatrixXd::Zero(size, size);
    const BodyContacts& bc = work.body_contacts;
    const SolverBodies& sb = work.bodies;
    std::vector<std::vector<BodyRow>> per_body(sb.size());
    for (std::size_t b = 0; b < bc.body_count(); ++b)
        for (uint32_t e = bc.start[b]; e < bc.start[b + 1]; ++e) {
            const uint32_t entry = bc.entry[e];
            const std::size_t i = entry >> 1;
            const ContactFrame f = contact_frame(c, i);
            const Vec3& r = (entry & 1) ? c.lever_b[i] : c.lever_a[i];
            const double sign = (entry & 1) ? 1.0 : -1.0;
            const Vec3 lin[3] = {f.n, f.u, f.w};
            for (int k = 0; k < 3; ++k) {
                const Vec3 ang = sign * cross(r, lin[k]);
                per_body[b].push_back({Eigen::Index(3 * i + k), sign * lin[k], ang,
                                       sb.inv_inertia_times(b, ang)});
            }
        }
    for (std::size_t j = 0; j < rows.size(); ++j) {
        const Eigen::Index index = Eigen::Index(3 * m + j);
        if (rows.a[j] != kNoBody) {
            const std::size_t b = std::size_t(rows.a[j]);
            per_body[b].push_back({index, rows.lin_a[j], rows.ang_a[j], sb.inv_inertia_times(b, rows.ang_a[j])});
        }
        if (rows.b[j] != kNoBody) {
            const std::size_t b = std::size_t(rows.b[j]);
            per_body[b].push_back({index, rows.lin_b[j], rows.ang_b[j], sb.inv_inertia_times(b, rows.ang_b[j])});
        }
    }
    for (std::size_t b = 0; b < per_body.size(); ++b) {
        const double inv_mass = sb.body[b].inv_mass;
        for (const BodyRow& p : per_body[b])
            for (const BodyRow& q : per_body[b])
                W(p.index, q.index) += inv_mass * p.lin.dot(q.lin) + p.ang.dot(q.iang);
    }
    return W;
}

}  // namespace

SolverResult solve_lcp_stepper(AssembledBatch& batch, BodyStore& bodies,
                               const SolverSettings& settings, SolverWorkspace& work) {
    const detail::SolveScope scope(batch, bodies, work);
    SolverResult result;
    const std::size_t m = batch.size();
    BilateralBatch& rows = batch.bilateral;
    const std::size_t mr = rows.size();
    const int k = settings.friction_directions;
    const std::size_t per = std::size_t(k) + 2;  // c_n, β_0 … β_{k−1}, λ
    const std::size_t n = m * per + 2 * mr;      // then λ⁺_j, λ⁻_j per joint row
    if (k < 4 || k % 2 != 0) {
        result.refused = "friction_directions = " + std::to_string(k) +
                         ": the polyhedral cone needs an even number of directions ≥ 4";
    } else if (n > kLcpMaxUnknowns) {
        result.refused = "the dense \"lemke\" solver takes at most " +
                         std::to_string(kLcpMaxUnknowns) + " LCP unknowns, and " +
                         std::to_string(m) + " contacts × (" + std::to_string(k) +
                         " friction directions + 2) + 2 × " + std::to_string(mr) +
                         " joint rows make " + std::to_string(n) +
                         "; use an iterative solver (\"pgs\", \"apgd\") or fewer "
                         "friction_directions";
    }
    if ((m == 0 && mr == 0) || !result.refused.empty()) {
        scope.finish(batch, bodies, settings.tolerance, false, result);
        result.residual = 0.0;
        result.converged = result.refused.empty();
        return result;
    }

    const PolyhedralCone cone(k);
    const std::vector<double>& ct = cone.ct;
    const std::vector<double>& st = cone.st;

    const Eigen::MatrixXd W = delassus_matrix(batch, work);
    using Eigen::Index;
    Eigen::MatrixXd M = Eigen::MatrixXd::Zero(Index(n), Index(n));
    Eigen::VectorXd q = Eigen::VectorXd::Zero(Index(n));
    {
        std::vector<Vec3> d(m);
        for (std::size_t i = 0; i < m; ++i) d[i] = contact_velocity(batch, work.bodies, i);  // bodies hold ν*
        fill_contact_lcp(W, d, batch.mu, batch.eta, cone, M, q);
    }
    for (std::size_t i = 0; i < m; ++i) {
        const Index ri = Index(i * per);
        // columns λ±_l of the joint rows: the response of (n, u, w)_i to λ_l = ±η_l
        for (std::size_t l = 0; l < mr; ++l) {
            const Index col = Index(m * per + 2 * l);
            const Index wl = Index(3 * m + l);
            const double e = rows.eta[l];
            const double bn = e * W(Index(3 * i), wl);
            const double bu = e * W(Index(3 * i + 1), wl), bw = e * W(Index(3 * i + 2), wl);
            if (bn == 0.0 && bu == 0.0 && bw == 0.0) continue;
            M(ri, col) = bn;
            M(ri, col + 1) = -bn;
            for (int l2 = 0; l2 < k; ++l2) {
                M(ri + 1 + l2, col) = ct[l2] * bu + st[l2] * bw;
                M(ri + 1 + l2, col + 1) = -(ct[l2] * bu + st[l2] * bw);
            }
        }
    }
    // joint rows: ρ⁺_j = G_jᵀν + b_j, ρ⁻_j = −ρ⁺_j
    for (std::size_t j = 0; j < mr; ++j) {
        const Index rp = Index(m * per + 2 * j), wj = Index(3 * m + j);
        const double d = row_velocity(rows, work.bodies, j);  // bodies hold ν*
        q[rp] = d;
        q[rp + 1] = -d;
        for (std::size_t i = 0; i < m; ++i) {
            const Index cj = Index(i * per);
            const double eta = batch.eta[i];
            const double wn = W(wj, Index(3 * i)), wu = W(wj, Index(3 * i + 1)), ww = W(wj, Index(3 * i + 2));
            if (wn == 0.0 && wu == 0.0 && ww == 0.0) continue;
            M(rp, cj) = eta * wn;
            M(rp + 1, cj) = -eta * wn;
            for (int l = 0; l < k; ++l) {
                M(rp, cj + 1 + l) = eta * (wu * ct[l] + ww * st[l]);
                M(rp + 1, cj + 1 + l) = -eta * (wu * ct[l] + ww * st[l]);
            }
        }
        for (std::size_t l = 0; l < mr; ++l) {
            const double v = rows.eta[l] * W(wj, Index(3 * m + l));
            if (v == 0.0) continue;
            const Index col = Index(m * per + 2 * l);
            M(rp, col) = v;
            M(rp, col + 1) = -v;
            M(rp + 1, col) = -v;
            M(rp + 1, col + 1) = v;
        }
    }

    const LemkeResult lcp = solve_lcp_lemke(M, q);
    result.iterations = lcp.pivots;
    // A ray termination or pivot cap at a point that already solves the LCP to round-off is
    // accepted: z0 ≈ 0 that rounding kept from leaving the basis (seen on piles at k = 32).
    const bool solved = lcp_accepted(lcp, q);
    if (solved) {
        for (std::size_t i = 0; i < m; ++i) batch.gamma[i] = contact_impulse(lcp.z, i, batch.eta[i], cone);
        for (std::size_t j = 0; j < mr; ++j) {
            const Index rp = Index(m * per + 2 * j);
            rows.lambda[j] = rows.eta[j] * (std::max(lcp.z[rp], 0.0) - std::max(lcp.z[rp + 1], 0.0));
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
