// Body-major view of a contact batch (see body_contacts.hpp). Building it is a counting
// sort over contact ends; the gathers run one task per chunk of bodies, each body adding
// its contacts' impulses in ascending contact order, so every sum has a fixed order.
#include "solvers/body_contacts.hpp"

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

void solver_velocities(const AssembledBatch& c, const BodyContacts& bc,
                       const std::vector<Vec3>& gamma, SolverBodies& sb) {
    for_each_body_impulse(c, bc, gamma, [&](std::size_t b, const Vec3& f, const Vec3& t) {
        sb.body[b].v = sb.v_free[b] + sb.body[b].inv_mass * f;
        sb.body[b].w = sb.w_free[b] + sb.inv_inertia_times(b, t);
    });
}

}  // namespace talus
