#pragma once
/// Rolling and spinning resistance (Tasora & Anitescu, "A complementarity-based rolling
/// friction model for rigid contacts", Meccanica 48, 2013): the torque block of a step.
///
/// Each contact i whose pair has μ_r > 0 or μ_s > 0 gets one entry k carrying a torque
/// impulse γ_k = (γ_s, γ_r,u, γ_r,w) in the contact frame A_i = [n u w], acting as +A_i γ_k
/// on B and −A_i γ_k on A (about the centres: a pure couple). Its rows read the relative
/// angular velocity only,
///   d_k = A_iᵀ (ω_B − ω_A)  [rad/s],
/// and its set depends on the contact's normal impulse γ_n:
///   R_k(γ_n) = { |γ_s| ≤ μ_s γ_n,  ‖(γ_r,u, γ_r,w)‖ ≤ μ_r γ_n },
/// with μ_r, μ_s in metres (a torque per unit normal force). The block step is
/// η_k = 1 / (Gershgorin bound of W_k), W_k = A_iᵀ (I_A⁻¹ + I_B⁻¹) A_i (= the exact 1/λ for
/// spheres, where W_k is a multiple of the identity), so ω η_k λ_max(W_k) ≤ ω and a
/// relaxed step stays a descent step. Π_R clamps γ_s and scales γ_r onto its disc, both at
/// the current γ_n: unlike the paper's composite cone, this adds no lift-off (see
/// solvers/rolling.cpp for the difference).
/// The docs/design.md §6 residual gets the term ‖γ_k − Π_R(γ_k − η_k d_k)‖ / η_k [rad/s] times
/// the pair's reduced radius ℓ_k = r_a r_b / (r_a + r_b) (a wall's: the body's radius), so in
/// m/s like the contacts' terms: the speed at which the relative rotation left unresolved turns
/// the two surfaces over each other. (Compared in rad/s against a tolerance in m/s, a grain of
/// 1.5 mm had its rolling rows held 1,300 times tighter than its contact: the heap of
/// scenes/heap_pour.toml ran 89 % of its steps to the iteration cap.)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/body_store.hpp"
#include "core/contacts.hpp"
#include "core/materials.hpp"
#include "core/math.hpp"
#include "solvers/solver_bodies.hpp"

namespace talus {

/// The torque entries of one step, ordered by contact index (so the entries of a colour's
/// contacts form one range, swept with them: no two share a dynamic body).
struct RollingBatch {
    std::vector<uint32_t> contact;   ///< index of the contact in the assembled batch
    std::vector<double> mu_r;        ///< rolling coefficient μ_r [m]
    std::vector<double> mu_s;        ///< spinning coefficient μ_s [m]
    std::vector<double> eta;         ///< η_k [1/(kg m²)]⁻¹ = [kg m²]
    std::vector<double> length;      ///< ℓ_k, the residual term's length: the reduced radius [m]
    std::vector<Vec3> gamma;         ///< (γ_s, γ_r,u, γ_r,w) [N m s]: warm start in, solution out

    std::size_t size() const { return contact.size(); }
    bool empty() const { return contact.empty(); }
    void clear() {
        contact.clear();
        mu_r.clear();
        mu_s.clear();
        eta.clear();
        length.clear();
        gamma.clear();
    }
    /// Entries whose contact lies in [lo, hi): [first, last).
    void range_of_contacts(std::size_t lo, std::size_t hi, std::size_t& first, std::size_t& last) const {
        first = std::size_t(std::lower_bound(contact.begin(), contact.end(), uint32_t(lo)) - contact.begin());
        last = std::size_t(std::lower_bound(contact.begin() + std::ptrdiff_t(first), contact.end(),
                                            uint32_t(hi)) - contact.begin());
    }
};

/// Π_R(γ_n): γ_s clamped to [−μ_s γ_n, μ_s γ_n], (γ_r,u, γ_r,w) scaled onto the disc of
/// radius μ_r γ_n; everything 0 when γ_n ≤ 0.
inline Vec3 project_rolling(const Vec3& g, double gn, double mu_r, double mu_s) {
    if (!(gn > 0.0)) return Vec3::Zero();
    const double smax = mu_s * gn, rmax = mu_r * gn;
    const double s = std::clamp(g[0], -smax, smax);
    const double t2 = g[1] * g[1] + g[2] * g[2];
    if (t2 <= rmax * rmax) return Vec3(s, g[1], g[2]);
    const double k = rmax / std::sqrt(t2);
    return Vec3(s, k * g[1], k * g[2]);
}

/// ω_B − ω_A in the world frame at the solver bodies' velocities (0 for a missing side).
inline Vec3 relative_spin(const SolverBodies& sb, int32_t a, int32_t b) {
    Vec3 w = Vec3::Zero();
    if (b != kNoBody) w += sb.body[std::size_t(b)].w;
    if (a != kNoBody) w -= sb.body[std::size_t(a)].w;
    return w;
}

/// ω += I⁻¹ (±τ) for a world torque impulse τ: + on B, − on A.
inline void apply_torque(SolverBodies& sb, int32_t a, int32_t b, const Vec3& tau) {
    if (b != kNoBody) sb.body[std::size_t(b)].w += sb.inv_inertia_times(std::size_t(b), tau);
    if (a != kNoBody) sb.body[std::size_t(a)].w -= sb.inv_inertia_times(std::size_t(a), tau);
}

}  // namespace talus

// ---- the block in a step (solvers/rolling.cpp) -----------------------------------------

namespace talus {

struct AssembledBatch;
class WarmStartCache;

/// Build out.rolling after the contacts of `out` are assembled (γ⁰ of the contacts set):
/// one entry per contact whose pair has μ_r > 0 or μ_s > 0, in contact order; with
/// `warm_start`, γ⁰ from `warm` (the world torque re-expressed in the new frame, scaled by
/// h/h_old, projected onto R(γ_n⁰)). Clears the block when no material has resistance.
void assemble_rolling(const BodyStore& bodies, const ContactList& contacts,
                      const MaterialTable& materials, double h, bool warm_start,
                      const WarmStartCache& warm, AssembledBatch& out);

/// PGS on the entries of contacts [lo, hi) (swept right after those contacts, so a colour's
/// entries share no dynamic body): γ_k ← Π_R(γ_k − ω η_k d_k) with the contact's current
/// γ_n, applied to both bodies at once. Returns the largest ‖γ_k − Π_R(γ_k − η_k d_k)‖² ℓ_k² −
/// tol2 η_k² when visited (−1 without entries): the residual term's excess, in m/s.
/// `independent`: one colour's entries, which the AVX lanes may take (pgs_rolling_range).
double pgs_rolling_contacts(AssembledBatch& batch, SolverBodies& sb, std::size_t lo,
                            std::size_t hi, double omega, double tol2, bool independent);

/// PJ's pass: next_k = Π_R(γ_k − step_k d_k) from the current velocities (read only), at
/// the contacts' current γ_n; returns the largest residual term [m/s].
double pj_rolling_pass(const AssembledBatch& batch, const SolverBodies& sb, const double* step,
                       Vec3* next);
/// PJ's second pass: ν += M⁻¹ (torques of next − γ), γ ← next, serially in entry order.
void pj_rolling_apply(AssembledBatch& batch, const Vec3* next, SolverBodies& sb);

/// ν += M⁻¹ A γ_k for every entry, serially in entry order (deterministic).
void add_rolling_impulses(const AssembledBatch& batch, SolverBodies& sb);
/// The same on a body store's body-frame ω̄.
void add_rolling_impulses(const AssembledBatch& batch, BodyStore& store);

/// max_k ‖γ_k − Π_R(γ_k − η_k d_k)‖ ℓ_k / η_k at the solver bodies' velocities [m/s]; 0
/// without entries.
double rolling_residual(const AssembledBatch& batch, const SolverBodies& sb);

}  // namespace talus
