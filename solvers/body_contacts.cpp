// Body-major view of a contact batch (see body_contacts.hpp). Building it is a counting
// sort over contact ends; gathering runs one task per chunk of bodies, each body adding
// its contacts' contributions ±A_i γ_i (linear) and ±ang_iᵀ γ_i (angular, body frame) in
// ascending contact order, so every sum has a fixed order.
#include "solvers/body_contacts.hpp"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

namespace talus {

void BodyContacts::build(const AssembledBatch& c, std::size_t body_count) {
    start.assign(body_count + 1, 0);
    const std::size_t n = c.size();
    for (std::size_t i = 0; i < n; ++i) {
        if (c.a[i] != kNoBody) ++start[c.a[i] + 1];
        if (c.b[i] != kNoBody) ++start[c.b[i] + 1];
    }
    for (std::size_t k = 0; k < body_count; ++k) start[k + 1] += start[k];
    entry.resize(start[body_count]);
    std::vector<uint32_t> fill(start.begin(), start.end() - 1);
    for (std::size_t i = 0; i < n; ++i) {
        if (c.a[i] != kNoBody) entry[fill[c.a[i]]++] = uint32_t(2 * i);
        if (c.b[i] != kNoBody) entry[fill[c.b[i]]++] = uint32_t(2 * i + 1);
    }
}

void gather_velocities(const AssembledBatch& c, const BodyStore& bodies, const BodyContacts& bc,
                       const std::vector<Vec3>& gamma, const std::vector<Vec3>* base_v,
                       const std::vector<Vec3>* base_w, std::vector<Vec3>& out_v,
                       std::vector<Vec3>& out_w) {
    const std::size_t nb = bodies.size();
    out_v.resize(nb);
    out_w.resize(nb);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, nb, 1024),
                      [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t b = r.begin(); b != r.end(); ++b) {
            Vec3 f = Vec3::Zero(), t = Vec3::Zero();
            for (uint32_t k = bc.start[b]; k < bc.start[b + 1]; ++k) {
                const uint32_t e = bc.entry[k];
                const std::size_t i = e >> 1;
                const Vec3& g = gamma[i];
                const Mat3& ang = (e & 1) ? c.ang_b[i] : c.ang_a[i];
                const double sign = (e & 1) ? 1.0 : -1.0;
                f += sign * (c.basis[i] * g);
                t += sign * (ang.transpose() * g);
            }
            out_v[b] = (base_v ? (*base_v)[b] : Vec3::Zero()) + bodies.inv_mass[b] * f;
            out_w[b] = (base_w ? (*base_w)[b] : Vec3::Zero()) + bodies.inv_inertia[b].cwiseProduct(t);
        }
    });
}

}  // namespace talus
