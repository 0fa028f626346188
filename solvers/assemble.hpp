#pragma once
/// Assembly: from geometric contacts to the solver's batch (DESIGN §3, §4): contact frame,
/// body-frame angular Jacobians, stabilisation term b, friction μ, step η, warm start γ⁰.
#include <cstdint>
#include <vector>

#include "engine/core/body_store.hpp"
#include "engine/core/contacts.hpp"
#include "engine/core/materials.hpp"
#include "engine/core/settings.hpp"

namespace talus {

class WarmStartCache;

/// The CCP of one step, as structure of arrays. Contact i couples bodies a[i] and b[i]
/// (kNoBody for a static or kinematic side). With ν = [v; ω̄] per body,
///   c_i = basisᵀ (v_b − v_a) + ang_b ω̄_b − ang_a ω̄_a + rhs,
/// where rhs = [b_i, 0, 0] − basisᵀ v_wall holds the stabilisation and a wall's velocity.
struct AssembledBatch {
    std::vector<int32_t> a, b;
    std::vector<Mat3> basis;    ///< columns n, u, w (world)
    std::vector<Mat3> ang_a;    ///< rows: body-frame angular Jacobian of A for n, u, w
    std::vector<Mat3> ang_b;    ///< same for B
    std::vector<Vec3> rhs;      ///< constant part of d_i [m/s]
    std::vector<double> stab;   ///< b_i alone [m/s]
    std::vector<double> mu;     ///< friction coefficient [-]
    std::vector<double> eta;    ///< η_i = 3 / trace(W_ii)
    std::vector<Vec3> gamma;    ///< impulses (n, u, w) [N s]: warm start in, solution out
    std::vector<uint32_t> colour_start;  ///< colour ranges, as in ContactList
    bool overflow_colour = false;        ///< last colour must be swept serially

    std::size_t size() const { return a.size(); }
};

/// Build the batch for step size h. Walls' velocities enter rhs; γ⁰ comes from `warm`
/// (re-projected on the new tangents, Π_K applied) when settings.warm_start is set.
void assemble(const BodyStore& bodies, const ContactList& contacts, const MaterialTable& materials,
              const SolverSettings& settings, double h, const WarmStartCache& warm,
              AssembledBatch& out);

}  // namespace talus
