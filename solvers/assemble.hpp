#pragma once
/// Assembly: from geometric contacts to the solver's batch (docs/design.md §3, §4): contact frame,
/// body-frame angular Jacobians, stabilisation term b, friction μ, step η, warm start γ⁰.
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/body_store.hpp"
#include "core/contacts.hpp"
#include "core/materials.hpp"
#include "core/settings.hpp"
#include "solvers/bilateral.hpp"
#include "solvers/colouring.hpp"
#include "solvers/rolling.hpp"

namespace talus {

class WarmStartCache;
struct ContactFrame;

/// The CCP of one step, as structure of arrays. Contact i couples bodies a[i] and b[i]
/// (kNoBody for a static or kinematic side). With world-frame velocities (v, ω) per body
/// and the contact frame A = [n u w], w = n × u,
///   c_i = Aᵀ [(v_b + ω_b × r_b) − (v_a + ω_a × r_a)] + rhs,
/// where rhs = [b_i, 0, 0] − Aᵀ v_wall holds the stabilisation and a wall's velocity.
/// A PGS update reads 164 bytes of it per contact and writes 24 (γ); the products built
/// on it are in solvers/contact_ops.hpp.
struct AssembledBatch {
    std::vector<int32_t> a, b;
    std::vector<Vec3> normal;   ///< n, unit, A → B (world)
    /// u, unit, ⊥ n (world); the second tangent is n × u. Empty after assemble(): u is then
    /// n's basis vector of orthonormal_basis (core/math.hpp), a function of n alone that
    /// the readers (contact_frame, the kernels' load_group) compute again, bit for bit,
    /// instead of reading 24 bytes a contact. A batch built otherwise may set its own.
    std::vector<Vec3> tangent;
    std::vector<Vec3> lever_a;  ///< r_a = contact point − centre of A [m] (0 without a body)
    std::vector<Vec3> lever_b;  ///< r_b, the same for B [m]
    std::vector<Vec3> rhs;      ///< constant part of d_i [m/s]
    std::vector<double> stab;   ///< b_i alone [m/s]
    std::vector<double> mu;     ///< friction coefficient [-]
    std::vector<double> eta;    ///< η_i = 3 / trace(W_ii)
    /// The block step of "bgs" (solvers/bgs.cpp): P_ii⁻¹ = diag(eta_n, eta_t, eta_t), where
    /// P_ii = diag(p_n, p_t, p_t) ⪰ W_ii is W_ii's Gershgorin majorant in the contact frame
    /// (W_ii itself for a sphere, whose W_ii is diagonal there) [kg]. Empty after assemble();
    /// a bgs solve fills them (BodyOperator::bgs_prepare), so no other solver pays for them,
    /// and rows appended later (a resolve) keep the first rows' and get their own.
    std::vector<double> eta_n, eta_t;
    /// With SolverSettings::split_push_out, the separate push-out pass's b_i: max(γ_s Φ/h,
    /// −v_rec) for an overlap, Φ/h for an open gap (the push may close it, not pass it)
    /// [m/s]; empty otherwise.
    std::vector<double> push;
    std::vector<Vec3> gamma;    ///< impulses (n, u, w) [N s]: warm start in, solution out
    std::vector<uint32_t> colour_start;  ///< colour ranges, as in ContactList
    /// APGD's Lipschitz estimate L of N [1/kg]: in, the previous step's accepted value from
    /// the warm start (0: estimate afresh); out, the value this solve last accepted.
    double lipschitz = 0.0;
    bool overflow_colour = false;        ///< last colour must be swept serially
    /// Every row's μ is 0 and its tangential impulse 0, and stays so (the push-out pass,
    /// engine/world/push_out.cpp): bgs then steps the normal row alone (bgs_normal_update,
    /// solvers/contact_kernels.cpp), the same step as the full block's with μ = 0 less the
    /// tangent frame and the cone's square roots and divisions, which it would only project
    /// to zero. Set by its user for one solve; assemble() clears it.
    bool normal_only = false;
    /// Joint rows (solvers/bilateral.hpp), built after assembly; empty without joints.
    /// size() counts contacts only.
    BilateralBatch bilateral;
    /// The joint rows' blocks in the colours of the sweep, set by the solve from
    /// colour_start and the rows (solvers/colouring.hpp); unused without rows.
    JointColouring joint_colours;
    /// Rolling/spinning torque entries (solvers/rolling.hpp), built by assemble(); empty
    /// unless some material pair has rolling or spinning resistance.
    RollingBatch rolling;

    std::size_t size() const { return a.size(); }
    /// f(v, more.v...) for each per-contact array of this batch and the same array of each
    /// of `more` (a, b, normal, tangent, lever_a, lever_b, rhs, stab, mu, eta, eta_n, eta_t,
    /// push, gamma): what gives back, appends, permutes or copies rows goes through it, so
    /// that a new per-contact field cannot be left out of one of them. An array may be
    /// empty (tangent after assemble(); eta_n, eta_t before a bgs solve; push without
    /// split_push_out); the joints' and rolling rows are not per contact and are not visited.
    template <class F, class... More>
    void for_each_row_array(F&& f, More&... more) {
        f(a, more.a...); f(b, more.b...); f(normal, more.normal...); f(tangent, more.tangent...);
        f(lever_a, more.lever_a...); f(lever_b, more.lever_b...); f(rhs, more.rhs...); f(stab, more.stab...);
        f(mu, more.mu...); f(eta, more.eta...); f(eta_n, more.eta_n...); f(eta_t, more.eta_t...);
        f(push, more.push...); f(gamma, more.gamma...);
    }
    /// Gives back the contacts' rows and their room (a large run, between two steps: the
    /// next step assembles afresh); the joints' rows, whose λ the next step starts from,
    /// and L stay.
    void release_contact_rows() {
        for_each_row_array([](auto& v) { std::decay_t<decltype(v)>().swap(v); });
        colour_start.clear();
        rolling = RollingBatch{};
    }
};

/// γ⁰ of a contact from `warm` as assemble() makes it: its entry's impulse scaled by h / h
/// of the entry, on the contact's frame (n, u, w: solvers/contact_ops.hpp), projected on
/// the cone of μ; zero without an entry.
Vec3 warm_impulse(const WarmStartCache& warm, uint64_t key_a, uint64_t key_b, uint32_t feature,
                  const ContactFrame& frame, double mu, double h);

/// Build the batch for step size h. Walls' velocities enter rhs; γ⁰ comes from `warm`
/// (re-projected on the new tangents, Π_K applied) when settings.warm_start is set.
void assemble(const BodyStore& bodies, const ContactList& contacts, const MaterialTable& materials,
              const SolverSettings& settings, double h, const WarmStartCache& warm,
              AssembledBatch& out);

}  // namespace talus
