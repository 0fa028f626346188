// Rolling and spinning resistance as an extra block of torque rows (Tasora & Anitescu,
// Meccanica 48, 2013; the model and its set R(γ_n) are described in solvers/rolling.hpp).
//
// Why a separate block: most scenes have no rolling resistance, and a contact without it
// must run the existing contact kernels bit for bit and at the same speed. The block holds
// only the contacts whose pair has μ_r > 0 or μ_s > 0, in contact order; PGS sweeps a
// colour's entries right after that colour's contacts (same bodies, so still race-free),
// PJ takes them in its Jacobi step, and a solver that does not handle them refuses the
// problem (solvers/solver.cpp).
//
// Tasora–Anitescu state the model as one CCP: (γ_n, γ_t, γ_r, γ_s) in a composite cone,
// whose dual-cone condition relaxes the normal velocity by μ‖d_t‖ + μ_r‖d_r‖ + μ_s|d_s|
// (rolling and spinning would lift off as sliding does, docs/design.md §4). Talus instead projects
// the torque part onto R(γ_n) at the contact's current γ_n, leaving the contact block the
// plain Coulomb CCP: at a fixed point the contact satisfies its CCP, and the torque
// maximises dissipation within the bounds set by γ_n (|γ_s| = μ_s γ_n against a spin,
// ‖γ_r‖ = μ_r γ_n against a roll, anything inside when the bodies do not turn). So
// rolling and spinning cause no lift-off; but the problem is no longer a QP over a fixed
// cone, which is why APGD (a projected gradient method for that QP) does not take these
// rows. The residual's term for them is zero exactly at such a fixed point. The step η_k
// uses a Gershgorin bound of the 3×3 block
// W_k = A_iᵀ (I_A⁻¹ + I_B⁻¹) A_i: for spheres (W_k = (1/J_A + 1/J_B) I) it is the exact
// inverse, for other bodies a safe under-estimate.
#include "solvers/rolling.hpp"

#include "solvers/assemble.hpp"
#include "solvers/contact_kernels.hpp"
#include "solvers/contact_ops.hpp"
#include "solvers/warm_start.hpp"

namespace talus {
namespace {

/// World inverse inertia R J̄⁻¹ Rᵀ of a body of the store.
Mat3 world_inverse_inertia(const BodyStore& bodies, int32_t body) {
    const Mat3 rot = bodies.orientation[std::size_t(body)].toRotationMatrix();
    return rot * bodies.inv_inertia[std::size_t(body)].asDiagonal() * rot.transpose();
}

/// ℓ of a pair: its reduced radius r_a r_b / (r_a + r_b), or the body's radius against a wall.
/// A relative rotation Δω left unresolved turns the two surfaces over each other at about
/// ℓ Δω, which is what the residual compares with the contacts' speeds.
double residual_length(const BodyStore& bodies, int32_t a, int32_t b) {
    const double ra = a != kNoBody ? bodies.radius[std::size_t(a)] : 0.0;
    const double rb = b != kNoBody ? bodies.radius[std::size_t(b)] : 0.0;
    if (ra > 0.0 && rb > 0.0) return ra * rb / (ra + rb);
    return std::max(ra, rb);
}

}  // namespace

void assemble_rolling(const BodyStore& bodies, const ContactList& contacts,
                      const MaterialTable& materials, double h, bool warm_start,
                      const WarmStartCache& warm, AssembledBatch& out) {
    RollingBatch& rb = out.rolling;
    rb.clear();
    for (std::size_t i = 0; i < contacts.size(); ++i) {
        const uint32_t ma = contacts.material_a[i], mb = bodies.material[out.b[i]];
        const double mu_r = materials.rolling(ma, mb), mu_s = materials.spinning(ma, mb);
        if (!(mu_r > 0.0) && !(mu_s > 0.0)) continue;
        const ContactFrame f = contact_frame(out, i);
        Mat3 inv = Mat3::Zero();
        for (int32_t body : {out.a[i], out.b[i]})
            if (body != kNoBody) inv += world_inverse_inertia(bodies, body);
        Mat3 frame;
        frame.col(0) = f.n;
        frame.col(1) = f.u;
        frame.col(2) = f.w;
        const Mat3 W = frame.transpose() * inv * frame;
        double bound = 0.0;  // Gershgorin: λ_max(W) ≤ max row sum of |W|
        for (int r = 0; r < 3; ++r) bound = std::max(bound, W.row(r).cwiseAbs().sum());
        if (!(bound > 0.0)) continue;  // no side can turn: nothing to resist

        Vec3 g0 = Vec3::Zero();
        if (warm_start)
            if (const auto* e = warm.find_torque(contacts.key_a[i], contacts.key_b[i],
                                                 contacts.feature[i]))
                g0 = project_rolling((h / e->h) * f.to_contact(e->torque), out.gamma[i][0], mu_r, mu_s);
        rb.contact.push_back(uint32_t(i));
        rb.mu_r.push_back(mu_r);
        rb.mu_s.push_back(mu_s);
        rb.eta.push_back(1.0 / bound);
        rb.length.push_back(residual_length(bodies, out.a[i], out.b[i]));
        rb.gamma.push_back(g0);
    }
}

double pgs_rolling_contacts(AssembledBatch& batch, SolverBodies& sb, std::size_t lo,
                            std::size_t hi, double omega, double tol2, bool independent) {
    std::size_t first, last;
    batch.rolling.range_of_contacts(lo, hi, first, last);
    return pgs_rolling_range(batch, sb, first, last, omega, tol2, independent);  // the kernels
}

double pj_rolling_pass(const AssembledBatch& batch, const SolverBodies& sb, const double* step,
                       Vec3* next) {
    const RollingBatch& rb = batch.rolling;
    double worst = 0.0;
    for (std::size_t k = 0; k < rb.size(); ++k) {
        const std::size_t i = rb.contact[k];
        const ContactFrame f = contact_frame(batch, i);
        const Vec3 d = f.to_contact(relative_spin(sb, batch.a[i], batch.b[i]));
        const Vec3& g0 = rb.gamma[k];
        const double gn = batch.gamma[i][0], eta = rb.eta[k];
        next[k] = project_rolling(g0 - step[k] * d, gn, rb.mu_r[k], rb.mu_s[k]);
        const Vec3 full = project_rolling(g0 - eta * d, gn, rb.mu_r[k], rb.mu_s[k]);
        worst = std::max(worst, (g0 - full).norm() / eta * rb.length[k]);
    }
    return worst;
}

void pj_rolling_apply(AssembledBatch& batch, const Vec3* next, SolverBodies& sb) {
    RollingBatch& rb = batch.rolling;
    for (std::size_t k = 0; k < rb.size(); ++k) {
        const std::size_t i = rb.contact[k];
        const Vec3 dg = next[k] - rb.gamma[k];
        rb.gamma[k] = next[k];
        apply_torque(sb, batch.a[i], batch.b[i], contact_frame(batch, i).to_world(dg));
    }
}

void add_rolling_impulses(const AssembledBatch& batch, SolverBodies& sb) {
    const RollingBatch& rb = batch.rolling;
    for (std::size_t k = 0; k < rb.size(); ++k) {
        const std::size_t i = rb.contact[k];
        apply_torque(sb, batch.a[i], batch.b[i], contact_frame(batch, i).to_world(rb.gamma[k]));
    }
}

void add_rolling_impulses(const AssembledBatch& batch, BodyStore& store) {
    const RollingBatch& rb = batch.rolling;
    for (std::size_t k = 0; k < rb.size(); ++k) {
        const std::size_t i = rb.contact[k];
        const Vec3 tau = contact_frame(batch, i).to_world(rb.gamma[k]);
        auto push = [&](int32_t body, double sign) {
            if (body == kNoBody) return;
            const std::size_t j = std::size_t(body);
            const Vec3 t_body = store.orientation[j].conjugate() * Vec3(sign * tau);
            store.angular_velocity[j] += store.inv_inertia[j].cwiseProduct(t_body);
        };
        push(batch.b[i], 1.0);
        push(batch.a[i], -1.0);
    }
}

double rolling_residual(const AssembledBatch& batch, const SolverBodies& sb) {
    const RollingBatch& rb = batch.rolling;
    double worst = 0.0;
    for (std::size_t k = 0; k < rb.size(); ++k) {
        const std::size_t i = rb.contact[k];
        const Vec3 d = contact_frame(batch, i).to_contact(relative_spin(sb, batch.a[i], batch.b[i]));
        const Vec3& g = rb.gamma[k];
        const Vec3 full = project_rolling(g - rb.eta[k] * d, batch.gamma[i][0], rb.mu_r[k], rb.mu_s[k]);
        worst = std::max(worst, (g - full).norm() / rb.eta[k] * rb.length[k]);
    }
    return worst;
}

}  // namespace talus
