#pragma once
/// Bilateral rows (joints) of one step (docs/design.md §4): each scalar constraint g_j(q, t) = 0
/// becomes a row with the free cone B_j = R (λ_j unbounded, no projection),
///   G_jᵀ ν = l_aᵀ v_a + k_aᵀ ω_a + l_bᵀ v_b + k_bᵀ ω_b   (world-frame v, ω),
///   b_j = γ_s g_j / h + ∂g_j/∂t,   η_j = 1 / (G_jᵀ M⁻¹ G_j),
/// and the solvers drive b_j + G_jᵀ ν to zero. Built each step from the joints and the
/// current poses (solvers/bilateral.cpp); the products on the solver bodies are below.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/body_store.hpp"
#include "core/contacts.hpp"
#include "core/joints.hpp"
#include "solvers/solver_bodies.hpp"

namespace talus {

/// The rows of one step, as structure of arrays, in a fixed order (joint by joint).
struct BilateralBatch {
    std::vector<int32_t> a, b;          ///< dense body indices, kNoBody for the world
    std::vector<Vec3> lin_a, ang_a;     ///< A's linear [-] and angular [m] Jacobian, world
    std::vector<Vec3> lin_b, ang_b;     ///< the same for B
    std::vector<double> rhs;            ///< b_j [m/s or rad/s]
    std::vector<double> eta;            ///< η_j = 1/(G_jᵀ M⁻¹ G_j); 0 if no side can move
    std::vector<double> lambda;         ///< λ_j [N s or N m s]: warm start in, solution out
    std::vector<double> value;          ///< g_j at the step's start [m or rad]; 0 for motors
    std::vector<uint8_t> position;      ///< 1: a position-level row (counts for I(q))

    std::size_t size() const { return a.size(); }
    bool empty() const { return a.empty(); }
    void clear() {
        a.clear(); b.clear(); lin_a.clear(); ang_a.clear(); lin_b.clear(); ang_b.clear();
        rhs.clear(); eta.clear(); lambda.clear(); value.clear(); position.clear();
    }
};

/// Dense indices of every joint's bodies (kNoBody for the world), re-used while they still
/// hold the same stable ids (World renumbers bodies now and then). Returns "" or a message
/// naming a joint whose body no longer exists.
std::string map_joint_bodies(const std::vector<Joint>& joints, const BodyStore& bodies,
                             std::vector<int32_t>& index_a, std::vector<int32_t>& index_b);

/// The rows of all joints at the bodies' current poses, for step h and stabilisation γ_s.
/// With `warm_start` and the same row count as before, out.lambda keeps the last step's λ.
void build_bilateral_rows(const std::vector<Joint>& joints, const std::vector<int32_t>& index_a,
                          const std::vector<int32_t>& index_b, const BodyStore& bodies,
                          double stabilization, double h, bool warm_start, BilateralBatch& out);

/// Anitescu et al. 2003 eq. 3.15 restricted to joints: I(q) = max_j |g_j(q)| over the
/// position-level rows at the bodies' current poses [m or rad].
double joint_infeasibility(const std::vector<Joint>& joints, const std::vector<int32_t>& index_a,
                           const std::vector<int32_t>& index_b, const BodyStore& bodies);

// ---- products on the solver bodies (world frame; solvers/solver_bodies.hpp) -----------

/// G_jᵀ ν at the solver bodies' velocities (no b_j).
inline double row_jacobian_velocity(const BilateralBatch& r, const SolverBodies& sb, std::size_t j) {
    double d = 0.0;
    if (r.a[j] != kNoBody) {
        const SolverBody& A = sb.body[std::size_t(r.a[j])];
        d += r.lin_a[j].dot(A.v) + r.ang_a[j].dot(A.w);
    }
    if (r.b[j] != kNoBody) {
        const SolverBody& B = sb.body[std::size_t(r.b[j])];
        d += r.lin_b[j].dot(B.v) + r.ang_b[j].dot(B.w);
    }
    return d;
}

/// b_j + G_jᵀ ν at the solver bodies' current velocities.
inline double row_velocity(const BilateralBatch& r, const SolverBodies& sb, std::size_t j) {
    return r.rhs[j] + row_jacobian_velocity(r, sb, j);
}

/// ν ← ν + M⁻¹ G_j Δλ on the solver bodies.
inline void apply_row(const BilateralBatch& r, SolverBodies& sb, std::size_t j, double dl) {
    if (r.a[j] != kNoBody) {
        const std::size_t i = std::size_t(r.a[j]);
        sb.body[i].v += (sb.body[i].inv_mass * dl) * r.lin_a[j];
        sb.body[i].w += sb.inv_inertia_times(i, dl * r.ang_a[j]);
    }
    if (r.b[j] != kNoBody) {
        const std::size_t i = std::size_t(r.b[j]);
        sb.body[i].v += (sb.body[i].inv_mass * dl) * r.lin_b[j];
        sb.body[i].w += sb.inv_inertia_times(i, dl * r.ang_b[j]);
    }
}

/// Add M⁻¹ G λ of every row to the solver bodies, serially in row order (deterministic).
inline void add_row_impulses(const BilateralBatch& r, const std::vector<double>& lambda,
                             SolverBodies& sb) {
    for (std::size_t j = 0; j < r.size(); ++j) apply_row(r, sb, j, lambda[j]);
}

/// max_j |b_j + G_jᵀ ν|, the rows' share of the docs/design.md §6 residual [m/s or rad/s].
inline double bilateral_residual(const BilateralBatch& r, const SolverBodies& sb) {
    double m = 0.0;
    for (std::size_t j = 0; j < r.size(); ++j) m = std::max(m, std::abs(row_velocity(r, sb, j)));
    return m;
}

/// PGS on row j: λ_j ← λ_j − ω η_j (b_j + G_jᵀ ν) (the free cone: no projection), applied
/// to both bodies at once. Returns d_j² − tol² before the update. The colour sweep
/// (solvers/colour_sweep.hpp) calls it for each row of a joint's block, in row order.
inline double pgs_row(BilateralBatch& r, SolverBodies& sb, std::size_t j, double omega, double tol2) {
    const double d = row_velocity(r, sb, j);
    const double dl = -omega * r.eta[j] * d;
    r.lambda[j] += dl;
    apply_row(r, sb, j, dl);
    return d * d - tol2;
}

}  // namespace talus
