#pragma once
/// Per-body lists of contacts, to rebuild ν = ν* + M⁻¹ D γ body by body: in parallel, with
/// each body's sum taken in contact order, so the result does not depend on the threads.
#include <cstdint>
#include <vector>

#include "core/parallel.hpp"
#include "solvers/assemble.hpp"
#include "solvers/contact_ops.hpp"

namespace talus {

struct BodyContacts {
    std::vector<uint32_t> start;  ///< per body: first entry; size bodies + 1
    std::vector<uint32_t> entry;  ///< 2 × contact + side (0: A, 1: B), in contact order

    /// Counting sort of the batch's contact ends by body (serial, deterministic).
    void build(const AssembledBatch& c, std::size_t body_count);
    std::size_t body_count() const { return start.empty() ? 0 : start.size() - 1; }
};

/// For every body b, in parallel: out(b, F, T) with the world-frame impulse F = Σ ±A_i γ_i
/// and angular impulse T = Σ ±r_i × A_i γ_i of its contacts (+ on side B, − on side A),
/// each summed in ascending contact order.
/// How many contact ends ahead the gather asks for its contacts' data (a hint only).
inline constexpr std::size_t kGatherPrefetch = 8;

template <class Out>
void for_each_body_impulse(const AssembledBatch& c, const BodyContacts& bc,
                           const std::vector<Vec3>& gamma, Out&& out) {
    parallel_ranges(0, bc.body_count(), grain::kBodies, [&](std::size_t lo, std::size_t hi) {
        for (std::size_t b = lo; b != hi; ++b) {
            Vec3 f = Vec3::Zero(), t = Vec3::Zero();
            for (uint32_t k = bc.start[b]; k < bc.start[b + 1]; ++k) {
                if (k + kGatherPrefetch < bc.entry.size()) {  // contacts come scattered
                    const uint32_t ahead = bc.entry[k + kGatherPrefetch];
                    const std::size_t j = ahead >> 1;
                    __builtin_prefetch(&c.normal[j]);
                    __builtin_prefetch((ahead & 1) ? &c.lever_b[j] : &c.lever_a[j]);
                    __builtin_prefetch(&gamma[j]);
                }
                const uint32_t e = bc.entry[k];
                const std::size_t i = e >> 1;
                const Vec3 p = contact_frame(c, i).to_world(gamma[i]);
                const Vec3 tp = cross((e & 1) ? c.lever_b[i] : c.lever_a[i], p);
                if (e & 1) { f += p; t += tp; } else { f -= p; t -= tp; }
            }
            out(b, f, t);
        }
    });
}

/// Solver bodies at ν* + M⁻¹ D γ (world frame).
void solver_velocities(const AssembledBatch& c, const BodyContacts& bc,
                       const std::vector<Vec3>& gamma, SolverBodies& sb);

}  // namespace talus
