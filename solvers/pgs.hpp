#pragma once
/// Projected Gauss–Seidel for the CCP (DESIGN §6).
#include <vector>

#include "engine/core/body_store.hpp"
#include "engine/core/settings.hpp"
#include "solvers/assemble.hpp"
#include "solvers/solver_result.hpp"

namespace talus {

/// Buffers kept between steps so the iteration allocates nothing.
struct SolverWorkspace {
    std::vector<Vec3> v_free, w_free;  ///< ν* (velocities before contact impulses)
};

/// Solve the batch: on entry bodies hold ν* and batch.gamma the warm start γ⁰; on exit
/// batch.gamma holds γ and bodies hold ν⁺ = ν* + M⁻¹ D γ, rebuilt from scratch.
SolverResult solve_pgs(AssembledBatch& batch, BodyStore& bodies, const SolverSettings& settings,
                       SolverWorkspace& work);

}  // namespace talus
