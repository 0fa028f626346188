// Body-major view of a contact batch (see body_contacts.hpp). Building it is a counting
// sort over contact ends; the gathers run one task per chunk of bodies, each body adding
// its contacts' impulses in ascending contact order, so every sum has a fixed order.
#include "solvers/body_contacts.hpp"

#include "solvers/contact_kernels.hpp"

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

bool scatters(const AssembledBatch& c, const BodyContacts& bc, const SolverBodies& sb) {
    return c.colour_start.size() >= 2 && c.colour_start.front() == 0 && c.colour_start.back() == c.size() &&
           bc.body_count() == sb.body.size();
}

void scatter_body_impulses(const AssembledBatch& c, const std::vector<Vec3>& gamma, SolverBodies& sb) {
    parallel_ranges(0, sb.body.size(), grain::kBodies, [&](std::size_t lo, std::size_t hi) {
        for (std::size_t b = lo; b != hi; ++b) sb.body[b].v = sb.body[b].w = Vec3::Zero();
    });
    // the gather's operations per end: p in the world, then ± p and ± r × p; in lanes where
    // the contacts share no body (a proper colour), the same bits
    const std::size_t colours = c.colour_start.size() - 1;
    for (std::size_t k = 0; k < colours; ++k) {
        const std::size_t lo = c.colour_start[k], hi = c.colour_start[k + 1];
        const bool independent = !(c.overflow_colour && k + 1 == colours);
        if (!independent || hi - lo <= grain::kContacts)
            scatter_impulses_range(c, gamma, sb, lo, hi, independent);
        else
            parallel_ranges(lo, hi, grain::kContacts, [&](std::size_t a, std::size_t b) {
                scatter_impulses_range(c, gamma, sb, a, b, true);
            });
    }
}

void sum_body_impulses(const AssembledBatch& c, const BodyContacts& bc, const std::vector<Vec3>& gamma,
                       SolverBodies& sb) {
    if (sb.body.size() < kScatterBodies && scatters(c, bc, sb)) {
        scatter_body_impulses(c, gamma, sb);
        return;
    }
    for_each_body_impulse(c, bc, gamma, [&](std::size_t b, const Vec3& f, const Vec3& t) {
        sb.body[b].v = f;
        sb.body[b].w = t;
    });
}

void solver_velocities(const AssembledBatch& c, const BodyContacts& bc,
                       const std::vector<Vec3>& gamma, SolverBodies& sb) {
    sum_body_impulses(c, bc, gamma, sb);
    velocities_from_sums(sb, bc.body_count(), [](std::size_t, const Vec3&, const Vec3&) {});
}

}  // namespace talus
