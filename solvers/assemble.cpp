// Assembly of the step's cone complementarity problem (docs/design.md §3–§4, §6).
//
// For contact i with normal n (A → B), tangents (u, w = n × u) from n alone (Duff et al.
// 2017; not stored: the readers compute u again), and lever arms r = p − x, the relative
// velocity is c_i = A_iᵀ[(v_B + ω_B × r_B) − (v_A + ω_A × r_A)] with A_i = [n u w] and
// world-frame ω (solvers/solver_bodies.hpp).
// The batch stores n and the world lever arms; the products are in contact_ops.hpp.
// W_ii = D_iᵀ M⁻¹ D_i is never formed; only its trace, for η_i = 3 / trace(W_ii):
// trace = Σ_sides [3/m + Σ_t (r × t)ᵀ I⁻¹ (r × t)], with I⁻¹ = R J̄⁻¹ Rᵀ evaluated in
// the body frame as Σ_k J̄⁻¹_k (Rᵀ(r × t))_k².
// Stabilisation: b = Φ/h for an open gap, max(γ_s Φ/h, −v_rec) for a penetration.
// Warm start: γ⁰ from the previous step's impulses of the same contact, friction
// re-projected on the new tangents, scaled by h_new/h_old and projected onto K_i.
// Rolling/spinning torque entries, when a material has them: solvers/rolling.cpp.
#include "solvers/assemble.hpp"

#include <algorithm>

#include "core/parallel.hpp"
#include "solvers/cone_projection.hpp"
#include "solvers/contact_ops.hpp"
#include "solvers/solver_bodies.hpp"
#include "solvers/warm_start.hpp"

namespace talus {

Vec3 warm_impulse(const WarmStartCache& warm, uint64_t key_a, uint64_t key_b, uint32_t feature,
                  const ContactFrame& frame, double mu, double h) {
    const auto* e = warm.find(key_a, key_b, feature);
    if (e == nullptr) return Vec3::Zero();
    const double scale = h / e->h;
    return project_friction_cone(scale * Vec3(e->normal, e->friction.dot(frame.u), e->friction.dot(frame.w)), mu);
}

void assemble(const BodyStore& bodies, const ContactList& contacts, const MaterialTable& materials,
              const SolverSettings& settings, double h, const WarmStartCache& warm,
              AssembledBatch& out) {
    const std::size_t n = contacts.size();
    out.a.resize(n); out.b.resize(n); out.normal.resize(n);
    std::vector<Vec3>().swap(out.tangent);  // u from n where read (AssembledBatch::tangent)
    out.lever_a.resize(n); out.lever_b.resize(n); out.rhs.resize(n); out.stab.resize(n); out.mu.resize(n);
    out.eta.resize(n); out.gamma.resize(n);
    out.push.resize(settings.split_push_out ? n : 0);
    out.eta_n.clear(); out.eta_t.clear();  // bgs's metric: filled by its solve (BodyOperator::bgs_prepare)
    out.colour_start = contacts.colour_start;
    out.overflow_colour = contacts.overflow_colour;
    out.normal_only = false;  // a user's flag for one solve never outlives its batch
    if (out.colour_start.empty()) out.colour_start = {0, uint32_t(n)};  // uncoloured: one serial range
    const double bounce = std::max(settings.bounce_speed, kBounceGravitySteps * settings.gravity * h);
    if (contacts.colour_start.empty()) out.overflow_colour = true;
    out.lipschitz = settings.warm_start ? warm.lipschitz() : 0.0;

    parallel_ranges(0, n, grain::kAssembly, [&](std::size_t lo, std::size_t hi) {
        for (std::size_t i = lo; i != hi; ++i) {
            const int32_t a = contacts.a[i], b = contacts.b[i];
            const Vec3& nrm = contacts.normal[i];
            const Vec3 u = first_tangent(nrm);
            const ContactFrame frame{nrm, u, cross(nrm, u)};

            // B's centre as the contact sees it: its periodic image next to A, if any.
            const bool imaged = !contacts.shift_b.empty() && !contacts.shift_b[i].isZero(0.0);
            auto centre = [&](int32_t body) -> Vec3 {
                return imaged && body == b ? Vec3(bodies.position[body] + contacts.shift_b[i])
                                           : bodies.position[body];
            };
            double trace = 0.0;
            auto side = [&](int32_t body) -> Vec3 {
                if (body == kNoBody) return Vec3::Zero();
                const Vec3 lever = contacts.point[i] - centre(body);
                const Vec3& inv_j = bodies.inv_inertia[body];
                trace += 3.0 * bodies.inv_mass[body];
                if (isotropic(inv_j)) {
                    // isotropic (every sphere): J̄⁻¹ = j I, so the rotation drops out and
                    // Σ_t ‖r × t‖² over the orthonormal frame is 2 ‖r‖²
                    trace += 2.0 * inv_j[0] * lever.squaredNorm();
                    return lever;
                }
                const Mat3 rot = bodies.orientation[body].toRotationMatrix();
                for (const Vec3* t : {&frame.n, &frame.u, &frame.w}) {
                    const Vec3 row = rot.transpose() * cross(lever, *t);  // body frame
                    trace += row.cwiseProduct(row).dot(inv_j);
                }
                return lever;
            };
            out.lever_a[i] = side(a);
            out.lever_b[i] = side(b);

            const double gap = contacts.gap[i];
            const double push = std::max(settings.stabilization * gap / h, -settings.recovery_speed);
            // an overlap's push-out: here, or (split_push_out) in World's separate pass
            double stab = gap >= 0.0 ? gap / h : settings.split_push_out ? 0.0 : push;
            if (settings.split_push_out) out.push[i] = gap >= 0.0 ? gap / h : push;
            const uint32_t mat_b = bodies.material[b];
            const double mu = materials.friction(contacts.material_a[i], mat_b);
            // Restitution (Newton's law on the normal velocity): a contact that closes during
            // this step at the free velocity ν*, approaching at v_in > max(bounce_speed,
            // kBounceGravitySteps ‖g‖ h), must leave at e v_in or faster: d_n = v_n⁺ − e v_in
            // ≥ 0, i.e. b = −e v_in.
            const double e = materials.restitution(contacts.material_a[i], mat_b);
            if (e > 0.0) {
                auto point_velocity = [&](int32_t body) -> Vec3 {
                    const Vec3 r = contacts.point[i] - centre(body);
                    const Vec3 w = bodies.orientation[body] * bodies.angular_velocity[body];
                    return bodies.velocity[body] + w.cross(r);
                };
                const Vec3 va = a == kNoBody ? contacts.velocity_of_a(i) : point_velocity(a);
                const double vn = nrm.dot(point_velocity(b) - va);
                if (-vn > bounce && gap + h * vn < 0.0) stab = std::min(stab, e * vn);
            }

            out.a[i] = a;
            out.b[i] = b;
            out.normal[i] = nrm;
            out.stab[i] = stab;
            out.rhs[i] = Vec3(stab, 0.0, 0.0) - frame.to_contact(contacts.velocity_of_a(i));
            out.mu[i] = mu;
            out.eta[i] = 3.0 / trace;

            out.gamma[i] = settings.warm_start ? warm_impulse(warm, contacts.key_a[i], contacts.key_b[i],
                                                             contacts.feature[i], frame, mu, h)
                                               : Vec3::Zero();
        }
    });
    if (materials.any_rolling())
        assemble_rolling(bodies, contacts, materials, h, settings.warm_start, warm, out);
    else
        out.rolling.clear();
}

}  // namespace talus
