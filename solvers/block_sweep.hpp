#pragma once
/// One sweep of a non-linear block Gauss–Seidel with exact single-contact solves, shared by
/// the maximum-dissipation model ("maxdiss") and exact Coulomb friction ("nsgs"): for each
/// contact, d_i from the current velocities, W_ii = D_iᵀ M⁻¹ D_i, q_i = d_i − W_ii γ_i (the
/// velocity without its own impulse), γ_i ← solve(W_ii, q_i, μ_i, γ_i), and the change
/// applied at once to both bodies. Colours as PGS (solvers/colour_sweep.hpp), hence the same
/// independence of the thread count.
#include <algorithm>

#include "solvers/colour_sweep.hpp"
#include "solvers/contact_ops.hpp"

namespace talus {

/// Returns the largest ‖Δγ_i‖ / η_i of the sweep [m/s]. `solve(W, q, μ, γ) → Vec3`.
template <class LocalSolve>
double exact_block_sweep(AssembledBatch& batch, SolverBodies& bodies, LocalSolve&& solve) {
    constexpr std::size_t kGrain = 256;  // contacts per task within a colour (fixed: determinism)
    return sweep_colours(batch, kGrain, 0.0, [&](std::size_t lo, std::size_t hi, bool) {
        double change = 0.0;
        for (std::size_t i = lo; i < hi; ++i) {
            const ContactFrame f = contact_frame(batch, i);
            const Vec3 d = contact_velocity(batch, f, bodies, i);
            const Mat3 W = delassus_block(batch, bodies, i);
            const Vec3 g0 = batch.gamma[i];
            const Vec3 g = solve(W, Vec3(d - W * g0), batch.mu[i], g0);
            batch.gamma[i] = g;
            apply_impulse(batch, f, bodies, i, g - g0);
            change = std::max(change, (g - g0).norm() / batch.eta[i]);
        }
        return change;
    });
}

}  // namespace talus
